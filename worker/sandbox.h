#ifndef TUNED_WORKER_SANDBOX_H_
#define TUNED_WORKER_SANDBOX_H_

/// \file
/// Isolation of candidate code: a function run in a forked child process with a wall-clock
/// limit, an address-space limit and no core dumps. Whatever the child does (crash, hang,
/// exhaust memory) the parent learns how it ended and goes on. Results travel back through a
/// SharedMemory mapping created before the fork.
///
/// Why fork after compilation rather than a pre-started helper: the candidate's machine code
/// lives in this process's JIT, so a fork hands it to the child for free, while a helper would
/// have to receive an object file and link or JIT it again (milliseconds per candidate); a fork
/// of the worker costs well under a millisecond (bench/measure_bench.cc, "fork_us"), and a
/// helper killed by a crashing kernel would need restarting anyway. See docs/worker.md.
///
/// Fork-safety contract: call RunInChild only from a thread that has never run an OpenMP
/// parallel region in this process (libgomp keeps its thread pool per master thread and its
/// threads do not survive fork) and while no other thread of the caller holds locks the child
/// needs (the engine guarantees both: builds and links that could run at the same time hold
/// ForkLock shared, timing runs hold ExclusiveGate exclusively). The child only runs `body` and then
/// _exit()s: no atexit handlers, no static destructors, no logging.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>

#include "common/status.h"
#include "worker/child_pause.h"

namespace tuned::worker {

/// An anonymous MAP_SHARED mapping, shared with children forked after it was created.
class SharedMemory {
 public:
  SharedMemory() = default;
  ~SharedMemory();
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  /// Makes the mapping at least `bytes` long (contents are lost when it grows).
  Status Reserve(size_t bytes);
  void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

struct SandboxLimits {
  /// Wall-clock limit of the child, seconds; it gets SIGKILL when it is reached.
  double timeout_seconds = 10;
  /// Address space the child may map beyond what it inherits from the parent, bytes
  /// (RLIMIT_AS); 0: no limit.
  uint64_t memory_limit_bytes = 0;
};

struct ChildOutcome {
  enum class Kind { kExited, kSignaled, kTimedOut };
  Kind kind = Kind::kExited;
  int exit_code = 0;        // kExited
  int signal = 0;           // kSignaled
  std::string stderr_tail;  // the last bytes the child wrote to stderr
  double wall_seconds = 0;  // fork to reap, less the time it was stopped
};

/// Runs `body` in a forked child whose exit code is body's return value. Errors only when the
/// child cannot be started (pipe/fork failure). With `pause`, the timing gate may stop the
/// child while it runs; its stopped time counts towards neither the timeout nor wall_seconds.
StatusOr<ChildOutcome> RunInChild(const std::function<int()>& body, const SandboxLimits& limits,
                                  ChildPause* pause = nullptr);

/// A child of a group that takes turns on the CPU, so that the timings of several candidates
/// interleave (worker/runner.h, Runner::RunInterleaved): the child waits for its first turn
/// before it runs `body`, and EndTurn() inside `body` ends a turn and waits for the next. The
/// parent runs one child's turn at a time. The limits are RunInChild's, except that the time
/// limit counts the child's turns only: time spent waiting for a turn is not the candidate's.
class TurnTakingChild {
 public:
  enum class TurnEnd { kYielded, kEnded };  // kEnded: exited, killed, or killed at its time limit

  /// Forks the child; it runs nothing before its first turn. Errors only when it cannot be
  /// started (pipe/fork failure).
  static StatusOr<std::unique_ptr<TurnTakingChild>> Start(const std::function<int()>& body,
                                                          const SandboxLimits& limits);
  ~TurnTakingChild();  // a child that has not been reaped is killed and reaped

  TurnTakingChild(const TurnTakingChild&) = delete;
  TurnTakingChild& operator=(const TurnTakingChild&) = delete;

  /// Lets the child run until it ends its turn (kYielded) or ends (kEnded: it exited or was
  /// killed, or its time ran out and it was killed). Not after kEnded.
  TurnEnd RunTurn();

  /// After kEnded: how the child ended; wall_seconds is the time of its turns.
  ChildOutcome Reap();

 private:
  struct State;
  explicit TurnTakingChild(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

/// In the body of a TurnTakingChild: ends this turn and returns at the child's next one. Does
/// nothing in any other process.
void EndTurn();

/// Held exclusively around every fork of RunInChild. Work in this process that a fork must not
/// catch half-way (linking into a JIT: LLVM's locks would stay locked in the child) holds it
/// shared.
std::shared_mutex& ForkLock();

/// "SIGSEGV", "SIGBUS", ...; "signal N" for a number without a name.
std::string SignalName(int signal);

}  // namespace tuned::worker

#endif  // TUNED_WORKER_SANDBOX_H_
