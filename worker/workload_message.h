#ifndef TUNED_WORKER_WORKLOAD_MESSAGE_H_
#define TUNED_WORKER_WORKLOAD_MESSAGE_H_

/// \file
/// The wire form of a workload, as a MeasureJob carries it (proto/tuned/v1/workload.proto).
/// The worker rebuilds the workload from `key` (reference_cache.h, RebuildWorkload).

#include "compiler/ir/workload.h"
#include "tuned/v1/workload.pb.h"

namespace tuned::worker {

/// Key, SHA-256, op, parameters, definition and flops of `workload`.
v1::Workload WorkloadMessage(const ir::Workload& workload);

}  // namespace tuned::worker

#endif  // TUNED_WORKER_WORKLOAD_MESSAGE_H_
