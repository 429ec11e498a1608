// Rates: re-evaluates the progress rate of every running job of the devices
// whose running set changed (sim/contention.h).

#include "sim/engine_state.h"

#include <algorithm>

namespace sl::sim::engine_internal {

void Engine::rerate() {
  // Rates of every dirty device first: a collective's rate needs all of its members'.
  for (int d : dirty_) {
    DeviceState& dev = devices_[static_cast<size_t>(d)];
    DeviceLoad load;
    needs_.clear();  // compute goes to the kernels in the order they started
    for (uint32_t id : dev.running) {
      const Job& j = jobs_[id];
      if (j.collective) {
        ++load.collectives;
        for (const Member& m : j.members) {
          if (m.device == d) load.mem_need += m.mem_need;
        }
      } else {
        ++load.kernels;
        // A GEMM confined to fewer SMs leaves them to collectives: it does
        // not slow them (contention.h).
        if (j.left_free <= 0) load.compute_need += j.compute_need;
        load.mem_need += j.mem_need;
        load.left_free = std::max(load.left_free, j.left_free);
        needs_.push_back(j.compute_need);
      }
    }
    dev.rates = device_rates(model_, load);
    scales_.resize(needs_.size());
    grant_compute(model_, dev.rates.kernel_capacity, needs_, scales_);
    size_t k = 0;
    for (uint32_t id : dev.running) {
      if (!jobs_[id].collective) jobs_[id].compute_scale = scales_[k++];
    }
  }
  ++stamp_;
  for (int d : dirty_) {
    DeviceState& dev = devices_[static_cast<size_t>(d)];
    dev.dirty = false;
    for (uint32_t id : dev.running) {
      Job& j = jobs_[id];
      if (j.stamp == stamp_) continue;
      j.stamp = stamp_;
      double rate;
      if (j.collective) {
        rate = 1.0;
        for (const Member& m : j.members) {
          rate = std::min(rate, collective_rate(model_, devices_[static_cast<size_t>(m.device)].rates, j.op));
        }
      } else {
        rate = kernel_rate(dev.rates, j.compute_scale, j.compute_need, j.mem_need);
      }
      if (!j.collective && !j.started) {
        const uint32_t event = j.members.front().event;
        if (rate > 0) {
          // As CUPTI's start: the first CTA running, not the wait for SMs. A
          // kernel that waited depends on the one whose SMs it got, so the
          // critical path runs through both.
          j.started = true;
          trace_.events[event].start_ns = to_ns(now_);
          if (j.waited && dev.last_kernel_done != kNone) trace_.dependencies.push_back({dev.last_kernel_done, event});
        } else {
          j.waited = true;
        }
      }
      if (!j.fresh && rate == j.rate) continue;
      if (!j.fresh) j.remaining = std::max(0.0, j.remaining - (now_ - j.last) * j.rate);
      j.last = now_;
      j.rate = rate;
      j.fresh = false;
      ++j.version;
      // A kernel waiting for SMs (rate 0) is re-rated when its device's running set changes.
      if (rate > 0) heap_.push({now_ + j.remaining / rate, seq_++, id, j.version});
    }
  }
  dirty_.clear();
}

}  // namespace sl::sim::engine_internal
