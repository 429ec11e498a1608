// Streams and waits: the per-stream FIFOs and event records, advancing
// streams until they block, and the deadlock report when they never unblock.

#include "sim/engine_state.h"

#include <algorithm>

#include <fmt/format.h>

namespace sl::sim::engine_internal {

Status Engine::prepare() {
  int64_t max_id = -1;
  for (const auto& p : programs_) {
    if (p.device < 0) return invalid_input(fmt::format("device id {} is negative", p.device));
    max_id = std::max(max_id, p.device);
  }
  index_of_global_.assign(static_cast<size_t>(max_id + 1), -1);
  devices_.resize(programs_.size());
  for (size_t d = 0; d < programs_.size(); ++d) {
    const sched::DeviceProgram& p = programs_[d];
    if (index_of_global_[static_cast<size_t>(p.device)] != -1) {
      return invalid_input(fmt::format("device {} appears twice", p.device));
    }
    index_of_global_[static_cast<size_t>(p.device)] = static_cast<int>(d);
    DeviceState& dev = devices_[d];
    std::vector<int32_t> records_issued(static_cast<size_t>(std::max(p.num_events, 0)), 0);
    for (size_t i = 0; i < p.thunks.size(); ++i) {
      const Thunk& t = p.thunks[i];
      auto it = std::find_if(dev.streams.begin(), dev.streams.end(),
                             [&](const StreamState& s) { return s.number == t.stream; });
      if (it == dev.streams.end()) {
        dev.streams.emplace_back().number = t.stream;
        it = dev.streams.end() - 1;
      }
      QueueEntry entry{static_cast<uint32_t>(i), 0};
      if (t.kind == ThunkKind::kRecordEvent || t.kind == ThunkKind::kWaitEvent) {
        if (t.event < 0) return invalid_input(fmt::format("device {} thunk {}: event id {} is negative", p.device, i, t.event));
        if (static_cast<size_t>(t.event) >= records_issued.size()) records_issued.resize(static_cast<size_t>(t.event) + 1, 0);
        if (t.kind == ThunkKind::kRecordEvent) {
          ++records_issued[static_cast<size_t>(t.event)];
        } else {
          entry.required_records = records_issued[static_cast<size_t>(t.event)];
        }
      }
      it->queue.push_back(entry);
      ++thunks_total_;
    }
    dev.events.resize(records_issued.size());
    // Streams in a fixed order (by number) so the run does not depend on which came first.
    std::sort(dev.streams.begin(), dev.streams.end(),
              [](const StreamState& a, const StreamState& b) { return a.number < b.number; });
    for (size_t s = 0; s < dev.streams.size(); ++s) {
      if (dev.streams[s].number == sched::kMainStream) dev.main_stream = static_cast<int>(s);
    }
    if (options_.host_issue != nullptr) dev.issue_ns.assign(p.thunks.size(), 0);
  }
  return ok_status();
}

Status Engine::advance(int device, int stream) {
  SL_RETURN_IF_ERROR(advance_stream(device, stream));
  // The main stream moved on: a host blocked in a sync may be back.
  DeviceState& dev = devices_[static_cast<size_t>(device)];
  if (stream == dev.main_stream && !dev.host_parked.empty()) {
    for (int s : dev.host_parked) ready_.emplace_back(device, s);
    dev.host_parked.clear();
  }
  return ok_status();
}

std::optional<double> Engine::issue_time(int device, uint32_t thunk) {
  const HostIssue* host = options_.host_issue;
  const auto d = static_cast<size_t>(device);
  if (host == nullptr || d >= host->cost_ns.size()) return 0.0;
  DeviceState& dev = devices_[d];
  const std::vector<int64_t>& cost = host->cost_ns[d];
  const std::vector<uint8_t>* sync = d < host->sync_before.size() ? &host->sync_before[d] : nullptr;
  while (dev.host_next <= thunk && dev.host_next < dev.issue_ns.size()) {
    const size_t j = dev.host_next;
    if (sync != nullptr && j < sync->size() && (*sync)[j] != 0 && dev.main_stream >= 0) {
      // XLA's BlockHostUntilDone on the main stream: everything before j on it must have ended.
      const StreamState& main = dev.streams[static_cast<size_t>(dev.main_stream)];
      const bool done = !main.busy && (main.next >= main.queue.size() || main.queue[main.next].thunk >= j);
      if (!done) return std::nullopt;
      if (d < host->before_sync_ns.size() && j < host->before_sync_ns[d].size()) {
        dev.host_ns += static_cast<double>(host->before_sync_ns[d][j]);
      }
      dev.host_ns = std::max(dev.host_ns, main.free_at) + static_cast<double>(host->sync_ns);
      ++host_syncs_;
    }
    dev.host_ns += j < cost.size() ? static_cast<double>(cost[j]) : 0.0;
    dev.issue_ns[j] = dev.host_ns;
    ++dev.host_next;
  }
  return thunk < dev.issue_ns.size() ? dev.issue_ns[thunk] : dev.host_ns;
}

Status Engine::advance_stream(int device, int stream) {
  DeviceState& dev = devices_[static_cast<size_t>(device)];
  const sched::DeviceProgram& program = programs_[static_cast<size_t>(device)];
  while (true) {
    StreamState& s = dev.streams[static_cast<size_t>(stream)];
    if (s.busy || s.next >= s.queue.size()) return ok_status();
    QueueEntry entry = s.queue[s.next];
    const Thunk& t = program.thunks[entry.thunk];
    switch (t.kind) {
      case ThunkKind::kRecordEvent: {
        EventSlot& ev = dev.events[static_cast<size_t>(t.event)];
        ++ev.records_done;
        ev.recording_stream = stream;
        ev.producer = s.last_event;
        for (int w : ev.waiters) ready_.emplace_back(device, w);
        ev.waiters.clear();
        break;
      }
      case ThunkKind::kWaitEvent: {
        EventSlot& ev = dev.events[static_cast<size_t>(t.event)];
        if (entry.required_records == 0) {
          ++waits_without_record_;
        } else if (ev.records_done < entry.required_records) {
          ev.waiters.push_back(stream);
          return ok_status();
        } else if (ev.recording_stream != stream && ev.producer != kNone) {
          s.pending_from.push_back(ev.producer);
        }
        break;
      }
      case ThunkKind::kCollective: {
        // It moves the host clock on but is not held back by it.
        if (!issue_time(device, entry.thunk)) {
          dev.host_parked.push_back(stream);
          return ok_status();
        }
        ++s.next;
        ++thunks_done_;
        return arrive(device, stream, t, entry.thunk);
      }
      case ThunkKind::kKernel:
      case ThunkKind::kGemm: {
        const std::optional<double> issue = issue_time(device, entry.thunk);
        if (!issue) {
          dev.host_parked.push_back(stream);
          return ok_status();
        }
        ++s.next;
        ++thunks_done_;
        s.busy = true;
        start_kernel(device, stream, t, entry.thunk, *issue);
        return ok_status();
      }
    }
    ++s.next;
    ++thunks_done_;
  }
}

Status Engine::drain() {
  while (!ready_.empty()) {
    auto [device, stream] = ready_.front();
    ready_.pop_front();
    SL_RETURN_IF_ERROR(advance(device, stream));
  }
  return ok_status();
}

Status Engine::deadlock_error() const {
  for (size_t d = 0; d < devices_.size(); ++d) {
    const DeviceState& dev = devices_[d];
    for (size_t s = 0; s < dev.streams.size(); ++s) {
      const StreamState& st = dev.streams[s];
      if (st.busy) {
        uint32_t thunk = st.queue[st.next - 1].thunk;
        const Thunk& t = programs_[d].thunks[thunk];
        return invalid_input(fmt::format(
            "deadlock: {} waits at rendezvous {} for a group member that never reaches it",
            where(static_cast<int>(d), static_cast<int>(s), thunk), t.collective.rendezvous_id));
      }
      if (st.next < st.queue.size()) {
        uint32_t thunk = st.queue[st.next].thunk;
        return invalid_input(fmt::format("deadlock: {} waits for event {} that is never recorded",
                                         where(static_cast<int>(d), static_cast<int>(s), thunk),
                                         programs_[d].thunks[thunk].event));
      }
    }
  }
  return ok_status();
}

}  // namespace sl::sim::engine_internal
