#pragma once
// Everything one GPU needs to run its thunk sequence: the arena, a CUDA
// stream per program stream, the program's events, a cuBLASLt runner.

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/common/status.h"
#include "core/exec/cuda/gemm_lt.h"
#include "core/sched/thunk.h"

namespace sl::exec::cuda {

class NcclComms;
class GeneratedFusions;

// Offsets from here on are in DeviceContext::scratch, not the arena: the
// temporaries of fusions run as several kernels or op by op.
inline constexpr int64_t kScratchBase = int64_t{1} << 60;

// One command buffer captured as a CUDA graph (cuda_graphs.cc): launched
// on `stream` where thunk `first` would be issued, its nodes then skipped.
// Nodes of other streams (`others`): the launch first waits for their work
// so far (join_events), and their later work waits for the graph (done).
struct DeviceGraph {
  cudaGraphExec_t exec = nullptr;
  int stream = 0;                // program stream of its first node
  std::vector<int> others;       // the other streams of its nodes
  std::vector<cudaEvent_t> join_events;  // per `others`
  cudaEvent_t done = nullptr;    // recorded after the launch when `others`
  uint32_t first = 0;            // its earliest node in program order
  uint32_t cupti_id = 0;         // cupti::LaunchInfo::graph of its nodes
  std::vector<uint32_t> nodes;   // thunk indices
  // The graph's edges as (from thunk, to thunk): the trace's dependencies.
  std::vector<std::pair<uint32_t, uint32_t>> edges;
};

struct DeviceContext {
  int ordinal = 0;                 // CUDA device
  const sched::DeviceProgram* program = nullptr;
  const hlo::Module* module = nullptr;
  char* arena = nullptr;
  int64_t arena_bytes = 0;
  std::map<int, cudaStream_t> streams;  // program stream -> CUDA stream
  std::vector<cudaEvent_t> events;      // per-device event ids of the program
  std::map<int, cudaEvent_t> join_events;  // per stream: its work of the iteration is done
  cudaEvent_t boundary_event = nullptr;    // on the main stream: the iteration is done
  // Recorded with boundary_event, iteration i into [i % size()]: what the
  // stall watch queries for the device's progress (empty without it).
  std::vector<cudaEvent_t> iteration_done;
  std::unique_ptr<GemmRunner> gemm;
  void* fallback_workspace = nullptr;   // for GEMMs lowered without a workspace slice
  size_t fallback_workspace_bytes = 0;
  NcclComms* comms = nullptr;
  const GeneratedFusions* fusions = nullptr;  // how fusions run (generated_fusions.h)
  char* scratch = nullptr;              // fusions' temporaries (GeneratedFusions::attach)
  int64_t world_size = 1;               // devices of the program
  bool allow_tf32 = false;       // every f32 GEMM may use TF32
  bool exact_f32_gemms = false;  // none does unless allow_tf32 (else: where XLA would)
  int sm_count = 0;                     // of the device
  int comm_sms = 0;                     // left to NCCL by GEMMs beside a collective
  std::vector<DeviceGraph> graphs;      // the command buffers run as CUDA graphs
  // Per thunk: the index in `graphs` of the graph it is a node of, -1 for
  // none; empty when there are no graphs.
  std::vector<int32_t> graph_of;

  char* at(const sched::BufferSlice& s) const {
    if (s.offset < 0) return nullptr;
    return s.offset >= kScratchBase ? scratch + (s.offset - kScratchBase) : arena + s.offset;
  }
  cudaStream_t stream(int program_stream) const { return streams.at(program_stream); }
};

// "instruction 'dot.1' on device 0" for error messages.
std::string where(const sched::Thunk& thunk, const DeviceContext& ctx);

// One kKernel thunk (elementwise / data / reduce op) on its stream.
Status issue_kernel(const sched::Thunk& thunk, DeviceContext& ctx);
// One kGemm thunk through cuBLASLt (or the reference kernel for other types).
Status issue_gemm(const sched::Thunk& thunk, DeviceContext& ctx);

}  // namespace sl::exec::cuda
