#include "server/stack/server_stack.h"

#include "compiler/codegen/llvm/cpu_target.h"
#include "server/tasks/calibrations.h"
#include "server/tasks/worker_losses.h"
#include "worker/measurement_engine.h"

namespace tuned::server {
namespace {

// Targets come parsed by the task manager (target::ParseTarget); LLVM CPU targets get LLVM's
// checks on top. CUDA targets have only their attributes to check so far.
StatusOr<std::string> CanonicalTarget(const std::string& text) {
  TUNED_ASSIGN_OR_RETURN(target::Target parsed, target::ParseTarget(text));
  if (parsed.kind != target::TargetKind::kLlvmCpu) return parsed.ToString();
  TUNED_ASSIGN_OR_RETURN(target::Target checked, codegen::ValidateLlvmCpuTarget(parsed));
  return checked.ToString();
}

}  // namespace

StatusOr<std::unique_ptr<ServerStack>> ServerStack::Start(const ServerStackConfig& config) {
  std::unique_ptr<ServerStack> stack(new ServerStack());
  db::OpenOptions db_options;
  db_options.pool_size = config.db_pool_size;
  TUNED_ASSIGN_OR_RETURN(stack->database_, db::OpenDatabase(config.db_path, db_options));
  dispatch::DispatcherOptions dispatcher_options = config.dispatcher;
  tasks::CountWorkerLossesIn(*stack->database_, dispatcher_options);
  tasks::HandleCalibrationsIn(*stack->database_, stack->drift_sink_, dispatcher_options);
  stack->dispatcher_ = std::make_unique<dispatch::Dispatcher>(dispatcher_options);
  stack->dispatcher_->StartLeaseChecker();

  tasks::TaskManagerOptions options;
  // The search of every task: evolutionary with the target's shared, persisted cost model
  // (or random sampling when a task asks for it).
  stack->models_ = std::make_unique<search::ModelRegistry>(
      search::ModelStores{stack->database_.get(), stack->database_.get()});
  options.strategy_factory = [models = stack->models_.get()](const search::SearchContext& context,
                                                             const v1::SearchOptions& search_options) {
    return search::MakeTaskSearch(context, search_options, *models);
  };
  options.default_measure = worker::DefaultMeasureConfig();
  options.canonicalize_target = CanonicalTarget;
  if (auto host = codegen::HostCpuTarget(); host.ok()) options.default_target = host->ToString();
  options.ownership = stack->database_->task_ownership();  // null on SQLite: one server per file
  options.ownership_check_ms = config.ownership_check_ms;
  options.observer = config.task_observer;
  options.search_gate = config.search_gate;
  stack->tasks_ = std::make_unique<tasks::TaskManager>(*stack->database_, *stack->database_,
                                                       *stack->dispatcher_, std::move(options));
  stack->drift_sink_->store(stack->tasks_.get());
  if (config.resume_tasks) {
    TUNED_ASSIGN_OR_RETURN(stack->resumed_, stack->tasks_->ResumeUnfinished());
  }

  ServerOptions server_options;
  server_options.listen = config.listen;
  server_options.access = config.access;
  server_options.tls_worker_ca_pem = config.tls_worker_ca_pem;
  server_options.tls_cert_pem = config.tls_cert_pem;
  server_options.tls_key_pem = config.tls_key_pem;
  server_options.max_message_bytes = config.max_message_bytes;
  ServerComponents components{stack->tasks_.get(), stack->dispatcher_.get(),
                                      stack->database_.get()};
  TUNED_ASSIGN_OR_RETURN(stack->server_, TunedServer::Start(server_options, components));
  return stack;
}

ServerStack::~ServerStack() {
  if (server_) server_->Shutdown();
  drift_sink_->store(nullptr);
  if (tasks_) tasks_->Stop();
  if (dispatcher_) dispatcher_->Stop();
}

}  // namespace tuned::server
