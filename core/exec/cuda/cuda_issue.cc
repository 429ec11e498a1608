// Issuing one iteration of a device's thunks in program order: events and
// waits between streams, kernels, GEMMs and collectives, each launch
// registered with the CUPTI collector under an external correlation id, and
// the dependency edges the waits (and CUDA graphs' DAGs) imply.

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <map>
#include <vector>

#include "core/exec/cuda/cuda_backend_impl.h"
#include "core/exec/cuda/cuda_check.h"
#include "core/exec/cuda/generated_fusions.h"
#include "core/exec/cuda/kernels.h"
#include "core/exec/cuda/nccl_collectives.h"
#include "core/exec/event_kind.h"
#include "cupti_tracer/cupti_api.h"

namespace sl::exec::cuda {
namespace {

using sched::Thunk;
using sched::ThunkKind;

// External correlation id of one thunk occurrence: iteration, device, index.
uint64_t external_id(int iteration, int64_t device, size_t thunk) {
  return (static_cast<uint64_t>(iteration + 1) << 44) | (static_cast<uint64_t>(device) << 32) |
         static_cast<uint64_t>(thunk);
}

trace::EventKind kind_of(const Thunk& t) {
  switch (t.kind) {
    case ThunkKind::kGemm: return trace::EventKind::kGemm;
    case ThunkKind::kCollective: return trace::EventKind::kCollective;
    default: return t.instruction ? event_kind_of(*t.instruction) : trace::EventKind::kOther;
  }
}

}  // namespace

// Called on the device's own host thread (external correlation ids are per thread).
Status CudaBackend::issue(DeviceContext& ctx, int iteration, bool keep, bool tagged, bool graphs,
                          cupti::ActivityCollector* collector) {
  SL_CUDA(cudaSetDevice(ctx.ordinal), "");
  const sched::DeviceProgram& dp = *ctx.program;
  // For dependency edges: last work thunk on each stream, and per event the
  // work it covers; the next work on a waiting stream depends on it.
  std::map<int, uint64_t> last_on_stream;
  std::map<int, uint64_t> event_covers;
  std::map<int, std::vector<uint64_t>> pending_waits;
  for (size_t i = 0; i < dp.thunks.size(); ++i) {
    const Thunk& t = dp.thunks[i];
    if (t.kind == ThunkKind::kRecordEvent) {
      SL_CUDA(cudaEventRecord(ctx.events.at(static_cast<size_t>(t.event)), ctx.stream(t.stream)),
              fmt::format("event {} on device {}", t.event, dp.device));
      if (auto it = last_on_stream.find(t.stream); it != last_on_stream.end()) event_covers[t.event] = it->second;
      continue;
    }
    if (t.kind == ThunkKind::kWaitEvent) {
      SL_CUDA(cudaStreamWaitEvent(ctx.stream(t.stream), ctx.events.at(static_cast<size_t>(t.event)), 0),
              fmt::format("wait for event {} on device {}", t.event, dp.device));
      if (auto it = event_covers.find(t.event); it != event_covers.end()) pending_waits[t.stream].push_back(it->second);
      continue;
    }
    SL_RETURN_IF_ERROR(check_injected_fault(t, i, ctx));
    const uint64_t ext = external_id(iteration, dp.device, i);
    // A graph node: its graph is launched where its first node is, and the
    // node's records are found among the launch's (LaunchInfo::graph).
    const int32_t g = graphs && !ctx.graph_of.empty() ? ctx.graph_of[i] : -1;
    const DeviceGraph* graph = g >= 0 ? &ctx.graphs[static_cast<size_t>(g)] : nullptr;
    if (collector != nullptr) {
      // A fusion run op by op is named so in the trace ("NAME [op-by-op]").
      const std::string* renamed = ctx.fusions != nullptr ? ctx.fusions->trace_name(t.instruction) : nullptr;
      collector->register_launch(ext, {.device = static_cast<int32_t>(dp.device), .stream = t.stream,
                                       .kind = kind_of(t),
                                       .instruction = renamed != nullptr ? std::string_view(*renamed) : t.attributed_name,
                                       .flops = t.flops,
                                       .bytes = t.bytes_accessed, .iteration = iteration, .keep = keep,
                                       .correlation = static_cast<int64_t>(i) + 1,
                                       .tagged = tagged && graph == nullptr,
                                       .graph = graph != nullptr ? graph->cupti_id : 0});
      for (uint64_t from : pending_waits[t.stream]) collector->add_wait_edge(from, ext);
    }
    pending_waits[t.stream].clear();
    last_on_stream[t.stream] = ext;
    if (graph != nullptr) {
      if (i == graph->first) {
        SL_RETURN_IF_ERROR(launch_graph(*graph, ctx, fmt::format("the command buffer starting at {}", where(t, ctx))));
        if (collector != nullptr && keep) {
          std::vector<std::pair<uint64_t, uint64_t>> edges;
          edges.reserve(graph->edges.size());
          for (const auto& [from, to] : graph->edges) {
            edges.emplace_back(external_id(iteration, dp.device, from), external_id(iteration, dp.device, to));
          }
          collector->add_wait_edges(edges);
        }
      }
      continue;
    }
    cupti::ExternalIdScope scope(ext, collector != nullptr && tagged);
    SL_RETURN_IF_ERROR(scope.status());
    switch (t.kind) {
      case ThunkKind::kKernel: SL_RETURN_IF_ERROR(issue_kernel(t, ctx)); break;
      case ThunkKind::kGemm: SL_RETURN_IF_ERROR(issue_gemm(t, ctx)); break;
      case ThunkKind::kCollective: SL_RETURN_IF_ERROR(issue_collective(t, ctx)); break;
      default: break;
    }
  }
  return ok_status();
}

}  // namespace sl::exec::cuda
