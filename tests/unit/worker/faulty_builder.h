#ifndef TUNED_TESTS_UNIT_WORKER_FAULTY_BUILDER_H_
#define TUNED_TESTS_UNIT_WORKER_FAULTY_BUILDER_H_

/// \file
/// Test-only: a Builder that builds candidates for real but, for the jobs a test names, hands
/// the engine a faulty kernel or fails its build instead. The faults are real machine code: the
/// out-of-bounds, endless and wrong kernels are the candidate's own lowered program, modified
/// and compiled to an object file like any candidate; the null dereference and the memory hog
/// are native functions of this file; the hanging and crashing builds hang or store through
/// null inside Compile, i.e. in the engine's build process, where a bug in LLVM would.
/// It exists only in the test executables (the worker library has no fault switch), and only
/// C++ code that constructs an engine with FaultyBuilderFactory can use it: nothing on the wire
/// reaches it.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "worker/builder.h"

namespace tuned::worker::testing {

enum class Fault {
  kOutOfBoundsWrite,  // a store 2^40 elements past the output's end (SIGSEGV)
  kNullDereference,   // a store through a null pointer (SIGSEGV)
  kEndlessLoop,       // the candidate repeated 2^62 times
  kWrongOutput,       // the candidate, then output[0, ..., 0] = 1000
  kMemoryHog,         // asks the runtime for 64 GiB of scratch
  kSlowBuild,         // the build itself sleeps for 2 s
  kHangingBuild,      // the build never returns
  kCrashingBuild,     // the build stores through a null pointer (SIGSEGV)
};

/// Which job gets which fault; shared between a test and its engine's builder.
class FaultTable {
 public:
  void Set(const std::string& job_id, Fault fault);
  bool Find(const std::string& job_id, Fault* fault) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, Fault> faults_;
};

/// A factory for CreateMeasurementEngine(options, factory) whose builder consults `faults`.
BuilderFactory FaultyBuilderFactory(std::shared_ptr<FaultTable> faults);

}  // namespace tuned::worker::testing

#endif  // TUNED_TESTS_UNIT_WORKER_FAULTY_BUILDER_H_
