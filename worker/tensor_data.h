#ifndef TUNED_WORKER_TENSOR_DATA_H_
#define TUNED_WORKER_TENSOR_DATA_H_

/// \file
/// Host values (doubles, as RandomInputs and the reference evaluator hold them) to and from the
/// typed, 64-byte aligned buffers a generated kernel takes (the ABI of
/// compiler/codegen/llvm/codegen_llvm.h).

#include <cstddef>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/runtime/aligned_buffer.h"

namespace tuned::worker {

/// Bytes of `buffer`'s dense row-major storage.
size_t BufferBytes(const ir::Buffer& buffer);

/// `values` stored as `buffer`'s dtype (float16 rounded to nearest even, integers truncated).
runtime::AlignedBuffer ToKernelBuffer(const ir::Buffer& buffer, const std::vector<double>& values);

/// The elements of `data` (holding `buffer`'s dtype, BufferBytes(buffer) bytes) as doubles.
std::vector<double> FromKernelBuffer(const ir::Buffer& buffer, const void* data);

}  // namespace tuned::worker

#endif  // TUNED_WORKER_TENSOR_DATA_H_
