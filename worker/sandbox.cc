#include "worker/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
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

namespace {

// A forked child, from the parent's side: what waiting for it and reaping it need.
struct ForkedChild {
  pid_t pid = -1;
  int err_fd = -1;  // its stderr, non-blocking
  int pid_fd = -1;  // readable once it exits; -1 without pidfd
  bool err_open = true;
  bool timed_out = false;
  bool reaped = false;
  Clock::time_point start;
  std::string stderr_tail;
};

// Forks a child that runs `body` under `limits` and _exits with its value. `in_child` runs in
// the child first (async-signal-safe work only). With `pause`, the fork is announced to it.
StatusOr<ForkedChild> Fork(const std::function<int()>& body, const SandboxLimits& limits,
                           ChildPause* pause, const std::function<void()>& in_child = nullptr) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return ErrnoError("creating the child's stderr pipe");
  const uint64_t address_space_limit =
      limits.memory_limit_bytes > 0 ? CurrentAddressSpaceBytes() + limits.memory_limit_bytes : 0;

  if (pause) pause->Forking();
  ForkedChild child;
  child.start = Clock::now();
  {
    std::unique_lock<std::shared_mutex> no_link_in_flight(ForkLock());
    child.pid = fork();
  }
  if (pause && child.pid != 0) pause->Forked(child.pid);
  if (child.pid < 0) {
    Status error = ErrnoError("forking the measurement child");
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return error;
  }
  if (child.pid == 0) {
    close(pipe_fds[0]);
    PrepareChild(pipe_fds[1], address_space_limit);
    if (in_child) in_child();
    _exit(body());
  }
  close(pipe_fds[1]);
  child.err_fd = pipe_fds[0];
  fcntl(child.err_fd, F_SETFL, fcntl(child.err_fd, F_GETFL) | O_NONBLOCK);
  // A pidfd becomes readable when the child exits, so one poll() waits for exit, output and
  // the deadline at once; without pidfd (old kernels, seccomp) we look every 1 ms.
  child.pid_fd = static_cast<int>(syscall(SYS_pidfd_open, child.pid, 0));
  return child;
}

enum class WaitEnd { kExited, kReady, kTimedOut };

// Waits until the child exits (seen, not reaped: its pid stays ours), `ready_fd` (if >= 0)
// has a byte to read (consumed), or deadline() passes (the child is then killed).
WaitEnd Wait(ForkedChild& child, int ready_fd, const std::function<Clock::time_point()>& deadline) {
  while (true) {
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == child.pid) {
      return WaitEnd::kExited;
    }
    if (ready_fd >= 0) {
      char byte;
      if (read(ready_fd, &byte, 1) == 1) return WaitEnd::kReady;
    }
    const Clock::time_point now = Clock::now();
    if (now >= deadline()) {
      kill(child.pid, SIGKILL);
      child.timed_out = true;
      return WaitEnd::kTimedOut;
    }
    int wait_ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline() - now).count()) + 1;
    if (child.pid_fd < 0) wait_ms = std::min(wait_ms, 1);
    pollfd fds[3];
    nfds_t nfds = 0;
    if (child.err_open) fds[nfds++] = {child.err_fd, POLLIN, 0};
    if (child.pid_fd >= 0) fds[nfds++] = {child.pid_fd, POLLIN, 0};
    if (ready_fd >= 0) fds[nfds++] = {ready_fd, POLLIN, 0};
    if (nfds == 0) {
      usleep(static_cast<useconds_t>(wait_ms) * 1000);
    } else {
      poll(fds, nfds, wait_ms);
    }
    if (child.err_open) child.err_open = DrainPipe(child.err_fd, child.stderr_tail);
  }
}

// Reaps a child that has exited or was killed, and says how it ended (wall_seconds unset).
ChildOutcome ReapChild(ForkedChild& child) {
  int status = 0;
  while (waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  child.reaped = true;
  if (child.err_open) DrainPipe(child.err_fd, child.stderr_tail);
  close(child.err_fd);
  if (child.pid_fd >= 0) close(child.pid_fd);
  ChildOutcome outcome;
  outcome.stderr_tail = std::move(child.stderr_tail);
  if (child.timed_out) {
    outcome.kind = ChildOutcome::Kind::kTimedOut;
  } else if (WIFSIGNALED(status)) {
    outcome.kind = ChildOutcome::Kind::kSignaled;
    outcome.signal = WTERMSIG(status);
  } else {
    outcome.kind = ChildOutcome::Kind::kExited;
    outcome.exit_code = WEXITSTATUS(status);
  }
  return outcome;
}

Clock::duration ToDuration(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// The child's end of its turn socket (a TurnTakingChild's process only): a byte arrives at the
// start of each turn, a byte sent ends one.
int g_turn_fd = -1;

void AwaitTurn() {
  char byte;
  while (true) {
    const ssize_t n = read(g_turn_fd, &byte, 1);
    if (n == 1) return;
    if (n < 0 && errno == EINTR) continue;
    _exit(125);  // the parent is gone
  }
}

}  // namespace

StatusOr<ChildOutcome> RunInChild(const std::function<int()>& body, const SandboxLimits& limits,
                                  ChildPause* pause) {
  TUNED_ASSIGN_OR_RETURN(ForkedChild child, Fork(body, limits, pause));
  // Time stopped by the timing gate moves the deadline.
  auto stopped = [&] { return pause ? pause->stopped_seconds() : 0.0; };
  Wait(child, -1, [&] { return child.start + ToDuration(limits.timeout_seconds + stopped()); });
  if (pause) pause->Exited();
  ChildOutcome outcome = ReapChild(child);
  outcome.wall_seconds = std::chrono::duration<double>(Clock::now() - child.start).count() - stopped();
  return outcome;
}

struct TurnTakingChild::State {
  ForkedChild child;
  int turn_fd = -1;  // the parent's end of the turn socket (non-blocking)
  double limit_seconds = 0;
  double turn_seconds = 0;  // the turns so far
  bool stopped = false;     // SIGSTOPped between turns
};

TurnTakingChild::TurnTakingChild(std::unique_ptr<State> state) : state_(std::move(state)) {}

StatusOr<std::unique_ptr<TurnTakingChild>> TurnTakingChild::Start(const std::function<int()>& body,
                                                                   const SandboxLimits& limits) {
  // One socket pair carries the turns both ways: a byte to the child starts its turn, a byte
  // back ends it. A socket, not a pipe, so that a byte sent to a child that died between turns
  // fails with EPIPE (MSG_NOSIGNAL) instead of raising SIGPIPE in the worker.
  int turns[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, turns) != 0) {
    return ErrnoError("creating the child's turn socket");
  }
  auto state = std::make_unique<State>();
  state->limit_seconds = limits.timeout_seconds;
  StatusOr<ForkedChild> child = Fork(body, limits, nullptr, [&] {
    close(turns[0]);
    g_turn_fd = turns[1];
    AwaitTurn();
  });
  close(turns[1]);
  if (!child.ok()) {
    close(turns[0]);
    return child.status();
  }
  fcntl(turns[0], F_SETFL, fcntl(turns[0], F_GETFL) | O_NONBLOCK);
  state->child = std::move(child).value();
  state->turn_fd = turns[0];
  return std::unique_ptr<TurnTakingChild>(new TurnTakingChild(std::move(state)));
}

TurnTakingChild::~TurnTakingChild() {
  if (!state_->child.reaped) {
    kill(state_->child.pid, SIGKILL);
    ReapChild(state_->child);
  }
  close(state_->turn_fd);
}

TurnTakingChild::TurnEnd TurnTakingChild::RunTurn() {
  State& s = *state_;
  const Clock::time_point turn_start = Clock::now();
  const Clock::time_point deadline = turn_start + ToDuration(s.limit_seconds - s.turn_seconds);
  if (s.stopped) {
    kill(s.child.pid, SIGCONT);
    s.stopped = false;
  }
  const char byte = 1;
  // A child that died between turns cannot take the byte (EPIPE) and is seen exiting below.
  (void)send(s.turn_fd, &byte, 1, MSG_NOSIGNAL);
  const WaitEnd end = Wait(s.child, s.turn_fd, [&] { return deadline; });
  s.turn_seconds += std::chrono::duration<double>(Clock::now() - turn_start).count();
  if (end != WaitEnd::kReady) return TurnEnd::kEnded;
  // The child waits for its next turn, but its other threads may not: an OpenMP pool spins for
  // ~9 ms after a parallel region before it sleeps, on the cores the next child's kernel is
  // timed on (repeats 3-4x slower). Stopped, no thread of it runs until its next turn.
  kill(s.child.pid, SIGSTOP);
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(s.child.pid), &info, WSTOPPED | WEXITED | WNOWAIT) < 0 &&
         errno == EINTR) {
  }
  s.stopped = true;
  return TurnEnd::kYielded;
}

ChildOutcome TurnTakingChild::Reap() {
  ChildOutcome outcome = ReapChild(state_->child);
  outcome.wall_seconds = state_->turn_seconds;
  return outcome;
}

void EndTurn() {
  if (g_turn_fd < 0) return;
  const char byte = 1;
  while (write(g_turn_fd, &byte, 1) < 0 && errno == EINTR) {
  }
  AwaitTurn();
}

}  // namespace tuned::worker
