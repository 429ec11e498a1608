// libFuzzer target: XLA's thunk dumps (`*.thunk_sequence*.txt`), the text
// `link`, `import --xla-dump` and `run --kernel-times` read beside a module.
// The input is a dump; it is parsed, planned (no module: loops without a trip
// count become repeated trips) and then linked against a capture made from
// its own plan, two steps long, so mutations reach the step linker with
// plans no real dump has (empty blocks, edges to nowhere, deep nesting).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/trace/trace.h"
#include "core/xla/launch_plan.h"
#include "core/xla/step_linker.h"
#include "core/xla/thunk_sequence.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// What CUPTI would report for a planned launch: a name the linker classifies
// as the launch's kind.
void add_captured(sl::trace::Trace& trace, const sl::xla::PlannedLaunch& l, int64_t at_ns) {
  using sl::trace::EventKind;
  using sl::xla::LaunchKind;
  sl::trace::Event e;
  e.kind = EventKind::kOther;
  std::string_view name = l.kernel;
  switch (l.kind) {
    case LaunchKind::kKernel: break;
    case LaunchKind::kGemm: name = "nvjet_sm90_tst_128x128_64x6_2x1_v_bz_coopA_NTN"; e.kind = EventKind::kGemm; break;
    case LaunchKind::kCopy: name = "memcpy DtoD"; e.kind = EventKind::kCopy; break;
    case LaunchKind::kMemset: name = "memset"; e.kind = EventKind::kMemset; break;
    case LaunchKind::kCollective: name = "ncclDevKernel_AllGather_RING_LL"; e.kind = EventKind::kCollective; break;
    case LaunchKind::kDnn: name = "cudnn_infer_volta_scudnn_128x64_relu"; break;
  }
  e.name = trace.strings.intern(name);
  e.start_ns = at_ns;
  e.end_ns = at_ns + 1000;
  e.correlation = static_cast<int64_t>(trace.events.size()) + 1;
  trace.events.push_back(e);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sl::Result<sl::xla::ThunkSequence> thunks = sl::xla::parse_thunk_sequence(text, "fuzz.thunk_sequence.txt");
  if (!thunks) {
    sl::fuzz::check_error(thunks.status());
    return 0;
  }
  // A small cap: a dump of a few kilobytes can name loops of any trip count.
  constexpr size_t kMaxLaunches = 1 << 14;
  const sl::xla::LaunchPlan plan = sl::xla::plan_from_thunks(*thunks, nullptr, kMaxLaunches);
  if (plan.launches.size() > kMaxLaunches) std::abort();
  for (const sl::xla::PlannedLaunch& l : plan.launches) {
    for (int64_t dep : l.graph_deps) {
      if (dep < 0 || static_cast<size_t>(dep) >= plan.launches.size()) std::abort();
    }
  }
  for (const sl::xla::RepeatedTrip& r : plan.repeated_trips) {
    if (r.first > r.end || r.end > plan.launches.size()) std::abort();
  }

  // Two steps of the plan, every (size % 5 + 2)-th launch missing from the
  // second, as a capture that dropped records.
  sl::trace::Trace trace;
  int64_t at = 0;
  const size_t skip_every = size % 5 + 2;
  for (int step = 0; step < 2; ++step) {
    for (size_t i = 0; i < plan.launches.size(); ++i) {
      if (step == 1 && i % skip_every == 0) continue;
      add_captured(trace, plan.launches[i], at);
      at += 2000;
    }
  }
  const size_t events = trace.events.size();
  const sl::xla::LinkSummary summary = sl::xla::link_steps(trace, plan);
  if (trace.events.size() != events) std::abort();
  if (summary.events_linked > summary.events_in_steps ||
      summary.events_in_steps > static_cast<int64_t>(events) ||
      summary.work_ns_linked > summary.work_ns_in_steps) {
    std::abort();
  }
  for (const sl::xla::StepSpan& s : summary.steps) {
    if (s.end_ns < s.start_ns) std::abort();
  }
  for (const sl::trace::Event& e : trace.events) {
    if (e.iteration < -1 || e.iteration > static_cast<int32_t>(summary.steps.size())) std::abort();
  }
  return 0;
}
