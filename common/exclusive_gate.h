#ifndef TUNED_COMMON_EXCLUSIVE_GATE_H_
#define TUNED_COMMON_EXCLUSIVE_GATE_H_

/// \file
/// The gate that keeps timing alone on the machine: builds (and reference computations) enter
/// shared, any number at once, and so does a search that runs in the measuring process (the
/// embedded `tuned tune`); timing enters exclusive, after every build inside has left and
/// with no build allowed in until it is done. A waiting timer blocks new builds (writer
/// preference), so a steady stream of builds cannot starve timing. The same rule makes forking
/// the timing child safe: no thread of the engine is inside LLVM when fork() runs.
///
/// Work in another process (a build process) need not keep timing waiting: it enters as
/// pausable, and timing stops it on entering and continues it on leaving, so builds go on
/// between timing runs without ever running beside one.

#include <condition_variable>
#include <mutex>
#include <vector>

namespace tuned {

class ExclusiveGate {
 public:
  void EnterShared();
  void LeaveShared();
  void EnterExclusive();
  void LeaveExclusive();

  /// Work that timing stops instead of waiting for it.
  class Pausable {
   public:
    virtual ~Pausable() = default;
    /// Returns once the work is stopped. Called with the gate's lock held: it must not enter
    /// the gate.
    virtual void Pause() = 0;
    virtual void Resume() = 0;
  };
  /// Enters like a build (after timing in progress or waiting), then timing no longer waits
  /// for `work`: it pauses it for as long as it is inside.
  void EnterPausable(Pausable& work);
  void LeavePausable(Pausable& work);

  /// RAII holders.
  class Shared {
   public:
    explicit Shared(ExclusiveGate& gate) : gate_(gate) { gate_.EnterShared(); }
    ~Shared() { gate_.LeaveShared(); }
    Shared(const Shared&) = delete;
    Shared& operator=(const Shared&) = delete;

   private:
    ExclusiveGate& gate_;
  };
  class Exclusive {
   public:
    explicit Exclusive(ExclusiveGate& gate) : gate_(gate) { gate_.EnterExclusive(); }
    ~Exclusive() { gate_.LeaveExclusive(); }
    Exclusive(const Exclusive&) = delete;
    Exclusive& operator=(const Exclusive&) = delete;

   private:
    ExclusiveGate& gate_;
  };
  class PausableHold {
   public:
    PausableHold(ExclusiveGate& gate, Pausable& work) : gate_(gate), work_(work) {
      gate_.EnterPausable(work_);
    }
    ~PausableHold() { gate_.LeavePausable(work_); }
    PausableHold(const PausableHold&) = delete;
    PausableHold& operator=(const PausableHold&) = delete;

   private:
    ExclusiveGate& gate_;
    Pausable& work_;
  };

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int shared_ = 0;            // builds inside
  int exclusive_waiting_ = 0;  // timers waiting to enter
  bool exclusive_ = false;     // a timer inside
  std::vector<Pausable*> pausable_;  // inside, paused while exclusive_
};

}  // namespace tuned

#endif  // TUNED_COMMON_EXCLUSIVE_GATE_H_
