#ifndef TUNED_TESTS_SUPPORT_RANDOM_SCHEDULE_H_
#define TUNED_TESTS_SUPPORT_RANDOM_SCHEDULE_H_

/// \file
/// Random valid schedules for property tests: random sequences of primitives and decisions
/// (imperfect splits, reorders, fuses, loop kinds, cache stages, compute_at, inlining). A
/// primitive that does not apply is skipped, so every schedule returned is one the primitives
/// accepted.

#include <cstdint>
#include <memory>

#include "compiler/schedule/schedule.h"

namespace tuned::testing {

/// Applies about `steps` random primitives to a fresh schedule of `workload`, seeded by `seed`.
schedule::Schedule RandomSchedule(std::shared_ptr<const ir::Workload> workload, uint64_t seed,
                                  int steps = 12);

/// Small random shapes for every op of the library, as specs.
std::vector<std::string> SmallSpecs(uint64_t seed);

}  // namespace tuned::testing

#endif  // TUNED_TESTS_SUPPORT_RANDOM_SCHEDULE_H_
