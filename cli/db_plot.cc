#include "cli/db_plot.h"

#include <cstdio>
#include <fstream>

#include "observability/curve/tuning_curve.h"
#include "observability/plot/plot.h"

namespace tuned::cli {
namespace {

// Every record of a workload (on `target`, or any when empty), in row order, page by page.
StatusOr<std::vector<v1::TuningRecord>> AllRecords(db::RecordStore& records,
                                                   const std::string& key,
                                                   const std::string& target) {
  TUNED_ASSIGN_OR_RETURN(v1::Workload workload, records.GetWorkload(key));
  std::vector<v1::TuningRecord> out;
  db::RecordFilter filter;
  filter.workload_key = key;
  filter.target = target;
  filter.limit = 1000;
  while (true) {
    TUNED_ASSIGN_OR_RETURN(std::vector<v1::TuningRecord> page, records.ListRecords(filter));
    for (v1::TuningRecord& record : page) {
      // The stored workload has the flops GFLOP/s are computed from.
      if (record.workload().flops() <= 0) *record.mutable_workload() = workload;
      out.push_back(std::move(record));
    }
    if (int(page.size()) < filter.limit) break;
    filter.after_id = out.back().record_id();
  }
  return out;
}

}  // namespace

Status WritePlot(db::RecordStore& records, const PlotRequest& request) {
  const bool svg = request.output.ends_with(".svg");
  const bool png = request.output.ends_with(".png");
  if (!svg && !png) {
    return InvalidArgumentError("-o '" + request.output + "': the plot is written as .svg or .png");
  }
  observability::PlotOptions options;
  options.width = request.width;
  options.height = request.height;
  options.title = request.title;
  if (request.x_axis == "trials") {
    options.x_axis = observability::PlotAxis::kTrials;
  } else if (request.x_axis == "time") {
    options.x_axis = observability::PlotAxis::kSeconds;
  } else {
    return InvalidArgumentError("--x '" + request.x_axis + "': expected trials or time");
  }
  std::vector<observability::TuningCurve> curves;
  const std::vector<std::string> targets =
      request.targets.empty() ? std::vector<std::string>{""} : request.targets;
  for (const std::string& key : request.workload_keys) {
    for (const std::string& target : targets) {
      TUNED_ASSIGN_OR_RETURN(std::vector<v1::TuningRecord> found,
                             AllRecords(records, key, target));
      for (observability::TuningCurve& curve : observability::CurvesByTask(found)) {
        curves.push_back(std::move(curve));
      }
    }
  }
  if (curves.empty()) {
    return NotFoundError("no records of '" + request.workload_keys.front() + "'" +
                         (request.targets.empty() ? "" : " on the targets given") + " to plot");
  }
  if (svg) {
    TUNED_ASSIGN_OR_RETURN(std::string document, observability::PlotSvg(curves, options));
    std::ofstream out(request.output);
    out << document;
    if (!out.flush()) return InvalidArgumentError("cannot write '" + request.output + "'");
  } else {
    TUNED_RETURN_IF_ERROR(observability::PlotPng(curves, options, request.output));
  }
  size_t points = 0;
  for (const observability::TuningCurve& curve : curves) points += curve.points.size();
  std::printf("wrote %s: %zu curve(s), %zu trial(s), %dx%d\n", request.output.c_str(),
              curves.size(), points, options.width, options.height);
  return Status::Ok();
}

}  // namespace tuned::cli
