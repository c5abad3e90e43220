#ifndef TUNED_COMPILER_IR_TYPE_H_
#define TUNED_COMPILER_IR_TYPE_H_

/// \file
/// Scalar data types of the IR. float16 is a storage type: arithmetic on it happens in float32.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tuned::ir {

enum class TypeCode : uint8_t { kInt, kFloat, kBool };

struct DataType {
  TypeCode code = TypeCode::kInt;
  uint8_t bits = 32;

  static constexpr DataType Int32() { return {TypeCode::kInt, 32}; }
  static constexpr DataType Int64() { return {TypeCode::kInt, 64}; }
  static constexpr DataType Int8() { return {TypeCode::kInt, 8}; }
  static constexpr DataType Float32() { return {TypeCode::kFloat, 32}; }
  static constexpr DataType Float64() { return {TypeCode::kFloat, 64}; }
  static constexpr DataType Float16() { return {TypeCode::kFloat, 16}; }
  static constexpr DataType Bool() { return {TypeCode::kBool, 1}; }

  bool is_int() const { return code == TypeCode::kInt; }
  bool is_float() const { return code == TypeCode::kFloat; }
  bool is_bool() const { return code == TypeCode::kBool; }
  int bytes() const { return bits <= 8 ? 1 : bits / 8; }
  bool operator==(const DataType&) const = default;

  /// "float32", "int8", "bool", ...
  std::string ToString() const;
};

/// Parses a dtype name ("float32", "float16", "float64", "int32", "int8", "int64").
StatusOr<DataType> ParseDataType(std::string_view name);

}  // namespace tuned::ir

#endif  // TUNED_COMPILER_IR_TYPE_H_
