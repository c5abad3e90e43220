#include "worker/reference_cache.h"

#include <algorithm>
#include <cstdio>

#include "compiler/ir/evaluator.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/trace.h"
#include "worker/tensor_data.h"
#include "worker/workload_message.h"

namespace tuned::worker {

std::vector<const void*> WorkloadData::InputPointers() const {
  std::vector<const void*> pointers;
  pointers.reserve(inputs.size());
  for (const runtime::AlignedBuffer& input : inputs) pointers.push_back(input.data());
  return pointers;
}

WorkloadData::Verdict WorkloadData::Verify(const std::vector<double>& output) const {
  Verdict verdict;
  verdict.max_error = ir::MaxRelativeError(output, reference, reference_scale);
  if (!(verdict.max_error <= tolerance)) {
    char message[200];
    std::snprintf(message, sizeof(message), "max relative error %.3g exceeds the %s tolerance %.0e (reference: %s)",
                  verdict.max_error, workload->output_stage().output->dtype.ToString().c_str(), tolerance,
                  reference_source.c_str());
    verdict.failure = message;
  }
  return verdict;
}

StatusOr<std::shared_ptr<const ir::Workload>> RebuildWorkload(const v1::Workload& workload) {
  if (workload.key().empty()) return InvalidArgumentError("job has no workload key");
  if (workload.op() == "custom") {
    return UnimplementedError("workload '" + workload.key().substr(0, 80) +
                              "': custom computes cannot be rebuilt from their key; this worker "
                              "measures library ops and definitions (tdl)");
  }
  StatusOr<ir::Workload> parsed = ir::ParseWorkloadSpec(workload.key());
  if (!parsed.ok()) return parsed.status().WithContext("workload '" + workload.key() + "'");
  if (!workload.key_sha256().empty() && workload.key_sha256() != parsed->key_sha256()) {
    return InvalidArgumentError("workload '" + workload.key() + "': key_sha256 " +
                                workload.key_sha256() + " does not match the key (" +
                                parsed->key_sha256() + ")");
  }
  return std::make_shared<const ir::Workload>(std::move(parsed).value());
}

StatusOr<v1::MeasureJob> ReferenceJob(const std::shared_ptr<const ir::Workload>& workload) {
  TUNED_ASSIGN_OR_RETURN(schedule::Trace trace, lower::DefaultScheduleTrace(workload));
  v1::MeasureJob job;
  // The workload is part of the job's identity: the object cache keys builds by it, and two
  // workloads of one shape family (every convolution, every matmul) have the same default trace.
  *job.mutable_workload() = WorkloadMessage(*workload);
  schedule::TraceToProto(trace, job.mutable_trace());
  return job;
}

ReferenceCache::ReferenceCache(size_t capacity, double max_evaluator_flops, ExclusiveGate& gate,
                               CompiledReference compiled)
    : capacity_(std::max<size_t>(capacity, 1)),
      max_evaluator_flops_(max_evaluator_flops),
      gate_(gate),
      compiled_(std::move(compiled)) {}

int ReferenceCache::computations() const {
  std::lock_guard lock(mu_);
  return computations_;
}

StatusOr<std::shared_ptr<const WorkloadData>> ReferenceCache::Get(const v1::Workload& workload,
                                                                  uint64_t seed) {
  TUNED_ASSIGN_OR_RETURN(std::shared_ptr<const ir::Workload> rebuilt, RebuildWorkload(workload));
  const std::pair<std::string, uint64_t> key{rebuilt->key(), seed};
  std::shared_future<Result> future;
  std::promise<Result> promise;
  bool compute = false;
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      future = it->second;
      lru_.remove(key);
    } else {
      future = promise.get_future().share();
      entries_.emplace(key, future);
      compute = true;
      ++computations_;
      while (lru_.size() >= capacity_) {
        entries_.erase(lru_.back());
        lru_.pop_back();
      }
    }
    lru_.push_front(key);
  }
  if (compute) {
    Result result = Compute(std::move(rebuilt), seed);
    if (!result.ok()) {
      std::lock_guard lock(mu_);
      entries_.erase(key);
      lru_.remove(key);
    }
    promise.set_value(std::move(result));
  }
  return future.get();
}

StatusOr<std::shared_ptr<const WorkloadData>> ReferenceCache::Compute(
    std::shared_ptr<const ir::Workload> workload, uint64_t seed) {
  auto data = std::make_shared<WorkloadData>();
  data->workload = workload;
  data->seed = seed;
  const ir::Buffer& output = workload->output_stage().output;
  data->tolerance = ir::ToleranceFor(output->dtype);

  std::map<std::string, std::vector<double>> inputs = ir::RandomInputs(*workload, seed);
  for (const ir::Buffer& buffer : workload->inputs()) {
    std::vector<double>& values = inputs[buffer->name];
    for (double& v : values) v = ir::RoundToType(v, buffer->dtype);
    data->inputs.push_back(ToKernelBuffer(buffer, values));
  }

  if (workload->flops() <= max_evaluator_flops_) {
    StatusOr<std::map<std::string, std::vector<double>>> stages = InternalError("not evaluated");
    {
      ExclusiveGate::Shared share(gate_);
      stages = ir::EvaluateReference(*workload, inputs, &data->reference_scale);
    }
    if (!stages.ok()) return stages.status().WithContext("reference of " + workload->key());
    auto it = stages->find(workload->output_stage().name);
    if (it == stages->end()) {
      return InternalError("reference of " + workload->key() + ": no values for stage " +
                           workload->output_stage().name);
    }
    data->reference = std::move(it->second);
    data->reference_source = "float64 evaluator";
  } else {
    TUNED_ASSIGN_OR_RETURN(data->reference, compiled_(*data));
    data->reference_source = "compiled default schedule";
  }
  return std::shared_ptr<const WorkloadData>(std::move(data));
}

}  // namespace tuned::worker
