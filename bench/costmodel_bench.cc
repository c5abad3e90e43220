// The cost model: feature extraction speed, training/prediction time, and ranking quality on
// held-out measured candidates.
//
//   build/bench/tuned_costmodel_bench [--samples 300] [--db FILE] [--min-repeat-ms 2]
//                                     [--repeats 3] [--splits 5] [--skip-quality]
//
// 1. features/s: candidates of matmul 1024^3 and conv2d (ResNet-50 C=64, 56x56, K=64, 3x3),
//    lowered once, then featurized repeatedly (extraction alone, and lower + extract).
// 2. Update (retrain) and Predict times for 1k and 5k samples (real feature vectors).
// 3. Quality: `--samples` candidates each of a small matmul (128^3) and a small conv2d are
//    JIT-compiled and timed on this machine (1 core, the worker's protocol: warm-up, `number`
//    grown to --min-repeat-ms, --repeats repeats, median), stored as records in a tuning
//    database (--db, reused when it already holds them), read back through the pre-training path
//    (replay -> lower -> features), split 80/20 per workload (--splits random splits), and
//    each model variant is trained on the 80% and scored on the 20%: Spearman correlation,
//    top-k recall (k = 5, 10), and top-5 peak (best true throughput among the 5 best predicted
//    / best true throughput).
// Candidates come from a multi-level-tiling sampler (tile sizes, register tile, parallel,
// vectorize, auto-unroll: the design space the search explores) and, for a quarter of them,
// random schedules from tests/support (odd loop orders, cache stages), so the spread is wide.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench/bench_util.h"
#include "compiler/codegen/llvm/cpu_target.h"
#include "compiler/codegen/llvm/llvm_jit.h"
#include "compiler/ir/op_library.h"
#include "compiler/lower/lower.h"
#include "compiler/runtime/aligned_buffer.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/trace.h"
#include "costmodel/features/features.h"
#include "costmodel/model/cost_model.h"
#include "costmodel/model/metrics.h"
#include "costmodel/model/pretrain.h"
#include "tests/support/random_schedule.h"
#include "tuned/v1/record.pb.h"
#include "tuning_db/database.h"

namespace tuned::bench {
namespace {

using costmodel::CostModel;
using schedule::Factor;
using schedule::LoopRV;
using schedule::Schedule;

struct Options {
  int samples = 300;
  std::string db_path;
  double min_repeat_ms = 2;
  int repeats = 3;
  int splits = 5;
  bool skip_quality = false;
};

void CheckOk(const Status& status, const char* what) {
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
    std::exit(1);
  }
}

std::shared_ptr<const ir::Workload> Workload(const std::string& spec) {
  return std::make_shared<const ir::Workload>(Unwrap(ir::ParseWorkloadSpec(spec), spec.c_str()));
}

// Multi-level tiling of the output stage: spatial loops in 4 levels, reduction loops in 2
// (S S R S R S), an optional register tile written back at the second spatial level, producers
// inlined, the outer spatial tiles fused and parallel, the innermost spatial loop vectorized,
// an auto-unroll budget. Primitives that do not apply are skipped.
Schedule TiledSchedule(std::shared_ptr<const ir::Workload> workload, uint64_t seed) {
  Schedule sch(workload, seed);
  std::mt19937_64 rng(seed * 31 + 7);
  auto coin = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  const ir::ComputeStage& out = workload->output_stage();
  for (const ir::ComputeStage& stage : workload->stages()) {
    if (&stage == &out) continue;
    if (auto b = sch.GetBlock(stage.name); b.ok()) (void)sch.ComputeInline(*b);
  }
  auto block = sch.GetBlock(out.name);
  if (!block.ok()) return sch;
  std::optional<schedule::BlockRV> write_back;
  if (!out.reduce_axes.empty() && coin(0.7)) {
    if (auto wb = sch.CacheWrite(*block, "local"); wb.ok()) write_back = *wb;
  }
  auto loops = sch.GetLoops(*block);
  if (!loops.ok()) return sch;
  const size_t num_spatial = out.axes.size();
  std::vector<std::vector<LoopRV>> levels(6);  // S0 S1 R0 S2 R1 S3
  for (size_t i = 0; i < loops->size(); ++i) {
    const bool spatial = i < num_spatial;
    const int parts = spatial ? 4 : 2;
    auto tiles = sch.SamplePerfectTile((*loops)[i], parts, /*max_innermost=*/spatial ? 16 : 8);
    if (!tiles.ok()) return sch;
    std::vector<Factor> factors(tiles->begin(), tiles->end());
    auto split = sch.Split((*loops)[i], factors);
    if (!split.ok()) return sch;
    if (spatial) {
      levels[0].push_back((*split)[0]);
      levels[1].push_back((*split)[1]);
      levels[3].push_back((*split)[2]);
      levels[5].push_back((*split)[3]);
    } else {
      levels[2].push_back((*split)[0]);
      levels[4].push_back((*split)[1]);
    }
  }
  std::vector<LoopRV> order;
  for (const auto& level : levels) order.insert(order.end(), level.begin(), level.end());
  if (!sch.Reorder(order).ok()) return sch;
  if (write_back && !levels[1].empty()) (void)sch.ReverseComputeAt(*write_back, levels[1].back());
  if (!levels[5].empty() && coin(0.8)) (void)sch.Vectorize(levels[5].back());
  LoopRV outer = levels[0].front();
  if (levels[0].size() > 1) {
    if (auto fused = sch.Fuse(levels[0]); fused.ok()) outer = *fused;
  }
  if (coin(0.5)) (void)sch.Parallel(outer);
  auto unroll = sch.SampleCategorical({0, 16, 64, 512}, {0.25, 0.25, 0.25, 0.25});
  if (unroll.ok()) (void)sch.Annotate(outer, "auto_unroll_max_step", sch.Get(*unroll));
  return sch;
}

Schedule SampleSchedule(std::shared_ptr<const ir::Workload> workload, uint64_t seed) {
  if (seed % 4 == 3) return testing::RandomSchedule(std::move(workload), seed, /*steps=*/10);
  return TiledSchedule(std::move(workload), seed);
}

// ---- measurement ----

double MedianSeconds(const codegen::JitKernel& kernel, const std::vector<void*>& args,
                     const Options& options) {
  auto run = [&] { CheckOk(kernel.Run(args), "run"); };
  Clock::time_point first = Clock::now();
  run();
  // A very slow candidate is timed once (the worker would time it out).
  if (Seconds(first) > 0.1) return Seconds(first);
  int number = 1;
  for (;;) {
    Clock::time_point start = Clock::now();
    for (int i = 0; i < number; ++i) run();
    if (Seconds(start) * 1e3 >= options.min_repeat_ms || number >= (1 << 16)) break;
    number *= 2;
  }
  std::vector<double> times;
  for (int r = 0; r < options.repeats; ++r) {
    Clock::time_point start = Clock::now();
    for (int i = 0; i < number; ++i) run();
    times.push_back(Seconds(start) / number);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

v1::TuningRecord MakeRecord(const ir::Workload& workload, const std::string& target,
                            const schedule::Trace& trace, double median, int64_t seq) {
  v1::TuningRecord record;
  record.mutable_workload()->set_key(workload.key());
  record.mutable_workload()->set_op(workload.op());
  record.mutable_workload()->set_flops(workload.flops());
  record.mutable_target()->set_target(target);
  record.mutable_target()->set_kind(v1::TARGET_KIND_LLVM_CPU);
  schedule::TraceToProto(trace, record.mutable_trace());
  record.mutable_result()->set_status(v1::MEASURE_STATUS_OK);
  record.mutable_result()->add_repeat_seconds(median);
  record.mutable_result()->set_median_seconds(median);
  record.mutable_result()->set_worker_id("costmodel-bench");
  record.set_tuner_version("bench");
  record.set_created_unix_ms(1700000000000 + seq);
  return record;
}

// Measures `count` new candidates of `spec` and stores them in `db`.
void MeasureInto(db::Database& db, const std::string& spec, const std::string& target_text,
                 codegen::LlvmJit& jit, int count, uint64_t seed_base, const Options& options) {
  auto workload = Workload(spec);
  std::vector<runtime::AlignedBuffer> buffers;
  std::vector<void*> args;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (const ir::Buffer& b : workload->arguments()) {
    buffers.emplace_back(size_t(b->num_elements()) * size_t(b->dtype.bytes()));
    float* p = buffers.back().as<float>();
    for (int64_t i = 0; i < b->num_elements(); ++i) p[i] = uniform(rng);
  }
  for (auto& b : buffers) args.push_back(b.data());
  std::vector<v1::TuningRecord> records;
  std::map<std::string, bool> seen;
  const auto& names = costmodel::FeatureNames();
  const auto bytes_feature = std::find(names.begin(), names.end(), "g.bytes") - names.begin();
  std::vector<ptrdiff_t> unroll_features;
  for (int i = 0; i < costmodel::kTopStores; ++i) {
    const std::string name = "s" + std::to_string(i) + ".unroll_product";
    unroll_features.push_back(std::find(names.begin(), names.end(), name) - names.begin());
  }
  int skipped = 0;
  Clock::time_point start = Clock::now();
  for (uint64_t seed = seed_base; int(records.size()) < count; ++seed) {
    Schedule sch = SampleSchedule(workload, seed);
    auto func = lower::Lower(sch, "candidate");
    if (!func.ok()) continue;
    std::string text = sch.trace().ToString() + schedule::TraceToJson(sch.trace());
    if (seen[text]) continue;
    seen[text] = true;
    // Skip candidates that redo the work many times over (e.g. a cache stage recomputed in an
    // inner loop): they take seconds per run; the search would see them time out.
    const std::vector<float> f = costmodel::ExtractFeatures(*func);
    const double bytes = std::exp2(double(f[size_t(bytes_feature)])) - 1;
    // Likewise explicitly unrolled nests of thousands of copies: LLVM's register allocator
    // takes minutes on them (the worker's build timeout).
    double unrolled = 0;
    for (int i = 0; i < costmodel::kTopStores; ++i) {
      unrolled = std::max(unrolled, std::exp2(double(f[size_t(unroll_features[size_t(i)])])) - 1);
    }
    if (bytes > 50 * workload->flops() || unrolled > 256) {
      ++skipped;
      continue;
    }
    auto kernel = jit.Compile(*func);
    if (!kernel.ok()) continue;
    double median = MedianSeconds(**kernel, args, options);
    records.push_back(MakeRecord(*workload, target_text, sch.trace(), median, int64_t(seed)));
    if (records.size() % 50 == 0) {
      std::fprintf(stderr, "  %s: %zu/%d measured (%.0f s)\n", spec.c_str(), records.size(), count,
                   Seconds(start));
    }
  }
  std::fprintf(stderr, "  %s: skipped %d candidates (> 50x flops bytes or > 256 unrolled copies)\n",
               spec.c_str(), skipped);
  Unwrap(db.InsertRecords(records), "insert records");
}

// ---- quality ----

struct Dataset {
  std::vector<std::vector<float>> features;
  std::vector<double> throughputs;
  std::vector<std::string> groups;
};

Dataset LoadDataset(db::Database& db, const std::string& target, int per_workload) {
  Dataset data;
  std::map<std::string, std::shared_ptr<const ir::Workload>> workloads;
  std::map<std::string, int> counts;
  db::RecordFilter filter;
  filter.target = target;
  for (;;) {
    auto page = Unwrap(db.ListRecords(filter), "list records");
    if (page.empty()) break;
    filter.after_id = page.back().record_id();
    for (const v1::TuningRecord& r : page) {
      const std::string& key = r.workload().key();
      if (counts[key] >= per_workload) continue;
      if (!workloads.count(key)) workloads[key] = Workload(key);
      auto throughput = costmodel::RecordThroughput(r, workloads[key]->flops());
      auto f = costmodel::FeaturizeTrace(workloads[key], r.trace());
      if (!throughput || !f.ok()) continue;
      ++counts[key];
      data.features.push_back(std::move(f).value());
      data.throughputs.push_back(*throughput);
      data.groups.push_back(key);
    }
  }
  return data;
}

struct Scores {
  double spearman = 0, recall5 = 0, recall10 = 0, peak5 = 0;
};

struct Variant {
  std::string name;
  std::function<std::unique_ptr<CostModel>()> make;
};

void Quality(const Dataset& data, const Options& options) {
  std::vector<std::string> keys = data.groups;
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

  std::vector<Variant> variants;
  auto xgb = [](costmodel::XgbOptions o) {
    return [o] { return Unwrap(costmodel::MakeXgbCostModel(o), "xgb"); };
  };
  costmodel::XgbOptions reg;
  variants.push_back({"xgb reg:squarederror (default)", xgb(reg)});
  costmodel::XgbOptions rank;
  rank.objective = costmodel::XgbObjective::kPairwiseRank;
  variants.push_back({"xgb rank:pairwise", xgb(rank)});
  costmodel::XgbOptions ms = reg;  // MetaSchedule's tree parameters
  ms.max_depth = 10;
  ms.min_child_weight = 0;
  ms.max_bin = 256;
  variants.push_back({"xgb reg, depth 10, mcw 0, 256 bins", xgb(ms)});
  costmodel::XgbOptions more = reg;
  more.num_rounds = 200;
  more.eta = 0.1;
  variants.push_back({"xgb reg, 200 rounds, eta 0.1", xgb(more)});
  variants.push_back({"random", [] { return costmodel::MakeRandomCostModel(5); }});

  std::printf("\n== quality on held-out measured candidates (%d random 80/20 splits) ==\n",
              options.splits);
  std::printf("%-36s %-34s %9s %9s %9s %9s %8s\n", "model", "workload", "spearman", "recall@5",
              "recall@10", "peak@5", "train_s");
  for (const Variant& variant : variants) {
    std::map<std::string, Scores> sums;
    double train_s = 0;
    for (int split = 0; split < options.splits; ++split) {
      std::mt19937_64 rng(uint64_t(split) + 100);
      std::vector<size_t> order(data.features.size());
      std::iota(order.begin(), order.end(), size_t(0));
      std::shuffle(order.begin(), order.end(), rng);
      Dataset train, test;
      std::map<std::string, int> seen, total;
      for (const std::string& g : data.groups) ++total[g];
      for (size_t i : order) {
        Dataset& into = seen[data.groups[i]]++ < total[data.groups[i]] * 8 / 10 ? train : test;
        into.features.push_back(data.features[i]);
        into.throughputs.push_back(data.throughputs[i]);
        into.groups.push_back(data.groups[i]);
      }
      auto model = variant.make();
      Clock::time_point start = Clock::now();
      CheckOk(model->UpdateLabelled(train.features, train.throughputs, train.groups), "update");
      train_s += Seconds(start);
      auto predicted = Unwrap(model->Predict(test.features), "predict");
      for (const std::string& key : keys) {
        std::vector<double> truth, pred;
        for (size_t i = 0; i < test.groups.size(); ++i) {
          if (test.groups[i] != key) continue;
          truth.push_back(test.throughputs[i]);
          pred.push_back(predicted[i]);
        }
        Scores& s = sums[key];
        s.spearman += costmodel::SpearmanCorrelation(truth, pred);
        s.recall5 += costmodel::TopKRecall(truth, pred, 5);
        s.recall10 += costmodel::TopKRecall(truth, pred, 10);
        s.peak5 += costmodel::TopKPeak(truth, pred, 5);
      }
    }
    for (const std::string& key : keys) {
      const Scores& s = sums[key];
      const double n = options.splits;
      std::printf("%-36s %-34.34s %9.3f %9.3f %9.3f %9.3f %8.2f\n", variant.name.c_str(),
                  key.c_str(), s.spearman / n, s.recall5 / n, s.recall10 / n, s.peak5 / n,
                  train_s / n);
    }
  }
}

// ---- speed ----

void FeatureSpeed(const std::string& spec, std::vector<std::vector<float>>* out) {
  auto workload = Workload(spec);
  std::vector<lower::LoweredFunc> funcs;
  std::vector<Schedule> schedules;
  Clock::time_point start = Clock::now();
  for (uint64_t seed = 1; funcs.size() < 200 && seed < 2000; ++seed) {
    Schedule sch = SampleSchedule(workload, seed);
    auto func = lower::Lower(sch, "candidate");
    if (!func.ok()) continue;
    funcs.push_back(std::move(func).value());
    schedules.push_back(std::move(sch));
  }
  const double sample_lower_s = Seconds(start);
  int extracted = 0;
  double checksum = 0;
  start = Clock::now();
  while (Seconds(start) < 1.0) {
    for (const lower::LoweredFunc& f : funcs) {
      std::vector<float> v = costmodel::ExtractFeatures(f);
      checksum += v[0];
      ++extracted;
    }
  }
  const double extract_rate = extracted / Seconds(start);
  int lowered = 0;
  start = Clock::now();
  while (Seconds(start) < 1.0) {
    for (const Schedule& sch : schedules) {
      auto func = lower::Lower(sch, "candidate");
      if (func.ok()) out->push_back(costmodel::ExtractFeatures(*func));
      ++lowered;
    }
  }
  const double lower_rate = lowered / Seconds(start);
  std::printf("%-58s %12.0f %14.0f   (%zu candidates sampled+lowered in %.2f s; checksum %.0f)\n",
              spec.c_str(), extract_rate, lower_rate, funcs.size(), sample_lower_s, checksum);
}

void TrainPredictSpeed(const std::vector<std::vector<float>>& pool) {
  std::printf("\n== training and prediction time (1 thread, real feature vectors) ==\n");
  std::printf("%-8s %-28s %12s %14s %16s\n", "samples", "objective", "update_s", "predict_ms",
              "predict_rows/s");
  std::mt19937_64 rng(3);
  for (int n : {1000, 5000}) {
    std::vector<std::vector<float>> features;
    std::vector<double> throughputs;
    std::vector<std::string> groups;
    for (int i = 0; i < n; ++i) {
      const std::vector<float>& f = pool[size_t(rng() % pool.size())];
      features.push_back(f);
      // A label that depends on the features, so trees have structure to find.
      throughputs.push_back(1e9 * (1.0 + f[20] + 0.5 * f[40] + double(rng() % 100) / 100.0));
      groups.push_back(i % 2 ? "a" : "b");
    }
    for (auto objective : {costmodel::XgbObjective::kRegression, costmodel::XgbObjective::kPairwiseRank}) {
      costmodel::XgbOptions o;
      o.objective = objective;
      auto model = Unwrap(costmodel::MakeXgbCostModel(o), "xgb");
      Clock::time_point start = Clock::now();
      CheckOk(model->UpdateLabelled(features, throughputs, groups), "update");
      const double update_s = Seconds(start);
      std::vector<std::vector<float>> batch(features.begin(), features.begin() + 1000);
      start = Clock::now();
      int calls = 0;
      while (Seconds(start) < 0.5) {
        (void)Unwrap(model->Predict(batch), "predict");
        ++calls;
      }
      const double predict_s = Seconds(start) / calls;
      std::printf("%-8d %-28s %12.3f %14.2f %16.0f\n", n,
                  objective == costmodel::XgbObjective::kRegression ? "reg:squarederror"
                                                                    : "rank:pairwise",
                  update_s, predict_s * 1e3, 1000 / predict_s);
    }
  }
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--samples") {
      o.samples = std::atoi(value().c_str());
    } else if (arg == "--db") {
      o.db_path = value();
    } else if (arg == "--min-repeat-ms") {
      o.min_repeat_ms = std::atof(value().c_str());
    } else if (arg == "--repeats") {
      o.repeats = std::atoi(value().c_str());
    } else if (arg == "--splits") {
      o.splits = std::atoi(value().c_str());
    } else if (arg == "--skip-quality") {
      o.skip_quality = true;
    } else {
      std::fprintf(stderr, "unknown option %s\n", arg.c_str());
      std::exit(2);
    }
  }
  if (o.samples < 20 || o.repeats < 1 || o.splits < 1) {
    std::fprintf(stderr, "--samples must be >= 20, --repeats and --splits >= 1\n");
    std::exit(2);
  }
  return o;
}

int Main(int argc, char** argv) {
  Options options = ParseOptions(argc, argv);
  std::printf("features: version %u, %d values per candidate\n", costmodel::kFeatureVersion,
              costmodel::FeatureCount());
  std::printf("\n== feature extraction (1 thread) ==\n");
  std::printf("%-58s %12s %14s\n", "workload", "features/s", "lower+feat/s");
  std::vector<std::vector<float>> pool;
  FeatureSpeed("matmul(M=1024,N=1024,K=1024,dtype=float32)", &pool);
  FeatureSpeed("conv2d_nchw(N=1,C=64,H=56,W=56,F=64,R=3,S=3,stride=1,pad=1)", &pool);
  TrainPredictSpeed(pool);
  if (options.skip_quality) return 0;

  target::Target target = Unwrap(codegen::HostCpuTarget(), "host target");
  target.num_cores = 1;  // one core: less noise from a shared machine
  const std::string target_text = target.ToString();
  auto jit = Unwrap(codegen::LlvmJit::Create(target), "jit");
  std::string path = options.db_path;
  std::filesystem::path temp_dir;
  if (path.empty()) {
    temp_dir = std::filesystem::temp_directory_path() /
               ("tuned_costmodel_bench_" + std::to_string(::getpid()));
    std::filesystem::create_directories(temp_dir);
    path = (temp_dir / "bench.db").string();
  }
  auto db = Unwrap(db::OpenSqliteDatabase(path), "open database");
  const std::vector<std::string> specs = {
      "matmul(M=128,N=128,K=128,dtype=float32)",
      "conv2d_nchw(N=1,C=16,H=28,W=28,F=32,R=3,S=3,stride=1,pad=1)"};
  std::printf("\n== measuring on %s (database %s) ==\n", target_text.c_str(), path.c_str());
  for (size_t w = 0; w < specs.size(); ++w) {
    auto workload = Workload(specs[w]);
    db::RecordFilter filter;
    filter.workload_key = workload->key();
    filter.target = target_text;
    filter.limit = options.samples;
    const int have = int(Unwrap(db->ListRecords(filter), "list").size());
    if (have < options.samples) {
      Clock::time_point start = Clock::now();
      MeasureInto(*db, specs[w], target_text, *jit, options.samples - have,
                  /*seed_base=*/uint64_t(w + 1) * 1000003 + uint64_t(have) * 7919, options);
      std::printf("%s: measured %d candidates in %.1f s\n", specs[w].c_str(),
                  options.samples - have, Seconds(start));
    } else {
      std::printf("%s: reusing %d stored candidates\n", specs[w].c_str(), have);
    }
  }
  Clock::time_point start = Clock::now();
  Dataset data = LoadDataset(*db, target_text, options.samples);
  std::printf("read back %zu records through replay -> lower -> features in %.2f s\n",
              data.features.size(), Seconds(start));
  for (const std::string& spec : specs) {
    const std::string key = Workload(spec)->key();
    double best = 0, worst = 1e30;
    for (size_t i = 0; i < data.groups.size(); ++i) {
      if (data.groups[i] != key) continue;
      best = std::max(best, data.throughputs[i]);
      worst = std::min(worst, data.throughputs[i]);
    }
    std::printf("  %s: %.2f .. %.2f GFLOP/s\n", key.c_str(), worst / 1e9, best / 1e9);
  }
  Quality(data, options);
  db.reset();
  if (!temp_dir.empty()) std::filesystem::remove_all(temp_dir);
  return 0;
}

}  // namespace
}  // namespace tuned::bench

int main(int argc, char** argv) { return tuned::bench::Main(argc, argv); }
