#ifndef TUNED_TESTS_UNIT_TUNING_DB_DB_TEST_UTIL_H_
#define TUNED_TESTS_UNIT_TUNING_DB_DB_TEST_UTIL_H_

// Fixtures for the tuning-database tests: a temporary directory, records shaped like real ones,
// and file helpers for the refusal tests.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>

#include "tuning_db/database.h"

namespace tuned::db::testing {

/// A fresh directory under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tuned_db_test_XXXXXX").string();
    char* made = mkdtemp(pattern.data());
    if (made == nullptr) std::abort();
    path_ = made;
  }
  ~TempDir() {
    std::error_code error;
    std::filesystem::remove_all(path_, error);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string MatmulKey(int m) {
  return "matmul(M=" + std::to_string(m) + ",N=256,K=256,dtype=float32)";
}

inline constexpr char kCpu[] = "llvm -mcpu=znver3 -num-cores=2";
inline constexpr char kGpu[] = "cuda -arch=sm_90";

/// A record of `MatmulKey(m)` on `target`; `seq` makes its trace (and time stamp) unique.
inline v1::TuningRecord MakeRecord(int m, const std::string& target, int64_t seq,
                                   double median_seconds,
                                   v1::MeasureStatus status = v1::MEASURE_STATUS_OK) {
  v1::TuningRecord record;
  v1::Workload* workload = record.mutable_workload();
  workload->set_key(MatmulKey(m));
  workload->set_op("matmul");
  workload->set_flops(2.0 * m * 256 * 256);
  record.mutable_target()->set_target(target);
  record.mutable_target()->set_kind(target == kGpu ? v1::TARGET_KIND_CUDA
                                                   : v1::TARGET_KIND_LLVM_CPU);
  v1::Trace* trace = record.mutable_trace();
  trace->set_version(1);
  v1::Instruction* get_block = trace->add_instructions();
  get_block->set_kind("get_block");
  get_block->add_str_attrs("C");
  get_block->add_outputs(0);
  v1::Instruction* sample = trace->add_instructions();
  sample->set_kind("sample_perfect_tile");
  sample->add_inputs()->set_rv(0);
  sample->add_int_attrs(2);
  sample->add_outputs(1);
  sample->add_outputs(2);
  v1::Decision* decision = trace->add_decisions();
  decision->set_instruction(1);
  decision->add_values(seq);
  decision->add_values(8);
  v1::MeasureResult* result = record.mutable_result();
  result->set_status(status);
  if (status == v1::MEASURE_STATUS_OK) {
    result->add_repeat_seconds(median_seconds * 0.99);
    result->add_repeat_seconds(median_seconds);
    result->add_repeat_seconds(median_seconds * 1.02);
    result->set_median_seconds(median_seconds);
  } else {
    result->set_error("failed on purpose");
  }
  result->set_worker_id("worker-1");
  result->mutable_device()->set_model("AMD EPYC 7B13");
  record.mutable_config()->set_repeat(3);
  record.set_tuner_version("0.1.0");
  record.set_task_id("task-a");
  record.set_created_unix_ms(1700000000000 + seq);
  return record;
}

inline std::unique_ptr<Database> OpenOrFail(const std::string& path, OpenOptions options = {}) {
  auto db = OpenSqliteDatabase(path, options);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  if (!db.ok()) return nullptr;
  return std::move(db).value();
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

}  // namespace tuned::db::testing

#endif  // TUNED_TESTS_UNIT_TUNING_DB_DB_TEST_UTIL_H_
