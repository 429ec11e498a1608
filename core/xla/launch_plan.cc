#include "core/xla/launch_plan.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

namespace sl::xla {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

bool is_blas_call(const Instruction& inst) {
  return inst.opcode == Opcode::kCustomCall && inst.custom_call_target.rfind("__cublas", 0) == 0;
}

bool is_dnn_call(const Instruction& inst) {
  return inst.opcode == Opcode::kCustomCall && inst.custom_call_target.rfind("__cudnn$", 0) == 0;
}

// XLA's thunks for cuDNN calls (ConvolutionThunk, CuDnnThunk, NormThunk, ...).
bool is_dnn_thunk(std::string_view kind) {
  return kind == "kConvolution" || kind == "kConvolutionReorder" || kind == "kCuDnn" || kind == "kNorm";
}

// XLA's thunks for cuBLAS calls (GemmThunk, CublasLtMatmulThunk).
bool is_blas_thunk(const Thunk& t) { return t.kind.find("Cublas") != std::string::npos || t.kind == "kGemm"; }

Opcode wrapped_opcode(const Instruction& inst) { return inst.async_wrapped.value_or(inst.opcode); }

// Instructions that emit no GPU work of their own.
bool emits_nothing(const Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple: case Opcode::kGetTupleElement:
    case Opcode::kBitcast: case Opcode::kAfterAll: case Opcode::kAddDependency:
    case Opcode::kOptimizationBarrier: case Opcode::kAsyncDone: case Opcode::kAsyncUpdate:
    case Opcode::kDomain:
      return true;
    default:
      return false;
  }
}

Opcode collective_for_thunk(std::string_view kind) {
  if (kind == "kAllGather" || kind == "kNcclAllGather") return Opcode::kAllGather;
  if (kind == "kAllReduce" || kind == "kNcclAllReduce") return Opcode::kAllReduce;
  if (kind == "kReduceScatter" || kind == "kNcclReduceScatter") return Opcode::kReduceScatter;
  if (kind == "kCollectivePermute" || kind == "kNcclCollectivePermute") return Opcode::kCollectivePermute;
  if (kind == "kAllToAll" || kind == "kNcclAllToAll") return Opcode::kAllToAll;
  if (kind == "kRaggedAllToAll") return Opcode::kRaggedAllToAll;
  if (kind == "kCollectiveBroadcast") return Opcode::kCollectiveBroadcast;
  return Opcode::kParameter;  // not a collective thunk
}

// Walks one block of thunks against the computation XLA emitted it from.
class ThunkPlanner {
 public:
  ThunkPlanner(const hlo::Module* module, size_t max_launches, const std::map<std::string, int64_t>& trips,
               LaunchPlan& plan)
      : module_(module), max_(max_launches), trips_(trips), plan_(plan) {}

  struct Scope {
    const Computation* computation = nullptr;  // null without a module
    size_t cursor = 0;                         // next instruction to consider
    std::string owner;                         // async-start / dynamic-slice fusion whose work this is
    std::string stream;
    bool in_command_buffer = false;
    bool in_dynamic_slice = false;  // inside a kDynamicSliceFusion
  };

  void block(const std::vector<Thunk>& thunks, Scope& scope) {
    for (const Thunk& t : thunks) {
      if (plan_.launches.size() >= max_) return;
      thunk(t, scope);
    }
  }

 private:
  void thunk(const Thunk& t, Scope& scope) {
    if (t.kind == "kCustomKernel" || t.kind == "kKernel") {
      const Instruction* inst = take(scope, [&](const Instruction& i) {
        return sanitized_kernel_name(i.name) == t.kernel;
      }, [](const Instruction& i) { return i.opcode == Opcode::kFusion; });
      emit(LaunchKind::kKernel, t.kernel, inst, scope);
    } else if (is_blas_thunk(t)) {
      emit(LaunchKind::kGemm, "", take(scope, is_blas_call), scope);
    } else if (is_dnn_thunk(t.kind)) {
      emit(LaunchKind::kDnn, "", take(scope, is_dnn_call), scope);
    } else if (t.kind == "kCopy" || t.kind == "kDeviceToDeviceCopy") {
      emit(LaunchKind::kCopy, "", take(scope, [](const Instruction& i) {
        return wrapped_opcode(i) == Opcode::kCopy;
      }), scope);
    } else if (t.kind == "kMemset32BitValue" || t.kind == "kMemzero") {
      emit(LaunchKind::kMemset, "", nullptr, scope);
    } else if (Opcode c = collective_for_thunk(t.kind); c != Opcode::kParameter) {
      emit(LaunchKind::kCollective, "", take(scope, [c](const Instruction& i) { return wrapped_opcode(i) == c; }), scope);
    } else if (t.kind == "kCommandBuffer" && !scope.in_command_buffer) {
      Scope inner = scope;
      inner.in_command_buffer = true;
      command_buffer(t, inner);
      scope.cursor = inner.cursor;
    } else if (t.kind == "kCommandBuffer" || t.kind == "kSequential") {
      Scope inner = scope;
      block(t.nested, inner);
      scope.cursor = inner.cursor;
    } else if (t.kind == "kAsyncStart") {
      const Instruction* start = take(scope, [](const Instruction& i) { return i.opcode == Opcode::kAsyncStart; });
      // The wrapped work is the start's (as in streamlens' own traces); a
      // sugared collective start wraps no computation.
      const bool wraps = start != nullptr && !start->async_wrapped;
      Scope inner{wraps ? called(start, 0) : nullptr, 0, owner_of(start, scope), t.stream, scope.in_command_buffer,
                  scope.in_dynamic_slice};
      block(t.nested, inner);
    } else if (t.kind == "kDynamicSliceFusion") {
      const Instruction* fusion = take(scope, [](const Instruction& i) { return i.opcode == Opcode::kFusion; });
      Scope inner{nullptr, 0, owner_of(fusion, scope), scope.stream, scope.in_command_buffer, true};
      block(t.nested, inner);
    } else if (t.kind == "kWhile") {
      const Instruction* loop = take(scope, [](const Instruction& i) { return i.opcode == Opcode::kWhile; });
      while_loop(t, loop, scope);
    }
    // kAsyncDone, kPartitionId, kReplicaId, kConditional, ...: nothing to match.
  }

  // One execution of a CUDA graph: its commands' launches, with the DAG's
  // edges between them. The dump prints one prev= and one next= per command,
  // so the union of both is taken; a command's own launches run in order.
  void command_buffer(const Thunk& t, Scope& scope) {
    const int64_t graph = plan_.graph_launches++;
    const size_t n = t.nested.size();
    const bool rerecorded = holds_dynamic_slice(t.nested);
    plan_.rerecorded_commands.push_back(rerecorded ? commands_of(t.nested) : 0);
    plan_.retraced_commands.push_back(rerecorded ? sliced_blas_commands_of(t.nested) : 0);
    plan_.blas_commands.push_back(std::count_if(t.nested.begin(), t.nested.end(), is_blas_thunk));
    std::vector<std::pair<size_t, size_t>> range(n);  // launches of each command
    std::unordered_map<int, size_t> index_of;
    for (size_t k = 0; k < n; ++k) {
      index_of.emplace(t.nested[k].id, k);
      range[k].first = plan_.launches.size();
      if (plan_.launches.size() < max_) thunk(t.nested[k], scope);
      range[k].second = plan_.launches.size();
    }
    std::vector<std::vector<size_t>> preds(n);
    for (size_t k = 0; k < n; ++k) {
      for (int p : t.nested[k].prev) {
        if (auto it = index_of.find(p); it != index_of.end() && it->second < k) preds[k].push_back(it->second);
      }
      for (int s : t.nested[k].next) {
        if (auto it = index_of.find(s); it != index_of.end() && it->second > k) preds[it->second].push_back(k);
      }
    }
    // exits[k]: the launches a successor of command k waits for.
    std::vector<std::vector<int64_t>> exits(n);
    for (size_t k = 0; k < n; ++k) {
      std::vector<int64_t> deps;
      for (size_t p : preds[k]) deps.insert(deps.end(), exits[p].begin(), exits[p].end());
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      const auto [first, last] = range[k];
      for (size_t i = first; i < last; ++i) {
        PlannedLaunch& launch = plan_.launches[i];
        launch.graph = graph;
        launch.graph_deps = i == first ? deps : std::vector<int64_t>{static_cast<int64_t>(i - 1)};
      }
      exits[k] = last > first ? std::vector<int64_t>{static_cast<int64_t>(last - 1)} : deps;
    }
  }

  static bool holds_dynamic_slice(const std::vector<Thunk>& thunks) {
    return std::any_of(thunks.begin(), thunks.end(), [](const Thunk& t) {
      return t.kind == "kDynamicSliceFusion" || holds_dynamic_slice(t.nested);
    });
  }

  static int64_t commands_of(const std::vector<Thunk>& thunks) {
    return std::count_if(thunks.begin(), thunks.end(), [](const Thunk& t) { return t.kind != "kAsyncDone"; });
  }

  // The commands that are cuBLAS calls inside a dynamic-slice fusion: XLA
  // records a cuBLAS command by tracing the call into a graph of its own,
  // kept while its operands stay where they were; a slice's moves with the
  // loop, so the call is traced again at every re-recording.
  static int64_t sliced_blas_commands_of(const std::vector<Thunk>& thunks) {
    return std::count_if(thunks.begin(), thunks.end(), [](const Thunk& t) {
      return t.kind == "kDynamicSliceFusion" && std::any_of(t.nested.begin(), t.nested.end(), is_blas_thunk);
    });
  }

  void while_loop(const Thunk& t, const Instruction* loop, const Scope& scope) {
    const std::optional<int64_t> trips = loop != nullptr ? loop->known_trip_count : std::nullopt;
    Scope body{called(loop, 1), 0, scope.owner, scope.stream, scope.in_command_buffer, scope.in_dynamic_slice};
    if (trips) {
      // With a known trip count XLA runs the body alone (no condition, no
      // predicate copy back to the host).
      for (int64_t i = 0; i < *trips && plan_.launches.size() < max_; ++i) {
        Scope trip = body;
        block(t.body, trip);
      }
      return;
    }
    // Otherwise the condition, its predicate copied to the host (a sync; the
    // copy is the loop's), and while true the body and the condition again:
    // one trip is planned and marked as repeated (the linker follows the
    // trips that ran).
    ++plan_.loops_with_unknown_trip_count;
    Scope cond{called(loop, 0), 0, scope.owner, scope.stream, scope.in_command_buffer, scope.in_dynamic_slice};
    // The condition's launches name the loop, whose predicate copy follows
    // them (WhileThunk's, in no dump).
    auto condition = [&](Scope& at) {
      const size_t from = plan_.launches.size();
      block(t.condition, at);
      for (size_t i = from; i < plan_.launches.size(); ++i) {
        plan_.launches[i].condition_of = loop != nullptr ? loop->name : std::string{};
      }
      sync_pending_ = true;
    };
    condition(cond);
    if (auto measured = loop != nullptr ? trips_.find(loop->name) : trips_.end(); measured != trips_.end()) {
      for (int64_t i = 0; i < measured->second && plan_.launches.size() < max_; ++i) {
        Scope trip = body;
        block(t.body, trip);
        Scope again = cond;
        again.cursor = 0;
        condition(again);
      }
      return;
    }
    RepeatedTrip repeated;
    repeated.first = plan_.launches.size();
    repeated.loop = loop != nullptr ? loop->name : std::string{};
    block(t.body, body);
    Scope again = cond;
    again.cursor = 0;
    condition(again);
    repeated.end = plan_.launches.size();
    if (repeated.end > repeated.first) plan_.repeated_trips.push_back(std::move(repeated));
  }

  const Computation* called(const Instruction* inst, size_t k) const {
    if (module_ == nullptr || inst == nullptr || inst->called.size() <= k) return nullptr;
    const int c = inst->called[k];
    if (c < 0 || c >= static_cast<int>(module_->computations.size())) return nullptr;
    return &module_->computations[static_cast<size_t>(c)];
  }

  static std::string owner_of(const Instruction* inst, const Scope& scope) {
    if (!scope.owner.empty()) return scope.owner;
    return inst != nullptr ? inst->name : std::string{};
  }

  // The next instruction from the cursor that `exact` accepts, else the next
  // that `fallback` accepts (XLA reuses one kernel for identical fusions, so a
  // name can point at an earlier twin); moves the cursor past it.
  template <typename Exact, typename Fallback>
  const Instruction* take(Scope& scope, Exact exact, Fallback fallback) {
    if (scope.computation == nullptr) return nullptr;
    const auto& insts = scope.computation->instructions;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i = scope.cursor; i < insts.size(); ++i) {
        const Instruction& inst = insts[i];
        if (emits_nothing(inst)) continue;
        if (pass == 0 ? exact(inst) : fallback(inst)) {
          scope.cursor = i + 1;
          return &inst;
        }
      }
    }
    return nullptr;
  }
  template <typename Exact>
  const Instruction* take(Scope& scope, Exact exact) {
    return take(scope, exact, [](const Instruction&) { return false; });
  }

  void emit(LaunchKind kind, const std::string& kernel, const Instruction* inst, const Scope& scope) {
    PlannedLaunch launch;
    launch.kind = kind;
    launch.kernel = kernel;
    launch.instruction = !scope.owner.empty() ? scope.owner : inst != nullptr ? inst->name : std::string{};
    launch.stream = scope.stream;
    launch.in_command_buffer = scope.in_command_buffer;
    launch.host_sync_before = sync_pending_;
    launch.dynamic_slice = scope.in_dynamic_slice;
    launch.pdl_launch = kind == LaunchKind::kKernel && inst != nullptr && inst->is_pdl_launch();
    sync_pending_ = false;
    plan_.launches.push_back(std::move(launch));
  }

  const hlo::Module* module_;
  size_t max_;
  const std::map<std::string, int64_t>& trips_;
  LaunchPlan& plan_;
  bool sync_pending_ = false;  // the next launch comes after a host sync
};

// Without a thunk dump: the module's schedule, one launch per instruction
// that does GPU work.
class ModulePlanner {
 public:
  ModulePlanner(const hlo::Module& module, size_t max_launches, LaunchPlan& plan)
      : module_(module), max_(max_launches), plan_(plan) {}

  void computation(int index, const std::string& owner, int depth) {
    if (index < 0 || index >= static_cast<int>(module_.computations.size()) || depth > 64) return;
    for (const Instruction& inst : module_.computations[static_cast<size_t>(index)].instructions) {
      if (plan_.launches.size() >= max_) return;
      instruction(inst, owner, depth);
    }
  }

 private:
  void instruction(const Instruction& inst, const std::string& owner, int depth) {
    if (emits_nothing(inst)) return;
    const std::string& name = owner.empty() ? inst.name : owner;
    const Opcode op = wrapped_opcode(inst);
    if (inst.opcode == Opcode::kAsyncStart && !inst.async_wrapped) {
      if (!inst.called.empty()) computation(inst.called[0], name, depth + 1);
    } else if (inst.opcode == Opcode::kWhile && inst.called.size() >= 2) {
      if (!inst.known_trip_count) ++plan_.loops_with_unknown_trip_count;
      for (int64_t i = 0; i < inst.known_trip_count.value_or(1) && plan_.launches.size() < max_; ++i) {
        computation(inst.called[1], owner, depth + 1);
      }
    } else if (inst.opcode == Opcode::kCall && !inst.called.empty()) {
      computation(inst.called[0], owner, depth + 1);
    } else if (is_blas_call(inst)) {
      push(LaunchKind::kGemm, "", name);
    } else if (is_dnn_call(inst)) {
      push(LaunchKind::kDnn, "", name);
    } else if (op == Opcode::kCopy) {
      push(LaunchKind::kCopy, "", name);
    } else if (hlo::is_collective(op)) {
      push(LaunchKind::kCollective, "", name);
    } else if (inst.opcode == Opcode::kPartitionId || inst.opcode == Opcode::kReplicaId ||
               inst.opcode == Opcode::kConditional) {
      // Tiny or data-dependent: nothing to plan.
    } else {
      push(LaunchKind::kKernel, sanitized_kernel_name(inst.name), name);
    }
  }

  void push(LaunchKind kind, std::string kernel, const std::string& instruction) {
    plan_.launches.push_back({kind, std::move(kernel), instruction, "", false, -1, {}, false});
  }

  const hlo::Module& module_;
  size_t max_;
  LaunchPlan& plan_;
};

}  // namespace

std::string sanitized_kernel_name(std::string_view instruction_name) {
  std::string out(instruction_name);
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  return out;
}

LaunchPlan plan_from_thunks(const ThunkSequence& thunks, const hlo::Module* module, size_t max_launches,
                            const std::map<std::string, int64_t>& trips) {
  LaunchPlan plan;
  plan.from_thunk_dump = true;
  plan.has_command_buffers = thunks.has_command_buffers;
  ThunkPlanner planner(module, max_launches, trips, plan);
  ThunkPlanner::Scope scope;
  if (module != nullptr && module->entry >= 0) scope.computation = &module->entry_computation();
  planner.block(thunks.thunks, scope);
  return plan;
}

LaunchPlan plan_from_module(const hlo::Module& module, size_t max_launches) {
  LaunchPlan plan;
  ModulePlanner planner(module, max_launches, plan);
  planner.computation(module.entry, "", 0);
  return plan;
}

}  // namespace sl::xla
