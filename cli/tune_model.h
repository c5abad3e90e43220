#ifndef TUNED_CLI_TUNE_MODEL_H_
#define TUNED_CLI_TUNE_MODEL_H_

/// \file
/// `tuned tune --model`: every task of a model tuned from one trial budget, in rounds. Each
/// round is an ordinary tuning task of one model task (its workload key) on the server or the
/// embedded stack; the task scheduler (model/task_scheduler.h) picks which. Tasks the log
/// already has records of start from their best. On a terminal the task table (each task's best,
/// trials and share of the model's estimated latency) is redrawn on stderr after every round,
/// elsewhere a line per round; the table again on stdout at the end.

#include <functional>
#include <string>

#include "cli/model_flags.h"
#include "rpc/channel.h"
#include "tuned/v1/task.pb.h"

namespace tuned::cli {

struct ModelTuneOptions {
  ModelFlags model;
  uint32_t trials = 0;        // the whole model's budget for this run
  uint32_t round_trials = 16;
  std::string scheduler = "gradient";  // or "round-robin"
  bool json = false;
  int wait_s = 60;
};

/// Runs the rounds. `base` holds every setting of a round's task but its workload and budget;
/// `connect` opens a connection to the server (or the embedded stack).
Status TuneModel(const std::function<rpc::Connection()>& connect, const v1::TaskSpec& base,
                 const ModelTuneOptions& options, const std::string& where);

}  // namespace tuned::cli

#endif  // TUNED_CLI_TUNE_MODEL_H_
