#include "observability/server/status_api.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/time.h"
#include "common/version.h"
#include "observability/curve/tuning_curve.h"

namespace tuned::observability {

// The page's bytes (status_page.html), embedded by cmake/EmbedFile.cmake.
extern const unsigned char kStatusPage[];
extern const std::size_t kStatusPage_size;

namespace {

using nlohmann::json;

constexpr size_t kMaxTasksShown = 50;

HttpResponse Json(const json& body) {
  return {200, "application/json", body.dump()};
}

HttpResponse Error(int status, const std::string& message) {
  return {status, "application/json", json{{"error", message}}.dump()};
}

std::string StateName(v1::TaskState state) {
  return v1::TaskState_Name(state).substr(std::string("TASK_STATE_").size());
}

json TaskJson(const v1::TaskStatus& task) {
  const double flops = task.best().workload().flops();
  const double best = RecordGflops(task.best());
  json out = {{"task_id", task.task_id()},
              {"state", StateName(task.state())},
              {"workload", task.spec().workload_spec()},
              {"target", task.spec().target().target()},
              {"trials_done", task.trials_done()},
              {"trial_budget", task.spec().trial_budget()},
              {"best_gflops", best},
              {"updated_unix_ms", task.updated_unix_ms()},
              {"waiting_for", task.waiting_for()},
              {"error", task.error()}};
  if (task.default_median_seconds() > 0 && best > 0) {
    out["default_gflops"] = flops / task.default_median_seconds() / 1e9;
    out["speedup_over_default"] =
        task.default_median_seconds() / task.best().result().median_seconds();
  }
  return out;
}

HttpResponse Status(dispatch::Dispatcher& dispatcher, tasks::TaskManager& tasks) {
  StatusOr<std::vector<v1::TaskStatus>> listed = tasks.List(std::nullopt);
  if (!listed.ok()) return Error(500, listed.status().message());
  std::vector<v1::TaskStatus>& all = *listed;
  // Running tasks first, then the most recently changed.
  std::sort(all.begin(), all.end(), [](const v1::TaskStatus& a, const v1::TaskStatus& b) {
    const bool a_running = a.state() == v1::TASK_STATE_RUNNING;
    const bool b_running = b.state() == v1::TASK_STATE_RUNNING;
    if (a_running != b_running) return a_running;
    return a.updated_unix_ms() > b.updated_unix_ms();
  });
  json task_list = json::array();
  for (size_t i = 0; i < all.size() && i < kMaxTasksShown; ++i) task_list.push_back(TaskJson(all[i]));

  std::map<std::string, json> queues;
  for (const dispatch::TargetQueueSnapshot& queue : dispatcher.QueueSnapshots()) {
    queues[queue.target] = {{"target", queue.target},
                            {"queued", queue.queued},
                            {"leased", queue.leased},
                            {"lease_expiries", queue.leases_expired},
                            {"leases_revoked", queue.leases_revoked},
                            {"workers", 0},
                            {"slots", 0},
                            {"unserved_ms", dispatcher.UnservedMs(queue.target)}};
  }
  json workers = json::array();
  for (const dispatch::WorkerSnapshot& worker : dispatcher.ListWorkers()) {
    const std::string& target = worker.hello.target().target();
    const size_t busy = worker.running_job_ids.size();
    workers.push_back({{"worker_id", worker.hello.worker_id()},
                       {"target", target},
                       {"device", worker.hello.device().model()},
                       {"version", worker.hello.version()},
                       {"peer", worker.peer},
                       {"slots", worker.hello.slots()},
                       {"busy_slots", busy},
                       {"state", worker.draining ? "draining" : busy > 0 ? "busy" : "idle"},
                       {"results", worker.results},
                       {"leases_lost", worker.leases_lost},
                       {"connected_unix_ms", worker.connected_unix_ms},
                       {"last_seen_unix_ms", worker.last_seen_unix_ms}});
    json& queue = queues[target];
    if (queue.is_null()) {
      queue = {{"target", target}, {"queued", 0}, {"leased", 0}, {"lease_expiries", 0},
               {"leases_revoked", 0}, {"workers", 0}, {"slots", 0}, {"unserved_ms", 0}};
    }
    queue["workers"] = queue["workers"].get<int>() + 1;
    queue["slots"] = queue["slots"].get<int64_t>() + int64_t(worker.hello.slots());
  }
  json queue_list = json::array();
  for (auto& [target, queue] : queues) queue_list.push_back(std::move(queue));
  return Json({{"version", kTunedVersion},
               {"now_unix_ms", UnixMs()},
               {"tasks_total", all.size()},
               {"tasks", std::move(task_list)},
               {"workers", std::move(workers)},
               {"queues", std::move(queue_list)}});
}

HttpResponse Curve(db::RecordStore& records, const std::string& task_id) {
  StatusOr<std::vector<v1::TuningRecord>> stored = records.TaskRecords(task_id);
  if (!stored.ok()) return Error(500, stored.status().message());
  const TuningCurve curve = CurveOf(*stored);
  json points = json::array();
  for (const CurvePoint& point : curve.points) {
    points.push_back({point.trial, point.seconds, point.gflops, point.best_gflops,
                      StatusLabel(point.status)});
  }
  return Json({{"task_id", task_id},
               {"workload", curve.workload_key},
               {"target", curve.target},
               {"columns", {"trial", "seconds", "gflops", "best_gflops", "status"}},
               {"points", std::move(points)}});
}

}  // namespace

std::vector<HttpRoute> StatusRoutes(dispatch::Dispatcher& dispatcher, tasks::TaskManager& tasks,
                                    db::RecordStore& records) {
  std::vector<HttpRoute> routes;
  HttpRoute page;
  page.path = "/";
  page.needs_token = false;
  page.handler = [](const HttpRequest&) {
    return HttpResponse{200, "text/html; charset=utf-8",
                        std::string(reinterpret_cast<const char*>(kStatusPage), kStatusPage_size)};
  };
  routes.push_back(std::move(page));
  HttpRoute status;
  status.path = "/api/status";
  status.handler = [&dispatcher, &tasks](const HttpRequest&) { return Status(dispatcher, tasks); };
  routes.push_back(std::move(status));
  HttpRoute curve;
  curve.path = "/api/tasks/";
  curve.prefix = true;
  curve.handler = [&records](const HttpRequest& request) {
    // /api/tasks/<id>/curve
    const std::string rest = request.path.substr(std::string("/api/tasks/").size());
    const size_t slash = rest.find('/');
    if (slash == std::string::npos || rest.substr(slash) != "/curve" || slash == 0) {
      return Error(404, "no such endpoint: " + request.path + " (try /api/tasks/<id>/curve)");
    }
    return Curve(records, rest.substr(0, slash));
  };
  routes.push_back(std::move(curve));
  return routes;
}

}  // namespace tuned::observability
