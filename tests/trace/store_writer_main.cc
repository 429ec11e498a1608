// Helper for store_kill_test: begins a run in the database given as argv[1]
// and appends batches of events forever (until it is killed). Prints the run
// id on stdout once the run exists.

#include <cstdio>
#include <string>

#include "core/trace/store/trace_store.h"

int main(int argc, char** argv) {
  using namespace sl::trace;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DB\n", argv[0]);
    return 2;
  }
  auto store = TraceStore::open(argv[1]);
  if (!store) {
    std::fprintf(stderr, "%s\n", store.status().message().c_str());
    return 1;
  }
  RunInfo info;
  info.name = "killed mid-capture";
  info.backend = "cuda";
  info.device_model = "h200";
  auto run = (*store)->begin_run(info, "HloModule victim", {});
  if (!run) {
    std::fprintf(stderr, "%s\n", run.status().message().c_str());
    return 1;
  }
  std::printf("%lld\n", static_cast<long long>(*run));
  std::fflush(stdout);
  Trace batch;
  uint32_t name = batch.strings.intern("gemm_kernel");
  uint32_t instruction = batch.strings.intern("g0");
  constexpr int kBatch = 1000;
  batch.events.resize(kBatch);
  for (int64_t b = 0;; ++b) {
    for (int i = 0; i < kBatch; ++i) {
      Event& e = batch.events[static_cast<size_t>(i)];
      e.device = i % 2;
      e.stream = i % 3;
      e.kind = EventKind::kGemm;
      e.name = name;
      e.instruction = instruction;
      e.start_ns = (b * kBatch + i) * 100;
      e.end_ns = e.start_ns + 90;
      e.correlation = b * kBatch + i;
    }
    auto status = (*store)->append(*run, batch, 0, kBatch);
    if (!status.is_ok()) {
      std::fprintf(stderr, "%s\n", status.message().c_str());
      return 1;
    }
    std::vector<Dependency> deps = {{static_cast<uint32_t>(b * kBatch), static_cast<uint32_t>(b * kBatch + 1)}};
    status = (*store)->append_dependencies(*run, deps);
    if (!status.is_ok()) {
      std::fprintf(stderr, "%s\n", status.message().c_str());
      return 1;
    }
  }
}
