#pragma once
// The simulator's state and the Engine that runs it (sim/engine.h), shared
// by the engine_*.cc files: streams and waits, kernels, collectives, rates,
// trace emission and the event loop. Internal to sl_sim.

#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/hlo/opcode.h"
#include "core/sched/thunk.h"
#include "core/trace/trace.h"
#include "sim/contention.h"
#include "sim/device_model.h"
#include "sim/engine.h"
#include "sim/kernel_content.h"

namespace sl::sim::engine_internal {

using sched::Thunk;
using sched::ThunkKind;
using trace::EventKind;

inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

struct QueueEntry {
  uint32_t thunk = 0;
  int32_t required_records = 0;  // kWaitEvent: records issued before it in program order
};

struct StreamState {
  int number = 0;
  std::vector<QueueEntry> queue;
  size_t next = 0;
  bool busy = false;                  // running a kernel or inside a collective (incl. rendezvous)
  uint32_t last_event = kNone;        // last trace event on this stream
  std::vector<uint32_t> pending_from; // dependency sources for the next event on this stream
  double free_at = 0;                 // when its last kernel or collective ended
};

struct EventSlot {
  int32_t records_done = 0;
  int recording_stream = -1;
  uint32_t producer = kNone;       // last trace event on the recording stream at the record
  std::vector<int> waiters;        // stream indices blocked on this event
};

struct DeviceState {
  std::vector<StreamState> streams;
  std::vector<EventSlot> events;
  std::vector<uint32_t> running;   // job ids
  std::vector<uint32_t> launching;  // job ids of kernels in their launch gap
  DeviceRates rates;
  bool dirty = false;
  uint32_t last_kernel_done = kNone;  // event of the kernel that ended last: it freed SMs
  // The host thread (SimOptions::host_issue): its clock, the next thunk it
  // issues, the issue times of those before, and the streams whose next
  // thunk waits for it to come back from a sync.
  double host_ns = 0;
  size_t host_next = 0;
  std::vector<double> issue_ns;
  std::vector<int> host_parked;
  int main_stream = -1;  // index into `streams` of sched::kMainStream, -1 none
  // Per graph launch (SimOptions::cold_graph_wait): when its first node
  // started, if the launch was cold; -infinity when warm; NaN not yet.
  std::vector<double> graph_first_start_ns;
};

struct Member {
  int device = 0;
  int stream = 0;
  uint32_t event = kNone;
  double mem_need = 0;
};

struct Job {
  double remaining = 0;  // ns of standalone work left
  double rate = 0;       // standalone ns per ns
  double last = 0;       // time of the last update of `remaining`
  double compute_need = 0;
  double mem_need = 0;
  double left_free = 0;  // a GEMM confined to fewer SMs: the share it leaves to collectives
  double compute_scale = 1;  // its granted share of the compute over its need (grant_compute)
  uint32_t version = 0;
  uint32_t stamp = 0;    // re-rate pass that last touched it
  bool active = false;
  bool launching = false;  // a kernel in its launch gap: not running yet, its heap entry is its start
  bool started = false;    // a kernel got compute (or HBM) for the first time: its event starts then
  bool waited = false;     // a kernel that was held back (rate 0) by earlier kernels' SMs
  bool holds_every_sm = false;  // a GEMM on every SM with a tile for each: cuBLAS keeps them to its end
  uint32_t thunk = 0;           // a kernel's thunk: its place in its device's launch order
  bool collective = false;
  hlo::Opcode op = hlo::Opcode::kAllGather;  // a collective's kind
  bool fresh = false;    // not yet in the heap
  std::vector<Member> members;  // one for a kernel
};

struct HeapEntry {
  double time;
  uint64_t seq;
  uint32_t job;
  uint32_t version;
  bool operator>(const HeapEntry& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

struct Arrival {
  int device = 0;
  int stream = 0;
  uint32_t thunk = 0;
  double time = 0;
  // Events of the GEMMs that held every SM of its device when it arrived
  // (Engine::sm_holders): its kernel gets SMs once they have all ended.
  std::vector<uint32_t> holders;
};

struct Rendezvous {
  size_t expected = 1;
  std::vector<Arrival> arrivals;
};

// A collective whose group is complete but which has no SMs yet on some
// member device (Engine::sm_holders).
struct HeldCollective {
  Rendezvous rv;
  std::vector<int> blocked;  // member devices it waited on
  double since = 0;          // when its group was complete
};

struct RendezvousKey {
  int64_t id;
  int64_t first_member;
  bool operator==(const RendezvousKey& o) const { return id == o.id && first_member == o.first_member; }
};
struct RendezvousKeyHash {
  size_t operator()(const RendezvousKey& k) const {
    return std::hash<int64_t>()(k.id * 1000003 + k.first_member);
  }
};

// The latest simulated time: an int64 of nanoseconds with room for the
// launch gaps added after a start (2^63 ns is 292 years).
inline constexpr double kMaxTimeNs = 9.0e18;

// Times reach here only after the event loop checked them against kMaxTimeNs.
inline int64_t to_ns(double t) { return std::llround(std::min(t, kMaxTimeNs)); }

class Engine {
 public:
  Engine(const std::vector<sched::DeviceProgram>& programs, const DeviceModel& model, const SimOptions& options)
      : programs_(programs), model_(model), options_(options) {}

  Result<trace::Trace> run();

 private:
  Status prepare();
  Status advance(int device, int stream);
  Status advance_stream(int device, int stream);
  std::optional<double> issue_time(int device, uint32_t thunk);
  Status drain();
  void start_kernel(int device, int stream, const Thunk& thunk, uint32_t index, double issue);
  // SimOptions::cold_graph_wait: the first node of launch `graph` to start
  // marks it cold or warm; a later node of a cold one that `holds` starts no
  // earlier than its wait after that (longer launch gap and work).
  void hold_for_cold_graph(int device, uint32_t index, int64_t graph, bool waited_for_host, double& launch_ns,
                           double& work_ns);
  Status arrive(int device, int stream, const Thunk& thunk, uint32_t index);
  void start_collective(Rendezvous& rv);
  void launch_collective(Rendezvous& rv, const std::vector<int>& blocked, double complete_at);
  void release_held_collectives();
  std::vector<uint32_t> sm_holders(int device, uint32_t thunk) const;
  bool still_held(const Arrival& a) const;
  void complete(uint32_t job_id);
  void rerate();
  uint32_t new_job();
  void begin_after_launch(uint32_t job_id);
  uint32_t emit(int device, int stream, const Thunk& thunk, uint32_t index, EventKind kind, uint32_t name,
                double start);
  std::pair<uint32_t, EventKind> name_and_kind(const Thunk& thunk);
  uint32_t instruction_id(const Thunk& thunk);
  void mark_dirty(int device);
  KernelWork work_of(const Thunk& thunk);
  Status deadlock_error() const;
  std::string where(int device, int stream, uint32_t thunk) const;

  const std::vector<sched::DeviceProgram>& programs_;
  const DeviceModel& model_;
  const SimOptions& options_;
  // SimOptions::fixed_thunk_ns of (device slot, thunk), or 0.
  int64_t fixed_ns(size_t device, uint32_t thunk) const {
    const auto* fixed = options_.fixed_thunk_ns;
    if (fixed == nullptr || device >= fixed->size() || thunk >= (*fixed)[device].size()) return 0;
    return (*fixed)[device][thunk];
  }
  // SimOptions::cold_graph_wait's graph launch of (device slot, thunk), or -1.
  int64_t cold_graph_of(size_t device, uint32_t thunk) const {
    const ColdGraphWait* wait = options_.cold_graph_wait;
    if (wait == nullptr || device >= wait->graph_of.size() || thunk >= wait->graph_of[device].size()) return -1;
    const int64_t g = wait->graph_of[device][thunk];
    return g >= 0 && static_cast<size_t>(g) < wait->wait_ns.size() ? g : -1;
  }
  // SimOptions::fixed_thunk_gap_ns of (device slot, thunk), or kNoGap.
  int64_t fixed_gap_ns(size_t device, uint32_t thunk) const {
    const auto* fixed = options_.fixed_thunk_gap_ns;
    if (fixed == nullptr || device >= fixed->size() || thunk >= (*fixed)[device].size()) return kNoGap;
    return (*fixed)[device][thunk];
  }

  trace::Trace trace_;
  std::vector<DeviceState> devices_;
  std::vector<int> index_of_global_;  // global device id -> index into programs_
  std::vector<Job> jobs_;
  std::vector<uint32_t> free_jobs_;
  std::vector<double> needs_, scales_;  // rerate scratch: one device's kernels
  std::priority_queue<HeapEntry, std::vector<HeapEntry>, std::greater<>> heap_;
  uint64_t seq_ = 0;
  uint32_t stamp_ = 0;
  double now_ = 0;
  std::deque<std::pair<int, int>> ready_;
  std::vector<int> dirty_;
  std::unordered_map<RendezvousKey, Rendezvous, RendezvousKeyHash> rendezvous_;
  std::vector<HeldCollective> held_;
  int64_t collectives_held_ = 0;
  double held_ns_ = 0;
  std::unordered_map<std::string_view, uint32_t> instruction_ids_;
  std::unordered_map<const hlo::Instruction*, std::pair<uint32_t, EventKind>> instruction_names_;
  uint32_t rendezvous_name_ = 0;
  uint32_t held_name_ = 0;  // a collective's wait for SMs a GEMM held
  uint32_t gemm_name_ = 0;
  uint32_t kernel_name_ = 0;
  int64_t thunks_total_ = 0;
  int64_t thunks_done_ = 0;
  int64_t waits_without_record_ = 0;
  int64_t custom_calls_by_bytes_ = 0;
  int64_t host_bound_ = 0;   // kernels whose start their issue set
  double host_wait_ns_ = 0;  // time those kernels waited for the host beyond their launch gap
  double cold_graph_wait_ns_ = 0;  // time graph nodes waited after a cold launch's first node
  int64_t host_syncs_ = 0;
  // Content of each kernel instruction, analysed once (occurrences share it).
  std::unordered_map<const hlo::Instruction*, KernelWork> work_;
};

}  // namespace sl::sim::engine_internal
