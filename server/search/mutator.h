#ifndef TUNED_SERVER_SEARCH_MUTATOR_H_
#define TUNED_SERVER_SEARCH_MUTATOR_H_

/// \file
/// Mutators change one decision of a trace; replaying the trace with the new decision gives a
/// neighbouring candidate. Each mutator applies to one kind of sampling instruction:
///
///   mutate_tile_size        sample_perfect_tile, sample_tile: move a prime factor from one level
///                           to another (the product, hence the loop extent or its padded
///                           extent, is kept; the innermost level
///                           stays within its limit)
///   mutate_unroll           sample_categorical: pick another category (auto-unroll steps)
///   mutate_categorical      the same on a GPU target, where the categories are also thread
///                           counts of elementwise stages and vector lengths of shared fetches
///                           (gpu_design_space.h); a GPU's thread extents of tiled stages are
///                           tile levels, mutated by mutate_tile_size
///
/// There is one mutator per kind of decision the design space (design_space.h) samples, and no
/// other: a mutator for a decision no rule makes could never fire. (sample_compute_location
/// exists in the trace vocabulary, but no rule samples a location, so it has no mutator.)
///
/// A mutator returns the new decisions (instruction index → values), or nothing when the trace
/// has no decision it can change.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "compiler/schedule/trace.h"

namespace tuned::search {

using Decisions = std::map<int, std::vector<int64_t>>;

class Mutator {
 public:
  virtual ~Mutator() = default;
  virtual std::string name() const = 0;
  /// New decisions for `trace` (merged over its own), or nullopt if nothing applies.
  virtual std::optional<Decisions> Apply(const schedule::Trace& trace, std::mt19937_64& rng) const = 0;
};

std::unique_ptr<Mutator> MakeMutateTileSize();
std::unique_ptr<Mutator> MakeMutateUnroll();

/// The default CPU mutators with their probabilities (sum to 1).
std::vector<std::pair<std::unique_ptr<Mutator>, double>> DefaultCpuMutators();

/// The default GPU mutators with their probabilities (sum to 1).
std::vector<std::pair<std::unique_ptr<Mutator>, double>> DefaultGpuMutators();

}  // namespace tuned::search

#endif  // TUNED_SERVER_SEARCH_MUTATOR_H_
