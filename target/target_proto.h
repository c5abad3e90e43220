#ifndef TUNED_TARGET_TARGET_PROTO_H_
#define TUNED_TARGET_TARGET_PROTO_H_

/// \file
/// A Target as the wire's `v1::Target` (canonical text and kind).

#include "target/target.h"
#include "tuned/v1/target.pb.h"

namespace tuned::target {

v1::TargetKind KindToProto(TargetKind kind);

/// `target`'s canonical text and kind.
v1::Target TargetToProto(const Target& target);

}  // namespace tuned::target

#endif  // TUNED_TARGET_TARGET_PROTO_H_
