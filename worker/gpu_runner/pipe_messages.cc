#include "worker/gpu_runner/pipe_messages.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

namespace tuned::worker::gpu {
namespace {

using Clock = std::chrono::steady_clock;

// The most a message may hold: inputs of a large workload fit, a corrupt length does not.
constexpr uint32_t kMaxMessageBytes = uint32_t{1} << 31;

Status WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = send(fd, data, size, MSG_NOSIGNAL);  // a closed peer: EPIPE, no SIGPIPE
    if (n < 0 && errno == ENOTSOCK) n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return UnavailableError(std::string("pipe write failed: ") + std::strerror(errno));
    data += n;
    size -= size_t(n);
  }
  return Status::Ok();
}

Status ReadAll(int fd, char* data, size_t size, Clock::time_point deadline, bool has_deadline) {
  while (size > 0) {
    if (has_deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return DeadlineExceededError("no reply before the deadline");
      pollfd p{fd, POLLIN, 0};
      int ready = poll(&p, 1, int(std::min<long long>(left, 1 << 30)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) continue;  // the loop checks the deadline again
    }
    ssize_t n = read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return UnavailableError("the other end closed the pipe");
    if (n < 0) return UnavailableError(std::string("pipe read failed: ") + std::strerror(errno));
    data += n;
    size -= size_t(n);
  }
  return Status::Ok();
}

}  // namespace

Status WriteMessage(int fd, const google::protobuf::MessageLite& message) {
  std::string bytes;
  if (!message.SerializeToString(&bytes)) return InternalError("message does not serialize");
  if (bytes.size() >= kMaxMessageBytes) return InvalidArgumentError("message of " + std::to_string(bytes.size()) + " bytes is too large for the pipe");
  const uint32_t size = uint32_t(bytes.size());
  const char header[4] = {char(size & 0xff), char((size >> 8) & 0xff), char((size >> 16) & 0xff), char(size >> 24)};
  TUNED_RETURN_IF_ERROR(WriteAll(fd, header, 4));
  return WriteAll(fd, bytes.data(), bytes.size());
}

Status ReadMessage(int fd, google::protobuf::MessageLite& message, double timeout_seconds) {
  const bool has_deadline = timeout_seconds >= 0;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(timeout_seconds, 0.0)));
  unsigned char header[4];
  TUNED_RETURN_IF_ERROR(ReadAll(fd, reinterpret_cast<char*>(header), 4, deadline, has_deadline));
  const uint32_t size = uint32_t(header[0]) | uint32_t(header[1]) << 8 | uint32_t(header[2]) << 16 | uint32_t(header[3]) << 24;
  if (size >= kMaxMessageBytes) return DataLossError("pipe message length " + std::to_string(size) + " is corrupt");
  std::string bytes(size, '\0');
  TUNED_RETURN_IF_ERROR(ReadAll(fd, bytes.data(), size, deadline, has_deadline));
  if (!message.ParseFromString(bytes)) return DataLossError("pipe message does not parse");
  return Status::Ok();
}

}  // namespace tuned::worker::gpu
