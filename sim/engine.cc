#include "sim/engine.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "core/exec/event_kind.h"
#include "core/hlo/opcode.h"
#include "sim/contention.h"
#include "sim/cost_model.h"

namespace sl::sim {
namespace {

using sched::Thunk;
using sched::ThunkKind;
using trace::EventKind;

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

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
constexpr double kMaxTimeNs = 9.0e18;

// Times reach here only after the event loop checked them against kMaxTimeNs.
int64_t to_ns(double t) { return std::llround(std::min(t, kMaxTimeNs)); }

class Engine {
 public:
  Engine(const std::vector<sched::DeviceProgram>& programs, const DeviceModel& model, const SimOptions& options)
      : programs_(programs), model_(model), options_(options) {}

  Result<trace::Trace> run();

 private:
  Status prepare();
  Status advance(int device, int stream);
  Status drain();
  void start_kernel(int device, int stream, const Thunk& thunk, uint32_t index);
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
  const KernelWork& work_of(const Thunk& thunk);
  Status deadlock_error() const;
  std::string where(int device, int stream, uint32_t thunk) const;

  const std::vector<sched::DeviceProgram>& programs_;
  const DeviceModel& model_;
  const SimOptions& options_;

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
  // Content of each kernel instruction (or thunk without one), analysed once.
  std::unordered_map<const void*, KernelWork> work_;
};

const KernelWork& Engine::work_of(const Thunk& thunk) {
  const void* key = thunk.instruction != nullptr ? static_cast<const void*>(thunk.instruction) : &thunk;
  auto [it, inserted] = work_.try_emplace(key);
  if (inserted) it->second = kernel_work(options_.module, thunk);
  return it->second;
}

std::string Engine::where(int device, int stream, uint32_t thunk) const {
  const Thunk& t = programs_[static_cast<size_t>(device)].thunks[thunk];
  return fmt::format("device {} stream {} thunk {}{}", programs_[static_cast<size_t>(device)].device,
                     devices_[static_cast<size_t>(device)].streams[static_cast<size_t>(stream)].number, thunk,
                     t.attributed_name.empty() ? "" : fmt::format(" ({})", t.attributed_name));
}

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
  }
  return Status::ok();
}

uint32_t Engine::instruction_id(const Thunk& thunk) {
  std::string_view text = thunk.attributed_name;
  if (text.empty() && thunk.instruction) text = thunk.instruction->name;
  auto [it, inserted] = instruction_ids_.try_emplace(text, 0);
  if (inserted) it->second = trace_.strings.intern(text);
  return it->second;
}

std::pair<uint32_t, EventKind> Engine::name_and_kind(const Thunk& thunk) {
  if (thunk.instruction) {
    auto [it, inserted] = instruction_names_.try_emplace(thunk.instruction);
    if (inserted) {
      const hlo::Instruction& in = *thunk.instruction;
      hlo::Opcode op = in.async_wrapped.value_or(in.opcode);
      std::string_view name = op == hlo::Opcode::kCustomCall && !in.custom_call_target.empty()
                                  ? std::string_view(in.custom_call_target)
                                  : hlo::opcode_name(op);
      EventKind kind = exec::event_kind_of(in);
      // The thunk kind is authoritative when the instruction says less (e.g. a wrapper).
      if (thunk.kind == ThunkKind::kGemm) kind = EventKind::kGemm;
      if (thunk.kind == ThunkKind::kCollective) kind = EventKind::kCollective;
      it->second = {trace_.strings.intern(name), kind};
    }
    return it->second;
  }
  // Hand-built thunks without an instruction: named after their kind.
  switch (thunk.kind) {
    case ThunkKind::kGemm: return {gemm_name_, EventKind::kGemm};
    case ThunkKind::kCollective:
      return {trace_.strings.intern(hlo::opcode_name(thunk.collective.op)), EventKind::kCollective};
    default: return {kernel_name_, EventKind::kOther};
  }
}

uint32_t Engine::emit(int device, int stream, const Thunk& thunk, uint32_t index, EventKind kind, uint32_t name,
                      double start) {
  StreamState& s = devices_[static_cast<size_t>(device)].streams[static_cast<size_t>(stream)];
  trace::Event e;
  e.device = static_cast<int32_t>(programs_[static_cast<size_t>(device)].device);
  e.stream = s.number;
  e.stream_kind = sched::stream_kind(s.number);
  e.kind = kind;
  e.name = name;
  e.instruction = instruction_id(thunk);
  e.start_ns = to_ns(start);
  e.end_ns = e.start_ns;
  e.correlation = index;
  if (kind != EventKind::kWait) {
    e.bytes = thunk.kind == ThunkKind::kCollective ? std::max(thunk.collective.bytes_in, thunk.collective.bytes_out)
                                                   : thunk.bytes_accessed;
    e.flops = thunk.flops;
  }
  auto id = static_cast<uint32_t>(trace_.events.size());
  trace_.events.push_back(e);
  for (uint32_t from : s.pending_from) trace_.dependencies.push_back({from, id});
  s.pending_from.clear();
  s.last_event = id;
  return id;
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

void Engine::start_kernel(int device, int stream, const Thunk& thunk, uint32_t index) {
  const int64_t sms = thunk.kind == ThunkKind::kGemm ? gemm_sms(model_, thunk, options_.comm_sms) : 0;
  const KernelWork* work = thunk.kind == ThunkKind::kGemm ? nullptr : &work_of(thunk);
  KernelCost cost = work == nullptr ? gemm_cost(model_, thunk, options_.allow_tf32, sms)
                                    : content_cost(model_, thunk, *work, options_.allow_tf32);
  auto [name, kind] = name_and_kind(thunk);
  // The launch is a gap on the stream before the kernel, as CUPTI shows it:
  // the kernel starts (and takes its share of the device) after it.
  const double launch_ns = std::min(cost.work_ns, model_.kernel_launch_us * 1e3);
  uint32_t event = emit(device, stream, thunk, index, kind, name, now_ + launch_ns);
  if (work != nullptr && work->work_class != WorkClass::kThunk) {
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
  return Status::ok();
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

Status Engine::advance(int device, int stream) {
  DeviceState& dev = devices_[static_cast<size_t>(device)];
  const sched::DeviceProgram& program = programs_[static_cast<size_t>(device)];
  while (true) {
    StreamState& s = dev.streams[static_cast<size_t>(stream)];
    if (s.busy || s.next >= s.queue.size()) return Status::ok();
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
          return Status::ok();
        } else if (ev.recording_stream != stream && ev.producer != kNone) {
          s.pending_from.push_back(ev.producer);
        }
        break;
      }
      case ThunkKind::kCollective:
        ++s.next;
        ++thunks_done_;
        return arrive(device, stream, t, entry.thunk);
      case ThunkKind::kKernel:
      case ThunkKind::kGemm:
        ++s.next;
        ++thunks_done_;
        s.busy = true;
        start_kernel(device, stream, t, entry.thunk);
        return Status::ok();
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
  return Status::ok();
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
  return Status::ok();
}

Result<trace::Trace> Engine::run() {
  SL_RETURN_IF_ERROR(prepare());
  rendezvous_name_ = trace_.strings.intern("rendezvous");
  held_name_ = trace_.strings.intern("wait for SMs held by a GEMM");
  gemm_name_ = trace_.strings.intern("gemm");
  kernel_name_ = trace_.strings.intern("kernel");
  int64_t kernels = 0;
  for (const auto& p : programs_) {
    for (const Thunk& t : p.thunks) kernels += t.kind == ThunkKind::kRecordEvent || t.kind == ThunkKind::kWaitEvent ? 0 : 1;
  }
  trace_.events.reserve(static_cast<size_t>(kernels));
  for (size_t d = 0; d < devices_.size(); ++d) {
    for (size_t s = 0; s < devices_[d].streams.size(); ++s) ready_.emplace_back(static_cast<int>(d), static_cast<int>(s));
  }
  SL_RETURN_IF_ERROR(drain());
  rerate();
  int64_t reported = 0;
  while (!heap_.empty()) {
    HeapEntry top = heap_.top();
    heap_.pop();
    Job& j = jobs_[top.job];
    if (!j.active || j.version != top.version) continue;
    if (!(top.time <= kMaxTimeNs)) {
      const std::string at = j.collective || j.members.empty()
                                 ? std::string("a collective")
                                 : where(j.members[0].device, j.members[0].stream, j.thunk);
      return invalid_input(fmt::format(
          "simulated time passes {:.3g} ns (int64 nanoseconds end at 9.2e18, 292 years) at {}: the device model's "
          "rates are too small or the program's work too large",
          top.time, at));
    }
    now_ = std::max(now_, top.time);
    if (j.launching) {
      begin_after_launch(top.job);
    } else {
      complete(top.job);
    }
    SL_RETURN_IF_ERROR(drain());
    rerate();
    if (options_.progress && thunks_done_ - reported >= 65536) {
      reported = thunks_done_;
      options_.progress(thunks_done_, thunks_total_);
    }
  }
  SL_RETURN_IF_ERROR(deadlock_error());
  if (options_.progress) options_.progress(thunks_done_, thunks_total_);
  if (collectives_held_ > 0) {
    trace_.add_counter(
        kCollectivesHeldCounter, collectives_held_,
        "collectives launched after a GEMM that held every SM of a member device: each started when "
        "that GEMM ended (launch the collective first)");
    trace_.add_counter(kHeldNsCounter, std::llround(held_ns_), "ns those collectives waited for the GEMMs");
  }
  if (custom_calls_by_bytes_ > 0) {
    trace_.add_counter(kCustomCallsByBytesCounter, custom_calls_by_bytes_,
                       "custom-calls other than cuBLAS GEMMs, costed by their operand and result bytes alone");
  }
  if (waits_without_record_ > 0) {
    trace_.add_counter("sim.wait_without_record", waits_without_record_,
                       "stream waits on an event with no record before them in program order (no-op, as in CUDA)");
  }
  return std::move(trace_);
}

}  // namespace

Result<trace::Trace> simulate(const std::vector<sched::DeviceProgram>& devices, const DeviceModel& model,
                              const SimOptions& options) {
  Engine engine(devices, model, options);
  return engine.run();
}

}  // namespace sl::sim
