// End to end on the cpu backend: every small sample parses, verifies, lowers
// and runs; results are finite and deterministic; programs that compute the
// same thing in different schedules give the same numbers.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/exec/cpu/cpu_backend.h"
#include "core/hlo/parser.h"
#include "core/hlo/verifier.h"
#include "core/sched/lowering.h"

namespace sl {
namespace {

namespace fs = std::filesystem;

struct Ran {
  std::unique_ptr<hlo::Module> module;
  std::vector<exec::DeviceResults> results;
};

Result<Ran> run_text_or_file(const std::string& text_or_path, bool is_path) {
  Result<hlo::Module> module = is_path ? hlo::parse_program_file(text_or_path)
                                       : hlo::parse_program(text_or_path, "inline.hlo");
  if (!module) return module.status();
  SL_RETURN_IF_ERROR(hlo::verify_status(*module));
  Ran ran;
  ran.module = std::make_unique<hlo::Module>(std::move(*module));
  SL_ASSIGN_OR_RETURN(sched::LoweredProgram lowered, sched::lower(*ran.module, {}));
  exec::RunOptions options;
  options.collect_results = true;
  SL_ASSIGN_OR_RETURN(exec::RunOutput out, exec::make_cpu_backend()->run(lowered, options));
  ran.results = std::move(out.results);
  return ran;
}

Ran run_file(const std::string& path) {
  Result<Ran> r = run_text_or_file(path, true);
  EXPECT_TRUE(r.is_ok()) << path << ": " << r.status().message();
  return r.is_ok() ? std::move(*r) : Ran{};
}

std::string small_sample(const std::string& name) {
  return std::string(SL_SOURCE_DIR) + "/samples/small/" + name + ".hlo";
}

// Equal per device, output by output, value by value (exactly: the cpu
// backend is deterministic and these programs do the same arithmetic).
void expect_same_results(const std::vector<exec::DeviceResults>& a, const std::vector<exec::DeviceResults>& b,
                         const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t d = 0; d < a.size(); ++d) {
    ASSERT_EQ(a[d].outputs.size(), b[d].outputs.size()) << what << " device " << d;
    for (size_t o = 0; o < a[d].outputs.size(); ++o) {
      const exec::Literal& x = a[d].outputs[o];
      const exec::Literal& y = b[d].outputs[o];
      ASSERT_EQ(x.values.size(), y.values.size()) << what << " device " << d << " output " << o;
      for (size_t i = 0; i < x.values.size(); ++i) {
        ASSERT_EQ(x.values[i], y.values[i]) << what << " device " << d << " output " << o << " element " << i;
      }
    }
  }
}

std::vector<std::string> small_samples() {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(std::string(SL_SOURCE_DIR) + "/samples/small")) {
    if (entry.path().extension() == ".hlo") out.push_back(entry.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class SmallSample : public ::testing::TestWithParam<std::string> {};

TEST_P(SmallSample, RunsOnCpuWithFiniteDeterministicResults) {
  std::string path = small_sample(GetParam());
  Ran first = run_file(path);
  ASSERT_FALSE(first.results.empty()) << path;
  size_t values = 0;
  for (const exec::DeviceResults& d : first.results) {
    ASSERT_FALSE(d.outputs.empty()) << path << " device " << d.device;
    for (const exec::Literal& lit : d.outputs) {
      for (double v : lit.values) {
        ASSERT_TRUE(std::isfinite(v)) << path << " device " << d.device;
        ++values;
      }
    }
  }
  EXPECT_GT(values, 0u);
  Ran second = run_file(path);
  expect_same_results(first.results, second.results, path + " run twice");
}

INSTANTIATE_TEST_SUITE_P(Samples, SmallSample, ::testing::ValuesIn(small_samples()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(SmallSamples, AllElevenAreThere) { EXPECT_EQ(small_samples().size(), 11u); }

// dot(all-gather(x), w) written plainly, with the windowed einsum's parameters
// (same numbers, so --init ramp gives both the same inputs).
constexpr const char* kAllGatherDot = R"(
HloModule allgather_dot, num_partitions=2

ENTRY %main {
  %x = f32[4,3]{1,0} parameter(0)
  %w = f32[3,5]{1,0} parameter(1)
  %x.all = f32[8,3]{1,0} all-gather(%x), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  ROOT %y = f32[8,5]{1,0} dot(%x.all, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

TEST(E2eNumerics, WindowedEinsumEqualsAllGatherThenDot) {
  Ran windowed = run_file(small_sample("windowed_einsum"));
  Result<Ran> plain = run_text_or_file(kAllGatherDot, false);
  ASSERT_TRUE(plain.is_ok()) << plain.status().message();
  ASSERT_EQ(windowed.results.size(), 2u);
  expect_same_results(windowed.results, plain->results, "windowed einsum vs all-gather + dot");
  // Not trivially equal: the result is not all zeros.
  double sum = 0;
  for (double v : plain->results[0].outputs[0].values) sum += std::abs(v);
  EXPECT_GT(sum, 0);
}

TEST(E2eNumerics, TwoGemmsOneStreamEqualsTwoStreams) {
  Ran one = run_file(small_sample("two_gemms_one_stream"));
  Ran two = run_file(small_sample("two_gemms_two_streams"));
  expect_same_results(one.results, two.results, "two GEMMs, one vs two streams");
}

TEST(E2eNumerics, FsdpBucketedEqualsPerLayer) {
  Ran bucketed = run_file(small_sample("fsdp_bucketed_allgather"));
  Ran per_layer = run_file(small_sample("fsdp_per_layer_allgather"));
  expect_same_results(bucketed.results, per_layer.results, "FSDP bucketed vs per-layer all-gather");
}

}  // namespace
}  // namespace sl
