// Writes a streamlens database holding one synthetic run of N events on
// 2 devices x 3 streams (compute 0, compute 1, communication), with waits
// between streams, for the GUI frame-time benchmark (frame_bench.sh).
//
//   streamlens-gui-bench-db OUT.db [EVENTS=1000000]   (OUT.db is replaced)

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/trace/store/trace_store.h"
#include "core/trace/trace.h"

int main(int argc, char** argv) {
  std::string path;
  int64_t n = 1000000;
  CLI::App app{"streamlens-gui-bench-db: a database with one synthetic run for the GUI frame benchmark"};
  app.add_option("out", path, "database to write (OUT.db; replaced if it exists)")->required();
  app.add_option("events", n, "number of events")->check(CLI::Range(int64_t{1}, int64_t{1} << 40))->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::error_code ec;
  std::filesystem::remove(path, ec);

  using sl::trace::EventKind;
  sl::trace::Trace trace;
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> gap(0, 400);
  // Mostly tiny kernels (a few hundred ns) with some long ones, like a real step.
  std::uniform_int_distribution<int> pick(0, 99);
  const int tracks[][2] = {{0, 0}, {0, 1}, {0, 100}, {1, 0}, {1, 1}, {1, 100}};
  const int64_t per_track = n / 6;
  std::vector<uint32_t> names, instructions;
  for (int i = 0; i < 64; ++i) names.push_back(trace.strings.intern(fmt::format("kernel_{}_sm90_tile{}", i, i % 7)));
  for (int i = 0; i < 1000; ++i) instructions.push_back(trace.strings.intern(fmt::format("op.{}", i)));
  trace.events.reserve(static_cast<size_t>(per_track * 6));
  for (const auto& tr : tracks) {
    int64_t t = 0;
    for (int64_t i = 0; i < per_track; ++i) {
      sl::trace::Event e;
      e.device = tr[0];
      e.stream = tr[1];
      e.stream_kind = sl::sched::stream_kind(tr[1]);
      int p = pick(rng);
      int64_t duration = p < 90 ? 200 + p * 10 : p < 99 ? 20000 + p * 100 : 2000000;
      e.kind = tr[1] == 100 ? EventKind::kCollective
                            : (p % 3 == 0 ? EventKind::kGemm : p % 3 == 1 ? EventKind::kElementwise : EventKind::kCopy);
      e.name = names[static_cast<size_t>(p) % names.size()];
      e.instruction = instructions[static_cast<size_t>(i) % instructions.size()];
      e.start_ns = t;
      e.end_ns = t + duration;
      e.bytes = duration * 1000;
      e.flops = e.kind == EventKind::kGemm ? duration * 500000 : 0;
      e.correlation = static_cast<int64_t>(trace.events.size());
      t = e.end_ns + gap(rng);
      trace.events.push_back(e);
    }
  }
  // A wait from stream 0 to stream 1 of the same device every 1000 events.
  for (int64_t i = 0; i + 1000 < per_track; i += 1000) {
    trace.dependencies.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(per_track + i + 1)});
  }
  auto t0 = std::chrono::steady_clock::now();
  auto store = sl::trace::TraceStore::open(path, sl::trace::TraceStore::Mode::kCreateIfMissing);
  if (!store) {
    std::fprintf(stderr, "error: %s\n", store.status().message().c_str());
    return 1;
  }
  sl::trace::RunInfo info;
  info.name = fmt::format("synthetic {} events", trace.events.size());
  info.program_name = "bench";
  info.backend = "sim";
  info.device_model = "h200";
  info.num_devices = 2;
  auto id = (*store)->save_run(info, "", {}, trace);
  if (!id) {
    std::fprintf(stderr, "error: %s\n", id.status().message().c_str());
    return 1;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("wrote run %lld with %zu events to %s in %.1f s\n", static_cast<long long>(*id), trace.events.size(),
              path.c_str(), s);
  std::printf("span_ns %lld\n", static_cast<long long>(trace.makespan_ns()));
  return 0;
}
