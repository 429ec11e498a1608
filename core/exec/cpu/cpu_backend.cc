#include "core/exec/cpu/cpu_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

#include "core/exec/cpu/array_util.h"
#include "core/exec/cpu/evaluator.h"

namespace sl::exec {
namespace {

using cpu::Value;

constexpr int64_t kMaxDevices = 4096;

struct DeviceOutcome {
  Status status;
  std::vector<std::pair<int, cpu::RawEvent>> events;  // (iteration, event)
  std::vector<Literal> outputs;
};

class CpuBackend : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  Result<RunOutput> run(const sched::LoweredProgram& program, const RunOptions& options) override {
    if (program.module == nullptr) return invalid_input("cpu backend: the lowered program has no module");
    return run_cpu(*program.module, program.replica_count, program.num_partitions, options);
  }
};

Result<Value> make_parameter(const hlo::Shape& shape, const RunOptions& options, int64_t device, int64_t parameter) {
  std::vector<Literal> leaves = init_parameter_leaves(shape, options, device, parameter);
  size_t next = 0;
  return cpu::value_from_leaves(shape, leaves, &next);
}

void run_device(const hlo::Module& module, cpu::DeviceContext context, const RunOptions& options,
                cpu::Rendezvous* rendezvous, DeviceOutcome* outcome) {
  cpu::EvaluatorOptions evaluator_options;
  evaluator_options.max_while_iterations = options.cpu_max_while_iterations;
  cpu::Evaluator evaluator(module, context, rendezvous, evaluator_options);
  const hlo::Computation& entry = module.entry_computation();
  std::vector<Value> parameters(entry.parameters.size());
  for (size_t p = 0; p < entry.parameters.size(); ++p) {
    const int index = entry.parameters[p];
    if (index >= 0) {
      for (const hlo::Shape* leaf : entry.instructions[static_cast<size_t>(index)].shape.leaves()) {
        if (leaf->element_count() > cpu::kMaxElements) {
          const hlo::Instruction& inst = entry.instructions[static_cast<size_t>(index)];
          std::string where = module.file_name.empty() ? std::string("<program>") : module.file_name;
          if (inst.loc.line > 0) where += fmt::format(":{}:{}", inst.loc.line, inst.loc.col);
          outcome->status = invalid_input(fmt::format(
              "{}: error: parameter({}) '{}' {} has more than {} elements, too large for the cpu backend (use "
              "--backend sim or cuda)", where, p, inst.name, hlo::to_string(*leaf), cpu::kMaxElements));
          return;
        }
      }
    }
    if (index < 0) {
      outcome->status = invalid_input(fmt::format("entry computation '{}' has no parameter({})", entry.name, p));
      return;
    }
    auto value = make_parameter(entry.instructions[static_cast<size_t>(index)].shape, options, context.device,
                                static_cast<int64_t>(p));
    if (!value) {
      outcome->status = value.status();
      return;
    }
    parameters[p] = std::move(value).value();
  }
  const int warmup = std::max(0, options.warmup);
  const int iterations = std::max(1, options.iterations);
  for (int it = 0; it < warmup + iterations; ++it) {
    const bool measured = it >= warmup;
    auto result = evaluator.run_entry(parameters, measured);
    if (!result) {
      outcome->status = result.status();
      return;
    }
    for (cpu::RawEvent& e : evaluator.take_events()) outcome->events.emplace_back(it - warmup, std::move(e));
    if (it == warmup + iterations - 1 && options.collect_results) {
      std::vector<const Literal*> leaves;
      result->collect_leaves(&leaves);
      for (const Literal* l : leaves) {
        if (!l->shape.is_token()) outcome->outputs.push_back(*l);
      }
    }
  }
}

}  // namespace

std::vector<Literal> init_parameter_leaves(const hlo::Shape& shape, const RunOptions& options, int64_t device,
                                           int64_t parameter) {
  std::vector<Literal> out;
  for (const hlo::Shape* leaf : shape.leaves()) {
    if (leaf->is_token()) {
      out.push_back(Literal{*leaf, {}});
    } else if (options.init == InitMode::kRandom) {
      out.push_back(random_literal(*leaf, options.seed, device, parameter));
    } else {
      out.push_back(ramp_literal(*leaf, device, parameter));
    }
  }
  return out;
}

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

Result<RunOutput> run_cpu(const hlo::Module& module, int64_t replicas, int64_t partitions, const RunOptions& options) {
  if (replicas <= 0) replicas = module.replica_count;
  if (partitions <= 0) partitions = module.num_partitions;
  if (replicas < 1 || partitions < 1 || replicas * partitions > kMaxDevices) {
    return usage_error(fmt::format("cpu backend: {} replicas x {} partitions is not a valid device count "
                                   "(1..{})", replicas, partitions, kMaxDevices));
  }
  if (module.entry < 0 || static_cast<size_t>(module.entry) >= module.computations.size()) {
    return invalid_input("cpu backend: the module has no ENTRY computation");
  }
  const int64_t devices = replicas * partitions;
  cpu::Rendezvous rendezvous(devices);
  std::vector<DeviceOutcome> outcomes(static_cast<size_t>(devices));
  std::mutex mu;
  Status first_error;  // the root cause: the first device to fail
  int64_t first_failed = -1;
  int64_t finished = 0;

  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(devices));
  for (int64_t g = 0; g < devices; ++g) {
    threads.emplace_back([&, g] {
      cpu::DeviceContext context{g, g / partitions, g % partitions, replicas, partitions};
      DeviceOutcome& outcome = outcomes[static_cast<size_t>(g)];
      try {
        run_device(module, context, options, &rendezvous, &outcome);
      } catch (const std::exception& e) {
        outcome.status = runtime_error(fmt::format("cpu backend: device {}: {}", g, e.what()));
      }
      if (!outcome.status.is_ok()) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (first_error.is_ok()) {
            first_error = outcome.status;
            first_failed = g;
          }
        }
        rendezvous.abort(outcome.status, g);
      }
      rendezvous.device_finished(g);
      std::lock_guard<std::mutex> lock(mu);
      ++finished;
      if (options.progress) options.progress(finished, devices);
    });
  }
  for (std::thread& t : threads) t.join();
  if (!first_error.is_ok()) {
    // Devices that fail on their own (each on the same op) race to be first:
    // the lowest one's error is reported, so the message does not depend on
    // the threads' timing. A device the first one's abort stopped carries
    // that same error.
    for (int64_t g = 0; g < devices; ++g) {
      const Status& own = outcomes[static_cast<size_t>(g)].status;
      if (own.is_ok() || (g != first_failed && own.message() == first_error.message())) continue;
      return own;
    }
    return first_error;
  }

  RunOutput output;
  output.device_description = fmt::format("cpu reference ({} device thread{})", devices, devices == 1 ? "" : "s");
  for (int64_t g = 0; g < devices; ++g) {
    DeviceOutcome& outcome = outcomes[static_cast<size_t>(g)];
    int64_t sequence = 0;
    for (auto& [iteration, raw] : outcome.events) {
      trace::Event e;
      e.device = static_cast<int32_t>(g);
      e.stream = raw.stream;
      e.stream_kind = sched::stream_kind(raw.stream);
      e.kind = raw.kind;
      e.name = output.trace.strings.intern(raw.name);
      e.instruction = output.trace.strings.intern(raw.instruction);
      e.start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(raw.start.time_since_epoch()).count();
      e.end_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(raw.end.time_since_epoch()).count();
      e.bytes = raw.bytes;
      e.flops = raw.flops;
      e.correlation = sequence++;
      e.iteration = iteration;
      output.trace.events.push_back(e);
    }
    if (options.collect_results) {
      output.results.push_back(DeviceResults{g, g / partitions, g % partitions, std::move(outcome.outputs)});
    }
  }
  output.trace.normalize_time();
  return output;
}

}  // namespace sl::exec
