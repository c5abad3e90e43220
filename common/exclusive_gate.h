#ifndef TUNED_COMMON_EXCLUSIVE_GATE_H_
#define TUNED_COMMON_EXCLUSIVE_GATE_H_

/// \file
/// The gate that keeps timing alone on the machine: builds (and reference computations) enter
/// shared, any number at once, and so does a search that runs in the measuring process (the
/// embedded `tuned tune`); timing enters exclusive, after every build inside has left and
/// with no build allowed in until it is done. A waiting timer blocks new builds (writer
/// preference), so a steady stream of builds cannot starve timing. The same rule makes forking
/// the timing child safe: no thread of the engine is inside LLVM when fork() runs.

#include <condition_variable>
#include <mutex>

namespace tuned {

class ExclusiveGate {
 public:
  void EnterShared();
  void LeaveShared();
  void EnterExclusive();
  void LeaveExclusive();

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

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int shared_ = 0;            // builds inside
  int exclusive_waiting_ = 0;  // timers waiting to enter
  bool exclusive_ = false;     // a timer inside
};

}  // namespace tuned

#endif  // TUNED_COMMON_EXCLUSIVE_GATE_H_
