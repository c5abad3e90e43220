#include <algorithm>

#include "server/search/mutator.h"

namespace tuned::search {
namespace {

using schedule::InstKind;

// Indices of the instructions of `kind` that have a decision.
std::vector<int> DecidedInstructions(const schedule::Trace& trace, InstKind kind) {
  std::vector<int> found;
  for (const auto& [index, values] : trace.decisions) {
    if (trace.instructions[index].kind == kind) found.push_back(index);
  }
  return found;
}

int64_t SmallestPrimeFactor(int64_t n) {
  for (int64_t p = 2; p * p <= n; ++p) {
    if (n % p == 0) return p;
  }
  return n;
}

class MutateTileSize : public Mutator {
 public:
  std::string name() const override { return "mutate_tile_size"; }
  std::optional<Decisions> Apply(const schedule::Trace& trace, std::mt19937_64& rng) const override {
    // Moving a factor keeps the product, so a padded tiling stays within its padding.
    std::vector<int> tiles = DecidedInstructions(trace, InstKind::kSamplePerfectTile);
    for (int index : DecidedInstructions(trace, InstKind::kSampleTile)) tiles.push_back(index);
    for (int attempt = 0; attempt < 16 && !tiles.empty(); ++attempt) {
      int index = tiles[rng() % tiles.size()];
      std::vector<int64_t> factors = trace.decisions.at(index);
      const auto& attrs = trace.instructions[index].int_attrs;
      int64_t max_innermost = attrs.size() > 1 ? attrs[1] : 0;
      int64_t min_innermost = trace.instructions[index].kind == InstKind::kSampleTile && attrs.size() > 3 ? attrs[3] : 1;
      if (factors.size() < 2) continue;
      size_t from = rng() % factors.size(), to = rng() % factors.size();
      if (from == to || factors[from] == 1) continue;
      // Move a random prime factor of `from` (not always the smallest) to `to`.
      std::vector<int64_t> primes;
      for (int64_t n = factors[from]; n > 1;) {
        int64_t p = SmallestPrimeFactor(n);
        primes.push_back(p);
        n /= p;
      }
      int64_t p = primes[rng() % primes.size()];
      factors[from] /= p;
      factors[to] *= p;
      if (max_innermost > 0 && factors.back() > max_innermost) continue;
      if (factors.back() < min_innermost) continue;
      return Decisions{{index, factors}};
    }
    return std::nullopt;
  }
};

class MutateCategorical : public Mutator {
 public:
  explicit MutateCategorical(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::optional<Decisions> Apply(const schedule::Trace& trace, std::mt19937_64& rng) const override {
    std::vector<int> decided = DecidedInstructions(trace, InstKind::kSampleCategorical);
    if (decided.empty()) return std::nullopt;
    int index = decided[rng() % decided.size()];
    int64_t choices = int64_t(trace.instructions[index].int_attrs.size());
    if (choices < 2) return std::nullopt;
    int64_t current = trace.decisions.at(index).at(0);
    int64_t next = int64_t(rng() % uint64_t(choices - 1));
    if (next >= current) ++next;  // any other choice, uniformly
    return Decisions{{index, {next}}};
  }

 private:
  std::string name_;
};

}  // namespace

std::unique_ptr<Mutator> MakeMutateTileSize() { return std::make_unique<MutateTileSize>(); }

std::unique_ptr<Mutator> MakeMutateUnroll() { return std::make_unique<MutateCategorical>("mutate_unroll"); }

std::vector<std::pair<std::unique_ptr<Mutator>, double>> DefaultCpuMutators() {
  // Tile sizes decide most of a kernel's speed; MetaSchedule's CPU default weights them alike.
  std::vector<std::pair<std::unique_ptr<Mutator>, double>> mutators;
  mutators.emplace_back(MakeMutateTileSize(), 0.9);
  mutators.emplace_back(MakeMutateUnroll(), 0.1);
  return mutators;
}

std::vector<std::pair<std::unique_ptr<Mutator>, double>> DefaultGpuMutators() {
  // More weight on the categories than on a CPU: they hold the thread counts and fetch vectors.
  std::vector<std::pair<std::unique_ptr<Mutator>, double>> mutators;
  mutators.emplace_back(MakeMutateTileSize(), 0.8);
  mutators.emplace_back(std::make_unique<MutateCategorical>("mutate_categorical"), 0.2);
  return mutators;
}

}  // namespace tuned::search
