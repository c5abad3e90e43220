#ifndef TUNED_WORKER_DEVICE_PROBE_H_
#define TUNED_WORKER_DEVICE_PROBE_H_

/// \file
/// What the worker tells the server about the CPU it measures on: model name and features from
/// /proc/cpuinfo, cache sizes from /sys/devices/system/cpu/cpu0/cache, memory from sysconf, the
/// LLVM version, and the number of cores parallel loops use (the target's -num-cores). Missing
/// sources leave fields empty or 0 rather than failing: a container may hide sysfs.

#include <string>

#include "compiler/codegen/llvm/cpu_target.h"
#include "tuned/v1/target.pb.h"

namespace tuned::worker {

/// The device record for measuring `target` on this machine.
v1::DeviceInfo ProbeCpuDevice(const target::Target& target);

/// "model name" of /proc/cpuinfo; "unknown cpu" when absent.
std::string CpuModelName();

}  // namespace tuned::worker

#endif  // TUNED_WORKER_DEVICE_PROBE_H_
