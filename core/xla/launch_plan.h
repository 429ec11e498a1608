#pragma once
// What one execution of an XLA module launches on the GPU, in issue order,
// with the HLO instruction behind each launch: the bridge between a capture
// (kernel names and times) and the program. Built from XLA's thunk dump when
// there is one (it names every kernel, and its order is the executable's),
// else from the scheduled module alone (fusion kernels are named after their
// instruction, as XLA's SanitizeFunctionName does).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/hlo/module.h"
#include "core/xla/thunk_sequence.h"

namespace sl::xla {

// kDnn: a cuDNN call (convolution, cuDNN fusion). It runs one or more
// kernels of cuDNN's own, with memsets, that no dump names.
enum class LaunchKind { kKernel, kGemm, kCopy, kMemset, kCollective, kDnn };

struct PlannedLaunch {
  LaunchKind kind = LaunchKind::kKernel;
  std::string kernel;       // kKernel: the name CUPTI reports; empty for library work
  std::string instruction;  // HLO instruction (without '%'); empty when the module says nothing
  std::string stream;       // XLA's stream for async work ("computation_stream[1]"); empty = main
  bool in_command_buffer = false;
  // The command buffer (CUDA graph) launch it is a node of: 0, 1, ... in
  // execution order (each loop trip launches its body's graph again); -1 none.
  int64_t graph = -1;
  // Launches of the same graph it waits for (indices into LaunchPlan::launches),
  // from the dump's prev=/next= edges; commands with no launch of their own
  // (kAsyncDone) pass their predecessors on.
  std::vector<int64_t> graph_deps;
  // XLA's host blocks before issuing it until the stream is done: the first
  // launch after each evaluation of a while loop's condition when the loop
  // has no known trip count (WhileThunk copies the predicate to the host).
  bool host_sync_before = false;
  // The launch of a dynamic-slice fusion's work (kDynamicSliceFusion): XLA's
  // host computes the slice's offsets before it (DynamicSliceThunk).
  bool dynamic_slice = false;
  // A launch of the condition of a while loop without a known trip count:
  // the loop's name. XLA's WhileThunk then copies the predicate to the host
  // (a record no dump names, the loop's).
  std::string condition_of;
  // A kernel XLA launches with programmatic dependent launch
  // (hlo::Instruction::is_pdl_launch): in a graph, the node after it starts
  // before CUPTI's end of it.
  bool pdl_launch = false;
};

// A while loop without a known trip count, planned as its condition, one
// trip (body, then the condition again) and what follows: the trip, launches
// [first, end), runs as many times as the program decides.
struct RepeatedTrip {
  size_t first = 0;
  size_t end = 0;
  std::string loop;  // the while instruction ("" without a module)
};

// Launches in order; a loop is expanded `trip_count` times when known.
struct LaunchPlan {
  std::vector<PlannedLaunch> launches;
  int64_t loops_with_unknown_trip_count = 0;  // planned with one RepeatedTrip each
  std::vector<RepeatedTrip> repeated_trips;
  bool from_thunk_dump = false;
  bool has_command_buffers = false;
  int64_t graph_launches = 0;  // command buffer executions (graph ids 0..n-1)
  // Per graph id: the commands XLA records again before each launch of it,
  // 0 when it launches the graph as recorded. A command buffer holding a
  // dynamic-slice fusion is re-recorded every execution, its slice moving
  // with the loop counter (DynamicSliceFusionCmd::force_update); the count
  // is XLA's num_commands (the commands of the buffer, kAsyncDone not one).
  std::vector<int64_t> rerecorded_commands;
  // Per graph id: those of rerecorded_commands that are cuBLAS calls inside
  // a dynamic-slice fusion, which XLA traces again (their operands moved)
  // at a higher host cost than a kernel's re-recording.
  std::vector<int64_t> retraced_commands;
  // Per graph id: its cuBLAS commands outside dynamic-slice fusions. Each
  // costs the host more at every launch of its graph (a graph launch 1.7-3.4
  // us longer a command in hold-out set 13's loops, bench/FIDELITY-real.md).
  std::vector<int64_t> blas_commands;
};

// XLA's kernel name for an instruction: every character outside
// [A-Za-z0-9_] becomes '_' ("gemm_fusion_dot.28" -> "gemm_fusion_dot_28").
std::string sanitized_kernel_name(std::string_view instruction_name);

// `module` may be null (instructions then stay empty). Loop expansion stops at
// `max_launches` (the plan is then cut, and the caller told by the size). A
// loop without a known trip count that `trips` names (by while instruction)
// is planned with that many trips, not as a repeated one.
LaunchPlan plan_from_thunks(const ThunkSequence& thunks, const hlo::Module* module, size_t max_launches = 1u << 22,
                            const std::map<std::string, int64_t>& trips = {});
LaunchPlan plan_from_module(const hlo::Module& module, size_t max_launches = 1u << 22);

}  // namespace sl::xla
