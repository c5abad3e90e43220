#include "tests/unit/compiler/codegen/codegen_test_util.h"

#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

namespace tuned::codegen::testing {

uint16_t FloatToHalf(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof(x));
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mantissa = x & 0x7fffffu;
  int32_t exponent = int32_t((x >> 23) & 0xffu);
  if (exponent == 0xff) return uint16_t(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  exponent = exponent - 127 + 15;
  if (exponent >= 0x1f) return uint16_t(sign | 0x7c00u);
  if (exponent <= 0) {
    if (exponent < -10) return uint16_t(sign);
    mantissa |= 0x800000u;
    uint32_t shift = uint32_t(14 - exponent);
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1u))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = sign | (uint32_t(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return uint16_t(half);
}

float HalfToFloat(uint16_t bits) {
  int exponent = (bits >> 10) & 0x1f;
  int mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(float(mantissa), -24);
  } else if (exponent == 0x1f) {
    magnitude = mantissa ? NAN : INFINITY;
  } else {
    magnitude = std::ldexp(float(mantissa + 1024), exponent - 25);
  }
  return (bits & 0x8000) ? -magnitude : magnitude;
}

runtime::AlignedBuffer ToDevice(const ir::Buffer& buffer, const std::vector<double>& values) {
  const ir::DataType t = buffer->dtype;
  runtime::AlignedBuffer out(size_t(buffer->num_elements()) * size_t(t.bytes()));
  for (size_t i = 0; i < values.size(); ++i) {
    double v = values[i];
    if (t.is_bool()) {
      out.as<uint8_t>()[i] = v != 0;
    } else if (t.is_int()) {
      if (t.bits == 8) out.as<int8_t>()[i] = int8_t(v);
      if (t.bits == 32) out.as<int32_t>()[i] = int32_t(v);
      if (t.bits == 64) out.as<int64_t>()[i] = int64_t(v);
    } else if (t.bits == 16) {
      out.as<uint16_t>()[i] = FloatToHalf(float(v));
    } else if (t.bits == 32) {
      out.as<float>()[i] = float(v);
    } else {
      out.as<double>()[i] = v;
    }
  }
  return out;
}

std::vector<double> FromDevice(const ir::Buffer& buffer, const runtime::AlignedBuffer& data) {
  const ir::DataType t = buffer->dtype;
  std::vector<double> out(size_t(buffer->num_elements()));
  for (size_t i = 0; i < out.size(); ++i) {
    if (t.is_bool()) {
      out[i] = data.as<uint8_t>()[i];
    } else if (t.is_int()) {
      out[i] = t.bits == 8 ? data.as<int8_t>()[i] : t.bits == 32 ? data.as<int32_t>()[i]
                                                                   : double(data.as<int64_t>()[i]);
    } else if (t.bits == 16) {
      out[i] = HalfToFloat(data.as<uint16_t>()[i]);
    } else if (t.bits == 32) {
      out[i] = data.as<float>()[i];
    } else {
      out[i] = data.as<double>()[i];
    }
  }
  return out;
}

StatusOr<std::vector<double>> RunOnJit(LlvmJit& jit, const lower::LoweredFunc& func,
                                       const std::map<std::string, std::vector<double>>& inputs) {
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<JitKernel> kernel, jit.Compile(func));
  std::vector<runtime::AlignedBuffer> buffers;
  std::vector<void*> args;
  for (size_t i = 0; i < func.num_inputs(); ++i) {
    auto it = inputs.find(func.args[i]->name);
    if (it == inputs.end()) return InvalidArgumentError("no input " + func.args[i]->name);
    buffers.push_back(ToDevice(func.args[i], it->second));
  }
  // The packed buffers (filled by the prepack entry), then the output, poisoned.
  for (size_t i = func.num_inputs(); i < func.args.size(); ++i) {
    buffers.emplace_back(size_t(func.args[i]->num_elements()) * size_t(func.args[i]->dtype.bytes()));
    std::memset(buffers.back().data(), 0xff, buffers.back().size());
  }
  const ir::Buffer& output = func.output();
  for (runtime::AlignedBuffer& b : buffers) args.push_back(b.data());
  if (kernel->prepack() != nullptr) kernel->prepack()(args.data());
  TUNED_RETURN_IF_ERROR(kernel->Run(args));
  return FromDevice(output, buffers.back());
}

target::Target HostTarget() {
  StatusOr<target::Target> host = HostCpuTarget();
  EXPECT_TRUE(host.ok()) << host.status().message();
  return host.ok() ? *host : target::Target{};
}

}  // namespace tuned::codegen::testing
