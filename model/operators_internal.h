#ifndef TUNED_MODEL_OPERATORS_INTERNAL_H_
#define TUNED_MODEL_OPERATORS_INTERNAL_H_

/// \file
/// The two operator tables' membership, for RoleOf (operators.cc).

#include <string>

namespace tuned::model {

bool IsAnchorOp(const std::string& op);       // anchor_ops.cc
bool IsElementwiseOp(const std::string& op);  // elementwise_ops.cc

}  // namespace tuned::model

#endif  // TUNED_MODEL_OPERATORS_INTERNAL_H_
