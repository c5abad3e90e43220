#include "worker/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace tuned::worker {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kStderrTailBytes = 2048;

Status ErrnoError(const std::string& what) {
  return InternalError(what + ": " + std::strerror(errno));
}

// Virtual size of this process (first field of /proc/self/statm, in pages), bytes.
uint64_t CurrentAddressSpaceBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long pages = 0;
  if (std::fscanf(f, "%llu", &pages) != 1) pages = 0;
  std::fclose(f);
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Everything the child does before `body`: async-signal-safe calls only.
void PrepareChild(int stderr_fd, uint64_t address_space_limit) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  if (address_space_limit > 0) {
    struct rlimit as = {address_space_limit, address_space_limit};
    setrlimit(RLIMIT_AS, &as);
  }
  // The parent may have crash handlers (LLVM's, a test framework's): a crashing kernel must
  // die of its signal, promptly.
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS, SIGXCPU}) {
    signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  dup2(stderr_fd, STDERR_FILENO);
  close(stderr_fd);
}

void AppendTail(std::string& tail, const char* data, size_t n) {
  tail.append(data, n);
  if (tail.size() > kStderrTailBytes) tail.erase(0, tail.size() - kStderrTailBytes);
}

// Reads what is available; returns false at end of file.
bool DrainPipe(int fd, std::string& tail) {
  char buffer[4096];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      AppendTail(tail, buffer, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return true;  // EAGAIN: nothing more for now
  }
}

}  // namespace

SharedMemory::~SharedMemory() {
  if (data_ != nullptr) munmap(data_, size_);
}

Status SharedMemory::Reserve(size_t bytes) {
  if (bytes <= size_ && data_ != nullptr) return Status::Ok();
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return ErrnoError("mapping " + std::to_string(bytes) + " shared bytes");
  data_ = p;
  size_ = bytes;
  return Status::Ok();
}

std::shared_mutex& ForkLock() {
  static std::shared_mutex lock;
  return lock;
}

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  if (abbrev == nullptr) return "signal " + std::to_string(signal);
  return std::string("SIG") + abbrev;
}

StatusOr<ChildOutcome> RunInChild(const std::function<int()>& body, const SandboxLimits& limits,
                                  ChildPause* pause) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return ErrnoError("creating the child's stderr pipe");
  const uint64_t address_space_limit =
      limits.memory_limit_bytes > 0 ? CurrentAddressSpaceBytes() + limits.memory_limit_bytes : 0;

  if (pause) pause->Forking();
  const Clock::time_point start = Clock::now();
  pid_t pid;
  {
    std::unique_lock<std::shared_mutex> no_link_in_flight(ForkLock());
    pid = fork();
  }
  if (pause && pid != 0) pause->Forked(pid);
  if (pid < 0) {
    Status error = ErrnoError("forking the measurement child");
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return error;
  }
  if (pid == 0) {
    close(pipe_fds[0]);
    PrepareChild(pipe_fds[1], address_space_limit);
    _exit(body());
  }

  close(pipe_fds[1]);
  const int err_fd = pipe_fds[0];
  fcntl(err_fd, F_SETFL, fcntl(err_fd, F_GETFL) | O_NONBLOCK);
  // A pidfd becomes readable when the child exits, so one poll() waits for exit, output and
  // the deadline at once; without pidfd (old kernels, seccomp) we look every 1 ms.
  const int pid_fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  // Time stopped by the timing gate moves the deadline.
  auto stopped = [&] { return pause ? pause->stopped_seconds() : 0.0; };
  auto deadline = [&] {
    return start + std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(limits.timeout_seconds + stopped()));
  };

  ChildOutcome outcome;
  bool err_open = true;
  int status = 0;
  while (true) {
    // Seen exited but not reaped yet (WNOWAIT): its pid stays ours until the pause lets go.
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      break;
    }
    const Clock::time_point now = Clock::now();
    if (now >= deadline()) {
      kill(pid, SIGKILL);
      outcome.kind = ChildOutcome::Kind::kTimedOut;
      break;
    }
    int wait_ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline() - now).count()) + 1;
    if (pid_fd < 0) wait_ms = std::min(wait_ms, 1);
    pollfd fds[2];
    nfds_t nfds = 0;
    if (err_open) fds[nfds++] = {err_fd, POLLIN, 0};
    if (pid_fd >= 0) fds[nfds++] = {pid_fd, POLLIN, 0};
    if (nfds == 0) {
      usleep(static_cast<useconds_t>(wait_ms) * 1000);
    } else {
      poll(fds, nfds, wait_ms);
    }
    if (err_open) err_open = DrainPipe(err_fd, outcome.stderr_tail);
  }
  if (pause) pause->Exited();
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  outcome.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count() - stopped();
  if (err_open) DrainPipe(err_fd, outcome.stderr_tail);
  close(err_fd);
  if (pid_fd >= 0) close(pid_fd);
  if (outcome.kind != ChildOutcome::Kind::kTimedOut) {
    if (WIFSIGNALED(status)) {
      outcome.kind = ChildOutcome::Kind::kSignaled;
      outcome.signal = WTERMSIG(status);
    } else {
      outcome.kind = ChildOutcome::Kind::kExited;
      outcome.exit_code = WEXITSTATUS(status);
    }
  }
  return outcome;
}

}  // namespace tuned::worker
