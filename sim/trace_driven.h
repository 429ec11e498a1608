#pragma once
// Trace-driven simulation (the Lumos approach): each instruction costs what
// it cost in a measured run's median step, so "what if" questions about a
// real program start from its real kernels. The measured run is a capture
// linked to its XLA module (`streamlens link`), whose iterations are steps.
//
// An instruction the run never executed is costed by the device model,
// scaled by the model's bias on the instructions that were matched (the
// median of measured / modelled over them), so a model that is 20% slow on
// this program's kernels is 20% slow on none of them. GEMMs take the bias
// of the matched GEMMs when there are kMinGemmBiasSamples of them: the
// model's error on a GEMM (its efficiency curve) is not its error on the
// elementwise kernels around it (launch latency, bandwidth), and one median
// over both could scale a GEMM the model takes 8x too long by 1.2.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/common/status.h"
#include "core/sched/thunk.h"
#include "core/trace/trace.h"
#include "core/xla/autotune_log.h"
#include "sim/host_pace.h"

namespace sl::sim {

struct MeasuredTimes {
  // Instruction -> GPU time per step (the median over steps of the sum of its
  // kernels' durations in the step).
  std::unordered_map<std::string, int64_t> ns_per_step;
  // The same without the idle time between one library call's records (the
  // call's host code, or a late issue, that ns_per_step counts as the
  // call's): its kernels' own time, what XLA's autotuner times.
  std::unordered_map<std::string, int64_t> busy_ns_per_step;
  // Instruction -> idle time of its stream just before its records, per step
  // (median over steps): the launch latency it really paid, short inside a
  // CUDA graph, long where a graph or a loop trip starts; negative where its
  // record starts before the previous one ends (graph nodes overlap so).
  std::unordered_map<std::string, int64_t> gap_ns_per_step;
  // Instruction -> the time from its first record's start to the start of
  // its last record that began after idle time (so at its issue), per step
  // (median over steps), for library calls of several records: a cuDNN call
  // launched alone spends it in its host code (sim/command_buffers.h,
  // after_issue_ns).
  std::unordered_map<std::string, int64_t> issue_span_ns_per_step;
  // Instruction -> how many times it ran a step (median over steps of its
  // most frequent kernel's records: a cuBLAS call of two kernels ran once).
  std::unordered_map<std::string, int64_t> launches_per_step;
  int64_t steps = 0;
  int64_t median_step_ns = 0;     // the median step's span, first start to last end
  // Median idle time between consecutive records of one stream inside a step:
  // launch and dependency latency as the program really paid it (much
  // shorter inside CUDA graphs).
  int64_t launch_gap_ns = 0;
  // Instructions the measured run launched inside command buffers (from its
  // module's thunk dump), when that dump could be read (graph_mode_known).
  std::unordered_set<std::string> in_graph;
  bool graph_mode_known = false;
  // Of in_graph: each graph's first launch, whose measured gap is the wait
  // for the graph's launch (the host's), and those after a predecessor of
  // their graph, whose gap is the graph's own latency. Another module may
  // put the same work at another place in its graphs (mrg's notriton
  // backward body starts with the multiply the def body runs fourth).
  std::unordered_set<std::string> graph_first;
  std::unordered_set<std::string> graph_after;
  // Of graph_after: those right after a kernel XLA launches with
  // programmatic dependent launch (its Triton GEMM fusions). Their gap is
  // that kernel's tail, which they overlap (DeviceModel::
  // graph_node_gap_after_pdl_launch_us); after any other node it is not.
  std::unordered_set<std::string> graph_after_pdl_launch;
  // Its dynamic-slice fusions and re-recorded graphs (from the same dump).
  HostWorkOf host_work;
  // The host-issue costs estimated from the run (sim/host_pace.h); absent:
  // the device file's (--host-costs device).
  std::optional<HostCostEstimate> host_costs;
  // Instruction of the simulated module -> the measured run's instruction
  // that does the same work ("": none), when both modules could be read
  // (core/xla/instruction_match.h: XLA renumbers instructions when it
  // compiles with other flags). Empty: instructions match by name.
  std::unordered_map<std::string, std::string> source_of;
  int64_t renamed = 0;  // instructions of source_of whose partner has another name
  // XLA's autotuning logs (core/xla/autotune_log.h), when they are beside
  // the dumps: the fastest candidate's time of each instruction of the
  // simulated module, as its compilation's autotuner measured it alone on
  // the GPU; and that log's overhead, as the measured run's own log shows it
  // (autotune_overhead). An instruction the run never ran costs
  // autotuned_kernel_ns, not the device model, when it has an entry.
  std::unordered_map<std::string, xla::AutotunedTime> autotuned;
  // By the candidates' backend ("TRITON", "CUBLASLT", ...): the overhead
  // of each backend's timings (autotune_overhead_ns) and how many of the
  // run's own instructions measured it.
  std::unordered_map<std::string, int64_t> autotune_overhead_by_backend;
  std::unordered_map<std::string, int64_t> autotune_overhead_samples;
  // The overhead that applies to a time of `backend`: the run's own log's,
  // or default_autotune_overhead_ns.
  int64_t autotune_overhead_ns(const std::string& backend) const;
  // The simulated module is not the file the measured run was linked to
  // (another compilation: a what-if across XLA settings), so the step it
  // predicts runs in another call, at another host pace.
  bool another_module = false;

  // The measured run's name for instruction `name` of the simulated module.
  std::string source(std::string_view name) const {
    if (source_of.empty()) return std::string(name);
    auto it = source_of.find(std::string(name));
    return it == source_of.end() ? std::string(name) : it->second;
  }
};

// The autotuner times a kernel alone, with its launch and timer around it,
// 2-3 us more than a step runs it (the dev captures of hold-out set 12,
// bench/FIDELITY-real.md): a kernel's time in a step is about
// kAutotuneScale x (autotuned - overhead). The overhead is about the same
// whatever the kernel's length (2.3-3.2 us from 3 to 20 us autotuned over
// sets 12-27: bench/FIDELITY-real.md, hold-out set 28), so a short kernel's
// time is what is left after it, never under the device's shortest kernel
// (min_kernel_us).
inline constexpr double kAutotuneScale = 0.95;
inline constexpr int64_t kDefaultAutotuneOverheadNs = 2500;
// Fewer instructions of the run's own log than this, of a backend: that
// backend's default. One or two samples are one kernel's noise (rn2's
// notriton log: 1.6 us from two, where its default twin's log says 2.9
// from eight).
inline constexpr int64_t kMinAutotuneOverheadSamples = 3;
// The overhead of a backend's timings where the run's own log cannot tell:
// kDefaultAutotuneOverheadNs, but for the backends whose overhead the
// captures of bench/FIDELITY-real.md measured apart (docs/simulator.md).
int64_t default_autotune_overhead_ns(const std::string& backend);
// An instruction's time in a step from its autotuned time, at least
// `shortest_kernel_ns` (the device's min_kernel_us) unless the autotuned
// time itself is shorter.
int64_t autotuned_kernel_ns(int64_t autotuned_ns, int64_t overhead_ns, int64_t shortest_kernel_ns);

// The overhead of the measured run's own autotuning log (`run_log`: its
// instructions' autotuned times), by backend: the median over the
// instructions it ran of autotuned - busy / kAutotuneScale, per launch
// (busy_ns_per_step: a call that waited on the host between its kernels did
// not run longer). Sets measured.autotune_overhead_by_backend for the
// backends with kMinAutotuneOverheadSamples or more, and the samples of each.
void estimate_autotune_overhead(MeasuredTimes& measured,
                                const std::unordered_map<std::string, xla::AutotunedTime>& run_log);

// kInvalidInput when the run has no steps (it is not a linked capture, or
// nothing matched).
Result<MeasuredTimes> measured_times(const trace::Trace& linked);

struct ThunkTimes {
  // Per device (in the order of the programs given), per thunk: the duration
  // the simulator uses, in ns; 0 = the device model's cost.
  std::vector<std::vector<int64_t>> ns;
  // The idle time before each thunk (its launch gap), or kNoGap: the model's.
  std::vector<std::vector<int64_t>> gap_ns;
  int64_t matched_thunks = 0;      // costed from the measured run
  int64_t modelled_thunks = 0;     // costed by the model (times model_bias or gemm_model_bias)
  int64_t autotuned_thunks = 0;    // of those, costed by XLA's autotuning log instead
  double model_bias = 1.0;         // median measured / modelled over matched kernel thunks
  double gemm_model_bias = 1.0;    // the same over matched GEMM thunks; model_bias with too few
  int64_t gemm_bias_samples = 0;   // matched GEMM thunks with a modelled time
  // The same over matched library calls (kGemm thunks: cuBLAS); 1 with too
  // few, as the device's GEMM efficiency table was fitted on cuBLAS. A
  // Triton GEMM's bias is not cuBLAS's: the same product runs at another speed.
  double call_model_bias = 1.0;
  int64_t call_bias_samples = 0;
  // A plain kernel's fixed part (XLA's own kernel, no GEMM, no copy): the
  // median over the matched ones of measured - their bytes' time at the
  // HBM bandwidth, with kMinGemmBiasSamples or more; else the device's
  // shortest kernel. A plain kernel the run never ran takes at least this
  // plus its bytes' time.
  int64_t kernel_fixed_ns = 0;
  int64_t kernel_fixed_samples = 0;
};

// What thunk_times needs of the device model.
struct ModelledScale {
  // The part of a kGemm thunk's modelled time that is the call's fixed cost
  // (the device's cublas_call_us): the biases measure and scale only the rest.
  int64_t cublas_call_ns = 0;
  // The device's min_kernel_us: it bounds the times taken from the
  // autotuning log (autotuned_kernel_ns), and is a plain kernel's fixed part
  // where too few matched.
  int64_t shortest_kernel_ns = 0;
  // HBM bytes a ns at the model's achievable bandwidth (0: no bytes' time).
  double hbm_bytes_per_ns = 0;
};

inline constexpr int64_t kMinGemmBiasSamples = 3;

// `modelled` is a simulation of `devices` by the model alone: its events
// carry their thunk index as correlation (sim/engine_trace.cc), which gives
// each thunk's modelled duration and bytes.
ThunkTimes thunk_times(const std::vector<sched::DeviceProgram>& devices, const MeasuredTimes& measured,
                       const trace::Trace& modelled, const ModelledScale& scale);

}  // namespace sl::sim
