#include "server/search/evolutionary_search.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "common/logging.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/pipeline.h"
#include "costmodel/features/features.h"
#include "costmodel/model/cost_model.h"
#include "server/search/candidate_check.h"
#include "server/search/candidate_features.h"
#include "server/search/design_space.h"
#include "server/search/measured_filter.h"
#include "server/search/mutator.h"
#include "tuning_db/database.h"
#include "tuning_db/trace_hash.h"

namespace tuned::search {
namespace {

struct Individual {
  schedule::Trace trace;
  v1::Trace proto;
  std::string hash;
  std::vector<float> features;
  std::shared_ptr<const lower::LoweredFunc> func;  // its loop program, fingerprinted if proposed
  double score = 0;
  int sketch = -1;  // the sketch it was sampled from (mutants keep it); -1: unknown (a seed)
};

// `sorted` (best score first) with up to `quota` of each sketch's best first, the rest after in
// score order: a sketch whose candidates the model ranks low early on (it has seen few of
// them) still has some measured in every batch and kept in every generation.
std::vector<Individual> SketchesFirst(std::vector<Individual> sorted, int quota) {
  std::map<int, int> taken;
  std::vector<Individual> first, rest;
  for (Individual& ind : sorted) {
    if (ind.sketch >= 0 && taken[ind.sketch] < quota) {
      ++taken[ind.sketch];
      first.push_back(std::move(ind));
    } else {
      rest.push_back(std::move(ind));
    }
  }
  std::move(rest.begin(), rest.end(), std::back_inserter(first));
  return first;
}

// How fast a measured candidate was, by the cost model's labelling rule (0 when unknown).
double Throughput(const ir::Workload& workload, const v1::MeasureResult& result) {
  return costmodel::TrainingThroughput(result, workload.flops()).value_or(0);
}

class EvolutionarySearch : public SearchStrategy {
 public:
  EvolutionarySearch(SearchContext context, costmodel::CostModel* model, EvolutionaryOptions options)
      : context_(std::move(context)),
        model_(model),
        options_(options),
        sketches_(GenerateSketches(context_)),
        mutators_(IsGpuContext(context_) ? DefaultGpuMutators() : DefaultCpuMutators()),
        rng_(context_.seed),
        filter_(context_),
        check_(context_) {
    feature_options_ = CandidateFeatureOptions(context_);
  }

  Status SeedFromDatabase() {
    if (context_.database == nullptr) return Status::Ok();
    db::BestRecordsQuery query;
    query.workload_key = context_.workload->key();
    query.target = context_.target;
    query.limit = options_.seeds_from_measured;
    TUNED_ASSIGN_OR_RETURN(db::BestRecords best, context_.database->GetBestRecords(query));
    for (const v1::TuningRecord& record : best.records) {
      StatusOr<schedule::Trace> trace = lower::ParseTraceProto(record.trace());
      if (!trace.ok()) continue;  // written by an incompatible version: not a seed
      filter_.Take(db::TraceHash(record.trace()));
      if (std::optional<size_t> program = ProgramHashOf(*trace)) programs_.insert(*program);
      best_.push_back({std::move(trace).value(), Throughput(*context_.workload, record.result())});
    }
    return Status::Ok();
  }

  StatusOr<std::vector<Candidate>> NextBatch(int n) override {
    std::vector<Individual> population = InitialPopulation();
    for (int round = 0; round < options_.rounds && !population.empty(); ++round) {
      std::vector<Individual> next = population;
      for (const Individual& parent : population) {
        if (auto child = Mutate(parent)) next.push_back(std::move(*child));
      }
      TUNED_RETURN_IF_ERROR(Score(next));
      population = Survivors(std::move(next));
    }
    TUNED_RETURN_IF_ERROR(Score(population));
    std::stable_sort(population.begin(), population.end(),
                     [](const Individual& a, const Individual& b) { return a.score > b.score; });

    std::vector<Candidate> batch;
    int exploit = n - int(double(n) * options_.epsilon + 0.5);
    TUNED_RETURN_IF_ERROR(KeepFresh(population));
    population = SketchesFirst(std::move(population), SketchQuota(exploit));
    Propose(population, exploit, batch);
    for (int misses = 0; int(batch.size()) < n && misses < 100 + 10 * n;) {
      // Sample what is still missing, then ask about all of it at once.
      std::vector<Individual> sampled;
      std::set<std::string> hashes;
      while (int(batch.size() + sampled.size()) < n && misses < 100 + 10 * n) {
        std::optional<Individual> ind = SampleFresh();
        if (!ind || filter_.Taken(ind->hash) || !hashes.insert(ind->hash).second) {
          ++misses;
          continue;
        }
        sampled.push_back(std::move(*ind));
      }
      const size_t before = batch.size(), tried = sampled.size();
      TUNED_RETURN_IF_ERROR(KeepFresh(sampled));
      Propose(sampled, n, batch);
      misses += int(tried - (batch.size() - before));
    }
    if (same_program_ != logged_same_program_) {
      logged_same_program_ = same_program_;
      Logger("search")->info("candidates not proposed because an earlier one lowers to the same program: {}",
                             same_program_);
    }
    if (check_.DroppedSummary() != logged_drops_) {
      logged_drops_ = check_.DroppedSummary();
      Logger("search")->info("candidates dropped before measurement (target '{}'): {}", context_.target,
                             logged_drops_);
    }
    return batch;
  }

  Status Update(const std::vector<MeasuredCandidate>& results) override {
    std::vector<costmodel::MeasuredSample> samples;
    for (const MeasuredCandidate& m : results) {
      std::string hash = db::TraceHash(m.trace);
      filter_.Take(hash);
      // What this search proposed is fingerprinted already; a result it did not propose (the
      // default schedule's) is lowered once more for its fingerprint.
      if (!proposed_.count(hash)) {
        StatusOr<schedule::Trace> measured = lower::ParseTraceProto(m.trace);
        if (measured.ok()) {
          if (std::optional<size_t> program = ProgramHashOf(*measured)) programs_.insert(*program);
        }
      }
      auto cached = features_.find(hash);
      std::vector<float> f;
      if (cached != features_.end()) {
        f = cached->second;
      } else if (auto ind = Evaluate(m.trace)) {
        f = ind->features;
      } else {
        continue;
      }
      samples.push_back({std::move(f), context_.workload->key(), context_.workload->flops(), m.result});
      double throughput = Throughput(*context_.workload, m.result);
      if (throughput > 0) {
        StatusOr<schedule::Trace> trace = lower::ParseTraceProto(m.trace);
        if (trace.ok()) best_.push_back({std::move(trace).value(), throughput});
      }
    }
    std::stable_sort(best_.begin(), best_.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    if (int(best_.size()) > options_.seeds_from_measured) best_.resize(options_.seeds_from_measured);
    return model_->Update(samples);
  }

 private:
  // Replays a trace (optionally with other decisions), lowers it and extracts its features.
  std::optional<Individual> Evaluate(const v1::Trace& proto) {
    StatusOr<schedule::Trace> trace = lower::ParseTraceProto(proto);
    if (!trace.ok()) return std::nullopt;
    return Evaluate(*trace, {});
  }

  std::optional<Individual> Evaluate(const schedule::Trace& trace, const Decisions& decisions) {
    StatusOr<schedule::Schedule> replayed = schedule::ReplayTrace(context_.workload, trace, rng_(), decisions);
    if (!replayed.ok()) return std::nullopt;
    return FromSchedule(*replayed);
  }

  // The candidate's individual, or nothing when it cannot run on the target (counted).
  std::optional<Individual> FromSchedule(const schedule::Schedule& sch) {
    StatusOr<CheckedCandidate> checked = check_.Check(sch);
    if (!checked.ok()) return std::nullopt;
    return MakeIndividual(sch.trace(), *checked);
  }

  Individual MakeIndividual(schedule::Trace trace, const CheckedCandidate& checked) {
    Individual ind;
    ind.trace = std::move(trace);
    schedule::TraceToProto(ind.trace, &ind.proto);
    ind.hash = db::TraceHash(ind.proto);
    ind.func = std::make_shared<const lower::LoweredFunc>(checked.func);
    ind.features = checked.program
                       ? costmodel::ExtractFeatures(checked.func, *checked.program, feature_options_)
                       : costmodel::ExtractFeatures(checked.func, feature_options_);
    features_[ind.hash] = ind.features;
    return ind;
  }

  std::optional<Individual> SampleFresh() {
    if (sketches_.empty()) return std::nullopt;
    const int index = int(rng_() % sketches_.size());
    StatusOr<schedule::Schedule> sch = SampleSketch(context_, sketches_[size_t(index)], rng_());
    if (!sch.ok()) return std::nullopt;
    std::optional<Individual> ind = FromSchedule(*sch);
    if (ind) SetSketch(*ind, index);
    return ind;
  }

  void SetSketch(Individual& ind, int sketch) {
    ind.sketch = sketch;
    sketch_of_[ind.hash] = sketch;
  }

  // How many of `slots` each sketch is sure of: a quarter of them shared out, at least one
  // each where there are more slots than sketches.
  int SketchQuota(int slots) const {
    const int sketches = int(sketches_.size());
    if (sketches < 2) return 0;
    return std::max(slots >= sketches ? 1 : 0, slots / (4 * sketches));
  }

  std::vector<Individual> InitialPopulation() {
    std::vector<Individual> population;
    std::set<std::string> hashes;
    for (const auto& [trace, throughput] : best_) {
      if (auto ind = Evaluate(trace, {}); ind && hashes.insert(ind->hash).second) {
        if (auto known = sketch_of_.find(ind->hash); known != sketch_of_.end()) ind->sketch = known->second;
        population.push_back(std::move(*ind));
      }
    }
    for (int misses = 0; int(population.size()) < options_.population && misses < options_.population;) {
      auto ind = SampleFresh();
      if (ind && hashes.insert(ind->hash).second) {
        population.push_back(std::move(*ind));
      } else {
        ++misses;
      }
    }
    return population;
  }

  std::optional<Individual> Mutate(const Individual& parent) {
    std::uniform_real_distribution<double> pick(0.0, 1.0);
    for (int attempt = 0; attempt < options_.mutation_retries; ++attempt) {
      double r = pick(rng_);
      const Mutator* mutator = mutators_.back().first.get();
      for (const auto& [m, probability] : mutators_) {
        if (r < probability) {
          mutator = m.get();
          break;
        }
        r -= probability;
      }
      std::optional<Decisions> decisions = mutator->Apply(parent.trace, rng_);
      if (!decisions) continue;
      if (auto child = Evaluate(parent.trace, *decisions)) {
        if (parent.sketch >= 0) SetSketch(*child, parent.sketch);
        return child;
      }
    }
    return std::nullopt;
  }

  Status Score(std::vector<Individual>& individuals) {
    std::vector<std::vector<float>> features;
    for (const Individual& ind : individuals) features.push_back(ind.features);
    if (features.empty()) return Status::Ok();
    TUNED_ASSIGN_OR_RETURN(std::vector<double> scores, model_->Predict(features));
    for (size_t i = 0; i < individuals.size(); ++i) individuals[i].score = scores[i];
    return Status::Ok();
  }

  std::vector<Individual> Survivors(std::vector<Individual> all) {
    std::stable_sort(all.begin(), all.end(),
                     [](const Individual& a, const Individual& b) { return a.score > b.score; });
    all = SketchesFirst(std::move(all), SketchQuota(options_.population));
    std::vector<Individual> kept;
    std::set<std::string> hashes;
    for (Individual& ind : all) {
      if (int(kept.size()) >= options_.population) break;
      if (hashes.insert(ind.hash).second) kept.push_back(std::move(ind));
    }
    return kept;
  }

  // Drops the individuals measured or proposed before (the seeds among them), keeping the
  // order; one database read for all of them.
  Status KeepFresh(std::vector<Individual>& individuals) {
    std::vector<std::string> hashes;
    for (const Individual& ind : individuals) hashes.push_back(ind.hash);
    TUNED_ASSIGN_OR_RETURN(std::vector<bool> fresh, filter_.Fresh(hashes));
    std::vector<Individual> kept;
    for (size_t i = 0; i < individuals.size(); ++i) {
      if (fresh[i]) kept.push_back(std::move(individuals[i]));
    }
    individuals = std::move(kept);
    return Status::Ok();
  }

  // The fingerprint of a loop program. Traces that differ only in decisions lowering erases (an
  // unroll annotation on a loop a tile of 1 removed; a fifth to a quarter of a 128-trial GEMM's
  // or convolution's log) build the same kernel, which would be measured again. Printed only
  // for the few candidates proposed, not for every individual the search scores.
  static size_t ProgramHash(const lower::LoweredFunc& func) {
    std::string text = ir::ToString(func.body);
    if (func.prepack.defined()) text += ir::ToString(func.prepack);
    return std::hash<std::string>()(text);
  }

  // The fingerprint of what a trace from elsewhere (a seed, a result) lowers to.
  std::optional<size_t> ProgramHashOf(const schedule::Trace& trace) {
    StatusOr<schedule::Schedule> sch = schedule::ReplayTrace(context_.workload, trace, /*seed=*/0, {});
    if (!sch.ok()) return std::nullopt;
    StatusOr<CheckedCandidate> checked = check_.Check(*sch);
    if (!checked.ok()) return std::nullopt;
    return ProgramHash(checked->func);
  }

  // Proposes fresh individuals (KeepFresh) in order until `batch` holds `limit`, each a program
  // not proposed or measured before.
  void Propose(std::vector<Individual>& individuals, int limit, std::vector<Candidate>& batch) {
    for (size_t i = 0; i < individuals.size() && int(batch.size()) < limit; ++i) {
      filter_.Take(individuals[i].hash);
      if (!programs_.insert(ProgramHash(*individuals[i].func)).second) {
        ++same_program_;
        continue;
      }
      proposed_.insert(individuals[i].hash);
      batch.push_back(Candidate{std::move(individuals[i].proto), individuals[i].hash, individuals[i].score});
    }
  }

  SearchContext context_;
  costmodel::CostModel* model_;
  EvolutionaryOptions options_;
  costmodel::FeatureOptions feature_options_;
  std::vector<Sketch> sketches_;
  std::vector<std::pair<std::unique_ptr<Mutator>, double>> mutators_;
  std::mt19937_64 rng_;
  MeasuredFilter filter_;                                // proposed or measured: never again
  CandidateCheck check_;                                 // drops what cannot run on the target
  std::string logged_drops_ = "none";                    // the drop counts last logged
  std::set<size_t> programs_;    // ProgramHash of every candidate proposed or measured
  std::set<std::string> proposed_;  // trace hashes this search proposed (their programs in programs_)
  int same_program_ = 0;         // candidates skipped for a program in programs_
  int logged_same_program_ = 0;
  std::map<std::string, std::vector<float>> features_;  // trace hash -> features
  std::map<std::string, int> sketch_of_;                 // trace hash -> sketch sampled from
  std::vector<std::pair<schedule::Trace, double>> best_; // best measured, fastest first
};

}  // namespace

StatusOr<std::unique_ptr<SearchStrategy>> MakeEvolutionarySearch(const SearchContext& context,
                                                                 costmodel::CostModel* model,
                                                                 const EvolutionaryOptions& options) {
  if (!context.workload) return InvalidArgumentError("search: no workload");
  if (model == nullptr) return InvalidArgumentError("search: no cost model");
  if (options.population < 1 || options.rounds < 0 || options.epsilon < 0 || options.epsilon > 1) {
    return InvalidArgumentError("search: population must be positive, rounds non-negative and "
                                "epsilon in [0, 1]");
  }
  auto search = std::make_unique<EvolutionarySearch>(context, model, options);
  TUNED_RETURN_IF_ERROR(search->SeedFromDatabase());
  return std::unique_ptr<SearchStrategy>(std::move(search));
}

}  // namespace tuned::search
