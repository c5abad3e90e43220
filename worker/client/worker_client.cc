#include "worker/client/worker_client.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <thread>

#include "common/logging.h"
#include "common/version.h"
#include "rpc/auth.h"
#include "rpc/grpc_status.h"
#include "tuned/v1/worker_service.grpc.pb.h"

namespace tuned::worker {
namespace {

std::shared_ptr<spdlog::logger> Log() { return Logger("worker"); }

bool IsPermanent(StatusCode code) {
  return code == StatusCode::kUnauthenticated || code == StatusCode::kPermissionDenied ||
         code == StatusCode::kInvalidArgument || code == StatusCode::kFailedPrecondition ||
         code == StatusCode::kUnimplemented;
}

// How long the worker must have been idle before it calibrates (see CalibrationLoop).
constexpr auto kBatchGap = std::chrono::milliseconds(100);

}  // namespace

/// One stream. Writes (results from engine threads, heartbeats, the hello) are serialized by
/// `mu`; once `closed` is set no write starts, so Finish never races a write.
struct WorkerClient::Session {
  std::mutex mu;
  std::condition_variable cv;  // the heartbeat's: notified when the session closes
  std::condition_variable idle;  // Notified when `running` becomes empty.
  std::condition_variable calibration_cv;  // Notified when `running` changes or it closes.
  bool closed = false;
  int heartbeat_ms = 1000;
  std::set<std::string> running;
  bool calibration_due = true;  // after hello, and whenever `running` became empty
  std::unique_ptr<grpc::ClientReaderWriter<v1::WorkerMessage, v1::ServerMessage>> stream;

  // Requires mu.
  bool WriteLocked(const v1::WorkerMessage& message) { return !closed && stream->Write(message); }
  // Whether the job was still held.
  bool FinishJobLocked(const std::string& job_id) {
    const bool was_running = running.erase(job_id) != 0;
    if (running.empty()) {
      idle.notify_all();
      if (was_running) calibration_due = true;
    }
    calibration_cv.notify_all();
    return was_running;
  }
};

WorkerClient::WorkerClient(WorkerClientOptions options, MeasurementEngine& engine)
    : options_(std::move(options)), engine_(engine) {
  worker_id_ = options_.worker_id;
  if (worker_id_.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    worker_id_ =
        std::string(host) + ":" + std::to_string(getpid()) + ":" +
        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 100000);
  }
  if (options_.calibrate) {
    auto kernel = CalibrationKernel::Create(engine_);
    if (kernel.ok()) {
      calibration_ = std::move(*kernel);
    } else {
      Log()->warn("worker {}: no calibration kernel ({}); drift is not detected", worker_id_,
                  kernel.status().message());
    }
  }
}

WorkerClient::~WorkerClient() { Stop(); }

void WorkerClient::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  if (active_context_ != nullptr) active_context_->TryCancel();
  cv_.notify_all();
}

int WorkerClient::Drain(const std::string& reason, std::chrono::milliseconds timeout) {
  std::shared_ptr<Session> session;
  {
    std::lock_guard<std::mutex> lock(mu_);
    session = active_session_;
    stopping_ = true;  // No reconnection from here on; Stop below ends the stream.
  }
  int left = 0;
  if (session != nullptr) {
    std::unique_lock<std::mutex> lock(session->mu);
    v1::WorkerMessage message;
    message.mutable_drain()->set_reason(reason);
    if (session->WriteLocked(message)) {
      Log()->info("worker draining worker={} jobs_held={} timeout_ms={}", worker_id_,
                  session->running.size(), timeout.count());
      session->idle.wait_for(lock, timeout,
                             [&] { return session->running.empty() || session->closed; });
    }
    left = int(session->running.size());
  }
  Log()->info("worker drained worker={} jobs_handed_back={}", worker_id_, left);
  Stop();
  return left;
}

WorkerClientStats WorkerClient::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  WorkerClientStats stats;
  stats.sessions = sessions_;
  stats.jobs = jobs_;
  stats.results = results_->load();
  stats.dropped = dropped_->load();
  stats.calibrations = calibrations_;
  stats.calibration_seconds = calibration_seconds_;
  stats.calibration_baseline_seconds = calibration_baseline_seconds_;
  return stats;
}

Status WorkerClient::Run() {
  int failures = 0;
  int backoff_ms = options_.reconnect_initial_ms;
  while (true) {
    bool established = false;
    Status status = RunSession(&established);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return Status::Ok();
    }
    if (IsPermanent(status.code())) {
      Log()->error("worker refused by server worker={}: {}", worker_id_, status.message());
      return status;
    }
    if (established) {
      failures = 0;
      backoff_ms = options_.reconnect_initial_ms;
    }
    ++failures;
    if (options_.max_reconnects >= 0 && failures > options_.max_reconnects) {
      return UnavailableError("gave up after " + std::to_string(failures) +
                              " failed connection attempt(s): " + status.message());
    }
    Log()->warn("worker disconnected worker={} reason='{}'; reconnecting in {} ms", worker_id_,
                status.message(), backoff_ms);
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(backoff_ms), [&] { return stopping_; });
    if (stopping_) return Status::Ok();
    backoff_ms = std::min(backoff_ms * 2, options_.reconnect_max_ms);
  }
}

Status WorkerClient::RunSession(bool* established) {
  auto stub = v1::WorkerService::NewStub(options_.channel);
  // No deadline: the stream lives as long as the worker. A dead server is noticed by the
  // channel's keepalive pings (rpc/channel.cc) and the server drops a silent worker by heartbeats.
  grpc::ClientContext context;
  rpc::AddToken(context, options_.token);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::Ok();
    active_context_ = &context;
  }
  auto session = std::make_shared<Session>();
  session->heartbeat_ms = options_.default_heartbeat_ms;
  {
    std::lock_guard<std::mutex> lock(mu_);
    active_session_ = session;
  }
  session->stream = stub->Connect(&context);

  v1::WorkerMessage hello;
  v1::WorkerHello* h = hello.mutable_hello();
  h->set_worker_id(worker_id_);
  *h->mutable_target() = engine_.target();
  *h->mutable_device() = engine_.device();
  h->set_slots(options_.slots);
  h->set_version(kTunedVersion);
  bool hello_sent;
  {
    std::lock_guard<std::mutex> lock(session->mu);
    hello_sent = session->WriteLocked(hello);
  }

  std::thread heartbeat;
  std::thread calibration;
  v1::ServerMessage message;
  while (hello_sent && session->stream->Read(&message)) {
    switch (message.message_case()) {
      case v1::ServerMessage::kHeartbeatIntervalMs: {
        std::lock_guard<std::mutex> lock(session->mu);
        session->heartbeat_ms = std::max<int>(10, int(message.heartbeat_interval_ms()));
        if (!*established) {
          *established = true;
          std::lock_guard<std::mutex> stats_lock(mu_);
          ++sessions_;
          Log()->info("worker connected worker={} target='{}' slots={} heartbeat_ms={}", worker_id_,
                      engine_.target().target(), options_.slots, session->heartbeat_ms);
        }
        if (!heartbeat.joinable())
          heartbeat = std::thread([this, session] { HeartbeatLoop(session); });
        // Its own thread: a calibration waits for the engine, heartbeats never do.
        if (calibration_ != nullptr && !calibration.joinable())
          calibration = std::thread([this, session] { CalibrationLoop(session); });
        break;
      }
      case v1::ServerMessage::kJob: {
        const std::string job_id = message.job().job_id();
        {
          std::lock_guard<std::mutex> lock(session->mu);
          session->running.insert(job_id);
          session->calibration_cv.notify_all();
        }
        {
          std::lock_guard<std::mutex> lock(mu_);
          ++jobs_;
        }
        Log()->debug("job received worker={} job={} attempt={}", worker_id_, job_id,
                     message.job().attempt());
        auto results = results_;
        auto dropped = dropped_;
        const std::string worker_id = worker_id_;
        engine_.Submit(message.job(), [session, job_id, worker_id, results,
                                       dropped](StatusOr<v1::MeasureResult> result) {
          std::lock_guard<std::mutex> lock(session->mu);
          if (!session->FinishJobLocked(job_id) || session->closed) {
            ++*dropped;
            return;
          }
          if (!result.ok()) {
            // Not a candidate failure but this worker's: stop renewing the lease so the job
            // goes to another worker.
            Logger("worker")->error("job failed on this worker job={}: {}", job_id,
                                    result.status().message());
            ++*dropped;
            return;
          }
          v1::WorkerMessage out;
          *out.mutable_result() = std::move(*result);
          out.mutable_result()->set_job_id(job_id);
          out.mutable_result()->set_worker_id(worker_id);
          if (session->WriteLocked(out)) {
            ++*results;
          } else {
            ++*dropped;
          }
        });
        break;
      }
      case v1::ServerMessage::kCancelJobId: {
        std::lock_guard<std::mutex> lock(session->mu);
        session->FinishJobLocked(message.cancel_job_id());
        break;
      }
      case v1::ServerMessage::MESSAGE_NOT_SET:
        break;
    }
  }
  {
    std::lock_guard<std::mutex> lock(session->mu);
    session->closed = true;
    session->cv.notify_all();
    session->idle.notify_all();
    session->calibration_cv.notify_all();
  }
  if (heartbeat.joinable()) heartbeat.join();
  if (calibration.joinable()) calibration.join();
  grpc::Status finished = session->stream->Finish();
  {
    std::lock_guard<std::mutex> lock(mu_);
    active_context_ = nullptr;
    active_session_ = nullptr;
  }
  if (finished.ok()) return UnavailableError("server closed the stream");
  return rpc::FromGrpcStatus(finished, "server " + context.peer());
}

void WorkerClient::HeartbeatLoop(const std::shared_ptr<Session>& session) {
  std::unique_lock<std::mutex> lock(session->mu);
  while (!session->closed) {
    session->cv.wait_for(lock, std::chrono::milliseconds(session->heartbeat_ms));
    if (session->closed) break;
    v1::WorkerMessage message;
    for (const std::string& id : session->running) {
      message.mutable_heartbeat()->add_running_job_ids(id);
    }
    message.mutable_heartbeat();
    if (!session->WriteLocked(message)) break;
  }
}

void WorkerClient::CalibrationLoop(const std::shared_ptr<Session>& session) {
  std::unique_lock<std::mutex> lock(session->mu);
  bool warm = false;  // the first timing of a session is a warm-up: it would skew the baseline
  std::optional<std::chrono::steady_clock::time_point> last;  // this session's last calibration
  const auto max_interval = std::chrono::milliseconds(options_.calibration_max_interval_ms);
  while (true) {
    session->calibration_cv.wait(lock, [&] {
      return session->closed || (session->calibration_due && session->running.empty());
    });
    if (session->closed) return;
    // A job arriving within kBatchGap is the same batch's next one (the server leases it as
    // soon as a slot frees): calibrate between batches, while the server searches, not
    // between the jobs of a batch, where it would cost every trial 7 timings. A worker whose
    // batches follow each other closer than that calibrates anyway once it is overdue.
    const bool overdue = !last || std::chrono::steady_clock::now() - *last >= max_interval;
    if (!overdue && session->calibration_cv.wait_for(lock, kBatchGap, [&] {
          return session->closed || !session->running.empty();
        })) {
      continue;  // still due: after this batch (or closed: the wait above returns)
    }
    session->calibration_due = false;
    last = std::chrono::steady_clock::now();
    lock.unlock();  // jobs arriving meanwhile queue behind it in the engine
    if (!warm) {
      (void)calibration_->Measure();
      warm = true;
    }
    StatusOr<v1::Calibration> figure = calibration_->Measure();
    lock.lock();
    if (!figure.ok() || !(figure->median_seconds() > 0)) {
      Log()->warn("worker {}: calibration failed: {}", worker_id_,
                  figure.ok() ? "no time measured" : figure.status().message());
      continue;
    }
    Log()->debug("calibration worker={} median_s={} cv={}", worker_id_,
                 figure->median_seconds(), figure->repeat_cv());
    {
      std::lock_guard<std::mutex> stats_lock(mu_);  // after session->mu, as everywhere
      ++calibrations_;
      calibration_seconds_ = figure->median_seconds();
      if (calibration_baseline_seconds_ == 0) calibration_baseline_seconds_ = calibration_seconds_;
    }
    v1::WorkerMessage message;
    *message.mutable_calibration() = *figure;
    if (!session->WriteLocked(message)) return;
  }
}

}  // namespace tuned::worker
