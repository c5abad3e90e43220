// Writes the seed corpus of fuzz_trace: for every workload of its list, random valid schedules
// (tests/support/random_schedule.h) as wire traces, plus the default schedule.
//   fuzz_trace_seeds OUT_DIR [SCHEDULES_PER_WORKLOAD]

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "compiler/ir/op_library.h"
#include "compiler/lower/pipeline.h"
#include "fuzz_trace_input.h"
#include "tests/support/random_schedule.h"
#include "tuned/v1/trace.pb.h"

using namespace tuned;

namespace {

void Write(const std::filesystem::path& path, size_t workload_index, const schedule::Trace& trace) {
  v1::Trace proto;
  schedule::TraceToProto(trace, &proto);
  std::ofstream out(path, std::ios::binary);
  out.put(char(workload_index));
  out << proto.SerializeAsString();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fuzz_trace_seeds OUT_DIR [SCHEDULES_PER_WORKLOAD]\n");
    return 2;
  }
  const std::filesystem::path out_dir = argv[1];
  const int per_workload = argc > 2 ? std::atoi(argv[2]) : 6;
  std::filesystem::create_directories(out_dir);
  const auto& specs = fuzz::TraceWorkloadSpecs();
  for (size_t i = 0; i < specs.size(); ++i) {
    auto workload = std::make_shared<const ir::Workload>(ir::ParseWorkloadSpec(specs[i]).value());
    Write(out_dir / ("w" + std::to_string(i) + "_default"), i,
          lower::DefaultScheduleTrace(workload).value());
    for (int s = 0; s < per_workload; ++s) {
      schedule::Schedule sch = testing::RandomSchedule(workload, uint64_t(1000 * i + s));
      Write(out_dir / ("w" + std::to_string(i) + "_random" + std::to_string(s)), i, sch.trace());
    }
  }
  return 0;
}
