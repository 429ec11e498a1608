// Kernels: their cost by content, the launch gap before them, and their
// completion.

#include "sim/engine_state.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "sim/cost_model.h"

namespace sl::sim::engine_internal {

KernelWork Engine::work_of(const Thunk& thunk) {
  // Hand-built thunks (no instruction) carry their own numbers: nothing to cache.
  if (thunk.instruction == nullptr) return kernel_work(options_.module, thunk);
  auto [it, inserted] = work_.try_emplace(thunk.instruction);
  if (inserted) it->second = kernel_work(options_.module, thunk);
  return it->second;
}

uint32_t Engine::new_job() {
  uint32_t id;
  if (!free_jobs_.empty()) {
    id = free_jobs_.back();
    free_jobs_.pop_back();
  } else {
    id = static_cast<uint32_t>(jobs_.size());
    jobs_.emplace_back();
  }
  Job& j = jobs_[id];
  j.active = true;
  j.launching = false;
  j.started = false;
  j.waited = false;
  j.holds_every_sm = false;
  j.fresh = true;
  j.rate = 0;
  j.last = now_;
  j.members.clear();
  return id;
}

void Engine::mark_dirty(int device) {
  DeviceState& d = devices_[static_cast<size_t>(device)];
  if (!d.dirty) {
    d.dirty = true;
    dirty_.push_back(device);
  }
}

void Engine::hold_for_cold_graph(int device, uint32_t index, int64_t graph, bool waited_for_host, double& launch_ns,
                                 double& work_ns) {
  const ColdGraphWait& wait = *options_.cold_graph_wait;
  DeviceState& dev = devices_[static_cast<size_t>(device)];
  if (dev.graph_first_start_ns.size() < wait.wait_ns.size()) {
    dev.graph_first_start_ns.resize(wait.wait_ns.size(), std::numeric_limits<double>::quiet_NaN());
  }
  double& first = dev.graph_first_start_ns[static_cast<size_t>(graph)];
  const double start = now_ + std::max(0.0, launch_ns);
  if (std::isnan(first)) {
    // The launch's first node: cold when the GPU had to wait for the host.
    first = waited_for_host ? start : -std::numeric_limits<double>::infinity();
    return;
  }
  const auto& holds = wait.holds[static_cast<size_t>(device)];
  if (index >= holds.size() || holds[index] == 0) return;
  const double earliest = first + static_cast<double>(wait.wait_ns[static_cast<size_t>(graph)]);
  if (start >= earliest) return;
  cold_graph_wait_ns_ += earliest - start;
  work_ns += earliest - start;
  launch_ns = std::max(0.0, launch_ns) + (earliest - start);
}

void Engine::start_kernel(int device, int stream, const Thunk& thunk, uint32_t index, double issue) {
  const int64_t sms = thunk.kind == ThunkKind::kGemm ? gemm_sms(model_, thunk, options_.comm_sms) : 0;
  const std::optional<KernelWork> work =
      thunk.kind == ThunkKind::kGemm ? std::nullopt : std::optional<KernelWork>(work_of(thunk));
  KernelCost cost = !work ? gemm_cost(model_, thunk, options_.allow_tf32, sms)
                          : content_cost(model_, thunk, *work, options_.allow_tf32);
  // The launch is a gap on the stream before the kernel, as CUPTI shows it:
  // the kernel starts (and takes its share of the device) after it.
  double launch_ns = std::min(cost.work_ns, model_.kernel_launch_us * 1e3);
  const int64_t gap = fixed_gap_ns(static_cast<size_t>(device), index);
  const bool has_gap = gap != kNoGap;
  if (const int64_t fixed = fixed_ns(static_cast<size_t>(device), index); fixed > 0) {
    // Trace-driven: the measured kernel after the measured (or modelled) gap.
    launch_ns = has_gap ? static_cast<double>(gap) : model_.kernel_launch_us * 1e3;
    cost.work_ns = static_cast<double>(fixed) + launch_ns;
  } else if (has_gap) {
    // The model's kernel after the gap its launch pays (command buffers).
    cost.work_ns = cost.work_ns - launch_ns + static_cast<double>(gap);
    launch_ns = static_cast<double>(gap);
  }
  bool waited_for_host = false;
  if (const double host_wait = issue - now_; host_wait > 0 && host_wait > launch_ns) {
    // Issued after its stream could have run it: the GPU waits for the host.
    host_wait_ns_ += host_wait - std::max(0.0, launch_ns);
    ++host_bound_;
    cost.work_ns += host_wait - launch_ns;
    launch_ns = host_wait;
    waited_for_host = true;
  }
  if (const int64_t g = cold_graph_of(static_cast<size_t>(device), index); g >= 0) {
    hold_for_cold_graph(device, index, g, waited_for_host, launch_ns, cost.work_ns);
  }
  if (launch_ns < 0) {
    // A graph node overlapping its predecessor's tail (CUPTI shows it
    // starting before the predecessor ends): the overlap comes off the
    // node, never more than half of it.
    const double busy = cost.work_ns - launch_ns;
    cost.work_ns = std::max(busy / 2, cost.work_ns);
    launch_ns = 0;
  }
  auto [name, kind] = name_and_kind(thunk);
  if (work && kind == EventKind::kOther) {
    // A fusion says by its content what it is: a Triton GEMM fusion is a
    // GEMM, a loop or reduction fusion elementwise work.
    if (work->work_class == WorkClass::kGemm || work->work_class == WorkClass::kConvolution) kind = EventKind::kGemm;
    if (work->work_class == WorkClass::kFusion || work->work_class == WorkClass::kReduction) {
      kind = EventKind::kElementwise;
    }
  }
  uint32_t event = emit(device, stream, thunk, index, kind, name, now_ + launch_ns);
  if (work && work->work_class != WorkClass::kThunk) {
    // The event reports what the content analysis counted.
    trace::Event& e = trace_.events[event];
    e.flops = std::llround(work->flops);
    e.bytes = std::llround(work->bytes());
    if (work->work_class == WorkClass::kCustomCall) ++custom_calls_by_bytes_;
  }
  uint32_t id = new_job();
  Job& j = jobs_[id];
  j.collective = false;
  j.remaining = cost.work_ns - launch_ns;
  j.compute_need = cost.compute_need;
  j.mem_need = cost.mem_need;
  j.left_free = sms > 0 ? 1.0 - static_cast<double>(sms) / static_cast<double>(model_.sm_count) : 0.0;
  j.holds_every_sm = thunk.kind == ThunkKind::kGemm && sms == 0 && gemm_fills_device(model_, thunk.gemm);
  j.thunk = index;
  j.members.push_back({device, stream, event, cost.mem_need});
  if (launch_ns > 0) {
    j.launching = true;
    devices_[static_cast<size_t>(device)].launching.push_back(id);
    heap_.push({now_ + launch_ns, seq_++, id, j.version});
    return;
  }
  devices_[static_cast<size_t>(device)].running.push_back(id);
  mark_dirty(device);
}

void Engine::begin_after_launch(uint32_t job_id) {
  Job& j = jobs_[job_id];
  j.launching = false;
  j.fresh = true;
  j.last = now_;
  DeviceState& dev = devices_[static_cast<size_t>(j.members.front().device)];
  dev.launching.erase(std::find(dev.launching.begin(), dev.launching.end(), job_id));
  dev.running.push_back(job_id);
  mark_dirty(j.members.front().device);
}

void Engine::complete(uint32_t job_id) {
  Job& j = jobs_[job_id];
  j.active = false;
  for (const Member& m : j.members) {
    DeviceState& dev = devices_[static_cast<size_t>(m.device)];
    trace_.events[m.event].end_ns = to_ns(now_);
    if (!j.collective) dev.last_kernel_done = m.event;
    StreamState& s = dev.streams[static_cast<size_t>(m.stream)];
    s.busy = false;
    s.free_at = now_;
    s.last_event = m.event;
    auto it = std::find(dev.running.begin(), dev.running.end(), job_id);
    if (it != dev.running.end()) dev.running.erase(it);
    mark_dirty(m.device);
    ready_.emplace_back(m.device, m.stream);
  }
  free_jobs_.push_back(job_id);
  // Before the streams advance: a held collective was launched before any kernel they launch now.
  if (j.holds_every_sm && !held_.empty()) release_held_collectives();
}

}  // namespace sl::sim::engine_internal
