#ifndef TUNED_OBSERVABILITY_SERVER_STATUS_API_H_
#define TUNED_OBSERVABILITY_SERVER_STATUS_API_H_

/// \file
/// The live status page and the JSON behind it, served next to /metrics:
///   GET /                       the page: HTML, style and script in one file embedded at
///                               build time (no external assets); it polls the two below
///   GET /api/status             tasks (newest first), workers and per-target queues
///   GET /api/tasks/<id>/curve   every trial of a task: trial, seconds, GFLOP/s, best so far,
///                               status (the points of its tuning curves)
/// The page holds no data, so it is served without a credential; the JSON needs the bearer
/// token when one is configured (the page takes it from its URL fragment, `#token=...`).

#include <vector>

#include "observability/http_endpoint.h"
#include "server/dispatch/dispatcher.h"
#include "server/tasks/task_manager.h"
#include "tuning_db/record_store.h"

namespace tuned::observability {

/// The routes above. The three sources must outlive the endpoint serving them.
std::vector<HttpRoute> StatusRoutes(dispatch::Dispatcher& dispatcher, tasks::TaskManager& tasks,
                                    db::RecordStore& records);

}  // namespace tuned::observability

#endif  // TUNED_OBSERVABILITY_SERVER_STATUS_API_H_
