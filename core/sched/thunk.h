#pragma once
// The lowered form of a program on one device (docs/streams.md): a flat
// sequence of thunks in issue order. Calls and whiles with a known trip count
// are unrolled, so every thunk is one occurrence of one instruction.

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/hlo/module.h"
#include "core/sched/streams.h"

namespace sl::sched {

enum class ThunkKind {
  kKernel,        // elementwise / data / reduce / fusion / opaque custom-call
  kGemm,          // dot or __cublas$gemm custom-call
  kCollective,    // all-gather, reduce-scatter, all-reduce, collective-permute
  kRecordEvent,   // record `event` on `stream`
  kWaitEvent,     // `stream` waits until `event` has been recorded
};

// A byte range in the device arena (buffer assignment).
struct BufferSlice {
  int64_t offset = -1;  // -1: no buffer (e.g. token)
  int64_t size = 0;
};

struct GemmDims {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  hlo::PrimitiveType type = hlo::PrimitiveType::kF32;
  // f32 operands that XLA rounds to TF32 (DEFAULT or HIGH precision:
  // dot_precision.h), as the cuda backend runs them unless told otherwise.
  bool tf32 = false;
  // May run while a collective of its device is in flight: leaves SMs to
  // NCCL (mark_gemms_beside_collectives, collective_overlap.h).
  bool beside_collective = false;
};

struct CollectiveInfo {
  hlo::Opcode op = hlo::Opcode::kAllReduce;
  std::span<const int64_t> group;  // global device ids of this device's group, in group order
  int64_t rank_in_group = 0;
  int64_t send_to = -1;            // collective-permute: peer device or -1
  int64_t recv_from = -1;          // collective-permute: peer device or -1 (then zeros)
  int64_t bytes_in = 0;            // this device's input bytes, all tuple operands together
  int64_t bytes_out = 0;
  int64_t rendezvous_id = 0;       // equal on every device for the same occurrence
};

// One lowered program holds a thunk per instruction occurrence per device
// (10^5 and more), so a thunk stays small and trivially copyable: names,
// buffer lists and device groups are views, not copies. Lowering keeps what
// they view in a ThunkStorage that every device's program shares.
struct Thunk {
  ThunkKind kind = ThunkKind::kKernel;
  int stream = kMainStream;
  const hlo::Computation* computation = nullptr;  // where `instruction` lives
  const hlo::Instruction* instruction = nullptr;  // null for record/wait
  // Name reported in traces: the instruction's name, or the async-start's
  // name for work it wraps (docs/cli.md). Lowering points it at the
  // module's instruction names (the module outlives the program); code that
  // builds thunks by hand must keep the text alive as long as the thunk.
  std::string_view attributed_name;
  int32_t occurrence = 0;             // n-th execution of this instruction
  int event = -1;                     // kRecordEvent / kWaitEvent: per-device event id

  std::span<const BufferSlice> operands;  // one per operand leaf read
  std::span<const BufferSlice> results;   // one per result leaf written
  BufferSlice workspace;              // GEMM workspace

  int64_t flops = 0;
  int64_t bytes_accessed = 0;         // bytes read + written
  GemmDims gemm;                      // kGemm
  CollectiveInfo collective;          // kCollective
  // A kKernel thunk whose fusion XLA runs as a cuBLAS call (a dynamic-slice
  // fusion: the call on a slice of a loop's stacked operand). It pays the
  // call's fixed cost as a kGemm thunk does.
  bool fusion_calls_library = false;
};

// What lowered thunks' spans point into. Immutable once the thunks exist.
struct ThunkStorage {
  std::vector<BufferSlice> slices;  // every thunk's operands then results
  std::vector<int64_t> device_ids;  // every collective's device groups
};

struct DeviceProgram {
  int64_t device = 0;     // global id
  int64_t replica = 0;
  int64_t partition = 0;
  std::vector<Thunk> thunks;
  int num_events = 0;
  // Keeps the thunks' views alive, shared by every device (and every copy)
  // of one lowering. Null for hand-built programs, whose views point at the
  // builder's own storage.
  std::shared_ptr<const ThunkStorage> storage;
};

}  // namespace sl::sched
