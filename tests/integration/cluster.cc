#include "tests/integration/cluster.h"

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "tuning_db/database.h"

namespace tuned::testing {
namespace {

using namespace std::chrono_literals;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

ChildProcess::ChildProcess(std::vector<std::string> argv, std::string log_path)
    : log_path_(std::move(log_path)) {
  // Everything the child needs is prepared before fork: after it only async-signal-safe calls.
  std::vector<char*> args;
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  const char* log = log_path_.c_str();
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    execv(args[0], args.data());
    _exit(127);
  }
}

ChildProcess::~ChildProcess() { KillNow(); }

bool ChildProcess::running() { return !Wait(0ms).has_value(); }

void ChildProcess::Signal(int signal_number) {
  if (pid_ > 0 && !exit_code_) kill(pid_, signal_number);
}

std::optional<int> ChildProcess::Wait(std::chrono::milliseconds timeout) {
  if (exit_code_ || pid_ <= 0) return exit_code_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exit_code_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(20ms);
  }
}

void ChildProcess::KillNow() {
  if (pid_ <= 0 || exit_code_) return;
  kill(pid_, SIGKILL);
  Wait(10s);
}

std::string ChildProcess::Log() const { return ReadFile(log_path_); }

Cluster::Cluster() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "tuned-integration-XXXXXX").string();
  dir_ = mkdtemp(pattern.data());
  db_path_ = dir_ + "/tuned.db";
  token_file_ = dir_ + "/token";
  port_file_ = dir_ + "/port";
  WriteSecret("token", token_ + "\n");
}

std::string Cluster::WriteSecret(const std::string& name, const std::string& content) const {
  const std::string path = dir_ + "/" + name;
  std::ofstream(path) << content;
  std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::owner_write);
  return path;
}

Cluster::~Cluster() {
  for (auto& worker : workers_) worker->KillNow();
  if (server_) server_->KillNow();
  if (std::getenv("TUNED_KEEP_TEST_DIR") == nullptr) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

bool Cluster::StartServer(std::string* error) {
  std::filesystem::remove(port_file_);
  const std::string log = dir_ + "/server" + std::to_string(server_starts_++) + ".log";
  std::vector<std::string> argv{TUNED_BINARY,
                                "--log-level",
                                "info",
                                "serve",
                                "--listen",
                                listen_host_ + ":" + std::to_string(port_),
                                "--db",
                                db_path_,
                                "--token-file",
                                token_file_,
                                "--port-file",
                                port_file_,
                                "--heartbeat-ms",
                                "100",
                                "--lease-timeout-ms",
                                "1500",
                                "--max-attempts",
                                "3",
                                "--task-check-ms",
                                "200"};
  argv.insert(argv.end(), server_args_.begin(), server_args_.end());
  argv.insert(argv.begin(), server_wrapper_.begin(), server_wrapper_.end());
  server_ = std::make_unique<ChildProcess>(argv, log);
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(port_file_)) {
      port_ = std::stoi(ReadFile(port_file_));
      return true;
    }
    if (!server_->running()) break;
    std::this_thread::sleep_for(20ms);
  }
  *error = "server did not start:\n" + server_->Log();
  return false;
}

ChildProcess& Cluster::StartWorker(const std::string& id, std::vector<std::string> extra) {
  std::vector<std::string> argv{TUNED_WORKER_BINARY,
                                "--log-level",
                                "info",
                                "--server",
                                address(),
                                "--token-file",
                                token_file_,
                                "--id",
                                id,
                                "--max-reconnects",
                                "100",
                                "--reconnect-max-ms",
                                "300"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  workers_.push_back(std::make_unique<ChildProcess>(argv, dir_ + "/worker-" + id + ".log"));
  return *workers_.back();
}

int Cluster::RunTuned(std::vector<std::string> args, std::string* out,
                      std::chrono::seconds timeout) {
  const std::string log = dir_ + "/tuned-" + std::to_string(workers_.size()) + "-" +
                          std::to_string(std::rand()) + ".out";
  args.insert(args.begin(), TUNED_BINARY);
  ChildProcess process(args, log);
  std::optional<int> code = process.Wait(timeout);
  *out = process.Log();
  return code.value_or(-1);
}

std::shared_ptr<grpc::Channel> Cluster::Channel() {
  return grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());
}

std::unique_ptr<v1::TuningService::Stub> Cluster::Tuning() {
  return v1::TuningService::NewStub(Channel());
}
std::unique_ptr<v1::WorkerService::Stub> Cluster::Workers() {
  return v1::WorkerService::NewStub(Channel());
}
std::unique_ptr<v1::DatabaseService::Stub> Cluster::Database() {
  return v1::DatabaseService::NewStub(Channel());
}

std::unique_ptr<grpc::ClientContext> Cluster::Context(std::optional<std::string> token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + token.value_or(token_));
  context->set_deadline(std::chrono::system_clock::now() + 10s);
  return context;
}

v1::TaskSpec Cluster::SmallTask(uint32_t trials) {
  v1::TaskSpec spec;
  spec.set_workload_spec("matmul(M=32,N=32,K=32)");
  spec.set_trial_budget(trials);
  spec.mutable_search()->set_seed(7);
  spec.mutable_search()->set_batch_size(8);
  v1::MeasureConfig* measure = spec.mutable_measure();
  measure->set_warmup(0);
  measure->set_number(1);
  measure->set_repeat(1);
  measure->set_min_repeat_ms(0);
  measure->set_build_timeout_ms(20000);
  measure->set_run_timeout_ms(20000);
  measure->set_verify(true);
  measure->set_seed(1);
  return spec;
}

bool Cluster::WaitTask(const std::string& task_id,
                       const std::function<bool(const v1::TaskStatus&)>& done,
                       std::chrono::seconds timeout, v1::TaskStatus* status) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto stub = Tuning();
  while (true) {  // At least one poll, also with a zero timeout.
    auto context = Context();
    v1::GetTaskRequest request;
    request.set_task_id(task_id);
    v1::TaskStatus current;
    if (stub->GetTask(context.get(), request, &current).ok()) {
      *status = current;
      if (done(current)) return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(50ms);
  }
}

bool Cluster::WaitWorkers(int count, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto stub = Workers();
  while (std::chrono::steady_clock::now() < deadline) {
    auto context = Context();
    v1::ListWorkersResponse response;
    if (stub->ListWorkers(context.get(), v1::ListWorkersRequest(), &response).ok() &&
        response.workers_size() >= count) {
      return true;
    }
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

std::string SubmitTask(Cluster& cluster, const v1::TaskSpec& spec) {
  auto stub = cluster.Tuning();
  auto context = cluster.Context();
  v1::SubmitTaskRequest request;
  *request.mutable_spec() = spec;
  v1::SubmitTaskResponse response;
  grpc::Status status = stub->SubmitTask(context.get(), request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response.status().task_id();
}

std::unique_ptr<db::Database> OpenDb(const Cluster& cluster) {
  db::OpenOptions options;
  options.create_if_missing = false;
  auto database = db::OpenDatabase(cluster.db_path(), options);
  EXPECT_TRUE(database.ok()) << database.status().ToString();
  return database.ok() ? std::move(*database) : nullptr;
}

std::vector<v1::TuningRecord> ExpectEachTrialOnce(const Cluster& cluster,
                                                  const std::string& task_id, size_t trials) {
  std::unique_ptr<db::Database> database = OpenDb(cluster);
  if (database == nullptr) return {};
  auto records = database->TaskRecords(task_id);
  EXPECT_TRUE(records.ok()) << records.status().ToString();
  if (!records.ok()) return {};
  // Trials are the search's records; re-measures of them (noise, drift, the final top-k) are not.
  std::vector<v1::TuningRecord> trials_stored;
  for (const v1::TuningRecord& record : *records) {
    if (record.kind() == v1::RECORD_KIND_SEARCH) trials_stored.push_back(record);
  }
  EXPECT_EQ(trials_stored.size(), trials);
  std::set<std::string> traces;
  std::set<std::string> jobs;
  for (const v1::TuningRecord& record : trials_stored) {
    traces.insert(record.trace_hash());
    jobs.insert(record.result().job_id());
  }
  EXPECT_EQ(traces.size(), trials_stored.size()) << "a trace was recorded twice";
  EXPECT_EQ(jobs.size(), trials_stored.size()) << "a job was recorded twice";
  return *records;
}

}  // namespace tuned::testing
