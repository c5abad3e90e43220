#include "cli/task_follow.h"

#include <chrono>
#include <thread>

#include "common/logging.h"
#include "proto/task_state.h"
#include "rpc/tuning_client.h"

namespace tuned::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Follows the task until it reaches a final state; survives a server restart for `wait_s`.
StatusOr<v1::TaskStatus> FollowTask(rpc::TuningClient& client, v1::TaskStatus status, int wait_s,
                                    TuneProgress& progress) {
  auto last_contact = Clock::now();
  int backoff_ms = 100;
  while (!v1::IsFinal(status.state())) {
    Status finished = client.Watch(status.task_id(), [&](const v1::TaskStatus& update) {
      last_contact = Clock::now();
      backoff_ms = 100;
      if (update.trials_done() >= status.trials_done() || v1::IsFinal(update.state())) {
        if (!update.waiting_for().empty() && update.waiting_for() != status.waiting_for()) {
          Logger("cli")->warn("task {} is waiting: {}", update.task_id(), update.waiting_for());
        }
        status = update;
        progress.Show(status);
      }
    });
    if (v1::IsFinal(status.state())) break;
    if (!finished.ok() && finished.code() != StatusCode::kUnavailable &&
        finished.code() != StatusCode::kCancelled) {
      return finished;
    }
    if (Clock::now() - last_contact > std::chrono::seconds(wait_s)) {
      return UnavailableError("lost the server for more than " + std::to_string(wait_s) +
                              " s: " + finished.message());
    }
    Logger("cli")->warn("{}; retrying in {} ms", finished.message(), backoff_ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
    backoff_ms = std::min(backoff_ms * 2, 2000);
  }
  return status;
}

}  // namespace

StatusOr<v1::TaskStatus> SubmitAndFollow(rpc::Connection connection, const v1::TaskSpec& spec, int wait_s,
                                         ProgressMode progress_mode) {
  rpc::TuningClient client(std::move(connection));
  StatusOr<v1::TaskStatus> submitted = client.Submit(spec, wait_s * 1000);
  if (submitted.status().code() == StatusCode::kDeadlineExceeded) {
    return UnavailableError("submitting the task: no answer from the server within " +
                            std::to_string(wait_s) + " s (--wait-s)");
  }
  if (!submitted.ok()) return submitted.status();
  Logger("cli")->info("task submitted task={}", submitted->task_id());
  TuneProgress progress(progress_mode, stderr);
  progress.Show(*submitted);
  auto status = FollowTask(client, *submitted, wait_s, progress);
  progress.End();
  return status;
}

}  // namespace tuned::cli
