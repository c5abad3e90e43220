#include "server/stack/embedded_stack.h"

#include <random>

namespace tuned::server {
namespace {

// A fresh secret for the embedded server, so nothing else in this process space can use it.
std::string RandomToken() {
  std::random_device random;
  std::string token;
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) token += kHex[random() & 15];
  return token;
}

}  // namespace

StatusOr<std::unique_ptr<EmbeddedStack>> EmbeddedStack::Start(
    const EmbeddedStackOptions& options) {
  std::unique_ptr<EmbeddedStack> embedded(new EmbeddedStack());
  embedded->token_ = RandomToken();
  TUNED_ASSIGN_OR_RETURN(embedded->engine_, worker::CreateMeasurementEngine(options.engine));

  ServerStackConfig config;
  config.db_path = options.db_path;
  config.access.shared = embedded->token_;
  config.resume_tasks = false;
  // The search runs on the cores the engine times kernels on: never both at once.
  config.search_gate = embedded->engine_->timing_gate();
  TUNED_ASSIGN_OR_RETURN(embedded->stack_, ServerStack::Start(config));

  worker::WorkerClientOptions client_options;
  client_options.channel = embedded->stack_->server().InProcessChannel();
  client_options.token = embedded->token_;
  client_options.worker_id = options.engine.worker_id;
  client_options.slots = embedded->engine_->job_capacity();
  embedded->client_ = std::make_unique<worker::WorkerClient>(client_options, *embedded->engine_);
  EmbeddedStack* self = embedded.get();
  embedded->worker_thread_ = std::thread([self] { self->client_status_ = self->client_->Run(); });
  return embedded;
}

// The worker's error was the caller's to ask for through Stop().
EmbeddedStack::~EmbeddedStack() { (void)Stop(); }

rpc::Connection EmbeddedStack::connection() const {
  return {stack_->server().InProcessChannel(), token_, "the embedded server"};
}

Status EmbeddedStack::Stop() {
  if (client_) client_->Stop();
  if (worker_thread_.joinable()) worker_thread_.join();
  stack_.reset();
  if (engine_) engine_->Drain();
  return client_status_;
}

}  // namespace tuned::server
