#include "sim/sim_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <set>

#include "sim/command_buffers.h"
#include "sim/engine.h"
#include "sim/trace_driven.h"

namespace sl::sim {
namespace {

// One counter a backend of the simulated module's log entries: the overhead
// its thunks' autotuned times were taken less, and where it came from.
void add_autotune_overhead_counters(const MeasuredTimes& measured, trace::Trace& trace) {
  std::set<std::string> backends;
  for (const auto& [name, time] : measured.autotuned) backends.insert(time.backend);
  for (const std::string& backend : backends) {
    auto samples = measured.autotune_overhead_samples.find(backend);
    const int64_t n = samples == measured.autotune_overhead_samples.end() ? 0 : samples->second;
    std::string key = backend.empty() ? "other" : backend;
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
    trace.add_counter("trace_driven.autotune_overhead_ns." + key, measured.autotune_overhead_ns(backend),
                      fmt::format("the autotuning log's time over a step's, per kernel, of {} candidates: from {} "
                                  "instructions of the measured run's own log ({} ns with fewer than {})",
                                  backend, n, default_autotune_overhead_ns(backend), kMinAutotuneOverheadSamples));
  }
}

// The cuBLAS calls the host traces again to launch the graph whose first
// node is thunk `i` of device `d` (GraphProgram::retraced_commands).
int64_t retraced_at_launch(const GraphProgram& laid, size_t d, size_t i) {
  const int64_t g = laid.graph_of[d][i];
  return g >= 0 && static_cast<size_t>(g) < laid.retraced_commands.size()
             ? laid.retraced_commands[static_cast<size_t>(g)]
             : 0;
}

// The same for the measured run's graph of node `source`.
int64_t retraced_at_launch(const MeasuredTimes& measured, const std::string& source) {
  const auto it = measured.host_work.retraced_commands.find(source);
  return it == measured.host_work.retraced_commands.end() ? 0 : it->second;
}

// The role gaps with every overlap of a graph node and its predecessor (a
// negative gap) at 0; empty when no gap was negative.
std::vector<std::vector<int64_t>> without_overlaps(const std::vector<std::vector<int64_t>>& role_gaps) {
  std::vector<std::vector<int64_t>> out = role_gaps;
  bool any = false;
  for (auto& gaps : out) {
    for (int64_t& gap : gaps) {
      if (gap != kNoGap && gap < 0) {
        gap = 0;
        any = true;
      }
    }
  }
  if (!any) out.clear();
  return out;
}

class SimBackend : public exec::Backend {
 public:
  SimBackend(DeviceModel model, std::optional<MeasuredTimes> measured, LaunchSetup launch)
      : model_(std::move(model)), measured_(std::move(measured)), launch_(std::move(launch)) {}

  std::string name() const override { return "sim"; }

  Result<exec::RunOutput> run(const sched::LoweredProgram& program, const exec::RunOptions& options) override {
    if (options.iterations < 1) return usage_error(fmt::format("--iterations must be >= 1 (got {})", options.iterations));
    SimOptions sim_options;
    sim_options.allow_tf32 = options.allow_tf32;
    sim_options.comm_sms = options.comm_sms;
    sim_options.module = program.module;
    int iterations = options.iterations;
    if (options.progress) {
      // One simulated iteration is the whole work; repeats are copies.
      sim_options.progress = options.progress;
    }
    // An XLA executable runs as XLA launches it: graphs laid out on lanes,
    // every kernel's gap by how it is launched.
    const std::vector<sched::DeviceProgram>* devices = &program.devices;
    std::optional<GraphProgram> laid;
    std::vector<std::vector<int64_t>> role_gaps;
    ColdGraphWait cold;
    HostIssue host;
    std::vector<std::vector<int64_t>> dnn_host;  // the measured cuDNN calls' host time (dnn_host_after)
    if (launch_.xla_executable) {
      const std::vector<std::vector<CommandBuffer>> none;
      SL_ASSIGN_OR_RETURN(laid, lay_out_command_buffers(program.devices, launch_.command_buffers ? launch_.graphs : none,
                                                        model_.graph_concurrency));
      devices = &laid->devices;
      role_gaps = role_gaps_ns(*laid, model_, true);
      sim_options.fixed_thunk_gap_ns = &role_gaps;
      cold = cold_graph_wait(*laid, model_);
      if (!cold.wait_ns.empty()) sim_options.cold_graph_wait = &cold;
      // Trace-driven: the host as fast as it was in the measured run.
      const bool from_capture = measured_ && measured_->host_costs;
      if (measured_) dnn_host = dnn_host_after(program.devices, *measured_);
      host = host_issue_of(*laid, program.devices, from_capture ? with_host_costs(model_, *measured_->host_costs) : model_,
                           launch_.host_syncs, launch_.dynamic_slices, launch_.launches_before_syncs, dnn_host);
      sim_options.host_issue = &host;
    }
    SL_ASSIGN_OR_RETURN(trace::Trace trace, simulate(*devices, model_, sim_options));
    if (measured_) {
      // Each thunk's modelled duration for the replays, from the model's run
      // without the overlap of graph nodes: a node that overlaps its
      // predecessor shows the overlap taken off its duration, and the
      // trace-driven run takes it off again.
      const std::vector<std::vector<int64_t>> no_overlap = without_overlaps(role_gaps);
      std::optional<trace::Trace> standalone;
      if (!no_overlap.empty()) {
        SimOptions options = sim_options;
        options.fixed_thunk_gap_ns = &no_overlap;
        SL_ASSIGN_OR_RETURN(standalone, simulate(*devices, model_, options));
      }
      const trace::Trace& modelled = standalone ? *standalone : trace;
      SL_ASSIGN_OR_RETURN(trace::Trace driven,
                          trace_driven(*devices, laid ? &*laid : nullptr, role_gaps, sim_options, modelled));
      if (laid) {
        SL_RETURN_IF_ERROR(
            add_host_pace_range(program.devices, *laid, role_gaps, dnn_host, sim_options, modelled, driven));
      }
      trace = std::move(driven);
    }
    if (laid) {
      map_back(*laid, program.devices, trace);
      trace.add_counter("sim.command_buffer_launches", laid->graphs,
                        "CUDA graphs (XLA command buffers) launched: each pays graph_launch_us once, its nodes run "
                        "in DAG order");
      trace.add_counter("sim.command_buffer_nodes", laid->nodes, "thunks that ran as graph nodes");
    }
    if (laid && measured_ && measured_->host_costs) add_host_cost_counters(*measured_->host_costs, trace);
    trace.normalize_time();
    if (iterations > 1) {
      // Repeats are laid end to end: the last must still end within int64 ns.
      int64_t total = 0;
      if (__builtin_mul_overflow(trace.makespan_ns(), static_cast<int64_t>(iterations), &total)) {
        return invalid_input(fmt::format("{} iterations of a {} ns makespan pass int64 nanoseconds (292 years)",
                                         iterations, trace.makespan_ns()));
      }
      repeat(trace, iterations);
    }

    exec::RunOutput out;
    out.trace = std::move(trace);
    out.device_description = fmt::format("{} model ({}) x{}", model_.name, model_.description, program.devices.size());
    return out;
  }

 private:
  // The makespan again at the fastest and slowest pace of XLA's host
  // measured between calls (DeviceModel::host_pace_*_scale on the file's
  // costs), as counters, where the step's host pace is not the measured
  // run's: a kind of host cost comes from the device file (the costs
  // estimated from the run stay), or the module is another compilation (a
  // what-if across XLA settings, run in another call: every cost is the
  // file's). None when the file gives no range.
  Status add_host_pace_range(const std::vector<sched::DeviceProgram>& original, const GraphProgram& laid,
                             const std::vector<std::vector<int64_t>>& role_gaps,
                             const std::vector<std::vector<int64_t>>& dnn_host, SimOptions options,
                             const trace::Trace& modelled, trace::Trace& trace) const {
    HostCostEstimate estimate = measured_->host_costs.value_or(HostCostEstimate{});
    if (measured_->another_module) estimate = HostCostEstimate{};
    // The range is the file's costs at the paces measured between calls, not at this run's.
    estimate.pace = 1;
    estimate.pace_samples = 0;
    const bool any_from_file = estimate.kernel_samples < kMinHostSamples ||
                               estimate.library_samples < kMinHostSamples ||
                               estimate.graph_samples < kMinHostSamples ||
                               estimate.dynamic_slice_samples < kMinHostSamples;
    if (!any_from_file || (model_.host_pace_fast_scale == 1 && model_.host_pace_slow_scale == 1)) {
      return ok_status();
    }
    const std::pair<const char*, double> paces[] = {{kHostPaceFastCounter, model_.host_pace_fast_scale},
                                                    {kHostPaceSlowCounter, model_.host_pace_slow_scale}};
    for (const auto& [counter, scale] : paces) {
      DeviceModel scaled = model_;
      for (double* us : {&scaled.host_kernel_launch_us, &scaled.host_library_call_us, &scaled.host_graph_launch_us,
                         &scaled.host_graph_rerecord_us, &scaled.host_graph_retrace_us, &scaled.host_graph_blas_command_us,
                         &scaled.host_dynamic_slice_us}) {
        *us *= scale;
      }
      const HostIssue host = host_issue_of(laid, original, with_host_costs(scaled, estimate), launch_.host_syncs,
                                           launch_.dynamic_slices, launch_.launches_before_syncs, dnn_host);
      options.host_issue = &host;
      SL_ASSIGN_OR_RETURN(trace::Trace at_pace, trace_driven(laid.devices, &laid, role_gaps, options, modelled));
      // The measured run is one call too: where its own pace lies outside
      // the file's, the range reaches the step as simulated.
      const int64_t step = trace.makespan_ns();
      const int64_t reached = scale < 1 ? std::min(at_pace.makespan_ns(), step) : std::max(at_pace.makespan_ns(), step);
      trace.add_counter(counter, reached,
                        fmt::format("makespan with the device file's host costs x{} (the {} host pace measured "
                                    "between calls), or the step as simulated where that is {}, in ns",
                                    scale, scale < 1 ? "fastest" : "slowest", scale < 1 ? "faster" : "slower"));
    }
    return ok_status();
  }

  // Per device, per thunk: the host time a cuDNN call keeps after its issue
  // (host_issue_of's after_issue_ns), its first record's start to its last's
  // in the measured run where the run launched it alone (in a graph the
  // GPU, not the host, spaced them). Library calls of cuBLAS are costed whole
  // by host_library_call_us.
  static std::vector<std::vector<int64_t>> dnn_host_after(const std::vector<sched::DeviceProgram>& devices,
                                                          const MeasuredTimes& measured) {
    std::vector<std::vector<int64_t>> out(devices.size());
    for (size_t d = 0; d < devices.size(); ++d) {
      out[d].assign(devices[d].thunks.size(), 0);
      for (size_t i = 0; i < devices[d].thunks.size(); ++i) {
        const std::string source = measured.source(devices[d].thunks[i].attributed_name);
        if (!measured.host_work.dnn_call.count(source) || measured.in_graph.count(source)) continue;
        if (auto span = measured.issue_span_ns_per_step.find(source); span != measured.issue_span_ns_per_step.end()) {
          out[d][i] = std::max<int64_t>(0, span->second);
        }
      }
    }
    return out;
  }

  // What the host-issue model took from the measured run (sim/host_pace.h).
  void add_host_cost_counters(const HostCostEstimate& estimate, trace::Trace& trace) const {
    const DeviceModel used = with_host_costs(model_, estimate);
    auto one = [&](const char* name, const char* samples_name, double us, int64_t samples, const char* what) {
      trace.add_counter(name, std::llround(us * 1e3),
                        fmt::format("host time of {} used, in ns: the median start gap of the measured run's "
                                    "launch-bound ones when at least {}, else the device file's at the "
                                    "run's pace",
                                    what, kMinHostSamples));
      trace.add_counter(samples_name, samples, fmt::format("launch-bound {} in the measured run's median step", what));
    };
    one("sim.host_kernel_launch_ns_from_capture", "sim.host_kernel_launch_samples", used.host_kernel_launch_us,
        estimate.kernel_samples, "a kernel launched alone");
    one("sim.host_library_call_ns_from_capture", "sim.host_library_call_samples", used.host_library_call_us,
        estimate.library_samples, "a library call (cuBLAS)");
    one("sim.host_graph_launch_ns_from_capture", "sim.host_graph_launch_samples", used.host_graph_launch_us,
        estimate.graph_samples, "a graph launch");
    one("sim.host_dynamic_slice_ns_from_capture", "sim.host_dynamic_slice_samples", used.host_dynamic_slice_us,
        estimate.dynamic_slice_samples, "a dynamic-slice fusion launched alone");
    one("sim.host_graph_retrace_ns_from_capture", "sim.host_graph_retrace_samples", used.host_graph_retrace_us,
        estimate.graph_retrace_samples, "a cuBLAS call inside a dynamic-slice fusion, traced again at its graph's recording");
    one("sim.host_graph_blas_command_ns_from_capture", "sim.host_graph_blas_command_samples",
        used.host_graph_blas_command_us, estimate.graph_blas_command_samples,
        "a cuBLAS command of a graph, at each launch of the graph");
  }

  // Iteration i starts when iteration i-1 has ended on every device.
  static void repeat(trace::Trace& trace, int iterations) {
    const size_t events = trace.events.size();
    const size_t deps = trace.dependencies.size();
    const int64_t span = trace.makespan_ns();
    trace.events.reserve(events * static_cast<size_t>(iterations));
    trace.dependencies.reserve(deps * static_cast<size_t>(iterations));
    for (int it = 1; it < iterations; ++it) {
      const auto offset = static_cast<uint32_t>(events * static_cast<size_t>(it));
      for (size_t i = 0; i < events; ++i) {
        trace::Event e = trace.events[i];
        e.start_ns += span * it;
        e.end_ns += span * it;
        e.iteration = it;
        trace.events.push_back(e);
      }
      for (size_t i = 0; i < deps; ++i) {
        trace::Dependency d = trace.dependencies[i];
        trace.dependencies.push_back({d.from + offset, d.to + offset});
      }
    }
  }

  // Simulates again with each thunk's measured time (the model's, scaled by
  // its bias on this program, for the rest) and the launch gap the measured
  // run paid.
  Result<trace::Trace> trace_driven(const std::vector<sched::DeviceProgram>& devices, const GraphProgram* laid,
                                    const std::vector<std::vector<int64_t>>& role_gaps, SimOptions options,
                                    const trace::Trace& modelled) const {
    const ModelledScale scale{std::llround(model_.cublas_call_us * 1e3), std::llround(model_.min_kernel_us * 1e3),
                              model_.hbm_bandwidth_gbps * model_.hbm_efficiency};
    ThunkTimes times = thunk_times(devices, *measured_, modelled, scale);
    DeviceModel replay = model_;
    if (measured_->launch_gap_ns > 0) replay.kernel_launch_us = static_cast<double>(measured_->launch_gap_ns) / 1e3;
    int64_t gaps_by_role = 0;
    std::vector<std::vector<uint8_t>> modelled_gap;
    if (laid != nullptr) gaps_by_role = keep_gaps_launched_alike(devices, *laid, role_gaps, times.gap_ns, modelled_gap);
    // A measured gap shows the wait after a cold launch's first node already.
    const ColdGraphWait cold = laid != nullptr ? cold_graph_wait(*laid, model_, &modelled_gap) : ColdGraphWait{};
    options.cold_graph_wait = cold.wait_ns.empty() ? nullptr : &cold;
    // Only a graph node overlaps its predecessor; a stream replays idle time.
    for (size_t d = 0; d < times.gap_ns.size(); ++d) {
      for (size_t i = 0; i < times.gap_ns[d].size(); ++i) {
        int64_t& gap = times.gap_ns[d][i];
        const bool node = laid != nullptr && laid->role[d][i] != LaunchRole::kStream;
        if (gap != kNoGap && gap < 0 && !node) gap = 0;
      }
    }
    options.fixed_thunk_ns = &times.ns;
    options.fixed_thunk_gap_ns = &times.gap_ns;
    SL_ASSIGN_OR_RETURN(trace::Trace trace, simulate(devices, replay, options));
    if (laid != nullptr) {
      trace.add_counter("trace_driven.gaps_by_launch_role", gaps_by_role,
                        "graph nodes the measured run launched alone, or never ran: their gap is the model's for "
                        "their place in the graph");
    }
    trace.add_counter("trace_driven.matched_thunks", times.matched_thunks,
                      "thunks costed by what their instruction took in the measured run's median step");
    trace.add_counter("trace_driven.modelled_thunks", times.modelled_thunks,
                      "thunks the measured run never ran, costed by the model times its bias");
    trace.add_counter("trace_driven.autotuned_thunks", times.autotuned_thunks,
                      "of those, thunks costed by XLA's autotuning log of the simulated module instead "
                      "(its fastest candidate, less the log's overhead)");
    add_autotune_overhead_counters(*measured_, trace);
    trace.add_counter("trace_driven.model_bias_permille", std::llround(times.model_bias * 1000),
                      "median of measured / modelled kernel time over the matched thunks, x1000");
    trace.add_counter("trace_driven.gemm_model_bias_permille", std::llround(times.gemm_model_bias * 1000),
                      fmt::format("the same over the matched GEMM thunks ({} of them; the median over all when "
                                  "fewer than {}), x1000: the bias of the GEMMs the model costs",
                                  times.gemm_bias_samples, kMinGemmBiasSamples));
    trace.add_counter("trace_driven.call_model_bias_permille", std::llround(times.call_model_bias * 1000),
                      fmt::format("the same over the matched cuBLAS calls, their fixed cost aside ({} of them; 1 "
                                  "when fewer than {}), x1000: the bias of the cuBLAS calls the model costs",
                                  times.call_bias_samples, kMinGemmBiasSamples));
    trace.add_counter("trace_driven.kernel_fixed_ns", times.kernel_fixed_ns,
                      fmt::format("a plain kernel's fixed part: the median of measured - bytes' time over the "
                                  "matched ones ({} of them; min_kernel_us when fewer than {}); one the measured "
                                  "run never ran takes at least this plus its bytes' time",
                                  times.kernel_fixed_samples, kMinGemmBiasSamples));
    trace.add_counter("trace_driven.launch_gap_ns", measured_->launch_gap_ns,
                      "median idle time between records of a stream in the measured steps, used as the launch gap");
    return trace;
  }

  // A graph node's measured gap stays where the measured run launched the
  // instruction in a graph too, at the same place (a graph's first node, or
  // a node after another, after a kernel launched with PDL or not); elsewhere the
  // role's gap replaces it. A kernel
  // launched alone always gets its role's gap: its measured idle time came
  // from the race between the host and the GPU, which the host-issue model
  // runs again (replaying it would count the host twice, and on a second
  // stream it is the wait for the other stream). Returns how many graph
  // nodes got their role's gap; `modelled` marks the thunks that did (per
  // device, per thunk).
  int64_t keep_gaps_launched_alike(const std::vector<sched::DeviceProgram>& devices, const GraphProgram& laid,
                                   const std::vector<std::vector<int64_t>>& role_gaps,
                                   std::vector<std::vector<int64_t>>& gaps,
                                   std::vector<std::vector<uint8_t>>& modelled) const {
    int64_t replaced = 0;
    const std::vector<std::vector<uint8_t>> after_pdl = after_pdl_launch(laid);
    modelled.assign(gaps.size(), {});
    for (size_t d = 0; d < devices.size() && d < gaps.size(); ++d) {
      modelled[d].assign(gaps[d].size(), 0);
      for (size_t i = 0; i < gaps[d].size(); ++i) {
        const LaunchRole role = laid.role[d][i];
        if (role == LaunchRole::kSynthetic) continue;
        if (role == LaunchRole::kStream) {
          gaps[d][i] = role_gaps[d][i];
          continue;
        }
        const std::string source = measured_->source(devices[d].thunks[i].attributed_name);
        const bool graph_there = !measured_->graph_mode_known || measured_->in_graph.count(source) > 0;
        // At another place in its graph there: a graph's first node waited
        // for the launch, a node after another for its predecessor only.
        // After a kernel launched with PDL here and not there, or the other
        // way round: the gap there was (or was not) that kernel's tail. A
        // graph's first node whose launch traced another number of cuBLAS
        // calls again there (a notriton scan body's, none here) waited for
        // another launch: the host-issue model gives this one's.
        const bool place_differs =
            role == LaunchRole::kGraphStart
                ? measured_->graph_after.count(source) > 0 ||
                      retraced_at_launch(*measured_, source) != retraced_at_launch(laid, d, i)
                : measured_->graph_first.count(source) > 0 ||
                      (measured_->graph_mode_known &&
                       (after_pdl[d][i] != 0) != (measured_->graph_after_pdl_launch.count(source) > 0));
        if (gaps[d][i] != kNoGap && graph_there && !place_differs) continue;
        gaps[d][i] = role_gaps[d][i];
        modelled[d][i] = 1;
        ++replaced;
      }
    }
    return replaced;
  }

  DeviceModel model_;
  std::optional<MeasuredTimes> measured_;
  LaunchSetup launch_;
};

}  // namespace

std::unique_ptr<exec::Backend> make_sim_backend(DeviceModel model) {
  return std::make_unique<SimBackend>(std::move(model), std::nullopt, LaunchSetup{});
}

std::unique_ptr<exec::Backend> make_sim_backend(DeviceModel model, LaunchSetup launch) {
  return std::make_unique<SimBackend>(std::move(model), std::nullopt, std::move(launch));
}

std::unique_ptr<exec::Backend> make_trace_driven_sim_backend(DeviceModel model, MeasuredTimes measured,
                                                             LaunchSetup launch) {
  return std::make_unique<SimBackend>(std::move(model), std::move(measured), std::move(launch));
}

}  // namespace sl::sim
