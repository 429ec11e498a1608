#include "sim/suggest/sim_evaluator.h"

#include "sim/engine.h"

namespace sl::sim {

Evaluator make_sim_evaluator(const hlo::Module& module, const DeviceModel& model, const SimEvaluatorOptions& options) {
  return [&module, &model, options](const sched::StreamOverrides& overrides, int comm_sms) -> Result<int64_t> {
    sched::LowerOptions lower_options;
    lower_options.overrides = overrides;
    lower_options.replica_count = options.replicas;
    lower_options.num_partitions = options.partitions;
    SL_ASSIGN_OR_RETURN(sched::LoweredProgram lowered, sched::lower(module, lower_options));
    SimOptions sim_options;
    sim_options.allow_tf32 = options.allow_tf32;
    sim_options.comm_sms = comm_sms;
    SL_ASSIGN_OR_RETURN(trace::Trace trace, simulate(lowered.devices, model, sim_options));
    return trace.makespan_ns();
  };
}

}  // namespace sl::sim
