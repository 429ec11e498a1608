#pragma once
// Flattens a module into one device-independent thunk sequence
// (docs/streams.md): calls inlined, whiles unrolled, async starts and implicit async
// pairs turned into record/wait events, and every value given a logical
// buffer with its live range. lower() then allocates the buffers and copies
// the sequence per device, filling in each device's collective peers.
// Internal to core/sched. One concept per file: emitter.cc (driver),
// emitter_order.cc (emission order), emitter_async.cc (async pairs and
// regions), emitter_control.cc (control flow), emitter_work.cc (work thunks
// and buffers).

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/common/status.h"
#include "core/hlo/module.h"
#include "core/sched/buffer_assignment.h"
#include "core/sched/lowering.h"
#include "core/sched/stream_assignment.h"
#include "core/sched/thunk.h"

namespace sl::sched::detail {

using Leaves = std::vector<int32_t>;  // buffer id per shape leaf; -1 = no buffer

// Calls nest at most this deep (a computation calling itself never ends).
constexpr int kMaxCallDepth = 512;
// Reservation cap: a huge trip count must not reserve gigabytes up front.
constexpr size_t kMaxReservedThunks = size_t{1} << 20;

inline void append(Leaves& to, const Leaves& from) { to.insert(to.end(), from.begin(), from.end()); }

// Buffer ids a thunk reads and writes, turned into slices after allocation:
// `operands` ids then `results` ids from FlatProgram::buffer_ids[first]. One
// shared id list instead of two small vectors per thunk.
struct ThunkBuffers {
  uint32_t first = 0;
  uint32_t operands = 0;
  uint32_t results = 0;
  int32_t workspace = -1;
};

struct FlatProgram {
  std::vector<Thunk> thunks;              // collective group/rank/peers not yet filled
  std::vector<ThunkBuffers> buffers_of;   // parallel to thunks
  std::vector<int32_t> buffer_ids;        // what buffers_of points into
  std::vector<LogicalBuffer> buffers;     // slices not yet assigned
  std::vector<Leaves> parameters;         // entry parameter leaves
  Leaves outputs;                         // entry ROOT leaves
  std::vector<std::pair<const hlo::Instruction*, int32_t>> constants;
  int num_events = 0;
  std::vector<StreamAssignmentEntry> streams;
};

class Emitter {
 public:
  Emitter(const hlo::Module& module, const StreamPolicy& policy, const LowerOptions& options,
          std::vector<std::string>* warnings)
      : module_(module), policy_(policy), options_(options), warnings_(warnings) {}

  Result<FlatProgram> run();

 private:
  // Work moved to another stream: its buffers live from `start` (the
  // parent's record) until the done's wait.
  struct Region {
    int64_t start = 0;
    std::vector<int32_t> touched;
  };
  struct AsyncState {
    bool inline_on_parent = false;  // the start's stream is its parent's: no events
    int event = -1;                 // recorded on the async stream after the work
    Region region;
    Leaves output;
  };
  struct PendingDone {
    int stream = 0;   // the parent stream that waits
    int async_stream = 0;  // where the work runs (wait_on_operation_queues names it)
    int event = -1;
    Region region;
    const std::string* name = nullptr;
  };
  // Per computation, computed once: where each value is first used, and the
  // done that ends each async-start.
  struct ComputationInfo {
    std::vector<int> first_user;
    std::vector<int> done_of;
  };

  struct EmitStep {
    int index = 0;
    bool hoisted = false;  // moved up to just after its last operand
  };
  // Text order, except that implicit async pairs start right after their
  // operands (never in a scheduled module), and never before a control predecessor.
  std::vector<EmitStep> emission_order(const hlo::Computation& computation, int stream) const;
  static std::vector<EmitStep> after_control_predecessors(const hlo::Computation& computation,
                                                          std::vector<EmitStep> order);

  Status emit_computation(const hlo::Computation& computation, int stream, const std::string* attribution,
                          const std::vector<Leaves>& arguments, Leaves* result);
  Status emit_instruction(const hlo::Computation& computation, int index, int stream,
                          const std::string* attribution, std::vector<Leaves>& env,
                          std::map<int, std::vector<PendingDone>>& pending,
                          std::unordered_map<int, AsyncState>& async);
  // The instruction's own work on `stream` (call/while/conditional recurse).
  Result<Leaves> emit_op(const hlo::Computation& computation, const hlo::Instruction& instruction, int stream,
                         const std::string* attribution, std::vector<Leaves>& env);
  // A while's trips: known_trip_count, else the condition's constant bound,
  // else the default; more than the cap is an error at the while's location.
  Result<int64_t> trip_count(const hlo::Computation& computation, const hlo::Instruction& instruction);
  std::string where(const hlo::Instruction& instruction) const;  // "file:line:col"
  // One kernel/GEMM/collective thunk computing `op` into a `result` shape.
  Leaves emit_work(const hlo::Computation& computation, const hlo::Instruction& instruction, hlo::Opcode op,
                   const hlo::Shape& result, int stream, const std::string* attribution,
                   const std::vector<Leaves>& env);
  // An instruction moved to `async_stream` (operation_queue_id, annotation,
  // override): an implicit async pair, its done just before the first user.
  Status emit_moved(const hlo::Computation& computation, int index, int stream, int async_stream,
                    const std::string* attribution, std::vector<Leaves>& env,
                    std::map<int, std::vector<PendingDone>>& pending);
  Status emit_async_start(const hlo::Computation& computation, int index, int stream,
                          const std::string* attribution, std::vector<Leaves>& env,
                          std::unordered_map<int, AsyncState>& async);
  void emit_async_done(const hlo::Computation& computation, int index, int stream, std::vector<Leaves>& env,
                       std::unordered_map<int, AsyncState>& async);

  int64_t push_event_thunk(ThunkKind kind, int stream, int event, const std::string* name);
  void close_region(Region& region, int64_t end);
  int32_t new_buffer(int64_t size, const hlo::Instruction* instruction, int32_t leaf_index, int64_t position);
  Leaves new_leaves(const hlo::Shape& shape, const hlo::Instruction* instruction, int64_t position,
                    bool whole_program);
  void touch(int32_t buffer, int64_t position);
  const ComputationInfo& info(const hlo::Computation& computation);
  size_t estimate_thunks(const hlo::Computation& computation, int depth);
  void list_stream(const hlo::Instruction& instruction, int stream);

  const hlo::Module& module_;
  const StreamPolicy& policy_;
  const LowerOptions& options_;
  std::vector<std::string>* warnings_;

  FlatProgram out_;
  std::vector<Region*> regions_;  // innermost last
  std::vector<int32_t> whole_program_;  // buffers live over the whole program
  // n-th execution of an instruction under one attribution (its own name, or
  // the async-start / moved call that wraps it), so two starts wrapping the
  // same computation each count their own occurrences.
  struct PairHash {
    size_t operator()(const std::pair<const std::string*, const hlo::Instruction*>& key) const {
      return std::hash<const void*>{}(key.first) * 31 + std::hash<const void*>{}(key.second);
    }
  };
  std::unordered_map<std::pair<const std::string*, const hlo::Instruction*>, int32_t, PairHash> occurrences_;
  std::unordered_map<const hlo::Instruction*, int32_t> constant_buffers_;
  std::unordered_map<const hlo::Computation*, ComputationInfo> infos_;
  std::unordered_map<const hlo::Computation*, size_t> estimates_;
  std::unordered_set<const hlo::Instruction*> listed_;
  std::unordered_set<const hlo::Instruction*> warned_;
  int64_t next_rendezvous_ = 0;
  int depth_ = 0;
};

// Number of array/token leaves of a shape (an array is one leaf).
int64_t leaf_count(const hlo::Shape& shape);

}  // namespace sl::sched::detail
