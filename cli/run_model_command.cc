#include "cli/run_model_command.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>

#include <nlohmann/json.hpp>

#include "cli/compile_model.h"
#include "cli/model_flags.h"
#include "common/time.h"
#include "compiler/ir/evaluator.h"
#include "model/compiled_kernels.h"
#include "model/model_runner.h"
#include "common/cache_flush.h"

namespace tuned::cli {
namespace {

struct RunModelFlags {
  ModelFlags model;
  std::string library;
  std::string inputs_dir;
  std::string save_dir;
  uint32_t repeat = 10;
  double min_sample_seconds = 0;
  uint64_t seed = 0;
  bool check = false;
  bool json = false;
  bool flush_cache = false;
};

// Raw little-endian float32, NAME.bin in `dir` (model tensor names may hold '/': it becomes '_').
std::string RawPath(const std::string& dir, std::string name) {
  std::replace(name.begin(), name.end(), '/', '_');
  return dir + "/" + name + ".bin";
}

StatusOr<std::vector<double>> ReadRaw(const std::string& path, int64_t elements) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("input file '" + path + "': cannot open the file");
  std::vector<float> v(static_cast<size_t>(elements));
  in.read(reinterpret_cast<char*>(v.data()), std::streamsize(v.size() * sizeof(float)));
  if (in.gcount() != std::streamsize(v.size() * sizeof(float)) || in.peek() != EOF) {
    return InvalidArgumentError("input file '" + path + "' does not hold " + std::to_string(elements) +
                                " float32 values");
  }
  return std::vector<double>(v.begin(), v.end());
}

Status WriteRaw(const std::string& path, const std::vector<double>& values) {
  std::vector<float> v(values.begin(), values.end());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(float)));
  return out ? Status::Ok() : DataLossError("writing " + path + " failed");
}

StatusOr<model::TensorValues> Inputs(const RunModelFlags& flags, const model::Graph& graph) {
  model::TensorValues inputs;
  std::mt19937_64 rng(flags.seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (const std::string& name : graph.inputs) {
    const model::Tensor& t = graph.tensor(name);
    if (!flags.inputs_dir.empty()) {
      TUNED_ASSIGN_OR_RETURN(inputs[name], ReadRaw(RawPath(flags.inputs_dir, name), t.elements()));
      continue;
    }
    std::vector<double>& v = inputs[name];
    for (int64_t i = 0; i < t.elements(); ++i) v.push_back(double(float(uniform(rng))));
  }
  return inputs;
}

Status RunRunModel(const RunModelFlags& flags) {
  if (flags.repeat == 0) return InvalidArgumentError("--repeat must be at least 1");
  if (!(flags.min_sample_seconds >= 0)) return InvalidArgumentError("--min-sample-seconds must not be negative");
  TUNED_ASSIGN_OR_RETURN(LoadedModel loaded, LoadModel(flags.model));
  const std::string manifest_path = ManifestPath(flags.library);
  std::ifstream manifest_file(manifest_path);
  if (!manifest_file) return NotFoundError("manifest '" + manifest_path + "': cannot open the file (tuned compile --model writes it)");
  nlohmann::json manifest = nlohmann::json::parse(manifest_file, nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded() || !manifest.contains("functions")) {
    return InvalidArgumentError("manifest '" + manifest_path + "' is not a tuned model manifest");
  }
  std::map<std::string, model::CompiledKernels::Entry> packed;
  double estimated = 0;
  bool all_recorded = true;
  for (const auto& f : manifest["functions"]) {
    packed[f.value("key", "")] = {f.value("packed", ""), f.value("prepack", ""),
                                  f.value("packed_bytes", std::vector<uint64_t>{})};
    all_recorded &= f.value("from_record", false);
    estimated += f.value("weight", 0) * f.value("median_seconds", 0.0);
  }
  TUNED_ASSIGN_OR_RETURN(std::unique_ptr<model::CompiledKernels> kernels,
                         model::CompiledKernels::Open(flags.library, loaded.tasks, packed));
  TUNED_ASSIGN_OR_RETURN(model::TensorValues inputs, Inputs(flags, loaded.graph));

  // Every tensor is float32 from here to the outputs, as an inference engine would hold it. The
  // first run gives the outputs; every run is timed, the median reported.
  const model::Float32Tensors constants = model::ConstantsOf<model::Float32Values>(loaded.graph);
  const model::Float32Tensors inputs32 = model::Converted<model::Float32Values>(inputs);
  const model::KernelExecutorOf<model::Float32Values> executor = kernels->executor();
  // A run frees its tensors and the next allocates them again. Kept mapped, as an inference
  // engine's arena keeps them, rather than mmap'd and unmapped at every free: a fresh mapping
  // costs a page fault per 4 KiB touched, which for a ResNet stem's output was twice the
  // kernel's own time, and for a 64 MiB softmax output 3.5 ms of its kernel's 8.9. Tensors of a
  // huge page or more are the runtime's own mappings, kept for the next of their size
  // (runtime::TryAllocateAligned); smaller ones stay on the heap, which never maps nor trims here.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  std::vector<double> totals, inside;
  model::TensorValues outputs;
  const std::vector<uint8_t> flush(flags.flush_cache ? FlushBytes(ProbeHostCaches().LastLevel()) : 0, 1);
  // A sample runs the model until it lasts --min-sample-seconds and keeps the time per run, as
  // the sweep times the libraries it compares with: samples of a few milliseconds each make the
  // median span about as long a stretch of the host's time as theirs. A cold sample is one run
  // after its flush.
  uint32_t runs = 0;
  for (uint32_t r = 0; r < flags.repeat; ++r) {
    double sample = 0, sample_inside = 0;
    uint32_t sample_runs = 0;
    do {
      FlushCaches(flush.data(), flush.size());
      kernels->reset_kernel_seconds();
      const auto start = std::chrono::steady_clock::now();
      TUNED_ASSIGN_OR_RETURN(model::Float32Tensors out,
                             model::RunModel(loaded.graph, loaded.tasks, constants, inputs32, executor));
      sample += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      sample_inside += kernels->kernel_seconds();
      if (runs++ == 0) outputs = model::Converted<std::vector<double>>(out);
      ++sample_runs;
    } while (!flags.flush_cache && sample < flags.min_sample_seconds);
    totals.push_back(sample / sample_runs);
    inside.push_back(sample_inside / sample_runs);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double error = -1;
  if (flags.check) {
    TUNED_ASSIGN_OR_RETURN(model::TensorValues reference, model::RunModel(loaded.graph, loaded.tasks, inputs));
    error = 0;
    for (const auto& [name, values] : reference) error = std::max(error, ir::MaxRelativeError(outputs.at(name), values));
  }
  if (!flags.save_dir.empty()) {
    std::filesystem::create_directories(flags.save_dir);
    for (const auto& [name, values] : inputs) TUNED_RETURN_IF_ERROR(WriteRaw(RawPath(flags.save_dir, name), values));
    for (const auto& [name, values] : outputs) TUNED_RETURN_IF_ERROR(WriteRaw(RawPath(flags.save_dir, name), values));
  }
  const double tolerance = ir::ToleranceFor(ir::DataType::Float32());
  if (flags.json) {
    nlohmann::json out = {{"model", flags.model.path}, {"library", flags.library}, {"samples", flags.repeat}, {"runs", runs},
                          {"cold", flags.flush_cache}, {"median_seconds", median(totals)}, {"kernel_median_seconds", median(inside)},
                          {"kernels", loaded.tasks.kernels.size()}, {"outside", loaded.tasks.partition.outside.size()}};
    if (all_recorded) out["estimated_seconds"] = estimated;
    if (flags.check) out["max_relative_error"] = error, out["tolerance"] = tolerance;
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("model     %s: %zu kernels from %s, %zu nodes outside them\n", flags.model.path.c_str(),
                loaded.tasks.kernels.size(), flags.library.c_str(), loaded.tasks.partition.outside.size());
    std::printf("latency   %s median of %u samples (%u runs); %s of it inside the kernels\n",
                FormatSeconds(median(totals)).c_str(), flags.repeat, runs, FormatSeconds(median(inside)).c_str());
    if (all_recorded) std::printf("estimated %s (Σ weight × recorded median of each task)\n", FormatSeconds(estimated).c_str());
    if (flags.check) std::printf("check     max relative error %.3g against the float64 reference (tolerance %.0e)\n", error, tolerance);
  }
  if (flags.check && !(error <= tolerance)) {
    return InternalError("the model's outputs through the compiled kernels differ from the reference: max relative error " +
                         std::to_string(error));
  }
  return Status::Ok();
}

}  // namespace

void RegisterRunModelCommand(Program& program) {
  auto flags = std::make_shared<RunModelFlags>();
  CLI::App* cmd = program.AddCommand(
      "run-model", "Run a model through the kernels of a library `tuned compile --model` wrote: time it, check it",
      [flags] { return RunRunModel(*flags); });
  AddModelFlags(*cmd, flags->model);
  cmd->add_option("--library", flags->library, "The library (its manifest OUT.json beside it)")->required();
  cmd->add_option("--inputs", flags->inputs_dir, "Read each model input from DIR/NAME.bin (raw float32); default: seeded random values in [-1, 1]");
  cmd->add_option("--save", flags->save_dir, "Write the inputs and outputs to DIR/NAME.bin (raw float32)");
  cmd->add_option("--repeat", flags->repeat, "Timed samples, the median reported")->capture_default_str();
  cmd->add_option("--min-sample-seconds", flags->min_sample_seconds,
                  "Each sample runs the model until it lasts this long and keeps the time per run (default: one run a sample)");
  cmd->add_flag("--flush-cache", flags->flush_cache,
                "Flush the CPU caches before every timed run (untimed): every run starts cold");
  cmd->add_option("--seed", flags->seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_flag("--check", flags->check,
                "Also run the model through the float64 reference of every kernel and compare (slow for large models)");
  cmd->add_flag("--json", flags->json, "Print JSON");
}

}  // namespace tuned::cli
