#include "worker/tensor_data.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tuned::worker {
namespace {

uint16_t FloatToHalf(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof(x));
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mantissa = x & 0x7fffffu;
  int32_t exponent = static_cast<int32_t>((x >> 23) & 0xffu);
  if (exponent == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  exponent = exponent - 127 + 15;
  if (exponent >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exponent <= 0) {
    if (exponent < -10) return static_cast<uint16_t>(sign);
    mantissa |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exponent);
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(half);
}

float HalfToFloat(uint16_t bits) {
  int exponent = (bits >> 10) & 0x1f;
  int mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 0x1f) {
    magnitude = mantissa ? NAN : INFINITY;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
  }
  return (bits & 0x8000) ? -magnitude : magnitude;
}

}  // namespace

size_t BufferBytes(const ir::Buffer& buffer) {
  return static_cast<size_t>(buffer->num_elements()) * static_cast<size_t>(buffer->dtype.bytes());
}

runtime::AlignedBuffer ToKernelBuffer(const ir::Buffer& buffer, const std::vector<double>& values) {
  const ir::DataType t = buffer->dtype;
  runtime::AlignedBuffer out(BufferBytes(buffer));
  const size_t n = std::min(values.size(), static_cast<size_t>(buffer->num_elements()));
  for (size_t i = 0; i < n; ++i) {
    const double v = values[i];
    if (t.is_bool()) {
      out.as<uint8_t>()[i] = v != 0;
    } else if (t.is_int()) {
      if (t.bits == 8) out.as<int8_t>()[i] = static_cast<int8_t>(v);
      if (t.bits == 32) out.as<int32_t>()[i] = static_cast<int32_t>(v);
      if (t.bits == 64) out.as<int64_t>()[i] = static_cast<int64_t>(v);
    } else if (t.bits == 16) {
      out.as<uint16_t>()[i] = FloatToHalf(static_cast<float>(v));
    } else if (t.bits == 32) {
      out.as<float>()[i] = static_cast<float>(v);
    } else {
      out.as<double>()[i] = v;
    }
  }
  return out;
}

std::vector<double> FromKernelBuffer(const ir::Buffer& buffer, const void* data) {
  const ir::DataType t = buffer->dtype;
  std::vector<double> out(static_cast<size_t>(buffer->num_elements()));
  for (size_t i = 0; i < out.size(); ++i) {
    if (t.is_bool()) {
      out[i] = static_cast<const uint8_t*>(data)[i];
    } else if (t.is_int()) {
      if (t.bits == 8) out[i] = static_cast<const int8_t*>(data)[i];
      if (t.bits == 32) out[i] = static_cast<const int32_t*>(data)[i];
      if (t.bits == 64) out[i] = static_cast<double>(static_cast<const int64_t*>(data)[i]);
    } else if (t.bits == 16) {
      out[i] = HalfToFloat(static_cast<const uint16_t*>(data)[i]);
    } else if (t.bits == 32) {
      out[i] = static_cast<const float*>(data)[i];
    } else {
      out[i] = static_cast<const double*>(data)[i];
    }
  }
  return out;
}

}  // namespace tuned::worker
