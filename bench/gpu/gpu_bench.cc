// GPU measurements for bench/gpu/run.sh (builds nothing itself):
//   gpu_bench gemm M N K [count] [streams] [iterations]
//       bf16 GEMM(s) through streamlens (parse -> lower -> cuda backend,
//       cuBLASLt), kernel times from the CUPTI tracer; prints the median
//       per-iteration span in ms and TFLOP/s.
//   gpu_bench hlo FILE ITERATIONS [NAME=STREAM...]
//                           any program (e.g. a sample), median iteration span
//   gpu_bench allgather TENSORS MIB [iterations]
//                           2 GPUs: one tuple all-gather vs one per tensor vs flat
//   gpu_bench tracer_program FILE [iterations]
//                           wall time per iteration of a program, tracer off / on
//   gpu_bench tracer_graph FILE [iterations]
//                           the same with the program run as one CUDA graph
//                           (every thunk a node, after the previous one of its stream)
//   gpu_bench tracer N      N tiny kernels, wall time without / with the tracer
//   gpu_bench wait N        GPU gap between dependent kernels: same stream vs
//                           across streams (cudaEventRecord + cudaStreamWaitEvent)
//   gpu_bench capture FILE  summary of a libstreamlens_inject.so capture file
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "bench/gpu/program_bench.h"
#include "core/exec/cuda/cuda_backend.h"
#include "core/exec/cuda/kernels.h"
#include "core/trace/capture_losses.h"
#include "core/hlo/parser.h"
#include "core/sched/lowering.h"
#include "cupti_tracer/capture_file.h"
#include "cupti_tracer/collector.h"
#include "cupti_tracer/cupti_api.h"

namespace {

using namespace sl;

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int fail(const std::string& what) {
  std::fprintf(stderr, "gpu_bench: %s\n", what.c_str());
  return 3;
}

#define CHECK_CUDA(call)                                                          \
  do {                                                                            \
    cudaError_t _e = (call);                                                      \
    if (_e != cudaSuccess) return fail(std::string(#call) + ": " + cudaGetErrorString(_e)); \
  } while (0)

std::string gemm_program(int64_t m, int64_t n, int64_t k, int count, int streams) {
  std::string text = "HloModule bench_gemm\nENTRY e {\n";
  text += "  a = bf16[" + std::to_string(m) + "," + std::to_string(k) + "] parameter(0)\n";
  text += "  b = bf16[" + std::to_string(k) + "," + std::to_string(n) + "] parameter(1)\n";
  std::string out_shape = "bf16[" + std::to_string(m) + "," + std::to_string(n) + "]";
  std::string tuple_shapes, names;
  for (int g = 0; g < count; ++g) {
    std::string cfg = (streams > 1 && g > 0) ? ", backend_config={\"operation_queue_id\":\"" + std::to_string(g) + "\"}" : "";
    text += "  g" + std::to_string(g) + " = " + out_shape + " dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}" + cfg + "\n";
    tuple_shapes += (g ? ", " : "") + out_shape;
    names += (g ? ", g" : "g") + std::to_string(g);
  }
  text += "  ROOT t = (" + tuple_shapes + ") tuple(" + names + ")\n}\n";
  return text;
}

int bench_gemm(int64_t m, int64_t n, int64_t k, int count, int streams, int iterations) {
  auto t = bench::time_program(gemm_program(m, n, k, count, streams), "bench_gemm.hlo", {}, iterations);
  if (!t) return fail(t.status().message());
  const double tflops = 2.0 * m * n * k * count / (t->median_iteration_ms * 1e-3) / 1e12;
  std::printf("streamlens gemm m=%ld n=%ld k=%ld count=%d streams=%d: median iteration %.3f ms (%zu iterations), "
              "%.1f TFLOP/s, median GEMM kernel %.3f ms, events %zu\n",
              static_cast<long>(m), static_cast<long>(n), static_cast<long>(k), count, streams, t->median_iteration_ms,
              t->iterations, tflops, t->median_gemm_ms, t->events);
  return 0;
}

// gpu_bench hlo FILE ITERATIONS [NAME=STREAM...]: one program, optionally
// with instructions moved to other streams.
int bench_hlo(int argc, char** argv) {
  if (argc < 4) return fail("usage: gpu_bench hlo FILE ITERATIONS [NAME=STREAM...]");
  auto text = bench::read_text(argv[2]);
  if (!text) return fail(text.status().message());
  sched::StreamOverrides overrides;
  std::string moved;
  for (int i = 4; i < argc; ++i) {
    std::string a = argv[i];
    auto eq = a.find('=');
    if (eq == std::string::npos) return fail("expected NAME=STREAM, got " + a);
    overrides[a.substr(0, eq)] = std::atoi(a.c_str() + eq + 1);
    moved += " " + a;
  }
  auto t = bench::time_program(*text, argv[2], overrides, std::atoi(argv[3]));
  if (!t) return fail(t.status().message());
  std::printf("streamlens hlo %s%s: median iteration %.3f ms (min %.3f, %zu iterations), median GEMM %.3f ms, "
              "median collective %.3f ms, events %zu\n",
              argv[2], moved.empty() ? "" : (" with" + moved).c_str(), t->median_iteration_ms, t->min_iteration_ms,
              t->iterations, t->median_gemm_ms, t->median_collective_ms, t->events);
  return 0;
}

// All-gather of `tensors` bf16 shards of `mib` MiB each on 2 devices, as one
// tuple collective, as one all-gather per tensor, and as one flat all-gather
// of the same bytes.
std::string allgather_program(int tensors, int mib, const std::string& variant) {
  const int64_t cols = 1024, rows = int64_t{mib} * 512;  // bf16: 512 x 1024 elements per MiB
  auto shape = [&](int64_t r) { return "bf16[" + std::to_string(r) + "," + std::to_string(cols) + "]"; };
  auto groups = [](int channel) {
    return ", channel_id=" + std::to_string(channel) + ", replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true";
  };
  std::string text = "HloModule allgather_" + variant + ", num_partitions=2\nENTRY e {\n";
  if (variant == "flat") {
    text += "  p = " + shape(rows * tensors) + " parameter(0)\n";
    text += "  ROOT g = " + shape(2 * rows * tensors) + " all-gather(p)" + groups(1) + "\n}\n";
    return text;
  }
  std::string params, outs, names;
  for (int i = 0; i < tensors; ++i) {
    const std::string n = std::to_string(i);
    text += "  p" + n + " = " + shape(rows) + " parameter(" + n + ")\n";
    params += (i ? ", p" : "p") + n;
    outs += (i ? ", " : "") + shape(2 * rows);
    if (variant == "separate") {
      text += "  g" + n + " = " + shape(2 * rows) + " all-gather(p" + n + ")" + groups(i + 1) + "\n";
      names += (i ? ", g" : "g") + n;
    }
  }
  if (variant == "tuple") {
    text += "  ROOT g = (" + outs + ") all-gather(" + params + ")" + groups(1) + "\n}\n";
  } else {
    text += "  ROOT t = (" + outs + ") tuple(" + names + ")\n}\n";
  }
  return text;
}

int bench_allgather(int tensors, int mib, int iterations) {
  double ms[3] = {};
  const char* variants[3] = {"tuple", "separate", "flat"};
  for (int v = 0; v < 3; ++v) {
    auto t = bench::time_program(allgather_program(tensors, mib, variants[v]), variants[v], {}, iterations);
    if (!t) return fail(t.status().message());
    ms[v] = t->median_iteration_ms;
    std::printf("streamlens allgather %s %d x %d MiB on 2 GPUs: median iteration %.3f ms (%zu iterations)\n",
                variants[v], tensors, mib, ms[v], t->iterations);
  }
  std::printf("allgather %d x %d MiB: tuple %.3f ms, separate %.3f ms, flat %.3f ms; tuple is %.2fx flat speed, "
              "%.2fx faster than separate\n",
              tensors, mib, ms[0], ms[1], ms[2], ms[2] / ms[0], ms[1] / ms[0]);
  return 0;
}

// Tracer overhead on a whole program: wall time per iteration, tracer off/on,
// of the iterations themselves (what the program takes while traced) and of
// the whole run (building the trace afterwards included). Medians of three.
// `one_graph` (tracer_graph): the program runs as one CUDA graph per device,
// as XLA runs a step it put in one command buffer.
int bench_tracer_program(const char* path, int iterations, bool one_graph) {
  auto text = bench::read_text(path);
  if (!text) return fail(text.status().message());
  auto off = bench::wall_per_iteration(*text, false, iterations, 3, one_graph);
  if (!off) return fail(off.status().message());
  auto on = bench::wall_per_iteration(*text, true, iterations, 3, one_graph);
  if (!on) return fail(on.status().message());
  auto pct = [](double a, double b) { return 100.0 * (b - a) / a; };
  std::printf("tracer %s %s: wall per iteration without %.3f ms, with %.3f ms, overhead %.1f%%; "
              "whole run per iteration %.3f -> %.3f ms, %.1f%% with building the trace\n",
              one_graph ? "graph" : "program", path, off->iterations_ms, on->iterations_ms,
              pct(off->iterations_ms, on->iterations_ms), off->run_ms, on->run_ms, pct(off->run_ms, on->run_ms));
  return 0;
}

// As the cuda backend traces: the first pass tags its launches (external ids,
// CUPTI's API records on) and teaches the collector what a launch leaves on
// the stream; later passes register untagged launches, with API records off,
// and are attributed by stream order. SL_CUPTI_TAG_ALL=1 tags every pass.
int bench_tracer(int kernels) {
  void* buf = nullptr;
  CHECK_CUDA(cudaMalloc(&buf, 256));
  cudaStream_t s = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const bool tag_all = cupti::tag_all_launches();
  cupti::ActivityCollector collector;
  uint64_t next_id = 1;
  auto loop = [&](bool traced, bool tagged) -> double {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kernels; ++i) {
      const uint64_t id = next_id++;
      if (traced) collector.register_launch(id, {.instruction = "fill", .correlation = 1, .tagged = tagged});
      cupti::ExternalIdScope scope(id, traced && tagged);
      exec::cuda::launch_fill(buf, 7 /* f32 */, 1, 1.0, s);
    }
    cudaStreamSynchronize(s);
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  };
  loop(false, false);  // warm-up: module load
  std::vector<double> off, on;
  for (int r = 0; r < 5; ++r) off.push_back(loop(false, false));
  if (auto st = cupti::CuptiApi::start(&collector); !st.is_ok()) return fail(st.message());
  auto stream_id = cupti::CuptiApi::stream_id(s);
  if (!stream_id) return fail(stream_id.status().message());
  int device = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  collector.reserve_launches(device, 6 * static_cast<size_t>(kernels));  // as the cuda backend does
  collector.map_stream(static_cast<uint32_t>(device), *stream_id, 0);
  loop(true, true);
  if (!tag_all) (void)cupti::CuptiApi::set_api_records(false);
  for (int r = 0; r < 5; ++r) on.push_back(loop(true, tag_all));
  auto flush = std::chrono::steady_clock::now();
  (void)cupti::CuptiApi::stop();
  double flush_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - flush).count();
  auto t = collector.build_trace();
  int64_t dropped = 0;
  for (const auto& c : t.counters) if (c.name == trace::kCuptiDroppedRecordsCounter) dropped = c.value;
  size_t attributed = 0;
  for (const auto& e : t.events) attributed += e.instruction != 0;
  const char* api = std::getenv("SL_CUPTI_API");
  const char* kinds = std::getenv("SL_CUPTI_KINDS");
  std::printf("tracer %d tiny kernels (SL_CUPTI_API=%s, SL_CUPTI_KINDS=%s, %s): without %.1f us (%.2f us/kernel), with %.1f us (%.2f "
              "us/kernel), overhead %.1f%%, flush %.0f us, records %zu, attributed %zu, dropped %ld\n",
              kernels, api ? api : "both", kinds ? kinds : "all", tag_all ? "every launch tagged" : "first pass tagged, then stream order",
              median(off), median(off) / kernels, median(on), median(on) / kernels,
              100.0 * (median(on) - median(off)) / median(off), flush_us, t.events.size(), attributed,
              static_cast<long>(dropped));
  return 0;
}

int bench_wait(int reps) {
  void* buf = nullptr;
  CHECK_CUDA(cudaMalloc(&buf, 1 << 20));
  cudaStream_t s0 = nullptr, s1 = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  cudaEvent_t ev = nullptr;
  CHECK_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  cupti::ActivityCollector collector;
  if (auto st = cupti::CuptiApi::start(&collector); !st.is_ok()) return fail(st.message());
  // Pairs (a on s0, b on s0) and (a on s0, b on s1 after a wait): ext ids 2i+1, 2i+2.
  uint64_t ext = 0;
  auto tagged = [&](cudaStream_t s, bool cross) {
    ++ext;
    collector.register_launch(ext, {.stream = cross ? 1 : 0, .instruction = cross ? "cross" : "same",
                                    .iteration = static_cast<int32_t>((ext - 1) / 2)});
    cupti::ExternalIdScope scope(ext);
    exec::cuda::launch_fill(buf, 7, 1024, 2.0, s);
  };
  for (int i = 0; i < reps; ++i) {
    const bool cross = i % 2 == 1;
    tagged(s0, cross);
    if (cross) {
      cudaEventRecord(ev, s0);
      cudaStreamWaitEvent(s1, ev, 0);
      tagged(s1, cross);
      cudaEventRecord(ev, s1);  // keep the pairs apart: next pair waits for this one
      cudaStreamWaitEvent(s0, ev, 0);
    } else {
      tagged(s0, cross);
    }
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  (void)cupti::CuptiApi::stop();
  auto t = collector.build_trace();
  std::map<int, std::vector<const trace::Event*>> pairs;
  for (const auto& e : t.events) pairs[e.iteration].push_back(&e);
  std::vector<double> same, cross;
  for (const auto& [i, evs] : pairs) {
    if (evs.size() != 2 || i < 10) continue;  // skip warm-up pairs
    double gap = (evs[1]->start_ns - evs[0]->end_ns) / 1e3;
    (t.instruction_of(*evs[0]) == "cross" ? cross : same).push_back(gap);
  }
  std::printf("wait: GPU gap between dependent kernels: same stream %.2f us, across streams (event record + wait) "
              "%.2f us, cost of one cross-stream wait %.2f us (%zu + %zu pairs)\n",
              median(same), median(cross), median(cross) - median(same), same.size(), cross.size());
  return 0;
}

// Reads a capture file written by libstreamlens_inject.so and summarizes it.
int summarize_capture(const char* path) {
  auto t = cupti::import_capture_file(path);
  if (!t) return fail(t.status().message());
  std::map<std::string, std::pair<int, int64_t>> by_name;
  std::map<std::pair<int, int>, int> tracks;
  for (const auto& e : t->events) {
    auto& [n, ns] = by_name[t->name_of(e)];
    ++n;
    ns += e.duration_ns();
    ++tracks[{e.device, e.stream}];
  }
  std::printf("capture %s: %zu events on %zu (device, stream) tracks, makespan %.3f ms\n", path, t->events.size(),
              tracks.size(), t->makespan_ns() / 1e6);
  for (const auto& [name, v] : by_name) std::printf("  %6d x %-60.60s %10.1f us total\n", v.first, name.c_str(), v.second / 1e3);
  for (const auto& c : t->counters) std::printf("  counter %s = %ld\n", c.name.c_str(), static_cast<long>(c.value));
  return t->events.empty() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: gpu_bench gemm M N K [count] [streams] [iterations] | hlo FILE ITERATIONS [NAME=STREAM...]\n"
                 "       | allgather TENSORS MIB [iterations] | tracer_program FILE [iterations] | tracer N | wait N\n"
                 "       | capture FILE\n");
    return 2;
  }
  std::string mode = argv[1];
  auto arg = [&](int i, long d) { return argc > i ? std::atol(argv[i]) : d; };
  if (mode == "gemm") {
    return bench_gemm(arg(2, 1024), arg(3, 24576), arg(4, 24576), static_cast<int>(arg(5, 1)),
                      static_cast<int>(arg(6, 1)), static_cast<int>(arg(7, 10)));
  }
  if (mode == "hlo") return bench_hlo(argc, argv);
  if (mode == "print_allgather" && argc > 4) {  // the generated program, to check it without a GPU
    std::fputs(allgather_program(static_cast<int>(arg(2, 64)), static_cast<int>(arg(3, 1)), argv[4]).c_str(), stdout);
    return 0;
  }
  if (mode == "allgather") {
    return bench_allgather(static_cast<int>(arg(2, 64)), static_cast<int>(arg(3, 1)), static_cast<int>(arg(4, 10)));
  }
  if (mode == "tracer_program" && argc > 2) return bench_tracer_program(argv[2], static_cast<int>(arg(3, 20)), false);
  if (mode == "tracer_graph" && argc > 2) return bench_tracer_program(argv[2], static_cast<int>(arg(3, 20)), true);
  if (mode == "tracer") return bench_tracer(static_cast<int>(arg(2, 10000)));
  if (mode == "capture" && argc > 2) return summarize_capture(argv[2]);
  if (mode == "wait") return bench_wait(static_cast<int>(arg(2, 2000)));
  std::fprintf(stderr, "gpu_bench: unknown mode %s\n", mode.c_str());
  return 2;
}
