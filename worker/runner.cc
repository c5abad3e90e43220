#include "worker/runner.h"

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>

#include "compiler/runtime/aligned_buffer.h"
#include "compiler/runtime/packed_constants.h"
#include "common/cache_flush.h"
#include "worker/tensor_data.h"

namespace tuned::worker {
namespace {

using Clock = std::chrono::steady_clock;

enum Phase : uint32_t { kStarting = 0, kFirstRun = 1, kTiming = 2, kDone = 3 };

// What the child reports through shared memory; the output follows at kOutputOffset.
struct RunHeader {
  uint32_t phase;
  uint32_t number;
  uint32_t repeats;
  double kernel_seconds;
  double repeat_seconds[kMaxRepeat];
};
constexpr size_t kOutputOffset = (sizeof(RunHeader) + 63) / 64 * 64;

const char* PhaseName(uint32_t phase) {
  switch (phase) {
    case kStarting:
      return "before the first run";
    case kFirstRun:
      return "in the first (verification) run";
    case kTiming:
      return "while timing";
    default:
      return "after timing";
  }
}

std::string LastLine(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == '\r')) trimmed.pop_back();
  size_t newline = trimmed.rfind('\n');
  return newline == std::string::npos ? trimmed : trimmed.substr(newline + 1);
}

bool LooksLikeMemoryExhaustion(const std::string& stderr_tail) {
  return stderr_tail.find("out of memory") != std::string::npos ||
         stderr_tail.find("out-of-memory") != std::string::npos ||  // a sanitizer's summary line
         stderr_tail.find("bad_alloc") != std::string::npos ||
         stderr_tail.find("Cannot allocate memory") != std::string::npos;
}

// The child's side: everything between fork and _exit.
// With `interleaved`, the child ends its turn between repeats (TurnTakingChild).
int ChildMain(const RunRequest& request, void* shared, const uint8_t* flush, size_t flush_bytes,
              bool interleaved) {
  auto* header = static_cast<RunHeader*>(shared);
  const size_t output_bytes = BufferBytes(request.output);
  runtime::AlignedBuffer output(std::max<size_t>(output_bytes, 1));
  std::memset(output.data(), 0xff, output_bytes);
  std::vector<void*> args;
  for (const void* input : request.inputs) args.push_back(const_cast<void*>(input));
  args.push_back(output.data());
  // One run's inputs: their packed buffers are made once, here, before anything is timed.
  std::optional<runtime::PackedConstants> packed;
  if (request.prepack != nullptr) {
    packed.emplace(request.prepack, std::vector<bool>(request.inputs.size()), request.packed_bytes);
    args = packed->Arguments(args);
  }

  header->phase = kFirstRun;
  const Clock::time_point start = Clock::now();
  request.entry(args.data());
  const double first_run = std::chrono::duration<double>(Clock::now() - start).count();
  std::memcpy(static_cast<uint8_t*>(shared) + kOutputOffset, output.data(), output_bytes);
  header->kernel_seconds = first_run;
  if (request.time_kernel) {
    header->phase = kTiming;
    KernelTiming timing = TimeKernel(request.entry, args.data(), request.config, flush, flush_bytes,
                                     interleaved ? std::function<void()>(EndTurn) : nullptr);
    header->number = timing.number;
    header->repeats = static_cast<uint32_t>(timing.repeat_seconds.size());
    std::copy(timing.repeat_seconds.begin(), timing.repeat_seconds.end(), header->repeat_seconds);
    header->kernel_seconds += timing.kernel_seconds;
  }
  header->phase = kDone;
  // Timed: exit only when the whole group is (an exit tears down a process the size of the
  // worker, which slowed the repeats timed beside it by a third).
  if (interleaved) EndTurn();
  return 0;
}

}  // namespace

Runner::Runner(uint64_t memory_limit_bytes, uint64_t llc_bytes)
    : memory_limit_bytes_(memory_limit_bytes), llc_bytes_(llc_bytes) {}

StatusOr<RunOutcome> Runner::Run(const RunRequest& request) {
  return std::move(RunInterleaved({request}).front());
}

std::vector<StatusOr<RunOutcome>> Runner::RunInterleaved(const std::vector<RunRequest>& requests) {
  const size_t count = requests.size();
  std::vector<StatusOr<RunOutcome>> outcomes(count, InternalError("not run"));
  while (results_.size() < count) results_.push_back(std::make_unique<SharedMemory>());
  const size_t flush_bytes = FlushBytes(llc_bytes_);
  const bool interleaved = count > 1;  // a child alone runs its repeats back to back
  struct Running {
    std::unique_ptr<TurnTakingChild> child;
    bool cold = false;
  };
  std::vector<Running> running(count);
  for (size_t i = 0; i < count; ++i) {
    const RunRequest& request = requests[i];
    const size_t output_bytes = BufferBytes(request.output);
    if (Status reserved = results_[i]->Reserve(kOutputOffset + std::max<size_t>(output_bytes, 64));
        !reserved.ok()) {
      outcomes[i] = reserved;
      continue;
    }
    std::memset(results_[i]->data(), 0, sizeof(RunHeader));
    uint64_t buffer_bytes = request.input_bytes + output_bytes;
    for (uint64_t bytes : request.packed_bytes) buffer_bytes += bytes;
    running[i].cold = request.time_kernel && RunsCold(request.config, buffer_bytes, llc_bytes_);
    const uint8_t* flush = nullptr;
    if (running[i].cold) {
      if (flush_.size() < flush_bytes) {
        if (Status reserved = flush_.Reserve(flush_bytes); !reserved.ok()) {
          outcomes[i] = reserved;
          continue;
        }
        std::memset(flush_.data(), 1, flush_.size());  // real pages, not the shared zero page
      }
      flush = static_cast<uint8_t*>(flush_.data());
    }
    void* shared = results_[i]->data();
    StatusOr<std::unique_ptr<TurnTakingChild>> child = TurnTakingChild::Start(
        [&request, shared, flush, flush_bytes, interleaved] {
          return ChildMain(request, shared, flush, flush_bytes, interleaved);
        },
        SandboxLimits{request.timeout_seconds, memory_limit_bytes_});
    if (!child.ok()) {
      outcomes[i] = child.status();
      continue;
    }
    running[i].child = std::move(child).value();
  }
  // Round robin, one turn each, until every child has been timed or has ended; then the timed
  // ones exit, one more turn each.
  auto header = [&](size_t i) { return static_cast<const RunHeader*>(results_[i]->data()); };
  auto end = [&](size_t i) {
    outcomes[i] = Outcome(requests[i], running[i].child->Reap(), *results_[i], running[i].cold);
    running[i].child.reset();
  };
  std::vector<bool> timed(count, false);
  for (bool any = true; any;) {
    any = false;
    for (size_t i = 0; i < count; ++i) {
      if (running[i].child == nullptr || timed[i]) continue;
      if (running[i].child->RunTurn() == TurnTakingChild::TurnEnd::kEnded) {
        end(i);
      } else if (header(i)->phase == kDone) {
        timed[i] = true;
      } else {
        any = true;
      }
    }
  }
  for (size_t i = 0; i < count; ++i) {
    if (running[i].child == nullptr) continue;
    while (running[i].child->RunTurn() == TurnTakingChild::TurnEnd::kYielded) {
    }
    end(i);
  }
  return outcomes;
}

RunOutcome Runner::Outcome(const RunRequest& request, const ChildOutcome& child,
                           const SharedMemory& results, bool cold) const {
  const void* shared = results.data();
  const auto* header = static_cast<const RunHeader*>(shared);
  RunOutcome outcome;
  outcome.child_seconds = child.wall_seconds;
  const std::string where = PhaseName(header->phase);
  const std::string said = LastLine(child.stderr_tail);
  const std::string memory_limit =
      std::to_string(memory_limit_bytes_ >> 20) + " MiB memory limit";
  switch (child.kind) {
    case ChildOutcome::Kind::kTimedOut:
      outcome.status = v1::MEASURE_STATUS_TIMEOUT;
      outcome.error = "kernel still running " + where + " after the run timeout of " +
                      std::to_string(static_cast<int64_t>(request.timeout_seconds * 1000)) +
                      " ms; killed";
      return outcome;
    case ChildOutcome::Kind::kSignaled: {
      outcome.status = v1::MEASURE_STATUS_RUNTIME_ERROR;
      const char* description = sigdescr_np(child.signal);
      outcome.error = "kernel killed by " + SignalName(child.signal) +
                      (description != nullptr ? std::string(" (") + description + ")" : "") + " " +
                      where;
      if (memory_limit_bytes_ > 0 && LooksLikeMemoryExhaustion(child.stderr_tail)) {
        outcome.error = "kernel exceeded the " + memory_limit + " " + where + " (" +
                        SignalName(child.signal) + ")";
      }
      if (!said.empty()) outcome.error += ": " + said;
      return outcome;
    }
    case ChildOutcome::Kind::kExited:
      break;
  }
  if (child.exit_code != 0 || header->phase != kDone) {
    outcome.status = v1::MEASURE_STATUS_RUNTIME_ERROR;
    outcome.error = "measurement child exited with code " + std::to_string(child.exit_code) + " " +
                    where;
    if (memory_limit_bytes_ > 0 && LooksLikeMemoryExhaustion(child.stderr_tail)) {
      outcome.error = "kernel exceeded the " + memory_limit + " " + where;
    }
    if (!said.empty()) outcome.error += ": " + said;
    return outcome;
  }
  outcome.status = v1::MEASURE_STATUS_OK;
  outcome.output =
      FromKernelBuffer(request.output, static_cast<const uint8_t*>(shared) + kOutputOffset);
  outcome.timing.number = header->number;
  outcome.cold = cold;
  outcome.timing.kernel_seconds = header->kernel_seconds;
  outcome.timing.repeat_seconds.assign(header->repeat_seconds,
                                       header->repeat_seconds + header->repeats);
  return outcome;
}

}  // namespace tuned::worker
