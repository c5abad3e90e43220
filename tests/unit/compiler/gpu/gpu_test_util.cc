#include "tests/unit/compiler/gpu/gpu_test_util.h"

#include <cstring>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>

#include "common/check.h"
#include "compiler/codegen/gpu/gpu_source.h"
#include "compiler/ir/evaluator.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/interpreter.h"
#include "tests/support/workload_spec.h"
#include "target/target.h"

#ifdef TUNED_TEST_OPENCL
#include "compiler/runtime/opencl/buffer.h"
#include "compiler/runtime/opencl/device.h"
#include "compiler/runtime/opencl/kernel.h"
#include "compiler/runtime/opencl/program.h"
#endif
#ifdef TUNED_TEST_CUDA
#include "compiler/codegen/cuda/cuda_build.h"
#endif

namespace tuned::testing {

std::shared_ptr<const ir::Workload> Spec(const std::string& spec) { return WorkloadOfSpec(spec); }

void ExpectMatchesReference(const lower::gpu::GpuProgram& program, const ir::Workload& w) {
  auto inputs = ir::RandomInputs(w, 7);
  auto reference = ir::EvaluateReference(w, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().message();
  StatusOr<std::vector<double>> actual = lower::InterpretGpu(program, inputs);
  ASSERT_TRUE(actual.ok()) << actual.status().message();
  EXPECT_LE(ir::MaxRelativeError(*actual, reference->at(w.output_stage().name)),
            ir::ToleranceFor(w.output_stage().output->dtype));
}

int CountBarriers(const ir::Stmt& s) {
  struct Counter : ir::IRVisitor {
    int count = 0;
    void VisitBarrier(const ir::Barrier*) override { ++count; }
  } counter;
  counter.Visit(s);
  return counter.count;
}

using lower::gpu::GpuKernel;
using lower::gpu::GpuProgram;

#ifdef TUNED_TEST_OPENCL
namespace {

// Host bytes of `values` in `buffer`'s dtype, and back.
std::vector<char> ToBytes(const ir::Buffer& buffer, const std::vector<double>& values) {
  const ir::DataType t = buffer.get()->dtype;
  std::vector<char> bytes(values.size() * size_t(t.bytes()));
  for (size_t i = 0; i < values.size(); ++i) {
    char* at = bytes.data() + i * size_t(t.bytes());
    if (t.is_float() && t.bits == 64) { double v = values[i]; std::memcpy(at, &v, 8); }
    else if (t.is_float()) { float v = float(values[i]); std::memcpy(at, &v, 4); }
    else if (t.bits == 8) { int8_t v = int8_t(values[i]); std::memcpy(at, &v, 1); }
    else if (t.bits == 32) { int32_t v = int32_t(values[i]); std::memcpy(at, &v, 4); }
    else { int64_t v = int64_t(values[i]); std::memcpy(at, &v, 8); }
  }
  return bytes;
}

std::vector<double> FromBytes(const ir::Buffer& buffer, const std::vector<char>& bytes) {
  const ir::DataType t = buffer.get()->dtype;
  std::vector<double> values(bytes.size() / size_t(t.bytes()));
  for (size_t i = 0; i < values.size(); ++i) {
    const char* at = bytes.data() + i * size_t(t.bytes());
    if (t.is_float() && t.bits == 64) { double v; std::memcpy(&v, at, 8); values[i] = v; }
    else if (t.is_float()) { float v; std::memcpy(&v, at, 4); values[i] = v; }
    else if (t.bits == 8) { int8_t v; std::memcpy(&v, at, 1); values[i] = v; }
    else if (t.bits == 32) { int32_t v; std::memcpy(&v, at, 4); values[i] = v; }
    else { int64_t v; std::memcpy(&v, at, 8); values[i] = double(v); }
  }
  return values;
}

StatusOr<opencl::Device*> TestDevice() {
  static std::unique_ptr<opencl::Device> device;
  static Status failure;
  if (device == nullptr && failure.ok()) {
    StatusOr<target::Target> target = target::ParseTarget("opencl");
    if (!target.ok()) return target.status();
    StatusOr<std::unique_ptr<opencl::Device>> opened = opencl::Device::Open(*target);
    if (opened.ok()) device = std::move(*opened);
    else failure = opened.status();
  }
  if (!failure.ok()) return failure;
  return device.get();
}

}  // namespace

StatusOr<std::vector<double>> RunOnOpencl(const GpuProgram& program,
                                          const std::map<std::string, std::vector<double>>& inputs) {
  TUNED_ASSIGN_OR_RETURN(opencl::Device* device, TestDevice());
  std::string source = codegen::gpu::PrintGpuSource(program, codegen::gpu::Dialect::kOpencl);
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<opencl::Program> built, opencl::Program::Build(*device, source));
  std::map<const ir::BufferNode*, opencl::Buffer> buffers;
  std::vector<ir::Buffer> all = program.args;
  all.insert(all.end(), program.intermediates.begin(), program.intermediates.end());
  for (const ir::Buffer& b : all) {
    TUNED_ASSIGN_OR_RETURN(opencl::Buffer buffer,
                           opencl::Buffer::Create(*device, size_t(b->num_elements() * b->dtype.bytes())));
    auto it = inputs.find(b->name);
    bool is_input = it != inputs.end() && b != program.args.back();
    std::vector<double> initial = is_input ? it->second : std::vector<double>(size_t(b->num_elements()), 0.0);
    std::vector<char> bytes = ToBytes(b, initial);
    TUNED_RETURN_IF_ERROR(buffer.Write(bytes.data(), bytes.size()));
    buffers.emplace(b.get(), std::move(buffer));
  }
  for (const GpuKernel& kernel : program.kernels) {
    TUNED_ASSIGN_OR_RETURN(std::unique_ptr<opencl::Kernel> k,
                           opencl::Kernel::Create(*built, codegen::gpu::KernelFunctionName(kernel)));
    std::vector<opencl::KernelArg> args;
    for (const ir::Buffer& b : kernel.params) args.push_back(opencl::KernelArg::Of(buffers.at(b.get())));
    opencl::LaunchConfig config;
    config.grid = kernel.grid;
    config.block = kernel.block;
    TUNED_RETURN_IF_ERROR(k->Run(config, args));
  }
  const ir::Buffer& out = program.args.back();
  std::vector<char> bytes(size_t(out->num_elements() * out->dtype.bytes()));
  TUNED_RETURN_IF_ERROR(buffers.at(out.get()).Read(bytes.data(), bytes.size()));
  return FromBytes(out, bytes);
}
#else
StatusOr<std::vector<double>> RunOnOpencl(const GpuProgram&, const std::map<std::string, std::vector<double>>&) {
  return UnavailableError("this build has no OpenCL (TUNED_ENABLE_OPENCL is off)");
}
#endif

#ifdef TUNED_TEST_CUDA
StatusOr<std::string> CompileWithNvrtc(const GpuProgram& program, const std::string& target_text) {
  TUNED_ASSIGN_OR_RETURN(target::Target target, target::ParseTarget(target_text));
  std::string source = codegen::gpu::PrintGpuSource(program, codegen::gpu::Dialect::kCuda);
  TUNED_ASSIGN_OR_RETURN(codegen::cuda::CudaBuild build, codegen::cuda::BuildCuda(source, target));
  std::ostringstream os;
  for (const GpuKernel& kernel : program.kernels) {
    const codegen::cuda::KernelResources* r = build.FindKernel(codegen::gpu::KernelFunctionName(kernel));
    if (r == nullptr) return InternalError("no ptxas report for kernel " + kernel.name);
    os << kernel.name << ": " << r->registers << " registers, " << r->spill_store_bytes + r->spill_load_bytes
       << " spill bytes\n";
  }
  return os.str();
}
#else
StatusOr<std::string> CompileWithNvrtc(const GpuProgram&, const std::string&) {
  return UnavailableError("this build has no NVRTC (TUNED_ENABLE_CUDA is off)");
}
#endif

}  // namespace tuned::testing
