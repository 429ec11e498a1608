#pragma once
// Interprets a Module on one device (one thread per device). Instructions are
// evaluated in text order; called computations (call, while, conditional,
// fusion, reduce/all-reduce to_apply, async-start calls=) recursively.
// Collectives meet the other devices' threads in a shared Rendezvous.

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/exec/cpu/ops.h"
#include "core/exec/cpu/rendezvous.h"
#include "core/exec/cpu/value.h"
#include "core/hlo/module.h"
#include "core/trace/trace.h"

namespace sl::exec::cpu {

struct DeviceContext {
  int64_t device = 0;  // global id = replica * num_partitions + partition
  int64_t replica = 0;
  int64_t partition = 0;
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
};

// Limits of one device's interpretation.
struct EvaluatorOptions {
  // A while loop that runs more iterations fails (with its location) rather
  // than hanging on a condition that never becomes false.
  int64_t max_while_iterations = 10'000'000;
};

// One executed instruction, before names are interned into a trace::Trace.
struct RawEvent {
  int stream = 0;
  trace::EventKind kind = trace::EventKind::kOther;
  std::string name;         // the executed instruction's own name
  std::string instruction;  // the program instruction it is attributed to
  std::chrono::steady_clock::time_point start, end;
  int64_t bytes = 0;
  int64_t flops = 0;
};

class Evaluator {
 public:
  Evaluator(const hlo::Module& module, DeviceContext context, Rendezvous* rendezvous,
            EvaluatorOptions options = {});

  // Runs the entry computation. Events are appended to events() when
  // `record` is set (warmup iterations pass false).
  Result<Value> run_entry(const std::vector<Value>& parameters, bool record);

  const std::vector<RawEvent>& events() const { return events_; }
  std::vector<RawEvent> take_events() {
    std::vector<RawEvent> out;
    out.swap(events_);
    return out;
  }

 private:
  // How the instructions of a computation show up in the trace.
  struct Scope {
    bool traced = true;
    int stream = -1;               // -1: each instruction's own (requested stream or 0)
    std::string attributed;        // empty: each instruction's own name
  };

  Result<Value> evaluate(int computation, const std::vector<Value>& args, const Scope& scope);
  Result<Value> evaluate_instruction(const hlo::Computation& comp, const hlo::Instruction& inst,
                                     const std::vector<const Value*>& operands, const std::vector<Value>& args,
                                     const Scope& scope);
  // The op itself; `key` is the program instruction a collective meets under.
  Result<Value> evaluate_op(const hlo::Instruction& inst, const hlo::Instruction& key,
                            const std::vector<const Value*>& operands, const Scope& scope);
  Result<Value> evaluate_control(const hlo::Instruction& inst, const std::vector<const Value*>& operands,
                                 const Scope& scope);
  Result<Value> evaluate_async_start(const hlo::Instruction& inst, const std::vector<const Value*>& operands,
                                     const Scope& scope);
  Result<Value> evaluate_async_done(const hlo::Computation& comp, const hlo::Instruction& inst,
                                    const std::vector<const Value*>& operands);
  Result<Value> evaluate_collective(const hlo::Instruction& inst, const hlo::Instruction& key,
                                    const std::vector<const Value*>& operands);
  Result<Value> evaluate_in_place_permute(const hlo::Instruction& inst, const hlo::Instruction& key,
                                          const std::vector<const Value*>& operands);
  Result<Value> evaluate_custom_call(const hlo::Instruction& inst, const std::vector<const Value*>& operands);
  Result<Value> evaluate_reduce(const hlo::Instruction& inst, const std::vector<const Value*>& operands);

  // acc = called[which](acc, x) with a fast path for single binary ops.
  Result<Combiner> make_combiner(const hlo::Instruction& inst, const std::vector<hlo::PrimitiveType>& types,
                                 size_t which = 0);
  // sort's comparator: called[0](lhs0, rhs0, lhs1, rhs1, ...) -> pred.
  Result<Comparator> make_comparator(const hlo::Instruction& inst);
  // Evaluates computation `index` on scalars (rounded to its parameters' types).
  Result<std::vector<double>> call_on_scalars(int index, const std::vector<double>& args);

  // Ops of evaluator_ops.cc: gather, scatter, pad, reverse, sort, topk,
  // reduce-window, select-and-scatter, rng-bit-generator, tokens, barriers.
  static bool is_extended(hlo::Opcode op);
  Result<Value> evaluate_extended(const hlo::Instruction& inst, const std::vector<const Value*>& operands);
  // send, recv, send-done, recv-done (evaluator_p2p.cc).
  Result<Value> evaluate_p2p(const hlo::Instruction& inst, const std::vector<const Value*>& operands);
  // scan (evaluator_scan.cc): to_apply once per index of the scanned dimension.
  Result<Value> evaluate_scan(const hlo::Instruction& inst, const std::vector<const Value*>& operands);

  Status located(const hlo::Instruction& inst, const Status& status) const;
  int stream_for(const hlo::Instruction& inst, const Scope& scope) const;
  bool does_work(const hlo::Instruction& inst) const;

  const hlo::Module& module_;
  DeviceContext context_;
  Rendezvous* rendezvous_;
  EvaluatorOptions options_;
  std::map<const hlo::Instruction*, int64_t> occurrences_;
  // Point to point: messages sent to / received from each peer so far, and
  // the receives a recv started that its recv-done completes (the recv's u32
  // context holds the index + 1; 0: nothing to receive).
  std::map<int64_t, int64_t> sent_to_, received_from_;
  std::vector<std::pair<int64_t, int64_t>> pending_receives_;  // (source device, sequence)
  std::vector<RawEvent> events_;
  bool record_ = true;
};

// Builds a value of `shape` from leaves taken in order from `leaves`.
Result<Value> value_from_leaves(const hlo::Shape& shape, std::vector<Literal>& leaves, size_t* next);

}  // namespace sl::exec::cpu
