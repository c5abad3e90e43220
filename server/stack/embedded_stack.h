#ifndef TUNED_SERVER_STACK_EMBEDDED_STACK_H_
#define TUNED_SERVER_STACK_EMBEDDED_STACK_H_

/// \file
/// The embedded `tuned tune`: the real ServerStack with no listening port and a fresh random
/// token, plus one worker client on a local measurement engine, all talking through the
/// server's in-process channel. The same code path as a distributed setup, no socket opened.

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "common/status.h"
#include "rpc/channel.h"
#include "server/stack/server_stack.h"
#include "worker/client/worker_client.h"
#include "worker/measurement_engine.h"

namespace tuned::server {

struct EmbeddedStackOptions {
  std::string db_path;
  /// The local worker: its target (empty: this machine), build slots, jobs timed together
  /// and worker id; it holds the jobs its engine asks for (MeasurementEngine::job_capacity).
  worker::EngineOptions engine;
};

class EmbeddedStack {
 public:
  /// Creates the engine first (a bad target fails before the database is opened), then the
  /// stack (no task of the database is resumed), then the worker's connection.
  static StatusOr<std::unique_ptr<EmbeddedStack>> Start(const EmbeddedStackOptions& options);
  /// Stop().
  ~EmbeddedStack();
  EmbeddedStack(const EmbeddedStack&) = delete;
  EmbeddedStack& operator=(const EmbeddedStack&) = delete;

  /// The in-process connection (with the token) to submit and follow tasks with.
  rpc::Connection connection() const;
  /// The target the local worker measures for, canonical.
  const v1::Target& target() const { return engine_->target(); }

  /// Stops the worker, then the stack, then lets the engine finish; the worker client's error
  /// when it ended by itself (e.g. refused). Idempotent.
  Status Stop();

 private:
  EmbeddedStack() = default;

  std::string token_;
  std::unique_ptr<worker::MeasurementEngine> engine_;
  std::unique_ptr<ServerStack> stack_;
  std::unique_ptr<worker::WorkerClient> client_;
  std::thread worker_thread_;
  Status client_status_;
};

}  // namespace tuned::server

#endif  // TUNED_SERVER_STACK_EMBEDDED_STACK_H_
