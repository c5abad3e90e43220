#ifndef TUNED_WORKER_GPU_RUNNER_PIPE_MESSAGES_H_
#define TUNED_WORKER_GPU_RUNNER_PIPE_MESSAGES_H_

/// \file
/// Protobuf messages over a pipe, each framed by its length (4 bytes, little-endian): the GPU
/// runner's protocol (proto/tuned/v1/gpu_runner.proto), on both ends.

#include <google/protobuf/message_lite.h>

#include "common/status.h"

namespace tuned::worker::gpu {

/// Writes `message` to `fd`, framed.
Status WriteMessage(int fd, const google::protobuf::MessageLite& message);

/// Reads one framed message from `fd` into `message`. `timeout_seconds` < 0: waits forever.
/// DeadlineExceeded when it has not arrived in time, Unavailable at end of file (the writer is
/// gone), DataLoss for a message that does not parse.
Status ReadMessage(int fd, google::protobuf::MessageLite& message, double timeout_seconds = -1);

}  // namespace tuned::worker::gpu

#endif  // TUNED_WORKER_GPU_RUNNER_PIPE_MESSAGES_H_
