#ifndef TUNED_CLI_DB_PLOT_H_
#define TUNED_CLI_DB_PLOT_H_

/// \file
/// `tuned db plot`: the tuning curves of the stored records of one or more workloads (one curve
/// per task and target), written as SVG or PNG by the output's extension.

#include <string>
#include <vector>

#include "common/status.h"
#include "tuning_db/record_store.h"

namespace tuned::cli {

struct PlotRequest {
  std::vector<std::string> workload_keys;  // the workload, then the ones to compare it with
  std::vector<std::string> targets;        // empty: every target
  std::string output;                      // *.svg or *.png
  int width = 900;
  int height = 540;
  std::string x_axis = "trials";  // or "time"
  std::string title;
};

/// Writes the plot and prints one line naming the file and its curves. InvalidArgument for an
/// unknown extension or x axis, NotFound when no record matches.
Status WritePlot(db::RecordStore& records, const PlotRequest& request);

}  // namespace tuned::cli

#endif  // TUNED_CLI_DB_PLOT_H_
