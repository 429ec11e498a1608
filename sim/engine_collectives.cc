// Collectives: rendezvous of a group, the SMs a GEMM on every SM holds from
// a collective launched after it, and the launch on every member.

#include "sim/engine_state.h"

#include <algorithm>

#include <fmt/format.h>

#include "sim/cost_model.h"

namespace sl::sim::engine_internal {

Status Engine::arrive(int device, int stream, const Thunk& thunk, uint32_t index) {
  const sched::CollectiveInfo& info = thunk.collective;
  int64_t first = programs_[static_cast<size_t>(device)].device;
  for (int64_t g : info.group) {
    if (g < 0 || static_cast<size_t>(g) >= index_of_global_.size() || index_of_global_[static_cast<size_t>(g)] < 0) {
      return invalid_input(fmt::format("{}: collective group names device {}, which is not simulated",
                                       where(device, stream, index), g));
    }
    first = std::min(first, g);
  }
  Rendezvous& rv = rendezvous_[RendezvousKey{info.rendezvous_id, first}];
  if (rv.arrivals.empty()) rv.expected = std::max<size_t>(info.group.size(), 1);
  for (const Arrival& a : rv.arrivals) {
    if (a.device == device) {
      return invalid_input(fmt::format("{}: reaches rendezvous {} a second time before it completed",
                                       where(device, stream, index), info.rendezvous_id));
    }
  }
  rv.arrivals.push_back({device, stream, index, now_, sm_holders(device, index)});
  devices_[static_cast<size_t>(device)].streams[static_cast<size_t>(stream)].busy = true;
  if (rv.arrivals.size() >= rv.expected) {
    start_collective(rv);
    rendezvous_.erase(RendezvousKey{info.rendezvous_id, first});
  }
  return ok_status();
}

// The GEMMs holding every SM of `device` that got them before the kernel of
// collective thunk `thunk`, arriving now: those launched before it (the host
// launches a device's thunks in order, and NCCL's launch takes longer than a
// kernel's), running or in their launch gap, and those launched after it that
// were already running before now.
std::vector<uint32_t> Engine::sm_holders(int device, uint32_t thunk) const {
  std::vector<uint32_t> out;
  const DeviceState& dev = devices_[static_cast<size_t>(device)];
  for (uint32_t id : dev.running) {
    const Job& j = jobs_[id];
    const uint32_t event = j.members.front().event;
    const bool first = j.thunk < thunk || trace_.events[event].start_ns < to_ns(now_);
    if (j.holds_every_sm && first) out.push_back(event);
  }
  for (uint32_t id : dev.launching) {
    if (jobs_[id].holds_every_sm && jobs_[id].thunk < thunk) out.push_back(jobs_[id].members.front().event);
  }
  return out;
}

bool Engine::still_held(const Arrival& a) const {
  if (a.holders.empty()) return false;
  const DeviceState& dev = devices_[static_cast<size_t>(a.device)];
  auto holds = [&](uint32_t id) {
    return jobs_[id].holds_every_sm &&
           std::find(a.holders.begin(), a.holders.end(), jobs_[id].members.front().event) != a.holders.end();
  };
  return std::any_of(dev.running.begin(), dev.running.end(), holds) ||
         std::any_of(dev.launching.begin(), dev.launching.end(), holds);
}

void Engine::start_collective(Rendezvous& rv) {
  // Sort members by device so event order and cost do not depend on arrival order.
  std::sort(rv.arrivals.begin(), rv.arrivals.end(),
            [](const Arrival& a, const Arrival& b) { return a.device < b.device; });
  // NCCL's kernel needs SMs of its own on every member; a GEMM that reached
  // them first and holds them all keeps it out until that GEMM ends. A member
  // whose kernel got SMs first keeps them while it waits for the others.
  std::vector<int> blocked;
  for (const Arrival& a : rv.arrivals) {
    if (still_held(a)) blocked.push_back(a.device);
  }
  if (!blocked.empty()) {
    held_.push_back({std::move(rv), std::move(blocked), now_});
    return;
  }
  launch_collective(rv, {}, now_);
}

void Engine::release_held_collectives() {
  for (size_t i = 0; i < held_.size();) {
    HeldCollective& h = held_[i];
    bool free = std::none_of(h.rv.arrivals.begin(), h.rv.arrivals.end(),
                             [&](const Arrival& a) { return still_held(a); });
    if (!free) {
      ++i;
      continue;
    }
    HeldCollective released = std::move(h);
    held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(i));
    ++collectives_held_;
    held_ns_ += now_ - released.since;
    launch_collective(released.rv, released.blocked, released.since);
  }
}

// `complete_at`: when the group was complete; until now it waited for SMs.
void Engine::launch_collective(Rendezvous& rv, const std::vector<int>& blocked, double complete_at) {
  const Arrival* latest = &rv.arrivals.front();
  for (const Arrival& a : rv.arrivals) {
    if (a.time > latest->time) latest = &a;
  }
  uint32_t late_source =
      devices_[static_cast<size_t>(latest->device)].streams[static_cast<size_t>(latest->stream)].last_event;

  uint32_t id = new_job();
  double work = 0;
  std::vector<Member> members;
  members.reserve(rv.arrivals.size());
  for (const Arrival& a : rv.arrivals) {
    const Thunk& thunk = programs_[static_cast<size_t>(a.device)].thunks[a.thunk];
    CollectiveCost cost = collective_cost(model_, thunk.collective, static_cast<int64_t>(rv.expected));
    if (const int64_t fixed = fixed_ns(static_cast<size_t>(a.device), a.thunk); fixed > 0) {
      cost.work_ns = static_cast<double>(fixed);
    }
    work = std::max(work, cost.work_ns);
    if (to_ns(a.time) < to_ns(complete_at)) {
      uint32_t wait = emit(a.device, a.stream, thunk, a.thunk, EventKind::kWait, rendezvous_name_, a.time);
      trace_.events[wait].end_ns = to_ns(complete_at);
    }
    if (to_ns(complete_at) < to_ns(now_)) {
      // Not part of the launch (CUPTI shows NCCL's kernel from when it has
      // SMs): no instruction or thunk, so compare does not stretch the
      // collective over it.
      uint32_t wait = emit(a.device, a.stream, thunk, a.thunk, EventKind::kWait, held_name_, complete_at);
      trace_.events[wait].end_ns = to_ns(now_);
      trace_.events[wait].instruction = 0;
      trace_.events[wait].correlation = 0;
    }
    auto [name, kind] = name_and_kind(thunk);
    uint32_t event = emit(a.device, a.stream, thunk, a.thunk, kind, name, now_);
    if (a.time < latest->time && late_source != kNone) trace_.dependencies.push_back({late_source, event});
    // It got its SMs from the GEMM that held them, on each device it waited on.
    for (int b : blocked) {
      uint32_t holder = devices_[static_cast<size_t>(b)].last_kernel_done;
      if (holder != kNone) trace_.dependencies.push_back({holder, event});
    }
    members.push_back({a.device, a.stream, event, cost.mem_need});
    devices_[static_cast<size_t>(a.device)].running.push_back(id);
    mark_dirty(a.device);
  }
  Job& j = jobs_[id];
  j.collective = true;
  j.op = programs_[static_cast<size_t>(rv.arrivals.front().device)].thunks[rv.arrivals.front().thunk].collective.op;
  j.remaining = work;
  j.compute_need = 0;
  j.mem_need = 0;
  j.left_free = 0;
  j.members = std::move(members);
}

}  // namespace sl::sim::engine_internal
