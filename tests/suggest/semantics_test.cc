// Suggest changes streams, never semantics. Two checks:
//  - every buffer hazard of the lowered program stays ordered: for each pair
//    of thunks of a device touching overlapping bytes, one of them a write,
//    the earlier happens before the later (stream order, or an event wait);
//  - every candidate computes the same results as the original on the cpu
//    backend. (That backend interprets the module itself, so this guards the
//    overrides' plumbing; the hazard check is what tests the waits.)

#include <gtest/gtest.h>

#include <map>

#include "core/exec/cpu/cpu_backend.h"
#include "core/sched/lowering.h"
#include "sim/suggest/search.h"
#include "sim/suggest/sim_evaluator.h"
#include "tests/suggest/suggest_test_util.h"

namespace sl::sim {
namespace {

using sched::Thunk;
using sched::ThunkKind;
using suggest_test::h200;
using suggest_test::load;

struct Access {
  sched::BufferSlice slice;
  bool write = false;
};

std::vector<Access> accesses(const Thunk& t) {
  std::vector<Access> out;
  for (const sched::BufferSlice& s : t.operands) out.push_back({s, false});
  for (const sched::BufferSlice& s : t.results) out.push_back({s, true});
  if (t.workspace.size > 0) out.push_back({t.workspace, true});
  std::erase_if(out, [](const Access& a) { return a.slice.offset < 0 || a.slice.size <= 0; });
  return out;
}

bool overlap(const sched::BufferSlice& a, const sched::BufferSlice& b) {
  return a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

// Vector clocks over the device's streams: clock[t][s] = how many thunks of
// stream s are known complete when thunk t starts (itself included on its own stream).
std::string first_unordered_hazard(const sched::DeviceProgram& program) {
  std::map<int, size_t> stream_index;
  for (const Thunk& t : program.thunks) stream_index.emplace(t.stream, stream_index.size());
  const size_t streams = stream_index.size();
  std::vector<std::vector<int64_t>> clock(program.thunks.size(), std::vector<int64_t>(streams, 0));
  std::vector<std::vector<int64_t>> stream_clock(streams, std::vector<int64_t>(streams, 0));
  std::map<int, std::vector<int64_t>> recorded;  // event -> clock at its latest record
  std::vector<int64_t> position(program.thunks.size());
  for (size_t i = 0; i < program.thunks.size(); ++i) {
    const Thunk& t = program.thunks[i];
    const size_t s = stream_index[t.stream];
    std::vector<int64_t>& c = stream_clock[s];
    if (t.kind == ThunkKind::kWaitEvent) {
      auto it = recorded.find(t.event);
      if (it != recorded.end()) {
        for (size_t k = 0; k < streams; ++k) c[k] = std::max(c[k], it->second[k]);
      }
    }
    position[i] = ++c[s];
    clock[i] = c;
    if (t.kind == ThunkKind::kRecordEvent) recorded[t.event] = c;
  }
  auto happens_before = [&](size_t a, size_t b) {
    return clock[b][stream_index[program.thunks[a].stream]] >= position[a];
  };
  for (size_t b = 0; b < program.thunks.size(); ++b) {
    const std::vector<Access> later = accesses(program.thunks[b]);
    for (size_t a = 0; a < b; ++a) {
      for (const Access& x : accesses(program.thunks[a])) {
        for (const Access& y : later) {
          if ((x.write || y.write) && overlap(x.slice, y.slice) && !happens_before(a, b)) {
            return std::string(program.thunks[a].attributed_name) + " (stream " +
                   std::to_string(program.thunks[a].stream) + ") and " +
                   std::string(program.thunks[b].attributed_name) + " (stream " +
                   std::to_string(program.thunks[b].stream) + ")";
          }
        }
      }
    }
  }
  return "";
}

TEST(SuggestSemantics, EveryAssignmentOfEverySmallSampleKeepsItsHazardsOrdered) {
  for (const std::string& name : suggest_test::sample_names("small")) {
    hlo::Module module = load(name);
    Result<SearchSpace> space = build_space(module, {});
    ASSERT_TRUE(space.is_ok()) << name;
    space->comm_sms = {32};  // no say in ordering
    std::vector<Assignment> all = enumerate(*space, 100000);
    // Large spaces: every k-th assignment, still hundreds.
    const size_t step = std::max<size_t>(1, all.size() / 400);
    size_t checked = 0;
    for (size_t i = 0; i < all.size(); i += step, ++checked) {
      sched::LowerOptions options;
      options.overrides = overrides_for(*space, all[i]);
      Result<sched::LoweredProgram> lowered = sched::lower(module, options);
      ASSERT_TRUE(lowered.is_ok()) << name << ": " << lowered.status().message();
      for (const sched::DeviceProgram& device : lowered->devices) {
        const std::string hazard = first_unordered_hazard(device);
        ASSERT_EQ(hazard, "") << name << " assignment " << i << ", device " << device.device;
      }
    }
    EXPECT_GT(checked, 0u) << name;
  }
}

// The checker itself: the same thunks without their waits must be caught.
TEST(SuggestSemantics, HazardCheckCatchesAMissingWait) {
  hlo::Module module = load("small/windowed_einsum.hlo");
  Result<sched::LoweredProgram> lowered = sched::lower(module, {});
  ASSERT_TRUE(lowered.is_ok());
  sched::DeviceProgram device = lowered->devices.front();
  ASSERT_EQ(first_unordered_hazard(device), "");
  std::erase_if(device.thunks, [](const Thunk& t) { return t.kind == ThunkKind::kWaitEvent; });
  EXPECT_NE(first_unordered_hazard(device), "");
}

std::vector<exec::DeviceResults> cpu_results(const hlo::Module& module, const sched::StreamOverrides& overrides) {
  sched::LowerOptions options;
  options.overrides = overrides;
  Result<sched::LoweredProgram> lowered = sched::lower(module, options);
  EXPECT_TRUE(lowered.is_ok()) << lowered.status().message();
  if (!lowered) return {};
  exec::RunOptions run;
  run.collect_results = true;
  Result<exec::RunOutput> out = exec::make_cpu_backend()->run(*lowered, run);
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  return out.is_ok() ? out->results : std::vector<exec::DeviceResults>{};
}

TEST(SuggestSemantics, EveryCandidateComputesWhatTheOriginalDoesOnCpu) {
  for (const std::string& name : suggest_test::sample_names("small")) {
    hlo::Module module = load(name);
    Result<SearchSpace> space = build_space(module, {});
    ASSERT_TRUE(space.is_ok()) << name;
    SearchOptions options;
    options.top = 20;
    options.budget = 300;
    Result<SearchResult> found = search(*space, make_sim_evaluator(module, h200(), {}), options);
    ASSERT_TRUE(found.is_ok()) << name << ": " << found.status().message();
    const std::vector<exec::DeviceResults> original = cpu_results(module, {});
    ASSERT_FALSE(original.empty()) << name;
    for (const Candidate& c : found->candidates) {
      const std::vector<exec::DeviceResults> got = cpu_results(module, c.overrides);
      ASSERT_EQ(got.size(), original.size()) << name;
      for (size_t d = 0; d < got.size(); ++d) {
        ASSERT_EQ(got[d].outputs.size(), original[d].outputs.size()) << name;
        for (size_t o = 0; o < got[d].outputs.size(); ++o) {
          EXPECT_EQ(got[d].outputs[o].values, original[d].outputs[o].values) << name << " device " << d;
        }
      }
    }
  }
}

}  // namespace
}  // namespace sl::sim

namespace sl::sim {
namespace {

// The new 4-step windowed einsum computes dot(all-gather(x), w), as its comment says.
TEST(SuggestSamples, WindowedEinsumFourStepsEqualsAllGatherThenDot) {
  constexpr const char* kPlain = R"(
HloModule allgather_dot_4, num_partitions=4

ENTRY %main {
  %x = f32[2,3]{1,0} parameter(0)
  %w = f32[3,5]{1,0} parameter(1)
  %x.all = f32[8,3]{1,0} all-gather(%x), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  ROOT %y = f32[8,5]{1,0} dot(%x.all, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  Result<hlo::Module> plain = hlo::parse_program(kPlain, "plain.hlo");
  ASSERT_TRUE(plain.is_ok()) << plain.status().message();
  const std::vector<exec::DeviceResults> want = cpu_results(*plain, {});
  const std::vector<exec::DeviceResults> got = cpu_results(load("small/windowed_einsum_4steps.hlo"), {});
  ASSERT_EQ(want.size(), 4u);
  ASSERT_EQ(got.size(), want.size());
  for (size_t d = 0; d < got.size(); ++d) {
    ASSERT_EQ(got[d].outputs.size(), 1u);
    EXPECT_EQ(got[d].outputs[0].values, want[d].outputs[0].values) << "device " << d;
  }
}

}  // namespace
}  // namespace sl::sim
