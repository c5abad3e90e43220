#include "worker/workload_message.h"

namespace tuned::worker {

v1::Workload WorkloadMessage(const ir::Workload& workload) {
  v1::Workload message;
  message.set_key(workload.key());
  message.set_key_sha256(workload.key_sha256());
  message.set_op(workload.op());
  for (const auto& [name, value] : workload.params()) {
    v1::WorkloadParam* param = message.add_params();
    param->set_name(name);
    param->set_value(value);
  }
  message.set_definition(workload.Definition());
  message.set_flops(workload.flops());
  return message;
}

}  // namespace tuned::worker
