#include "worker/gpu/runner_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "worker/gpu_runner/pipe_messages.h"
#include "worker/sandbox.h"

namespace tuned::worker::gpu {

RunnerProcess::RunnerProcess(std::vector<std::string> argv, double start_timeout_seconds)
    : argv_(std::move(argv)), start_timeout_seconds_(start_timeout_seconds) {}

RunnerProcess::~RunnerProcess() { Stop(); }

StatusOr<v1::DeviceInfo> RunnerProcess::Start() {
  if (running()) return device_;
  if (argv_.empty()) return InvalidArgumentError("no GPU runner executable");
  // One socket pair, both ways: writes to a dead runner fail with EPIPE (MSG_NOSIGNAL), not SIGPIPE.
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    return UnavailableError(std::string("socketpair: ") + std::strerror(errno));
  }
  std::vector<char*> args;
  for (const std::string& a : argv_) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(sockets[0]);
    close(sockets[1]);
    return UnavailableError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Only async-signal-safe calls until exec: the worker has other threads.
    dup2(sockets[1], STDIN_FILENO);
    dup2(sockets[1], STDOUT_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(sockets[1]);
  pid_ = pid;
  to_runner_ = from_runner_ = sockets[0];
  ++starts_;
  inputs_key.clear();
  v1::GpuRunnerReply hello;
  Status read = ReadMessage(from_runner_, hello, start_timeout_seconds_);
  if (!read.ok()) {
    if (read.code() == StatusCode::kDeadlineExceeded) kill(pid_, SIGKILL);
    std::string ended = Reap();
    return UnavailableError("GPU runner " + argv_[0] + " did not start (" + ended + ")");
  }
  if (hello.status() != v1::MEASURE_STATUS_OK) {
    Stop();
    return FailedPreconditionError("GPU runner: " + hello.error());
  }
  device_ = hello.device();
  return device_;
}

StatusOr<RunnerCall> RunnerProcess::Call(const v1::GpuRunnerRequest& request, double timeout_seconds) {
  TUNED_RETURN_IF_ERROR(Start().status());
  RunnerCall call;
  // A runner that died shows at the write (EPIPE) or at the read (end of file).
  Status sent = WriteMessage(to_runner_, request);
  Status read = sent.ok() ? ReadMessage(from_runner_, call.reply, timeout_seconds) : sent;
  if (read.ok()) {
    if (call.reply.runner_unusable()) Stop();
    return call;
  }
  if (read.code() == StatusCode::kDeadlineExceeded) {
    call.kind = RunnerCall::Kind::kTimedOut;
    kill(pid_, SIGKILL);
    Reap();
    return call;
  }
  call.kind = RunnerCall::Kind::kCrashed;
  call.error = Reap();
  return call;
}

void RunnerProcess::Stop() {
  if (!running()) return;
  kill(pid_, SIGKILL);
  Reap();
}

std::string RunnerProcess::Reap() {
  if (to_runner_ >= 0) close(to_runner_);
  to_runner_ = from_runner_ = -1;
  inputs_key.clear();
  std::string how = "ended";
  int status = 0;
  pid_t reaped;
  do {
    reaped = waitpid(pid_, &status, 0);
  } while (reaped < 0 && errno == EINTR);
  pid_ = -1;
  if (reaped < 0) return how;
  if (WIFSIGNALED(status)) return "killed by " + SignalName(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return how;
}

}  // namespace tuned::worker::gpu
