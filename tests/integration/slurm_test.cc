// Workers deployed the way an HPC cluster runs them: a real single-node Slurm (munged,
// slurmctld and slurmd started in a scratch folder by tests/support/slurm_cluster.sh) runs
// deploy/slurm/tuned-workers.sbatch as a job array against a real `tuned serve` on loopback. A
// task runs to the end while one array element is scancel'ed mid-task: that worker drains, and
// no trial is lost or measured twice. Skips, saying why, where Slurm cannot run (not root, the
// packages missing).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "proto/task_state.h"
#include "tests/integration/cluster.h"

namespace tuned::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

// Runs a shell command; its exit code and output (stdout and stderr).
int Shell(const std::string& command, std::string* out) {
  out->clear();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out->append(buffer, n);
  int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

class SlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    slurm_dir_ = cluster_.dir() + "/slurm";
    std::string out;
    int code = Shell(std::string(TUNED_SOURCE_DIR) + "/tests/support/slurm_cluster.sh start " +
                         slurm_dir_,
                     &out);
    if (code == 77) GTEST_SKIP() << out;
    ASSERT_EQ(code, 0) << out;
    started_ = true;
    setenv("SLURM_CONF", (slurm_dir_ + "/slurm.conf").c_str(), 1);
    std::string error;
    ASSERT_TRUE(cluster_.StartServer(&error)) << error;
  }

  void TearDown() override {
    if (!started_) return;
    std::string out;  // Cancels the jobs, stops the daemons, removes the folder.
    Shell(std::string(TUNED_SOURCE_DIR) + "/tests/support/slurm_cluster.sh stop " + slurm_dir_,
          &out);
  }

  // The workers' connected ids, from the server.
  std::set<std::string> ConnectedWorkers() {
    auto stub = cluster_.Workers();
    auto context = cluster_.Context();
    v1::ListWorkersResponse response;
    std::set<std::string> ids;
    if (!stub->ListWorkers(context.get(), v1::ListWorkersRequest(), &response).ok()) return ids;
    for (const auto& worker : response.workers()) ids.insert(worker.hello().worker_id());
    return ids;
  }

  Cluster cluster_;
  std::string slurm_dir_;
  bool started_ = false;
};

TEST_F(SlurmTest, WorkerArrayRunsATaskAndAScancelledWorkerDrains) {
  // Two array elements share the one test node (--exclusive=user instead of the script's
  // node-exclusive default); the environment reaches the script through --export=ALL.
  const std::string submit =
      "cd " + cluster_.dir() + " && TUNED_SERVER=" + cluster_.address() +
      " TUNED_TOKEN_FILE=" + cluster_.token_file() + " TUNED_WORKER_BIN=" TUNED_WORKER_BINARY +
      " TUNED_WORKER_ARGS='--log-level info --reconnect-max-ms 300'"
      " sbatch --parsable --array=0-1 --exclusive=user " TUNED_SOURCE_DIR
      "/deploy/slurm/tuned-workers.sbatch";
  std::string out;
  ASSERT_EQ(Shell(submit, &out), 0) << out;
  const std::string job_id = out.substr(0, out.find_first_of(";\n"));
  ASSERT_FALSE(job_id.empty()) << out;

  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (ConnectedWorkers().size() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);
  }
  std::set<std::string> workers = ConnectedWorkers();
  ASSERT_EQ(workers.size(), 2u) << "squeue: " << (Shell("squeue", &out), out);
  for (const std::string& id : workers) EXPECT_THAT(id, HasSubstr("slurm-" + job_id + "_"));

  const std::string task_id = SubmitTask(cluster_, Cluster::SmallTask(32));
  ASSERT_FALSE(task_id.empty());

  v1::TaskStatus status;
  ASSERT_TRUE(cluster_.WaitTask(
      task_id, [](const auto& s) { return s.trials_done() >= 8; }, 120s, &status));
  ASSERT_EQ(Shell("scancel " + job_id + "_0", &out), 0) << out;
  const std::string log0 = cluster_.dir() + "/tuned-worker-" + job_id + "_0.log";
  const auto drained_by = std::chrono::steady_clock::now() + 40s;
  while (ReadAll(log0).find("worker stopped") == std::string::npos &&
         std::chrono::steady_clock::now() < drained_by) {
    std::this_thread::sleep_for(100ms);
  }
  const std::string worker_log = ReadAll(log0);
  EXPECT_THAT(worker_log, HasSubstr("worker draining"));
  EXPECT_THAT(worker_log, HasSubstr("jobs_handed_back=0"));
  EXPECT_THAT(worker_log, HasSubstr("worker stopped"));

  ASSERT_TRUE(cluster_.WaitTask(
      task_id, [](const auto& s) { return v1::IsFinal(s.state()); }, 120s, &status))
      << cluster_.server().Log();
  EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error();
  EXPECT_EQ(status.trials_done(), 32u);

  std::set<std::string> measured_by;
  for (const auto& record : ExpectEachTrialOnce(cluster_, task_id, 32)) {
    measured_by.insert(record.result().worker_id());
  }
  EXPECT_EQ(measured_by, workers) << "both array elements measured";
}

}  // namespace
}  // namespace tuned::testing
