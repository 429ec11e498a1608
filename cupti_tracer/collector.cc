#include "cupti_tracer/collector.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>
#include <type_traits>

#include "core/common/huge_pages.h"
#include "core/trace/capture_losses.h"
#include "core/trace/kernel_class.h"

namespace sl::cupti {
namespace {

// Records stream-order attribution skips, at most, to find a launch's next one.
constexpr size_t kMaxSkipped = 4;

}  // namespace

void ActivityCollector::on_activity(const Activity& activity) {
  std::lock_guard<std::mutex> lock(mu_);
  std::visit(
      [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, KernelActivity>) {
          raw_.push_back({Raw::Kind::kKernel, a.device, a.stream, a.correlation, a.start_ns, a.end_ns, 0,
                          record_names_.intern(a.name), a.graph_id});
        } else if constexpr (std::is_same_v<T, MemcpyActivity>) {
          raw_.push_back({Raw::Kind::kMemcpy, a.device, a.stream, a.correlation, a.start_ns, a.end_ns, a.bytes,
                          record_names_.intern(memcpy_kind_name(a.copy_kind)), a.graph_id});
        } else if constexpr (std::is_same_v<T, MemsetActivity>) {
          raw_.push_back({Raw::Kind::kMemset, a.device, a.stream, a.correlation, a.start_ns, a.end_ns, a.bytes,
                          record_names_.intern("memset"), a.graph_id});
        } else if constexpr (std::is_same_v<T, ExternalCorrelationActivity>) {
          if (a.external_kind == 3 /* CUSTOM0, see cupti_api.h */) external_of_[a.correlation] = a.external_id;
        } else if constexpr (std::is_same_v<T, OverheadActivity>) {
          overhead_ns_ += static_cast<int64_t>(a.end_ns - a.start_ns);
        } else if constexpr (std::is_same_v<T, SyncActivity>) {
          ++sync_records_;
        } else if constexpr (std::is_same_v<T, CudaEventActivity>) {
          ++event_records_;
        }
      },
      activity);
}

void ActivityCollector::on_dropped(uint64_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  dropped_ += static_cast<int64_t>(count);
}

void ActivityCollector::on_unknown_kind(uint32_t /*kind*/) {
  std::lock_guard<std::mutex> lock(mu_);
  ++unknown_kinds_;
}

void ActivityCollector::register_launch(uint64_t external_id, const LaunchInfo& info) {
  std::lock_guard<std::mutex> lock(launch_mu_);
  Launch& launch = launches_[info.device].emplace_back(Launch{external_id, info});
  launch.instruction_id = launch_names_.intern(info.instruction);
  launch.info.instruction = {};  // the caller's text need not outlive this call
}

void ActivityCollector::reserve_launches(int32_t device, size_t count) {
  std::lock_guard<std::mutex> lock(launch_mu_);
  std::vector<Launch>& launches = launches_[device];
  reserve_huge(launches, launches.size() + count);
}

void ActivityCollector::map_stream(uint32_t cuda_device, uint32_t cupti_stream, int32_t program_stream) {
  std::lock_guard<std::mutex> lock(mu_);
  streams_[{cuda_device, cupti_stream}] = program_stream;
}

void ActivityCollector::map_device(uint32_t cuda_device, int32_t program_device) {
  std::lock_guard<std::mutex> lock(mu_);
  devices_[cuda_device] = program_device;
}

void ActivityCollector::alias_graph(uint32_t record_graph, uint32_t graph) {
  std::lock_guard<std::mutex> lock(mu_);
  graph_alias_[record_graph] = graph;
}

std::unordered_map<uint32_t, ActivityCollector::GraphRecords> ActivityCollector::group_graph_records(
    const std::vector<const Raw*>& order, const std::map<uint32_t, std::vector<size_t>>& by_record_graph) const {
  // Registered graphs per program device, in order of first registration.
  std::map<int32_t, std::vector<uint32_t>> registered;
  std::unordered_map<uint32_t, bool> known;  // registered graph -> got records
  for (const auto& [device, issued] : launches_) {
    for (const Launch& launch : issued) {
      if (launch.info.graph != 0 && known.emplace(launch.info.graph, false).second) {
        registered[device].push_back(launch.info.graph);
      }
    }
  }
  std::map<uint32_t, uint32_t> resolved;  // record graph id -> registered graph
  // Unresolved record graph ids per program device, by their first record's index (time order).
  std::map<int32_t, std::map<size_t, uint32_t>> unresolved;
  for (const auto& [id, records] : by_record_graph) {
    uint32_t graph = id;
    if (auto a = graph_alias_.find(id); known.count(graph) == 0 && a != graph_alias_.end()) graph = a->second;
    if (auto k = known.find(graph); k != known.end()) {
      resolved[id] = graph;
      k->second = true;
      continue;
    }
    const uint32_t cuda_device = order[records.front()]->device;
    auto d = devices_.find(cuda_device);
    unresolved[d != devices_.end() ? d->second : static_cast<int32_t>(cuda_device)][records.front()] = id;
  }
  for (auto& [device, ids] : unresolved) {
    auto r = registered.find(device);
    if (r == registered.end()) continue;
    auto next = r->second.begin();
    for (const auto& [first, id] : ids) {
      while (next != r->second.end() && known[*next]) ++next;
      if (next == r->second.end()) break;
      resolved[id] = *next;
      known[*next] = true;
    }
  }
  std::unordered_map<uint32_t, GraphRecords> out;
  for (const auto& [id, records] : by_record_graph) {
    auto r = resolved.find(id);
    if (r == resolved.end()) continue;
    GraphRecords& g = out[r->second];
    for (size_t i : records) g.by_name[order[i]->name].first.push_back(i);
  }
  // Records of two ids resolved to one graph: back into time order.
  for (auto& [graph, g] : out) {
    for (auto& [name, list] : g.by_name) std::sort(list.first.begin(), list.first.end());
  }
  return out;
}

std::vector<uint64_t> ActivityCollector::resolve_externals(const std::vector<const Raw*>& order,
                                                           OrderStats* stats) const {
  std::vector<uint64_t> ext(order.size(), 0);
  using Queue = std::pair<uint32_t, uint32_t>;  // (CUDA device, CUPTI stream): runs its work in order
  struct Expected {
    Queue queue;
    uint32_t name;
  };
  std::unordered_map<uint64_t, std::vector<Expected>> left;  // tagged launch -> its records, in time order
  std::map<Queue, std::vector<size_t>> untagged;             // records no external id claimed, in time order
  std::map<uint32_t, std::vector<size_t>> in_graphs;          // per record graph id, in time order
  for (size_t i = 0; i < order.size(); ++i) {
    const Raw* r = order[i];
    const Queue queue{r->device, r->stream};
    if (auto x = external_of_.find(r->correlation); x != external_of_.end()) {
      ext[i] = x->second;
      left[ext[i]].push_back({queue, r->name});
    } else if (r->graph_id != 0) {
      in_graphs[r->graph_id].push_back(i);
    } else {
      untagged[queue].push_back(i);
    }
  }
  if (untagged.empty() && in_graphs.empty()) return ext;
  std::unordered_map<uint32_t, GraphRecords> graphs = group_graph_records(order, in_graphs);
  static const std::vector<Expected> kNothing;
  std::map<Queue, size_t> next;  // first unclaimed record of each queue
  for (const auto& [device, issued] : launches_) {
    // Per thunk, what its latest tagged launch so far left on which stream
    // (NCCL may run work on a stream of its own).
    std::map<int64_t, const std::vector<Expected>*> shape;
    for (const Launch& launch : issued) {
      const uint64_t id = launch.external_id;
      const LaunchInfo& info = launch.info;
      if (info.tagged) {
        auto l = left.find(id);
        shape[info.correlation] = l != left.end() ? &l->second : &kNothing;
        continue;
      }
      auto s = shape.find(info.correlation);
      if (s == shape.end()) continue;  // never seen tagged: its records stay unattributed
      // A graph node: the records of its graph's launches, by name in time
      // order (a launch of a graph ends before its next one starts). A graph
      // none of whose records carry a graph id falls back to stream order.
      if (auto g = info.graph != 0 ? graphs.find(info.graph) : graphs.end(); g != graphs.end()) {
        for (const Expected& want : *s->second) {
          auto list = &g->second.by_name[want.name];
          if (list->second == list->first.size()) {
            ++stats->graph_missing;
            continue;
          }
          ext[list->first[list->second++]] = id;
          ++stats->graph_attributed;
        }
        continue;
      }
      // A few records that match nothing are skipped (work a stream ran
      // outside the launches, e.g. a library's occasional setup copy); a
      // record the launch did not produce this time is not searched for far.
      for (const Expected& want : *s->second) {
        auto u = untagged.find(want.queue);
        if (u == untagged.end()) {
          ++stats->mismatched;
          continue;
        }
        const std::vector<size_t>& queue = u->second;
        size_t& from = next[want.queue];
        size_t at = from;
        while (at < queue.size() && at - from <= kMaxSkipped && order[queue[at]]->name != want.name) ++at;
        if (at == queue.size() || at - from > kMaxSkipped) {
          ++stats->mismatched;
          continue;
        }
        stats->mismatched += static_cast<int64_t>(at - from);
        ext[queue[at]] = id;
        from = at + 1;
        ++stats->attributed;
      }
    }
  }
  for (const auto& [id, records] : in_graphs) {
    for (size_t i : records) stats->graph_unclaimed += ext[i] == 0;
  }
  return ext;
}

void ActivityCollector::add_wait_edge(uint64_t from_external, uint64_t to_external) {
  std::lock_guard<std::mutex> lock(launch_mu_);
  waits_.emplace_back(from_external, to_external);
}

void ActivityCollector::add_wait_edges(const std::vector<std::pair<uint64_t, uint64_t>>& edges) {
  std::lock_guard<std::mutex> lock(launch_mu_);
  waits_.insert(waits_.end(), edges.begin(), edges.end());
}

void ActivityCollector::set_time_origin(uint64_t gpu_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  origin_ = gpu_ns;
}

size_t ActivityCollector::record_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return raw_.size();
}

namespace {

// A captured CUDA stream is a communication stream when NCCL's kernels take
// most of its kernel time (XLA and torch give collectives streams of their own).
void mark_communication_streams(trace::Trace& t) {
  std::map<std::pair<int32_t, int32_t>, std::pair<int64_t, int64_t>> time;  // (collective, all) kernel ns
  for (const trace::Event& e : t.events) {
    if (e.kind == trace::EventKind::kCopy || e.kind == trace::EventKind::kMemset) continue;
    auto& [collective, all] = time[{e.device, e.stream}];
    all += e.duration_ns();
    if (e.kind == trace::EventKind::kCollective) collective += e.duration_ns();
  }
  for (trace::Event& e : t.events) {
    const auto& [collective, all] = time[{e.device, e.stream}];
    if (all > 0 && 2 * collective > all) e.stream_kind = trace::StreamKind::kCommunication;
  }
}

}  // namespace

trace::Trace ActivityCollector::build_trace() const {
  std::scoped_lock lock(mu_, launch_mu_);
  trace::Trace t;
  int64_t unattributed = 0, outside = 0, warmup = 0, before_origin = 0, bad_time = 0;
  // Streams of foreign programs, numbered per device in order of first record.
  std::map<std::pair<uint32_t, uint32_t>, int32_t> auto_streams = streams_;
  std::map<uint32_t, int32_t> next_stream;
  for (const auto& [key, s] : streams_) next_stream[key.first] = std::max(next_stream[key.first], s + 1);

  // Records arrive per buffer, not in time order: sort so auto numbering is stable.
  std::vector<const Raw*> order;
  order.reserve(raw_.size());
  for (const Raw& r : raw_) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const Raw* a, const Raw* b) { return a->start < b->start; });

  OrderStats by_order;
  const std::vector<uint64_t> externals = resolve_externals(order, &by_order);
  std::unordered_map<uint64_t, const Launch*> launch_of;
  for (const auto& [device, issued] : launches_) {
    for (const Launch& launch : issued) launch_of[launch.external_id] = &launch;
  }
  // Demangling is slow and a kernel's records share its name: once per name.
  // Index: name id * 2 + whether a kernel's (only kernel names are demangled).
  std::vector<uint32_t> event_name(2 * record_names_.size(), UINT32_MAX);
  std::vector<uint32_t> event_instruction(launch_names_.size(), UINT32_MAX);
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> span_of;  // external id -> (first, last) event
  for (size_t k = 0; k < order.size(); ++k) {
    const Raw* r = order[k];
    if (r->end < r->start) { ++bad_time; continue; }
    if (r->start < origin_) { ++before_origin; continue; }
    trace::Event e;
    e.start_ns = static_cast<int64_t>(r->start - origin_);
    e.end_ns = static_cast<int64_t>(r->end - origin_);
    e.bytes = static_cast<int64_t>(r->bytes);
    const bool kernel = r->kind == Raw::Kind::kKernel;
    uint32_t& name = event_name[2 * size_t{r->name} + kernel];
    if (name == UINT32_MAX) {
      const std::string& raw_name = record_names_.get(r->name);
      name = t.strings.intern(kernel ? short_kernel_name(raw_name) : raw_name);
    }
    e.name = name;
    e.correlation = r->correlation;
    const Launch* launch = nullptr;
    const uint64_t ext = externals[k];
    if (ext != 0) {
      if (auto l = launch_of.find(ext); l != launch_of.end()) launch = l->second;
    }
    const LaunchInfo* info = launch != nullptr ? &launch->info : nullptr;
    if (info != nullptr) {
      if (!info->keep) { ++warmup; continue; }
      e.device = info->device;
      auto s = streams_.find({r->device, r->stream});
      e.stream = s != streams_.end() ? s->second : info->stream;
      uint32_t& instruction = event_instruction[launch->instruction_id];
      if (instruction == UINT32_MAX) instruction = t.strings.intern(launch_names_.get(launch->instruction_id));
      e.instruction = instruction;
      e.iteration = info->iteration;
      e.flops = info->flops;
      if (info->correlation != 0) e.correlation = info->correlation;
      if (r->kind == Raw::Kind::kMemset) {
        e.kind = trace::EventKind::kMemset;
      } else if (r->kind == Raw::Kind::kMemcpy && info->kind != trace::EventKind::kCollective) {
        e.kind = trace::EventKind::kCopy;
      } else {
        e.kind = info->kind;
      }
    } else {
      if (!options_.keep_unattributed) { ++outside; continue; }
      ++unattributed;
      e.device = static_cast<int32_t>(r->device);
      auto key = std::make_pair(r->device, r->stream);
      if (options_.cuda_stream_ids) {
        e.stream = static_cast<int32_t>(std::min<uint32_t>(r->stream, INT32_MAX));
      } else {
        auto s = auto_streams.find(key);
        if (s == auto_streams.end()) s = auto_streams.emplace(key, next_stream[r->device]++).first;
        e.stream = s->second;
      }
      e.kind = r->kind == Raw::Kind::kKernel   ? trace::classify_kernel(t.strings.get(e.name))
               : r->kind == Raw::Kind::kMemcpy ? trace::EventKind::kCopy
                                               : trace::EventKind::kMemset;
    }
    e.stream_kind = options_.cuda_stream_ids && info == nullptr ? trace::StreamKind::kCompute : sched::stream_kind(e.stream);
    auto idx = static_cast<uint32_t>(t.events.size());
    t.events.push_back(e);
    if (info != nullptr) {
      auto [it, inserted] = span_of.try_emplace(ext, idx, idx);
      if (!inserted) {
        if (t.events[idx].end_ns > t.events[it->second.second].end_ns) it->second.second = idx;
      }
    }
  }
  if (options_.cuda_stream_ids) mark_communication_streams(t);
  for (const auto& [from, to] : waits_) {
    auto f = span_of.find(from);
    auto g = span_of.find(to);
    if (f == span_of.end() || g == span_of.end()) continue;
    t.dependencies.push_back({f->second.second, g->second.first});
  }
  if (dropped_ > 0) {
    t.add_counter(trace::kCuptiDroppedRecordsCounter, dropped_, "CUPTI records lost because buffers were full");
  }
  if (unknown_kinds_ > 0)
    t.add_counter("cupti_unknown_activity_kinds", unknown_kinds_, "CUPTI records of a kind the tracer does not decode");
  if (unattributed > 0)
    t.add_counter("kernels_without_instruction", unattributed, "GPU work with no instruction (no external correlation id)");
  if (outside > 0)
    t.add_counter("records_outside_run", outside, "GPU work outside the program's thunks (setup copies), not shown");
  if (warmup > 0) t.add_counter("warmup_records", warmup, "records of warm-up iterations, not shown");
  if (before_origin > 0) t.add_counter("records_before_origin", before_origin, "records that started before the run");
  if (bad_time > 0) t.add_counter("cupti_bad_timestamps", bad_time, "records whose end precedes their start");
  if (overhead_ns_ > 0) t.add_counter("cupti_overhead_ns", overhead_ns_, "time CUPTI reported as its own overhead");
  if (by_order.attributed > 0) {
    t.add_counter("records_by_stream_order", by_order.attributed,
                  "records of untagged launches, attributed by their order on the stream");
  }
  if (by_order.mismatched > 0) {
    t.add_counter("records_order_mismatch", by_order.mismatched,
                  "records skipped, or expected and not found, attributing untagged launches by stream order");
  }
  if (by_order.graph_attributed > 0) {
    t.add_counter("records_in_graphs", by_order.graph_attributed,
                  "records of CUDA graph launches, given to the graph's nodes by kernel name");
  }
  if (by_order.graph_unclaimed > 0 || by_order.graph_missing > 0) {
    t.add_counter("graph_records_unattributed", by_order.graph_unclaimed,
                  "records of CUDA graph launches that no graph node claimed (not shown)");
    t.add_counter("graph_records_missing", by_order.graph_missing,
                  "records a graph node's stream launch left that its graph launches did not have");
  }
  return t;
}

std::string short_kernel_name(const std::string& name) {
  std::string text = name;
  if (name.rfind("_Z", 0) == 0) {
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                     std::free);
    if (status == 0 && demangled) text = demangled.get();
  }
  // "(anonymous namespace)::" would end the name at its parenthesis below.
  for (size_t at; (at = text.find("(anonymous namespace)::")) != std::string::npos;) text.erase(at, 23);
  // Drop the parameter list, then template arguments, then a leading return type.
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '(' && depth == 0 && !out.empty()) break;
    if (c == '<') { ++depth; continue; }
    if (c == '>') { if (depth > 0) --depth; continue; }
    if (depth == 0) out.push_back(c);
  }
  auto space = out.rfind(' ');
  if (space != std::string::npos && space + 1 < out.size()) out = out.substr(space + 1);
  return out.empty() ? text : out;
}

}  // namespace sl::cupti
