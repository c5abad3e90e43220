#include "target/target_proto.h"

namespace tuned::target {

v1::TargetKind KindToProto(TargetKind kind) {
  switch (kind) {
    case TargetKind::kLlvmCpu:
      return v1::TARGET_KIND_LLVM_CPU;
    case TargetKind::kCuda:
      return v1::TARGET_KIND_CUDA;
    case TargetKind::kOpencl:
      return v1::TARGET_KIND_OPENCL;
  }
  return v1::TARGET_KIND_UNSPECIFIED;
}

v1::Target TargetToProto(const Target& target) {
  v1::Target out;
  out.set_target(target.ToString());
  out.set_kind(KindToProto(target.kind));
  return out;
}

}  // namespace tuned::target
