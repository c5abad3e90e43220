// The dispatcher of the real server stack (server/stack: database, tasks, services) through
// the gRPC server on loopback, with simulated workers that answer every job at once with a
// synthetic result (this benchmark only; real workers compile and time). Jobs are submitted to
// the dispatcher directly, so no search runs. Measures:
//   BM_DispatchThroughput/N  jobs per second through the server with N workers (4 slots each)
//   BM_DispatchLatency       the server's added latency per job: submit → lease → stream →
//                            worker → result → callback, one job in flight, zero work.
// Run: build/bench/tuned_dispatch_bench

#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>

#include <stdlib.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/stack/server_stack.h"
#include "tuned/v1/worker_service.grpc.pb.h"

namespace tuned {
namespace {

constexpr char kTarget[] = "llvm -mcpu=znver3 -num-cores=2";
constexpr uint32_t kSlots = 4;

// A worker that answers each job immediately with a synthetic OK result.
class SimulatedWorker {
 public:
  SimulatedWorker(const std::string& address, int index) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // One connection per worker.
    channel_ = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
    stub_ = v1::WorkerService::NewStub(channel_);
    stream_ = stub_->Connect(&context_);
    v1::WorkerMessage hello;
    hello.mutable_hello()->set_worker_id("sim-" + std::to_string(index));
    hello.mutable_hello()->mutable_target()->set_target(kTarget);
    hello.mutable_hello()->set_slots(kSlots);
    stream_->Write(hello);
    thread_ = std::thread([this] { Serve(); });
  }

  ~SimulatedWorker() {
    context_.TryCancel();
    thread_.join();
  }

 private:
  void Serve() {
    v1::ServerMessage message;
    while (stream_->Read(&message)) {
      if (!message.has_job()) continue;
      v1::WorkerMessage out;
      v1::MeasureResult* result = out.mutable_result();
      result->set_job_id(message.job().job_id());
      result->set_status(v1::MEASURE_STATUS_OK);
      result->add_repeat_seconds(1e-3);
      result->set_median_seconds(1e-3);
      if (!stream_->Write(out)) break;
    }
    stream_->Finish();
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::WorkerService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::WorkerMessage, v1::ServerMessage>> stream_;
  std::thread thread_;
};

// A job of realistic size: the payload is opaque to the dispatcher, but travels the stream.
v1::MeasureJob MakeJob(int64_t id) {
  v1::MeasureJob job;
  job.set_job_id("job-" + std::to_string(id));
  job.set_task_id("task-" + std::to_string(id % 4));
  job.mutable_target()->set_target(kTarget);
  job.mutable_workload()->set_key("matmul(M=1024,N=1024,K=1024,dtype=float32)");
  for (int i = 0; i < 24; ++i) {
    v1::Instruction* inst = job.mutable_trace()->add_instructions();
    inst->set_kind(i % 3 == 0 ? "sample_perfect_tile" : "split");
    inst->add_inputs()->set_rv(uint32_t(i));
    inst->add_int_attrs(4);
    inst->add_outputs(uint32_t(i + 100));
  }
  job.mutable_config()->set_repeat(5);
  return job;
}

class Bench {
 public:
  explicit Bench(int workers) {
    char dir[] = "/tmp/tuned_dispatch_bench.XXXXXX";
    if (mkdtemp(dir) == nullptr) std::abort();
    dir_ = dir;
    server::ServerStackConfig config;
    config.listen = "127.0.0.1:0";
    config.db_path = dir_ + "/tuned.db";
    config.dispatcher.heartbeat_interval_ms = 1000;
    config.dispatcher.lease_timeout_ms = 600000;  // The simulated workers send no heartbeats.
    auto started = server::ServerStack::Start(config);
    if (!started.ok()) std::abort();
    stack_ = std::move(*started);
    const std::string address = "127.0.0.1:" + std::to_string(stack_->server().port());
    for (int i = 0; i < workers; ++i) {
      workers_.push_back(std::make_unique<SimulatedWorker>(address, i));
    }
    while (stack_->dispatcher().Stats().workers < workers) std::this_thread::yield();
  }

  ~Bench() {
    workers_.clear();
    stack_->server().Shutdown(/*grace_ms=*/100);
    stack_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Submits `count` jobs and waits for every result.
  void RunJobs(int count) {
    std::unique_lock<std::mutex> lock(mu_);
    remaining_ = count;
    lock.unlock();
    for (int i = 0; i < count; ++i) {
      Status submitted = stack_->dispatcher().Submit(MakeJob(next_id_++), [this](const v1::MeasureResult&) {
        std::lock_guard<std::mutex> guard(mu_);
        if (--remaining_ == 0) cv_.notify_all();
      });
      if (!submitted.ok()) std::abort();
    }
    lock.lock();
    cv_.wait(lock, [this] { return remaining_ == 0; });
  }

 private:
  std::string dir_;
  std::unique_ptr<server::ServerStack> stack_;
  std::vector<std::unique_ptr<SimulatedWorker>> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  int remaining_ = 0;
  int64_t next_id_ = 0;
};

void BM_DispatchThroughput(benchmark::State& state) {
  Bench bench(int(state.range(0)));
  constexpr int kJobsPerIteration = 2000;
  for (auto _ : state) bench.RunJobs(kJobsPerIteration);
  state.SetItemsProcessed(state.iterations() * kJobsPerIteration);
  state.counters["workers"] = double(state.range(0));
}
BENCHMARK(BM_DispatchThroughput)
    ->Arg(1)
    ->Arg(4)
    ->Arg(16)
    ->Arg(64)
    ->Iterations(5)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_DispatchLatency(benchmark::State& state) {
  Bench bench(1);
  for (auto _ : state) bench.RunJobs(1);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DispatchLatency)->Iterations(2000)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tuned

BENCHMARK_MAIN();
