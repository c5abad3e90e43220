#ifndef TUNED_WORKER_CLIENT_WORKER_CLIENT_H_
#define TUNED_WORKER_CLIENT_WORKER_CLIENT_H_

/// \file
/// The worker's side of WorkerService.Connect: connects out to the server, says hello (target,
/// device, slots from the measurement engine), receives jobs and submits them to the engine,
/// reports every result, sends heartbeats listing the jobs it holds, and reconnects with
/// backoff when the stream breaks (server restart, network). Results of jobs received on a
/// stream that has since ended are dropped: the server has requeued those jobs, and job ids
/// mean nothing to a new session.
///
/// Stops on `Stop()`, on a refusal that retrying cannot fix (UNAUTHENTICATED,
/// PERMISSION_DENIED, INVALID_ARGUMENT, FAILED_PRECONDITION, UNIMPLEMENTED), or after
/// `max_reconnects` consecutive failed connection attempts.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "worker/calibration.h"
#include "worker/measurement_engine.h"

namespace grpc {
class Channel;
class ClientContext;
}  // namespace grpc

namespace tuned::worker {

struct WorkerClientOptions {
  /// The channel to the server (rpc::CreateClientChannel, or a server's in-process channel).
  std::shared_ptr<grpc::Channel> channel;
  /// Token presented on the stream; empty for none.
  std::string token;
  /// Unique per process; the engine's worker id when empty.
  std::string worker_id;
  /// Jobs held at once (the engine queues what it cannot build yet).
  uint32_t slots = 1;
  /// Consecutive failed connection attempts before giving up; negative: never give up.
  int max_reconnects = -1;
  /// Reconnect backoff: starts here, doubles, capped, milliseconds.
  int reconnect_initial_ms = 200;
  int reconnect_max_ms = 5000;
  /// Heartbeat interval until the server says otherwise, milliseconds.
  int default_heartbeat_ms = 1000;
  /// Time the calibration kernel (worker/calibration.h) after connecting and whenever the last
  /// running job is done (between batches), and report the figure (drift detection).
  bool calibrate = true;
  /// A worker kept so busy that it is never idle between batches for long still calibrates once
  /// this long has passed since its last figure: as soon as it holds no job, without waiting to
  /// see whether the batch goes on. Milliseconds; 0: whenever it holds no job.
  int calibration_max_interval_ms = 30000;
};

struct WorkerClientStats {
  int64_t sessions = 0;  // Streams the server accepted.
  int64_t jobs = 0;      // Jobs received.
  int64_t results = 0;   // Results reported.
  int64_t dropped = 0;   // Results dropped (cancelled, or their stream had ended).
  // The calibration kernel (worker/calibration.h): figures sent, the latest, and the first of
  // this process, which the drift is measured against (as the server does per worker id).
  int64_t calibrations = 0;
  double calibration_seconds = 0;
  double calibration_baseline_seconds = 0;
  /// (latest - first) / first; 0 before the first figure.
  double calibration_drift() const {
    return calibration_baseline_seconds > 0
               ? (calibration_seconds - calibration_baseline_seconds) / calibration_baseline_seconds
               : 0;
  }
};

class WorkerClient {
 public:
  /// `engine` must outlive this object.
  WorkerClient(WorkerClientOptions options, MeasurementEngine& engine);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  /// Connects and serves until stopped (OK) or refused / out of reconnects (the error).
  Status Run();
  /// Ends Run from another thread (or a signal-handling thread); idempotent. Jobs held are
  /// abandoned: the server requeues them when the stream ends.
  void Stop();
  /// Ends Run gracefully: tells the server to send no more jobs, waits up to `timeout` for
  /// the jobs held to be reported, then stops. Returns how many were still held (and so
  /// handed back to the server). Without a connection it just stops.
  int Drain(const std::string& reason, std::chrono::milliseconds timeout);

  const std::string& worker_id() const { return worker_id_; }
  WorkerClientStats stats() const;

 private:
  struct Session;
  /// One stream from hello to its end; `established` says whether the server accepted it.
  Status RunSession(bool* established);
  void HeartbeatLoop(const std::shared_ptr<Session>& session);
  /// Times the calibration kernel whenever it is due (after hello, and when the last running
  /// job is done) and sends the figure, until the session closes.
  void CalibrationLoop(const std::shared_ptr<Session>& session);

  const WorkerClientOptions options_;
  MeasurementEngine& engine_;
  std::string worker_id_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  grpc::ClientContext* active_context_ = nullptr;  // To cancel the open stream on Stop.
  std::shared_ptr<Session> active_session_;        // To drain it.
  std::shared_ptr<std::atomic<int64_t>> results_ = std::make_shared<std::atomic<int64_t>>(0);
  std::shared_ptr<std::atomic<int64_t>> dropped_ = std::make_shared<std::atomic<int64_t>>(0);
  int64_t sessions_ = 0;
  int64_t jobs_ = 0;
  int64_t calibrations_ = 0;
  double calibration_seconds_ = 0;
  double calibration_baseline_seconds_ = 0;
  std::unique_ptr<CalibrationKernel> calibration_;  // null when off or not buildable
};

}  // namespace tuned::worker

#endif  // TUNED_WORKER_CLIENT_WORKER_CLIENT_H_
