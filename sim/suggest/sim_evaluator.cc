#include "sim/suggest/sim_evaluator.h"

#include <memory>

#include "sim/sim_backend.h"

namespace sl::sim {

Evaluator make_sim_evaluator(const hlo::Module& module, const DeviceModel& model, SimEvaluatorOptions options) {
  // The backend `run --backend sim` uses, so both cost a program alike.
  std::shared_ptr<exec::Backend> backend = options.measured
                                               ? make_trace_driven_sim_backend(model, std::move(*options.measured))
                                               : make_sim_backend(model);
  return [&module, backend, options](const sched::StreamOverrides& overrides, int comm_sms) -> Result<int64_t> {
    sched::LowerOptions lower_options;
    lower_options.overrides = overrides;
    lower_options.replica_count = options.replicas;
    lower_options.num_partitions = options.partitions;
    SL_ASSIGN_OR_RETURN(sched::LoweredProgram lowered, sched::lower(module, lower_options));
    exec::RunOptions run_options;
    run_options.allow_tf32 = options.allow_tf32;
    run_options.comm_sms = comm_sms;
    SL_ASSIGN_OR_RETURN(exec::RunOutput out, backend->run(lowered, run_options));
    return out.trace.makespan_ns();
  };
}

}  // namespace sl::sim
