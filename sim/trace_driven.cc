#include "sim/trace_driven.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/trace/iterations.h"
#include "core/xla/launch_plan.h"
#include "sim/cost_model.h"
#include "sim/engine.h"

namespace sl::sim {
namespace {

template <typename T>
T median_of(std::vector<T> v) {
  if (v.empty()) return T{};
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

bool is_work(const trace::Event& e) { return e.kind != trace::EventKind::kWait; }

}  // namespace

Result<MeasuredTimes> measured_times(const trace::Trace& linked) {
  MeasuredTimes out;
  const std::vector<int32_t> steps = trace::iterations_of(linked);
  if (steps.empty()) return invalid_input("the measured run has no steps: link it to its module first (streamlens link)");
  out.steps = static_cast<int64_t>(steps.size());
  std::map<int32_t, size_t> step_index;
  for (size_t i = 0; i < steps.size(); ++i) step_index[steps[i]] = i;

  // Per instruction, per step: the sum of its records' durations.
  std::unordered_map<uint32_t, std::vector<int64_t>> per_step, busy_per_step, gap_per_step, issue_span_per_step;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<int64_t>> records_per_step;  // (instruction, kernel name)
  std::vector<std::pair<int64_t, int64_t>> span(steps.size(), {INT64_MAX, INT64_MIN});
  std::map<std::tuple<int32_t, int32_t, int32_t>, std::vector<const trace::Event*>> by_stream;  // step, device, stream
  for (const trace::Event& e : linked.events) {
    if (e.iteration < 0 || !is_work(e)) continue;
    const size_t s = step_index.at(e.iteration);
    span[s].first = std::min(span[s].first, e.start_ns);
    span[s].second = std::max(span[s].second, e.end_ns);
    by_stream[{e.iteration, e.device, e.stream}].push_back(&e);
    if (e.instruction == 0) continue;
    auto& v = per_step[e.instruction];
    if (v.empty()) v.assign(steps.size(), 0);
    v[s] += e.duration_ns();
    auto& b = busy_per_step[e.instruction];
    if (b.empty()) b.assign(steps.size(), 0);
    b[s] += e.duration_ns();
    auto& r = records_per_step[{e.instruction, e.name}];
    if (r.empty()) r.assign(steps.size(), 0);
    ++r[s];
  }
  for (const auto& [key, counts] : records_per_step) {
    int64_t& launches = out.launches_per_step[linked.strings.get(key.first)];
    launches = std::max(launches, median_of(counts));
  }
  std::vector<int64_t> spans;
  for (const auto& [first, last] : span) {
    if (last >= first) spans.push_back(last - first);
  }
  out.median_step_ns = median_of(spans);
  std::vector<int64_t> gaps;
  for (auto& [key, events] : by_stream) {
    std::sort(events.begin(), events.end(), [](const trace::Event* a, const trace::Event* b) {
      return a->start_ns < b->start_ns;
    });
    // The start of the current library call's last record that started at
    // its issue (after idle time: the GPU waited for the host).
    int64_t call_issue_known = events.empty() ? 0 : events[0]->start_ns;
    for (size_t i = 1; i < events.size(); ++i) {
      // Signed: a kernel that CUPTI shows starting before its predecessor's
      // end (graph nodes, about 0.1 us) overlaps it by that much.
      const int64_t gap = events[i]->start_ns - events[i - 1]->end_ns;
      gaps.push_back(std::max<int64_t>(0, gap));
      const trace::Event& e = *events[i];
      if (e.instruction == 0) continue;
      const size_t s = step_index.at(e.iteration);
      const bool same_call = e.instruction == events[i - 1]->instruction && e.kind != trace::EventKind::kCopy &&
                             events[i - 1]->kind != trace::EventKind::kCopy &&
                             linked.name_of(e) != xla::sanitized_kernel_name(linked.instruction_of(e));
      if (!same_call) {
        call_issue_known = e.start_ns;
      } else if (gap > 0) {
        // The host issued this record when it started: its code ran that
        // long since the call's earlier known issue. (A record right behind
        // the previous one may have been issued any time before.)
        auto& v = issue_span_per_step[e.instruction];
        if (v.empty()) v.assign(steps.size(), 0);
        v[s] += e.start_ns - call_issue_known;
        call_issue_known = e.start_ns;
      }
      if (same_call && gap > 0) {
        // Between two records of one library call (a cuDNN convolution's
        // kernels, issued one by one by the library's host code): the stream
        // is the call's until its last record ends, so the gap is the call's
        // time. (XLA's own kernel, or a copy, again is the next trip of a loop.)
        per_step[e.instruction][s] += gap;
        continue;
      }
      auto& v = gap_per_step[e.instruction];
      if (v.empty()) v.assign(steps.size(), 0);
      v[s] += gap;
    }
  }
  for (auto& [instruction, v] : per_step) out.ns_per_step[linked.strings.get(instruction)] = median_of(v);
  for (auto& [instruction, v] : busy_per_step) out.busy_ns_per_step[linked.strings.get(instruction)] = median_of(v);
  for (auto& [instruction, v] : gap_per_step) out.gap_ns_per_step[linked.strings.get(instruction)] = median_of(v);
  for (auto& [instruction, v] : issue_span_per_step) {
    out.issue_span_ns_per_step[linked.strings.get(instruction)] = median_of(v);
  }
  out.launch_gap_ns = median_of(gaps);
  return out;
}

int64_t autotuned_kernel_ns(int64_t autotuned_ns, int64_t overhead_ns, int64_t shortest_kernel_ns) {
  const double a = static_cast<double>(autotuned_ns);
  const double at_least = std::min(static_cast<double>(shortest_kernel_ns), kAutotuneScale * a);
  return std::max<int64_t>(1,
                           std::llround(std::max(kAutotuneScale * (a - static_cast<double>(overhead_ns)), at_least)));
}

int64_t default_autotune_overhead_ns(const std::string& backend) {
  // The median over the development captures of sets 19-22 (H200, both
  // protocols) whose own log measured the backend from 3 or more
  // instructions (bench/fidelity/autotune_overhead_by_capture.py: Triton 40
  // captures, cuBLASLt 20, the native emitter 18, the block-level emitter
  // 12). Sets 12-18 had given the block-level emitter 2077 ns.
  if (backend == "TRITON") return 2758;
  if (backend == "CUBLASLT") return 2206;
  if (backend == "BLOCK_LEVEL_EMITTER") return 2588;
  if (backend == "NATIVE_EMITTER") return 2646;
  return kDefaultAutotuneOverheadNs;
}

int64_t MeasuredTimes::autotune_overhead_ns(const std::string& backend) const {
  auto it = autotune_overhead_by_backend.find(backend);
  return it != autotune_overhead_by_backend.end() ? it->second : default_autotune_overhead_ns(backend);
}

void estimate_autotune_overhead(MeasuredTimes& measured,
                                const std::unordered_map<std::string, xla::AutotunedTime>& run_log) {
  std::map<std::string, std::vector<double>> overheads;  // by backend
  for (const auto& [name, autotuned] : run_log) {
    auto ns = measured.busy_ns_per_step.find(name);
    auto launches = measured.launches_per_step.find(name);
    if (ns == measured.busy_ns_per_step.end() || launches == measured.launches_per_step.end() ||
        launches->second <= 0) {
      continue;
    }
    const double per_launch = static_cast<double>(ns->second) / static_cast<double>(launches->second);
    overheads[autotuned.backend].push_back(static_cast<double>(autotuned.ns) - per_launch / kAutotuneScale);
  }
  measured.autotune_overhead_by_backend.clear();
  measured.autotune_overhead_samples.clear();
  for (auto& [backend, samples] : overheads) {
    measured.autotune_overhead_samples[backend] = static_cast<int64_t>(samples.size());
    if (static_cast<int64_t>(samples.size()) >= kMinAutotuneOverheadSamples) {
      measured.autotune_overhead_by_backend[backend] = std::llround(median_of(std::move(samples)));
    }
  }
}

ThunkTimes thunk_times(const std::vector<sched::DeviceProgram>& devices, const MeasuredTimes& measured,
                       const trace::Trace& modelled, const ModelledScale& scale) {
  ThunkTimes out;
  const int64_t cublas_call_ns = scale.cublas_call_ns;
  // Each thunk's modelled duration: its events' total (a thunk's events carry its index).
  std::map<std::pair<int32_t, int64_t>, int64_t> model_ns;  // (device slot, thunk index)
  // And the time its bytes take at the device's HBM bandwidth.
  std::map<std::pair<int32_t, int64_t>, double> bytes_ns;
  // Thunks the model costs as GEMMs (cuBLAS calls and GEMM fusions alike).
  std::set<std::pair<int32_t, int64_t>> model_gemm;
  std::map<int64_t, int32_t> slot_of_device;
  for (size_t d = 0; d < devices.size(); ++d) slot_of_device[devices[d].device] = static_cast<int32_t>(d);
  for (const trace::Event& e : modelled.events) {
    if (!is_work(e)) continue;
    auto slot = slot_of_device.find(e.device);
    if (slot == slot_of_device.end()) continue;
    model_ns[{slot->second, e.correlation}] += e.duration_ns();
    if (scale.hbm_bytes_per_ns > 0) {
      bytes_ns[{slot->second, e.correlation}] += static_cast<double>(e.bytes) / scale.hbm_bytes_per_ns;
    }
    if (e.kind == trace::EventKind::kGemm) model_gemm.insert({slot->second, e.correlation});
  }
  auto is_gemm = [&](size_t d, size_t i) {
    return model_gemm.count({static_cast<int32_t>(d), static_cast<int64_t>(i)}) != 0;
  };
  auto call_ns = [&](const sched::Thunk& t) { return is_library_call(t) ? cublas_call_ns : 0; };
  // XLA's own kernels that are no GEMM and no copy: their time is a fixed
  // part and their bytes' (bench/FIDELITY-real.md, "The small kernels a
  // capture never ran").
  auto plain_kernel = [&](size_t d, size_t i) {
    const sched::Thunk& t = devices[d].thunks[i];
    return t.kind == sched::ThunkKind::kKernel && !is_gemm(d, i) && !is_library_call(t) &&
           copy_path(t) == CopyPath::kNone;
  };
  auto bytes_time = [&](size_t d, size_t i) {
    auto b = bytes_ns.find({static_cast<int32_t>(d), static_cast<int64_t>(i)});
    return b == bytes_ns.end() ? 0.0 : b->second;
  };
  std::vector<double> fixed_parts;  // measured - bytes' time, of the matched plain kernels
  // Thunks per instruction per device: a measured step's time is shared by
  // the instruction's occurrences (a loop body's kernels run once a trip).
  out.ns.resize(devices.size());
  out.gap_ns.resize(devices.size());
  std::vector<double> ratios, gemm_ratios, call_ratios;
  for (size_t d = 0; d < devices.size(); ++d) {
    const auto& thunks = devices[d].thunks;
    std::unordered_map<std::string_view, int64_t> occurrences;
    for (const sched::Thunk& t : thunks) {
      if (t.kind == sched::ThunkKind::kRecordEvent || t.kind == sched::ThunkKind::kWaitEvent) continue;
      ++occurrences[t.attributed_name];
    }
    out.ns[d].assign(thunks.size(), 0);
    out.gap_ns[d].assign(thunks.size(), kNoGap);
    for (size_t i = 0; i < thunks.size(); ++i) {
      const sched::Thunk& t = thunks[i];
      if (t.kind == sched::ThunkKind::kRecordEvent || t.kind == sched::ThunkKind::kWaitEvent) continue;
      const std::string source = measured.source(t.attributed_name);
      auto m = measured.ns_per_step.find(source);
      if (m == measured.ns_per_step.end() || m->second <= 0) continue;
      const int64_t count = std::max<int64_t>(1, occurrences[t.attributed_name]);
      const int64_t ns = std::max<int64_t>(1, m->second / count);
      out.ns[d][i] = ns;
      if (auto g = measured.gap_ns_per_step.find(source); g != measured.gap_ns_per_step.end()) {
        out.gap_ns[d][i] = g->second / count;
      }
      ++out.matched_thunks;
      if (plain_kernel(d, i)) fixed_parts.push_back(static_cast<double>(ns) - bytes_time(d, i));
      auto model = model_ns.find({static_cast<int32_t>(d), static_cast<int64_t>(i)});
      const int64_t fixed = call_ns(t);
      if (model != model_ns.end() && model->second > fixed && t.kind != sched::ThunkKind::kCollective) {
        // The model's bias on the work itself, the call's fixed cost aside.
        const double ratio = static_cast<double>(std::max<int64_t>(1, ns - fixed)) /
                             static_cast<double>(model->second - fixed);
        ratios.push_back(ratio);
        if (is_gemm(d, i)) gemm_ratios.push_back(ratio);
        if (is_library_call(t)) call_ratios.push_back(ratio);
      }
    }
  }
  out.model_bias = ratios.empty() ? 1.0 : median_of(ratios);
  out.gemm_bias_samples = static_cast<int64_t>(gemm_ratios.size());
  out.gemm_model_bias = out.gemm_bias_samples >= kMinGemmBiasSamples ? median_of(gemm_ratios) : out.model_bias;
  out.call_bias_samples = static_cast<int64_t>(call_ratios.size());
  out.call_model_bias = out.call_bias_samples >= kMinGemmBiasSamples ? median_of(call_ratios) : 1.0;
  out.kernel_fixed_samples = static_cast<int64_t>(fixed_parts.size());
  out.kernel_fixed_ns = out.kernel_fixed_samples >= kMinGemmBiasSamples
                            ? std::max<int64_t>(0, std::llround(median_of(std::move(fixed_parts))))
                            : scale.shortest_kernel_ns;
  for (size_t d = 0; d < devices.size(); ++d) {
    const auto& thunks = devices[d].thunks;
    for (size_t i = 0; i < thunks.size(); ++i) {
      const sched::Thunk& t = thunks[i];
      if (out.ns[d][i] != 0 || t.kind == sched::ThunkKind::kRecordEvent || t.kind == sched::ThunkKind::kWaitEvent) {
        continue;
      }
      if (auto a = measured.autotuned.find(std::string(t.attributed_name)); a != measured.autotuned.end()) {
        out.ns[d][i] = autotuned_kernel_ns(a->second.ns, measured.autotune_overhead_ns(a->second.backend),
                                           scale.shortest_kernel_ns);
        ++out.modelled_thunks;
        ++out.autotuned_thunks;
        continue;
      }
      auto model = model_ns.find({static_cast<int32_t>(d), static_cast<int64_t>(i)});
      if (model == model_ns.end() || model->second <= 0) continue;
      const bool call = is_library_call(t);
      const double bias = call ? out.call_model_bias : is_gemm(d, i) ? out.gemm_model_bias : out.model_bias;
      const int64_t fixed = std::min(call_ns(t), model->second);
      out.ns[d][i] = std::max<int64_t>(
          1, fixed + static_cast<int64_t>(static_cast<double>(model->second - fixed) * bias));
      if (plain_kernel(d, i)) {
        // A small kernel takes its fixed part and its bytes' time, where
        // the model takes the longer of its floor and that time.
        out.ns[d][i] = std::max<int64_t>(out.ns[d][i], out.kernel_fixed_ns + std::llround(bytes_time(d, i)));
      }
      ++out.modelled_thunks;
    }
  }
  return out;
}

}  // namespace sl::sim
