// Collective fits: bus and point-to-point bandwidths, each ring kind's
// scale and NCCL's launch, from least-squares lines per kind and group size.

#include "sim/calibrate_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <string_view>

#include <fmt/format.h>

#include "sim/cost_model.h"

namespace sl::sim::calibrate_internal {
namespace {

using sched::Thunk;
using sched::ThunkKind;
using trace::EventKind;

}  // namespace

void fit_collectives(const FitInputs& in, DeviceModel& model, FitLog& log) {
  struct Group {
    std::vector<std::pair<double, double>> points;  // (bytes S, duration ns)
    double bus_factor = 0;                          // algbw / bus bandwidth in the cost model
    double latency_ns = 0;                          // protocol latency in the cost model
    const NcclProtocol* protocol = nullptr;
    bool p2p = false;
  };
  std::map<std::pair<int, int64_t>, Group> groups;
  for (const Sample& s : in.samples) {
    if (s.thunk->kind != ThunkKind::kCollective || s.kernel_overlap_ns > 0) continue;
    const sched::CollectiveInfo& info = s.thunk->collective;
    int64_t n = static_cast<int64_t>(info.group.size());
    CollectiveCost cost = collective_cost(in.base, info, n);
    if (!cost.protocol || cost.algbw_gbps <= 0) continue;  // local copies
    bool p2p = info.op == hlo::Opcode::kCollectivePermute;
    const double* scale = bandwidth_scale(in.base, info.op);
    double bus = p2p ? in.base.p2p_bandwidth_gbps : in.base.nccl_bus_bandwidth_gbps * (scale ? *scale : 1.0);
    // The cost model's message size S: work = launch + latency + S / algbw.
    double bytes = (cost.work_ns - in.base.nccl_launch_us * 1e3 - cost.latency_ns) * cost.algbw_gbps;
    Group& g = groups[{static_cast<int>(info.op), n}];
    if (g.protocol && g.protocol != cost.protocol) {
      // Keep one protocol per line: the one NCCL's model picks for the larger message.
      if (bytes <= (g.points.empty() ? 0 : std::max_element(g.points.begin(), g.points.end())->first)) continue;
      g.points.clear();
    }
    g.protocol = cost.protocol;
    g.bus_factor = cost.algbw_gbps / bus;
    g.latency_ns = cost.latency_ns;
    g.p2p = p2p;
    g.points.emplace_back(std::round(bytes), s.duration_ns);
  }
  if (groups.empty()) {
    log.note("collectives: none ran without compute beside them; kept the base bandwidths");
    return;
  }
  WeightedMean ring, p2p, launch;
  std::map<int, WeightedMean> ring_by_op;  // bus bandwidth of each ring collective kind
  for (const auto& [key, g] : groups) {
    std::string_view op = hlo::opcode_name(static_cast<hlo::Opcode>(key.first));
    double a = 0, b = 0;
    bool line = fit_line(g.points, &a, &b) && b > 0;
    if (!line) {
      // One message size: the slope through the base model's fixed cost.
      a = in.base.nccl_launch_us * 1e3 + g.latency_ns;
      double sx = 0, sy = 0;
      for (auto [x, y] : g.points) sx += x, sy += y - a;
      if (sx <= 0 || sy <= 0) continue;
      b = sy / sx;
    }
    double algbw = 1.0 / b;  // bytes/ns == GB/s
    double busbw = algbw / g.bus_factor;
    double weight = static_cast<double>(g.points.size());
    std::string detail = fmt::format("{} x{} ({} runs, {} protocol): algbw {:.1f} GB/s -> busbw {:.1f} GB/s{}", op,
                                     key.second, g.points.size(), g.protocol->name, algbw, busbw,
                                     line ? fmt::format(", intercept {:.2f} us", a / 1e3) : ", one size");
    const auto count = static_cast<int64_t>(g.points.size());
    for (WeightedMean* acc : {g.p2p ? &p2p : &ring, g.p2p ? nullptr : &ring_by_op[key.first]}) {
      if (acc) acc->add(busbw, weight, count, detail);
    }
    if (line) {
      launch.add(a - g.latency_ns, weight, count,
                 fmt::format("{} x{}: intercept {:.2f} us - {} latency {:.2f} us", op, key.second, a / 1e3,
                             g.protocol->name, g.latency_ns / 1e3));
    }
  }
  if (ring.weight > 0) {
    double v = ring.value();
    log.record("nccl_bus_bandwidth_gbps", model.nccl_bus_bandwidth_gbps, v, ring.n,
           "least-squares duration = a + bytes / algbw per collective and group size, busbw = algbw / (factor of "
           "the ring model): " + ring.detail);
    model.nccl_bus_bandwidth_gbps = v;
    // Each kind's own bandwidth relative to the mean; kinds that did not run
    // keep the base model's scale.
    for (const auto& [op, acc] : ring_by_op) {
      double* scale = bandwidth_scale(model, static_cast<hlo::Opcode>(op));
      if (!scale || acc.weight <= 0) continue;
      const double fitted = acc.value() / v;
      std::string key = fmt::format("{}_bandwidth_scale", hlo::opcode_name(static_cast<hlo::Opcode>(op)));
      std::replace(key.begin(), key.end(), '-', '_');
      log.record(key, *scale, fitted, acc.n,
             fmt::format("bus bandwidth of this kind over nccl_bus_bandwidth_gbps ({:.1f} GB/s): {}", v, acc.detail));
      *scale = fitted;
    }
  }
  if (p2p.weight > 0) {
    double v = p2p.value();
    log.record("p2p_bandwidth_gbps", model.p2p_bandwidth_gbps, v, p2p.n,
           "least-squares duration = a + bytes / bandwidth of collective-permutes: " + p2p.detail);
    model.p2p_bandwidth_gbps = v;
  }
  if (launch.weight > 0) {
    double ns = launch.value();
    if (ns < 0) {
      log.note(fmt::format("nccl_launch_us: the fitted fixed cost is {:.2f} us below NCCL's protocol "
                                       "latency; set to 0", -ns / 1e3));
      ns = 0;
    }
    log.record("nccl_launch_us", model.nccl_launch_us, ns / 1e3, launch.n,
           "intercept of the collective lines minus NCCL's modelled protocol latency: " + launch.detail);
    model.nccl_launch_us = ns / 1e3;
  } else {
    log.note("nccl_launch_us: every collective had one message size; kept the base value");
  }
}

}  // namespace sl::sim::calibrate_internal
