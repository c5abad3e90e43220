#ifndef TUNED_TESTS_SUPPORT_EXAMPLE_SCHEDULES_H_
#define TUNED_TESTS_SUPPORT_EXAMPLE_SCHEDULES_H_

/// \file
/// Hand-written schedules shared by tests of more than one library.

#include <memory>

#include "compiler/schedule/schedule.h"

namespace tuned::testing {

/// `w` (a matmul) with a sampled perfect tile of i, a split of j by 4, a local write cache
/// computed under j's outer loop and i's outer loop parallel.
schedule::Schedule TiledMatmul(std::shared_ptr<const ir::Workload> w);

}  // namespace tuned::testing

#endif  // TUNED_TESTS_SUPPORT_EXAMPLE_SCHEDULES_H_
