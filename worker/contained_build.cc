#include "worker/contained_build.h"

#include <algorithm>
#include <cstring>

namespace tuned::worker {
namespace {

// What the child leaves at the start of the mapping; `text` bytes (the kernel name, then the
// object or the error message) follow it.
struct ResultHeader {
  uint32_t written = 0;  // 1 once the child finished writing
  uint32_t failed = 0;   // 1: the text is the compiler's error
  uint64_t native = 0;   // CompiledCandidate::native
  uint64_t num_args = 0;
  uint64_t num_packed = 0;
  uint64_t packed_bytes[kMaxPackedBuffers] = {};
  uint64_t name_bytes = 0;
  uint64_t payload_bytes = 0;
};

// In the child: stores `result` in the mapping; false when it does not fit.
bool WriteResult(void* memory, size_t capacity, const StatusOr<CompiledCandidate>& result) {
  ResultHeader header;
  const std::string& name = result.ok() ? result->kernel_name : std::string();
  const std::string& payload = result.ok() ? result->object : result.status().message();
  if (sizeof(header) + name.size() + payload.size() > capacity) return false;
  char* bytes = static_cast<char*>(memory);
  std::memcpy(bytes + sizeof(header), name.data(), name.size());
  std::memcpy(bytes + sizeof(header) + name.size(), payload.data(), payload.size());
  header.failed = result.ok() ? 0 : 1;
  header.native = result.ok() ? reinterpret_cast<uint64_t>(result->native) : 0;
  header.num_args = result.ok() ? result->num_args : 0;
  if (result.ok()) {
    header.num_packed = std::min<size_t>(result->packed_bytes.size(), kMaxPackedBuffers);
    std::copy_n(result->packed_bytes.begin(), std::min<size_t>(header.num_packed, kMaxPackedBuffers),
                header.packed_bytes);
  }
  header.name_bytes = name.size();
  header.payload_bytes = payload.size();
  header.written = 1;
  std::memcpy(bytes, &header, sizeof(header));
  return true;
}

std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of("\n\r ");
  if (end == std::string::npos) return "";
  const size_t newline = text.rfind('\n', end);
  const size_t start = newline == std::string::npos ? 0 : newline + 1;
  return text.substr(start, end + 1 - start);
}

}  // namespace

StatusOr<ContainedBuildOutcome> BuildProcess::Run(
    const std::function<StatusOr<CompiledCandidate>()>& compile, const SandboxLimits& limits,
    ChildPause* pause) {
  TUNED_RETURN_IF_ERROR(memory_.Reserve(kMaxResultBytes));
  void* memory = memory_.data();
  std::memset(memory, 0, sizeof(ResultHeader));
  const size_t capacity = memory_.size();
  TUNED_ASSIGN_OR_RETURN(ChildOutcome child, RunInChild(
                                                 [&] {
                                                   StatusOr<CompiledCandidate> result = compile();
                                                   return WriteResult(memory, capacity, result) ? 0 : 3;
                                                 },
                                                 limits, pause));
  ContainedBuildOutcome outcome;
  outcome.seconds = child.wall_seconds;
  const std::string detail = LastLine(child.stderr_tail);
  const std::string said = detail.empty() ? "" : " (stderr: " + detail + ")";
  switch (child.kind) {
    case ChildOutcome::Kind::kTimedOut:
      outcome.kind = ContainedBuildOutcome::Kind::kTimedOut;
      return outcome;
    case ChildOutcome::Kind::kSignaled:
      outcome.kind = ContainedBuildOutcome::Kind::kCrashed;
      outcome.error = "build process killed by " + SignalName(child.signal) + " (" +
                      strsignal(child.signal) + ")" + said;
      return outcome;
    case ChildOutcome::Kind::kExited:
      break;
  }
  ResultHeader header;
  std::memcpy(&header, memory, sizeof(header));
  if (child.exit_code == 3) {
    outcome.kind = ContainedBuildOutcome::Kind::kFailed;
    outcome.error = "code generation: the object file exceeds " +
                    std::to_string(kMaxResultBytes >> 20) + " MiB";
    return outcome;
  }
  if (child.exit_code != 0 || header.written != 1) {
    outcome.kind = ContainedBuildOutcome::Kind::kCrashed;
    outcome.error = "build process exited with code " + std::to_string(child.exit_code) +
                    " before reporting" + said;
    return outcome;
  }
  const char* text = static_cast<const char*>(memory) + sizeof(header);
  if (header.failed != 0) {
    outcome.kind = ContainedBuildOutcome::Kind::kFailed;
    outcome.error.assign(text + header.name_bytes, header.payload_bytes);
    return outcome;
  }
  outcome.kind = ContainedBuildOutcome::Kind::kCompiled;
  outcome.compiled.kernel_name.assign(text, header.name_bytes);
  outcome.compiled.object.assign(text + header.name_bytes, header.payload_bytes);
  outcome.compiled.num_args = header.num_args;
  outcome.compiled.packed_bytes.assign(header.packed_bytes, header.packed_bytes + header.num_packed);
  outcome.compiled.native = reinterpret_cast<KernelEntry>(header.native);
  return outcome;
}

}  // namespace tuned::worker
