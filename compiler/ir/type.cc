#include "compiler/ir/type.h"

namespace tuned::ir {

std::string DataType::ToString() const {
  switch (code) {
    case TypeCode::kInt: return "int" + std::to_string(bits);
    case TypeCode::kFloat: return "float" + std::to_string(bits);
    case TypeCode::kBool: return "bool";
  }
  return "?";
}

StatusOr<DataType> ParseDataType(std::string_view name) {
  for (DataType t : {DataType::Float32(), DataType::Float64(), DataType::Float16(),
                     DataType::Int32(), DataType::Int8(), DataType::Int64()}) {
    if (t.ToString() == name) return t;
  }
  return InvalidArgumentError("unknown dtype '" + std::string(name) +
                              "' (expected float32, float64, float16, int32, int8 or int64)");
}

}  // namespace tuned::ir
