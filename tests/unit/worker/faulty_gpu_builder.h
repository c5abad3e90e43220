#ifndef TUNED_TESTS_UNIT_WORKER_FAULTY_GPU_BUILDER_H_
#define TUNED_TESTS_UNIT_WORKER_FAULTY_GPU_BUILDER_H_

/// \file
/// Test-only: a GpuBuilder that builds candidates for real but, for the jobs a test names,
/// plants a fault in the candidate's own printed program: a store 2^40 elements past the
/// output's end at the top of its first kernel (the runner process dies of SIGSEGV on PoCL; a
/// GPU reports an illegal address), or an endless loop there (the runner never replies). Only
/// C++ code that constructs an engine with FaultyGpuBuilderFactory can use it.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "worker/gpu/gpu_builder.h"

namespace tuned::worker::testing {

enum class GpuFault { kOutOfBoundsStore, kEndlessLoop };

class GpuFaultTable {
 public:
  void Set(const std::string& job_id, GpuFault fault);
  bool Find(const std::string& job_id, GpuFault* fault) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, GpuFault> faults_;
};

gpu::GpuBuilderFactory FaultyGpuBuilderFactory(std::shared_ptr<GpuFaultTable> faults);

}  // namespace tuned::worker::testing

#endif  // TUNED_TESTS_UNIT_WORKER_FAULTY_GPU_BUILDER_H_
