#pragma once
// Turns CUPTI activity records into a trace::Trace (docs/architecture.md):
// external correlation ids -> the instruction (thunk occurrence) that
// launched the work, GPU timestamps -> the run's time base, CUPTI stream ids
// -> program stream numbers, dropped/unknown records -> named counters.
// Pure logic: the CUDA backend, the capture importer and the CI tests all
// feed it records; none of it needs a GPU.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/trace/trace.h"
#include "cupti_tracer/activity_sink.h"

namespace sl::cupti {

// What the launcher knows about one external correlation id: one occurrence
// of one thunk in one iteration.
struct LaunchInfo {
  int32_t device = 0;
  int32_t stream = 0;                  // program stream number (sched/streams.h)
  trace::EventKind kind = trace::EventKind::kOther;
  std::string_view instruction;        // without '%'; interned at registration, not kept
  int64_t flops = 0;
  int64_t bytes = 0;
  int32_t iteration = 0;
  bool keep = true;                    // false: warm-up work, its records are dropped
  // Stored as the events' correlation id instead of CUPTI's when nonzero: the
  // thunk's index + 1, so all kernels of one launch share it (as the
  // simulator's events carry their thunk index) and compare can join them.
  int64_t correlation = 0;
  // Launched while CUPTI's API records were on, so its records carry
  // `external_id`. An untagged launch (later iterations, which skip the API
  // records' cost on the launching thread) gets its records by stream order:
  // the next records on each CUDA stream that match, name for name, what the
  // last tagged launch of the same thunk (device, correlation) left there.
  bool tagged = true;
  // Nonzero: a node of a CUDA graph launch, this being the CUPTI id of the
  // executable graph (cuptiGetGraphExecId). All of a launch's records carry
  // the one correlation of its cudaGraphLaunch, so they are given to its
  // nodes by name: each node takes, per record its last tagged stream launch
  // (device, correlation) left, the earliest unclaimed record of that name
  // the graph ran. Registered untagged, in node order, per launch.
  uint32_t graph = 0;
};

struct CollectorOptions {
  // Records that carry no registered external id: keep them on a stream
  // numbered by first appearance per device (capture of foreign programs), or
  // drop them and count them (the backend's own setup copies).
  bool keep_unattributed = false;
  // Kept unattributed records keep CUDA's own stream ids (what Nsight Systems
  // and JAX's profiler show) instead of 0, 1, ... by first appearance; a
  // stream counts as communication when most of its kernel time is NCCL's.
  bool cuda_stream_ids = false;
};

class ActivityCollector : public ActivitySink {
 public:
  explicit ActivityCollector(CollectorOptions options = {}) : options_(options) {}

  // ActivitySink: thread-safe; may run on CUPTI's worker thread.
  void on_activity(const Activity& activity) override;
  void on_dropped(uint64_t count) override;
  void on_unknown_kind(uint32_t kind) override;

  // Launcher side (any thread). Registration is on the launch path of every
  // thunk: it takes its own lock (not the records' one CUPTI's thread holds)
  // and stores names as ids (no string copy per launch or per record).
  // One device's launches must be registered in the order they are issued.
  void register_launch(uint64_t external_id, const LaunchInfo& info);
  // Room for `count` more launches of program device `device`, on huge pages
  // where the kernel gives them: filling the records page fault by page fault
  // cost about 0.5 us per launch on the dev VM (collector_bench).
  void reserve_launches(int32_t device, size_t count);
  void map_stream(uint32_t cuda_device, uint32_t cupti_stream, int32_t program_stream);
  // The program device a CUDA device runs (unmapped: the same number).
  void map_device(uint32_t cuda_device, int32_t program_device);
  // Records whose graph id is `record_graph` belong to launches of `graph`
  // (LaunchInfo::graph): e.g. the id of the graph an executable was
  // instantiated from. A record graph id neither registered nor aliased is
  // matched, per device, to a registered graph that got no records, both in
  // order of first appearance.
  void alias_graph(uint32_t record_graph, uint32_t graph);
  // `to_external`'s first record could not start before `from_external`'s
  // last record ended (a cross-stream wait).
  void add_wait_edge(uint64_t from_external, uint64_t to_external);
  // Many at once, e.g. the DAG edges of a graph launch: (from, to) pairs.
  void add_wait_edges(const std::vector<std::pair<uint64_t, uint64_t>>& edges);
  // GPU timestamp (CUPTI time base) that becomes 0 before normalization.
  void set_time_origin(uint64_t gpu_ns);

  // Events sorted by (start, device, stream), times from the earliest kept
  // record, counters for everything odd. Safe to call after a flush.
  trace::Trace build_trace() const;

  size_t record_count() const;

 private:
  struct Raw {
    enum class Kind { kKernel, kMemcpy, kMemset } kind;
    uint32_t device, stream, correlation;
    uint64_t start, end, bytes;
    uint32_t name;  // in record_names_
    uint32_t graph_id;  // 0: not launched by a graph
  };
  struct Launch {
    uint64_t external_id;
    LaunchInfo info;              // instruction left empty: see instruction_id
    uint32_t instruction_id = 0;  // in launch_names_
  };
  struct OrderStats {
    int64_t attributed = 0, mismatched = 0;
    // Graph launches: records given to a node, records no node claimed,
    // records a node expected and its launch did not have.
    int64_t graph_attributed = 0, graph_unclaimed = 0, graph_missing = 0;
  };
  // Per graph (LaunchInfo::graph), per record name: the records of its
  // launches in time order, and how many the nodes have claimed.
  struct GraphRecords {
    std::unordered_map<uint32_t, std::pair<std::vector<size_t>, size_t>> by_name;
  };
  // The graph records of `order` grouped by the graph their id resolves to.
  std::unordered_map<uint32_t, GraphRecords> group_graph_records(
      const std::vector<const Raw*>& order, const std::map<uint32_t, std::vector<size_t>>& by_record_graph) const;

  // External id of each record (of `order`, parallel), through CUPTI's
  // external correlation or, for untagged launches, stream order. Caller
  // holds both locks.
  std::vector<uint64_t> resolve_externals(const std::vector<const Raw*>& order, OrderStats* stats) const;

  CollectorOptions options_;
  mutable std::mutex mu_;  // guards the records (CUPTI's side), streams_ and origin_
  std::vector<Raw> raw_;
  trace::StringTable record_names_;
  std::unordered_map<uint32_t, uint64_t> external_of_;   // correlation -> external id
  std::map<std::pair<uint32_t, uint32_t>, int32_t> streams_;  // (device, cupti stream) -> program stream
  std::map<uint32_t, int32_t> devices_;                       // CUDA device -> program device
  std::unordered_map<uint32_t, uint32_t> graph_alias_;        // record graph id -> LaunchInfo::graph
  uint64_t origin_ = 0;
  mutable std::mutex launch_mu_;  // guards the launcher's side below
  std::map<int32_t, std::vector<Launch>> launches_;  // per program device, in issue order
  trace::StringTable launch_names_;
  std::vector<std::pair<uint64_t, uint64_t>> waits_;
  int64_t dropped_ = 0;
  int64_t unknown_kinds_ = 0;
  int64_t overhead_ns_ = 0;
  int64_t sync_records_ = 0;
  int64_t event_records_ = 0;
};

// Demangled-ish short name for a kernel: the function name without template
// arguments or parameter list ("void ns::foo<int>(float*)" -> "ns::foo").
std::string short_kernel_name(const std::string& name);

}  // namespace sl::cupti
