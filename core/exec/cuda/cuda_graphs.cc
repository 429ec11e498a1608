// Command buffers as CUDA graphs (docs/architecture.md, "Command buffers on
// the GPU"): the node thunks are stream-captured into one graph, each issued
// exactly as a stream launch issues it, with the capture's dependencies set
// before each to the command buffer's DAG edges and the hazards of
// streamlens' own buffer assignment (graph_edges.h); instantiated once a
// run. A graph that cannot keep the program's meaning is refused and its
// nodes run as stream launches, said in RunOutput::notes and counted.

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>

#include "core/exec/cuda/cuda_backend_impl.h"
#include "core/exec/cuda/cuda_check.h"
#include "core/exec/cuda/graph_edges.h"
#include "cupti_tracer/cupti_api.h"

namespace sl::exec::cuda {
namespace {

using sched::CommandBuffer;
using sched::Thunk;
using sched::ThunkKind;

// The nodes' launches captured into one graph on `stream`, in the order of
// `edges`: before each node the capture's dependency set becomes the nodes
// its predecessors' launches ended with, so its first launch waits for
// exactly those (a node that launched nothing passes its own on).
Result<cudaGraph_t> capture(const CommandBuffer& buffer, const GraphEdges& edges, DeviceContext& ctx,
                            int capture_stream) {
  cudaStream_t stream = ctx.stream(capture_stream);
  // Relaxed: the capture comes before any iteration, so a library may still
  // initialise itself lazily inside it (module loading, cuBLASLt's first
  // call); what the thunks put on the stream is asynchronous work only.
  SL_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), "capturing a command buffer");
  std::vector<std::vector<cudaGraphNode_t>> ends(edges.order.size());
  Status issued = ok_status();
  for (size_t k = 0; k < edges.order.size() && issued.is_ok(); ++k) {
    // Every node is captured on the graph's stream, whichever its own.
    Thunk t = ctx.program->thunks[buffer.thunks[edges.order[k]]];
    t.stream = capture_stream;
    std::vector<cudaGraphNode_t> deps;
    for (int d : edges.deps[k]) {
      const auto& e = ends[static_cast<size_t>(d)];
      deps.insert(deps.end(), e.begin(), e.end());
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    issued = cuda_status(cudaStreamUpdateCaptureDependencies(stream, deps.data(), nullptr, deps.size(),
                                                             cudaStreamSetCaptureDependencies),
                         "cudaStreamUpdateCaptureDependencies", where(t, ctx));
    if (!issued.is_ok()) break;
    issued = t.kind == ThunkKind::kGemm ? issue_gemm(t, ctx) : issue_kernel(t, ctx);
    if (!issued.is_ok()) break;
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    const cudaGraphNode_t* now = nullptr;
    size_t count = 0;
    issued = cuda_status(cudaStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &now, nullptr, &count),
                         "cudaStreamGetCaptureInfo", where(t, ctx));
    if (issued.is_ok() && status != cudaStreamCaptureStatusActive) {
      issued = runtime_error(fmt::format("the capture stopped at {}", where(t, ctx)));
    }
    if (issued.is_ok()) ends[k].assign(now, now + count);
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  if (!issued.is_ok() || ended != cudaSuccess) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    (void)cudaGetLastError();  // a broken capture's error is not the run's
    return issued.is_ok() ? cuda_status(ended, "cudaStreamEndCapture", "capturing a command buffer") : issued;
  }
  return graph;
}

// The command buffer as one instantiated graph; on failure nothing is left
// allocated.
Result<cudaGraphExec_t> build_graph(const CommandBuffer& buffer, DeviceContext& ctx,
                                    cupti::ActivityCollector* collector, DeviceGraph* out) {
  cudaStream_t stream = ctx.stream(out->stream);
  uint32_t* cupti_id = &out->cupti_id;
  // The cuBLASLt fallback workspace and fusions' temporaries are shared:
  // their users keep their program order.
  auto shared_state = [&ctx](const Thunk& t) {
    if (t.kind == ThunkKind::kGemm) return t.workspace.offset < 0 || t.workspace.size <= 0;
    return ctx.fusions != nullptr && t.instruction != nullptr && ctx.fusions->uses_shared_state(t.instruction);
  };
  const GraphEdges edges = graph_edges(*ctx.program, buffer, shared_state);
  out->edges.clear();
  for (size_t k = 0; k < edges.order.size(); ++k) {
    for (int d : edges.deps[k]) {
      out->edges.emplace_back(buffer.thunks[edges.order[static_cast<size_t>(d)]], buffer.thunks[edges.order[k]]);
    }
  }
  SL_ASSIGN_OR_RETURN(cudaGraph_t graph, capture(buffer, edges, ctx, out->stream));
  struct Destroy {
    cudaGraph_t g;
    ~Destroy() { cudaGraphDestroy(g); }
  } destroy{graph};
  cudaGraphExec_t exec = nullptr;
  SL_CUDA(cudaGraphInstantiate(&exec, graph, 0), "instantiating a command buffer");
  if (cudaError_t up = cudaGraphUpload(exec, stream); up != cudaSuccess) {
    cudaGraphExecDestroy(exec);
    return cuda_status(up, "cudaGraphUpload", "a command buffer");
  }
  if (collector != nullptr) {
    // Records may name the executable graph or the one it was made from.
    auto exec_id = cupti::CuptiApi::graph_exec_id(exec);
    auto graph_id = cupti::CuptiApi::graph_id(graph);
    if (exec_id.is_ok() && *exec_id != 0) *cupti_id = *exec_id;
    if (graph_id.is_ok() && *graph_id != 0 && *graph_id != *cupti_id) collector->alias_graph(*graph_id, *cupti_id);
  }
  return exec;
}

// The events that order a graph with nodes of several streams against
// those streams' other work.
Status create_fork_join_events(DeviceGraph& graph) {
  if (graph.others.empty()) return ok_status();
  graph.join_events.assign(graph.others.size(), nullptr);
  for (cudaEvent_t& e : graph.join_events) {
    SL_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "a command buffer's streams");
  }
  SL_CUDA(cudaEventCreateWithFlags(&graph.done, cudaEventDisableTiming), "a command buffer's streams");
  return ok_status();
}

void destroy_fork_join_events(DeviceGraph& graph) {
  for (cudaEvent_t e : graph.join_events) {
    if (e != nullptr) cudaEventDestroy(e);
  }
  if (graph.done != nullptr) cudaEventDestroy(graph.done);
  graph.join_events.clear();
  graph.done = nullptr;
}

}  // namespace

Status CudaBackend::launch_graph(const DeviceGraph& graph, DeviceContext& ctx, const std::string& at) const {
  cudaStream_t stream = ctx.stream(graph.stream);
  for (size_t k = 0; k < graph.others.size(); ++k) {
    SL_CUDA(cudaEventRecord(graph.join_events[k], ctx.stream(graph.others[k])), at);
    SL_CUDA(cudaStreamWaitEvent(stream, graph.join_events[k], 0), at);
  }
  SL_CUDA(cudaGraphLaunch(graph.exec, stream), at);
  if (graph.others.empty()) return ok_status();
  SL_CUDA(cudaEventRecord(graph.done, stream), at);
  for (int s : graph.others) SL_CUDA(cudaStreamWaitEvent(ctx.stream(s), graph.done, 0), at);
  return ok_status();
}

Status CudaBackend::setup_graphs(const RunOptions& options, cupti::ActivityCollector* collector) {
  graph_stats_ = {};
  if (options.command_buffers.empty()) return ok_status();
  graph_stats_.requested = true;
  uint32_t synthetic_id = 0x80000000u;  // nodes' graph key where CUPTI gives no id: unique, nonzero
  for (DeviceContext& ctx : devices_) {
    const sched::DeviceProgram& dp = *ctx.program;
    const auto d = static_cast<size_t>(dp.device);
    if (d >= options.command_buffers.size() || options.command_buffers[d].empty()) continue;
    SL_CUDA(cudaSetDevice(ctx.ordinal), "");
    ctx.graph_of.assign(dp.thunks.size(), -1);
    for (size_t g = 0; g < options.command_buffers[d].size(); ++g) {
      const CommandBuffer& buffer = options.command_buffers[d][g];
      if (buffer.thunks.empty()) continue;
      std::string why = sched::command_buffer_refusal(dp, buffer, &ctx.graph_of);
      DeviceGraph graph;
      if (why.empty()) {
        graph.first = *std::min_element(buffer.thunks.begin(), buffer.thunks.end());
        graph.stream = dp.thunks[graph.first].stream;
        graph.cupti_id = ++synthetic_id;
        for (uint32_t i : buffer.thunks) {
          const int s = dp.thunks[i].stream;
          if (s != graph.stream && std::find(graph.others.begin(), graph.others.end(), s) == graph.others.end()) {
            graph.others.push_back(s);
          }
        }
        SL_RETURN_IF_ERROR(create_fork_join_events(graph));
        auto exec = build_graph(buffer, ctx, collector, &graph);
        if (exec.is_ok()) {
          graph.exec = *exec;
        } else {
          why = "capturing it failed: " + exec.status().message();
          destroy_fork_join_events(graph);
        }
      }
      if (!why.empty()) {
        ++graph_stats_.fallbacks;
        graph_stats_.notes.push_back(fmt::format("command buffer {} of device {} ({} nodes, first '{}') runs as "
                                                 "stream launches: {}",
                                                 g, dp.device, buffer.thunks.size(),
                                                 buffer.thunks[0] < dp.thunks.size()
                                                     ? dp.thunks[buffer.thunks[0]].attributed_name
                                                     : std::string("?"),
                                                 why));
        continue;
      }
      graph.nodes = buffer.thunks;
      for (uint32_t i : buffer.thunks) ctx.graph_of[i] = static_cast<int32_t>(ctx.graphs.size());
      graph_stats_.graphs += 1;
      graph_stats_.nodes += static_cast<int64_t>(buffer.thunks.size());
      ctx.graphs.push_back(std::move(graph));
    }
    if (ctx.graphs.empty()) ctx.graph_of.clear();
  }
  return ok_status();
}

void CudaBackend::add_graph_results(RunOutput* out) const {
  if (!graph_stats_.requested) return;
  for (const std::string& note : graph_stats_.notes) out->notes.push_back(note);
  out->trace.add_counter("command_buffer_graphs", graph_stats_.graphs,
                         "command buffers launched as one CUDA graph each, per iteration (all devices)");
  out->trace.add_counter("command_buffer_graph_nodes", graph_stats_.nodes,
                         "thunks run as nodes of those graphs, per iteration (all devices)");
  out->trace.add_counter("command_buffer_fallbacks", graph_stats_.fallbacks,
                         "command buffers run as stream launches instead (the run's notes say why)");
}

void destroy_graphs(DeviceContext& ctx) {
  for (DeviceGraph& g : ctx.graphs) {
    if (g.exec != nullptr) cudaGraphExecDestroy(g.exec);
    destroy_fork_join_events(g);
  }
  ctx.graphs.clear();
  ctx.graph_of.clear();
}

}  // namespace sl::exec::cuda
