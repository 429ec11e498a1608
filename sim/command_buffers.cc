#include "sim/command_buffers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "sim/engine.h"

namespace sl::sim {
namespace {

constexpr uint32_t kNoThunk = std::numeric_limits<uint32_t>::max();

// Lays one graph out at the end of `out`: nodes on lanes, events for the
// edges that cross lanes, and the launching stream's wait for every lane.
class GraphLayout {
 public:
  GraphLayout(const sched::DeviceProgram& in, sched::DeviceProgram& out, std::vector<uint32_t>& original,
              std::vector<LaunchRole>& role, std::vector<int64_t>& graph_of, std::vector<uint8_t>& after_copy,
              int64_t graph, int first_lane_stream, int concurrency)
      : in_(in), out_(out), original_(original), role_(role), graph_of_(graph_of), after_copy_(after_copy),
        graph_(graph), first_lane_(first_lane_stream), concurrency_(std::max(1, concurrency)) {}

  // Returns the highest lane stream number used (or the home stream).
  int lay_out(const CommandBuffer& g, int home) {
    const size_t n = g.thunks.size();
    std::vector<int> lane(n, 0);
    std::vector<int> before(n, -1);  // per node: the node its lane ran just before it
    std::vector<int> lane_last;  // per lane: its last node so far
    std::vector<bool> needs_record(n, false);
    for (size_t k = 0; k < n; ++k) {
      int chosen = -1;
      for (int d : g.deps[k]) {
        if (d >= 0 && static_cast<size_t>(d) < k && lane_last[static_cast<size_t>(lane[static_cast<size_t>(d)])] == d) {
          chosen = lane[static_cast<size_t>(d)];
          break;
        }
      }
      if (chosen < 0) {
        // A node that continues no lane's chain: a new lane while allowed, else the least recent one.
        if (lane_last.size() < static_cast<size_t>(concurrency_)) {
          chosen = static_cast<int>(lane_last.size());
          lane_last.push_back(-1);
        } else {
          chosen = static_cast<int>(std::min_element(lane_last.begin(), lane_last.end()) - lane_last.begin());
        }
      }
      lane[k] = chosen;
      before[k] = lane_last[static_cast<size_t>(chosen)];
      for (int d : g.deps[k]) {
        if (d >= 0 && static_cast<size_t>(d) < k && lane[static_cast<size_t>(d)] != chosen) needs_record[static_cast<size_t>(d)] = true;
      }
      lane_last[static_cast<size_t>(chosen)] = static_cast<int>(k);
    }
    auto stream_of = [&](int l) { return l == 0 ? home : first_lane_ + l - 1; };
    const int lanes = static_cast<int>(lane_last.size());
    int start_event = -1;
    if (lanes > 1) {
      start_event = out_.num_events++;
      push_sync(sched::ThunkKind::kRecordEvent, home, start_event);
    }
    std::vector<bool> lane_started(static_cast<size_t>(lanes), false);
    std::vector<int> record_of(n, -1);
    for (size_t k = 0; k < n; ++k) {
      const int l = lane[k];
      const int stream = stream_of(l);
      const bool first_on_lane = !lane_started[static_cast<size_t>(l)];
      if (l != 0 && first_on_lane) push_sync(sched::ThunkKind::kWaitEvent, stream, start_event);
      lane_started[static_cast<size_t>(l)] = true;
      bool has_pred = false;
      for (int d : g.deps[k]) {
        if (d < 0 || static_cast<size_t>(d) >= k) continue;
        has_pred = true;
        if (lane[static_cast<size_t>(d)] != l) push_sync(sched::ThunkKind::kWaitEvent, stream, record_of[static_cast<size_t>(d)]);
      }
      sched::Thunk t = in_.thunks[g.thunks[k]];
      t.stream = stream;
      out_.thunks.push_back(t);
      original_.push_back(g.thunks[k]);
      // One launch latency a graph execution: a node with no predecessor
      // that runs after another node of its lane starts as any node does.
      role_.push_back(has_pred || !first_on_lane ? LaunchRole::kGraphNode : LaunchRole::kGraphStart);
      graph_of_.push_back(graph_);
      // The copy engine's hand-over costs a kernel that runs right after a
      // memcpy node more where XLA records the graph again before each
      // launch (bench/FIDELITY-real.md, set 30). Right after on its lane,
      // whether or not the DAG orders the two: the GPU runs them so.
      const bool after_copy = before[k] >= 0 && is_copy(g, static_cast<size_t>(before[k]));
      after_copy_.push_back(after_copy && !is_copy(g, k) && g.rerecorded_commands > 0 ? 1 : 0);
      const bool last_of_lane = lane_last[static_cast<size_t>(l)] == static_cast<int>(k);
      if (needs_record[k] || (l != 0 && last_of_lane)) {
        record_of[k] = out_.num_events++;
        push_sync(sched::ThunkKind::kRecordEvent, stream, record_of[k]);
      }
    }
    // The work after the graph on its stream waits for the whole graph.
    for (int l = 1; l < lanes; ++l) {
      push_sync(sched::ThunkKind::kWaitEvent, home, record_of[static_cast<size_t>(lane_last[static_cast<size_t>(l)])]);
    }
    return lanes > 1 ? stream_of(lanes - 1) : home;
  }

 private:
  static bool is_copy(const CommandBuffer& g, size_t node) {
    return node < g.copies.size() && g.copies[node] != 0;
  }

  void push_sync(sched::ThunkKind kind, int stream, int event) {
    sched::Thunk t;
    t.kind = kind;
    t.stream = stream;
    t.event = event;
    out_.thunks.push_back(t);
    original_.push_back(kNoThunk);
    role_.push_back(LaunchRole::kSynthetic);
    graph_of_.push_back(graph_);
    after_copy_.push_back(0);
  }

  const sched::DeviceProgram& in_;
  sched::DeviceProgram& out_;
  std::vector<uint32_t>& original_;
  std::vector<LaunchRole>& role_;
  std::vector<int64_t>& graph_of_;
  std::vector<uint8_t>& after_copy_;
  int64_t graph_;
  int first_lane_;
  int concurrency_;
};

}  // namespace

Result<GraphProgram> lay_out_command_buffers(const std::vector<sched::DeviceProgram>& devices,
                                             const std::vector<std::vector<CommandBuffer>>& graphs,
                                             int concurrency) {
  GraphProgram out;
  out.devices.resize(devices.size());
  out.original.resize(devices.size());
  out.role.resize(devices.size());
  out.graph_of.resize(devices.size());
  out.after_copy.resize(devices.size());
  out.lanes.resize(devices.size());
  for (size_t d = 0; d < devices.size(); ++d) {
    const sched::DeviceProgram& in = devices[d];
    sched::DeviceProgram& program = out.devices[d];
    program.device = in.device;
    program.replica = in.replica;
    program.partition = in.partition;
    program.num_events = in.num_events;
    program.storage = in.storage;
    program.thunks.reserve(in.thunks.size());
    const std::vector<CommandBuffer> none;
    const std::vector<CommandBuffer>& mine = d < graphs.size() ? graphs[d] : none;
    // Which graph each thunk is a node of.
    std::vector<int64_t> graph_of(in.thunks.size(), -1);
    for (size_t g = 0; g < mine.size(); ++g) {
      if (mine[g].deps.size() != mine[g].thunks.size()) {
        return invalid_input(fmt::format("device {}: graph {} has {} nodes but {} dependency lists", in.device, g,
                                         mine[g].thunks.size(), mine[g].deps.size()));
      }
      for (uint32_t t : mine[g].thunks) {
        if (t >= in.thunks.size()) return invalid_input(fmt::format("device {}: graph {} names thunk {} of {}", in.device, g, t, in.thunks.size()));
        if (graph_of[t] >= 0) return invalid_input(fmt::format("device {}: thunk {} is a node of graphs {} and {}", in.device, t, graph_of[t], g));
        const sched::ThunkKind kind = in.thunks[t].kind;
        if (kind == sched::ThunkKind::kRecordEvent || kind == sched::ThunkKind::kWaitEvent) {
          return invalid_input(fmt::format("device {}: graph {} names thunk {}, an event record or wait", in.device, g, t));
        }
        graph_of[t] = static_cast<int64_t>(g);
      }
    }
    int max_stream = 0;
    for (const sched::Thunk& t : in.thunks) max_stream = std::max(max_stream, t.stream);
    const int first_lane = max_stream + 1;
    int highest_lane = 0;
    std::vector<bool> laid_out(mine.size(), false);
    for (size_t i = 0; i < in.thunks.size(); ++i) {
      const int64_t g = graph_of[i];
      if (g < 0) {
        program.thunks.push_back(in.thunks[i]);
        out.original[d].push_back(static_cast<uint32_t>(i));
        out.role[d].push_back(in.thunks[i].kind == sched::ThunkKind::kRecordEvent ||
                                      in.thunks[i].kind == sched::ThunkKind::kWaitEvent
                                  ? LaunchRole::kSynthetic
                                  : LaunchRole::kStream);
        out.graph_of[d].push_back(-1);
        out.after_copy[d].push_back(0);
        continue;
      }
      if (laid_out[static_cast<size_t>(g)]) continue;
      laid_out[static_cast<size_t>(g)] = true;
      // XLA launches its command buffers on the main compute stream.
      const int home = sched::kMainStream;
      GraphLayout layout(in, program, out.original[d], out.role[d], out.graph_of[d], out.after_copy[d],
                         out.graphs, first_lane, concurrency);
      highest_lane = std::max(highest_lane, layout.lay_out(mine[static_cast<size_t>(g)], home));
      out.rerecorded_commands.push_back(mine[static_cast<size_t>(g)].rerecorded_commands);
      out.retraced_commands.push_back(mine[static_cast<size_t>(g)].retraced_commands);
      out.blas_commands.push_back(mine[static_cast<size_t>(g)].blas_commands);
      ++out.graphs;
      out.nodes += static_cast<int64_t>(mine[static_cast<size_t>(g)].thunks.size());
    }
    // Lanes map back to the stream that launched their graphs: XLA's main stream.
    for (int s = first_lane; s <= highest_lane; ++s) out.lanes[d].emplace_back(s, sched::kMainStream);
  }
  return out;
}

std::vector<std::vector<uint8_t>> after_pdl_launch(const GraphProgram& program) {
  std::vector<std::vector<uint8_t>> out(program.role.size());
  for (size_t d = 0; d < program.role.size() && d < program.devices.size(); ++d) {
    const auto& thunks = program.devices[d].thunks;
    out[d].assign(program.role[d].size(), 0);
    int64_t last_graph = -1;
    bool last_pdl_launch = false;
    for (size_t i = 0; i < program.role[d].size() && i < thunks.size(); ++i) {
      const int64_t graph = program.graph_of[d][i];
      if (program.role[d][i] == LaunchRole::kSynthetic || graph < 0) continue;
      out[d][i] =
          program.role[d][i] == LaunchRole::kGraphNode && graph == last_graph && last_pdl_launch ? 1 : 0;
      last_graph = graph;
      last_pdl_launch = thunks[i].instruction != nullptr && thunks[i].instruction->is_pdl_launch();
    }
  }
  return out;
}

std::vector<std::vector<int64_t>> role_gaps_ns(const GraphProgram& program, const DeviceModel& model,
                                               bool stream_launch) {
  const std::vector<std::vector<uint8_t>> after_pdl = after_pdl_launch(program);
  std::vector<std::vector<int64_t>> out(program.role.size());
  for (size_t d = 0; d < program.role.size(); ++d) {
    out[d].reserve(program.role[d].size());
    for (size_t i = 0; i < program.role[d].size(); ++i) {
      const LaunchRole r = program.role[d][i];
      switch (r) {
        case LaunchRole::kStream:
          out[d].push_back(stream_launch ? std::llround(model.stream_kernel_gap_us * 1e3) : kNoGap);
          break;
        case LaunchRole::kGraphStart:
          out[d].push_back(std::llround(model.graph_launch_us * 1e3));
          break;
        case LaunchRole::kGraphNode: {
          const bool after_copy = d < program.after_copy.size() && i < program.after_copy[d].size() &&
                                  program.after_copy[d][i] != 0;
          const double gap_us = after_pdl[d][i] != 0 ? model.graph_node_gap_after_pdl_launch_us
                                : after_copy         ? model.graph_node_gap_after_copy_us
                                                     : model.graph_node_gap_us;
          out[d].push_back(std::llround(gap_us * 1e3));
          break;
        }
        case LaunchRole::kSynthetic:
          out[d].push_back(kNoGap);
          break;
      }
    }
  }
  return out;
}

ColdGraphWait cold_graph_wait(const GraphProgram& program, const DeviceModel& model,
                              const std::vector<std::vector<uint8_t>>* modelled_gap) {
  ColdGraphWait out;
  if (model.graph_cold_wait_per_node_us <= 0 || model.graph_cold_wait_max_us <= 0 || program.graphs == 0) return out;
  std::vector<int64_t> nodes(static_cast<size_t>(program.graphs), 0);
  out.graph_of.resize(program.graph_of.size());
  out.holds.resize(program.graph_of.size());
  for (size_t d = 0; d < program.graph_of.size(); ++d) {
    out.graph_of[d] = program.graph_of[d];
    out.holds[d].assign(program.graph_of[d].size(), 0);
    for (size_t i = 0; i < program.graph_of[d].size(); ++i) {
      const int64_t g = program.graph_of[d][i];
      if (g < 0 || g >= program.graphs || program.role[d][i] == LaunchRole::kSynthetic) {
        out.graph_of[d][i] = -1;
        continue;
      }
      ++nodes[static_cast<size_t>(g)];
      const bool modelled = modelled_gap == nullptr ||
                            (d < modelled_gap->size() && i < (*modelled_gap)[d].size() && (*modelled_gap)[d][i] != 0);
      out.holds[d][i] = modelled ? 1 : 0;
    }
  }
  out.wait_ns.reserve(nodes.size());
  for (int64_t n : nodes) {
    const double us = std::min(model.graph_cold_wait_max_us,
                               model.graph_cold_wait_per_node_us *
                                   static_cast<double>(std::max<int64_t>(0, n - model.graph_cold_wait_free_nodes)));
    out.wait_ns.push_back(std::llround(us * 1e3));
  }
  return out;
}

HostIssue host_issue_of(const GraphProgram& program, const std::vector<sched::DeviceProgram>& original,
                        const DeviceModel& model, const std::vector<std::vector<uint32_t>>& syncs_before,
                        const std::vector<std::vector<uint32_t>>& dynamic_slices,
                        const std::vector<std::vector<int64_t>>& launches_before_syncs,
                        const std::vector<std::vector<int64_t>>& after_issue_ns) {
  auto ns = [](double us) { return std::llround(us * 1e3); };
  HostIssue out;
  out.sync_ns = ns(model.host_sync_us);
  out.cost_ns.resize(program.devices.size());
  out.sync_before.resize(program.devices.size());
  for (size_t d = 0; d < program.devices.size(); ++d) {
    const auto& thunks = program.devices[d].thunks;
    std::vector<int64_t>& cost = out.cost_ns[d];
    cost.assign(thunks.size(), 0);
    std::vector<uint8_t> slicing(d < original.size() ? original[d].thunks.size() : 0, 0);
    if (d < dynamic_slices.size()) {
      for (uint32_t o : dynamic_slices[d]) {
        if (o < slicing.size()) slicing[o] = 1;
      }
    }
    int64_t graph_paid = -1;  // the last graph whose launch the host paid
    int64_t after_previous = 0;  // host time the previous thunk kept after its issue
    for (size_t i = 0; i < thunks.size(); ++i) {
      const sched::Thunk& t = thunks[i];
      cost[i] = std::exchange(after_previous, 0);
      switch (program.role[d][i]) {
        case LaunchRole::kStream: {
          // XLA's Gemm thunk calls cuBLAS(Lt), whose host side costs far more than a kernel launch.
          const bool library = t.kind == sched::ThunkKind::kGemm &&
                               (t.instruction == nullptr || t.instruction->opcode != hlo::Opcode::kFusion);
          const uint32_t o = program.original[d][i];
          const bool slice = o < slicing.size() && slicing[o] != 0;
          cost[i] += ns(library ? model.host_library_call_us
                        : slice ? model.host_dynamic_slice_us
                                : model.host_kernel_launch_us);
          if (d < after_issue_ns.size() && o < after_issue_ns[d].size()) after_previous = after_issue_ns[d][o];
          break;
        }
        case LaunchRole::kGraphStart:
        case LaunchRole::kGraphNode:
          if (const int64_t g = program.graph_of[d][i]; g != graph_paid) {
            graph_paid = g;
            const auto of = [g](const std::vector<int64_t>& v) {
              return g >= 0 && static_cast<size_t>(g) < v.size() ? v[static_cast<size_t>(g)] : 0;
            };
            cost[i] += ns(model.host_graph_launch_us +
                          static_cast<double>(of(program.blas_commands)) * model.host_graph_blas_command_us +
                          graph_rerecord_us(model, of(program.rerecorded_commands), of(program.retraced_commands)));
          }
          break;
        case LaunchRole::kSynthetic:
          break;
      }
    }
    // Original thunk index -> laid-out index, for the syncs.
    std::vector<uint32_t> laid_of(d < original.size() ? original[d].thunks.size() : 0, kNoThunk);
    for (size_t i = 0; i < program.original[d].size(); ++i) {
      const uint32_t o = program.original[d][i];
      if (o != kNoThunk && o < laid_of.size() && laid_of[o] == kNoThunk) laid_of[o] = static_cast<uint32_t>(i);
    }
    out.sync_before[d].assign(thunks.size(), 0);
    out.before_sync_ns.emplace_back(thunks.size(), 0);
    if (d >= syncs_before.size()) continue;
    for (size_t k = 0; k < syncs_before[d].size(); ++k) {
      const uint32_t o = syncs_before[d][k];
      if (o >= laid_of.size() || laid_of[o] == kNoThunk) continue;
      out.sync_before[d][laid_of[o]] = 1;
      if (d < launches_before_syncs.size() && k < launches_before_syncs[d].size()) {
        out.before_sync_ns[d][laid_of[o]] += launches_before_syncs[d][k] * ns(model.host_kernel_launch_us);
      }
    }
  }
  return out;
}

void map_back(const GraphProgram& program, const std::vector<sched::DeviceProgram>& original, trace::Trace& trace) {
  std::vector<int> slot_of(1, -1);
  for (size_t d = 0; d < original.size(); ++d) {
    const auto id = static_cast<size_t>(std::max<int64_t>(0, original[d].device));
    if (id >= slot_of.size()) slot_of.resize(id + 1, -1);
    slot_of[id] = static_cast<int>(d);
  }
  for (trace::Event& e : trace.events) {
    if (e.device < 0 || static_cast<size_t>(e.device) >= slot_of.size() || slot_of[static_cast<size_t>(e.device)] < 0) continue;
    const auto d = static_cast<size_t>(slot_of[static_cast<size_t>(e.device)]);
    if (e.correlation >= 0 && static_cast<size_t>(e.correlation) < program.original[d].size()) {
      const uint32_t o = program.original[d][static_cast<size_t>(e.correlation)];
      if (o != kNoThunk) e.correlation = o;
    }
    for (const auto& [lane, home] : program.lanes[d]) {
      if (e.stream == lane) {
        e.stream = home;
        e.stream_kind = sched::stream_kind(home);
      }
    }
  }
}

}  // namespace sl::sim
