// Verifier rules for async pairs: explicit async-start/done with calls=, XLA's
// sugared start shapes, done shapes and pairing.

#include <gtest/gtest.h>

#include "tests/hlo/verify_test_util.h"

namespace sl::hlo {
namespace {

using testing::expect_error;
using testing::expect_valid;

constexpr std::string_view kHeader = R"(HloModule m, num_partitions=2

%sum {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum_root = f32[] add(%a, %b)
}

%gemm {
  %x = f32[4,8] parameter(0)
  %y = f32[8,2] parameter(1)
  ROOT %d = f32[4,2] dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

%rs_body {
  %in = f32[4,8] parameter(0)
  ROOT %rs = f32[4,4] reduce-scatter(%in), dimensions={1}, replica_groups={{0,1}}, channel_id=9, use_global_device_ids=true, to_apply=%sum
}
)";

std::string program(std::string_view entry) { return std::string(kHeader) + std::string(entry); }

TEST(VerifyAsync, ValidForms) {
  expect_valid(program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %y = f32[8,2] parameter(1)
  %q = bf16[2] parameter(2)
  %s = ((f32[4,8], f32[8,2]), f32[4,2], s32[]) async-start(%x, %y), calls=%gemm, backend_config={"operation_queue_id":"1"}
  %u = ((f32[4,8], f32[8,2]), f32[4,2], s32[]) async-update(%s)
  %g = f32[4,2] async-done(%u)
  %ags = (f32[4,8], f32[8,8]) all-gather-start(%x), dimensions={0}, replica_groups={{0,1}}, channel_id=1, use_global_device_ids=true
  %agd = f32[8,8] all-gather-done(%ags)
  %agts = ((f32[4,8], bf16[2]), (f32[8,8], bf16[4])) all-gather-start(%x, %q), dimensions={0}, replica_groups={{0,1}}, channel_id=2, use_global_device_ids=true
  %agtd = (f32[8,8], bf16[4]) all-gather-done(%agts)
  %ars = f32[4,8] all-reduce-start(%x), replica_groups={{0,1}}, channel_id=3, use_global_device_ids=true, to_apply=%sum
  %ard = f32[4,8] all-reduce-done(%ars)
  %cps = (f32[4,8], f32[4,8], u32[], u32[]) collective-permute-start(%x), channel_id=4, source_target_pairs={{0,1},{1,0}}
  %cpd = f32[4,8] collective-permute-done(%cps)
  %rss = ((f32[4,8]), f32[4,4]) reduce-scatter-start(%x), dimensions={1}, replica_groups={{0,1}}, channel_id=5, use_global_device_ids=true, to_apply=%sum
  %rsd = f32[4,4] reduce-scatter-done(%rss)
  %as = ((f32[4,8]), f32[4,4]) async-start(%x), calls=%rs_body
  %ad = f32[4,4] async-done(%as)
  ROOT %t = (f32[4,2], f32[8,8], (f32[8,8], bf16[4]), f32[4,8], f32[4,8], f32[4,4], f32[4,4]) tuple(%g, %agd, %agtd, %ard, %cpd, %rsd, %ad)
}
)"));
}

TEST(VerifyAsync, StartShapeMustBeATuple) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %y = f32[8,2] parameter(1)
  %s = f32[4,2] async-start(%x, %y), calls=%gemm
  ROOT %g = f32[4,2] async-done(%s)
}
)");
  expect_error(text, "%s =", "async-start shape must be ((operands...), output, ...), but is f32[4,2]");
}

TEST(VerifyAsync, StartOperandsElement) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %y = f32[8,2] parameter(1)
  %s = ((f32[4,8]), f32[4,2]) async-start(%x, %y), calls=%gemm
  ROOT %g = f32[4,2] async-done(%s)
}
)");
  expect_error(text, "%s =", "async-start shape element 0 is (f32[4,8]), but the operands are (f32[4,8], f32[8,2])");
}

TEST(VerifyAsync, StartOutputMatchesCalledRoot) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %y = f32[8,2] parameter(1)
  %s = ((f32[4,8], f32[8,2]), f32[4,4]) async-start(%x, %y), calls=%gemm
  ROOT %g = f32[4,4] async-done(%s)
}
)");
  expect_error(text, "%s =", "async-start output shape f32[4,4] does not match the root of called computation %gemm, f32[4,2]");
}

TEST(VerifyAsync, StartArgumentsMatchCalledParameters) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %s = ((f32[4,8]), f32[4,2]) async-start(%x), calls=%gemm
  ROOT %g = f32[4,2] async-done(%s)
}
)");
  expect_error(text, "%s =", "async-start passes 1 argument to called computation %gemm, which takes 2 parameters");
}

TEST(VerifyAsync, StartArgumentShape) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %y = f32[8,4] parameter(1)
  %s = ((f32[4,8], f32[8,4]), f32[4,2]) async-start(%x, %y), calls=%gemm
  ROOT %g = f32[4,2] async-done(%s)
}
)");
  expect_error(text, "%s =", "async-start argument 1 has shape f32[8,4], but parameter 1 of called computation %gemm is f32[8,2]");
}

TEST(VerifyAsync, AllGatherStartShape) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %ags = (f32[4,8], f32[4,8]) all-gather-start(%x), dimensions={0}, replica_groups={{0,1}}, channel_id=1, use_global_device_ids=true
  ROOT %agd = f32[4,8] all-gather-done(%ags)
}
)");
  expect_error(text, "%ags =", "all-gather-start result shape f32[4,8] does not match the inferred shape f32[8,8]");
}

TEST(VerifyAsync, AllGatherStartNotAPair) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %ags = f32[8,8] all-gather-start(%x), dimensions={0}, replica_groups={{0,1}}, channel_id=1, use_global_device_ids=true
  ROOT %agd = f32[8,8] all-gather-done(%ags)
}
)");
  expect_error(text, "%ags =", "all-gather-start shape must be (operand(s), result(s)), but is f32[8,8]");
}

TEST(VerifyAsync, AllGatherStartChecksGroups) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %ags = (f32[4,8], f32[8,8]) all-gather-start(%x), dimensions={0}, replica_groups={{0,1,2}}, channel_id=1, use_global_device_ids=true
  ROOT %agd = f32[8,8] all-gather-done(%ags)
}
)");
  expect_error(text, "%ags =", "all-gather-start replica_groups name device 2, but the module has 2 devices");
}

TEST(VerifyAsync, AllReduceStartShape) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %ars = (f32[4,8], f32[4,8]) all-reduce-start(%x), replica_groups={{0,1}}, channel_id=3, use_global_device_ids=true, to_apply=%sum
  ROOT %ard = (f32[4,8], f32[4,8]) all-reduce-done(%ars)
}
)");
  expect_error(text, "%ars =", "all-reduce-start result shape (f32[4,8], f32[4,8]) does not match the inferred shape f32[4,8]");
}

TEST(VerifyAsync, CollectivePermuteStartContext) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %cps = (f32[4,8], f32[4,8], u32[2]) collective-permute-start(%x), channel_id=4, source_target_pairs={{0,1},{1,0}}
  ROOT %cpd = f32[4,8] collective-permute-done(%cps)
}
)");
  expect_error(text, "%cps =", "collective-permute-start context element 2 must be a scalar such as u32[], but is u32[2]");
}

TEST(VerifyAsync, ReduceScatterStartShape) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %rss = (f32[4,8], f32[4,4]) reduce-scatter-start(%x), dimensions={1}, replica_groups={{0,1}}, channel_id=5, use_global_device_ids=true, to_apply=%sum
  ROOT %rsd = f32[4,4] reduce-scatter-done(%rss)
}
)");
  expect_error(text, "%rss =", "reduce-scatter-start shape element 0 is f32[4,8], but the operands are (f32[4,8])");
}

TEST(VerifyAsync, DoneShape) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %cps = (f32[4,8], f32[4,8], u32[], u32[]) collective-permute-start(%x), channel_id=4, source_target_pairs={{0,1},{1,0}}
  ROOT %cpd = f32[8,8] collective-permute-done(%cps)
}
)");
  expect_error(text, "%cpd =", "collective-permute-done shape f32[8,8] does not match the result of %cps, f32[4,8]");
}

TEST(VerifyAsync, DoneOperandMustBeAStart) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  ROOT %agd = f32[8,8] all-gather-done(%x)
}
)");
  expect_error(text, "%agd =", "all-gather-done operand %x must be an async start, but is parameter");
}

TEST(VerifyAsync, DoneMustMatchItsStart) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %cps = (f32[4,8], f32[4,8], u32[], u32[]) collective-permute-start(%x), channel_id=4, source_target_pairs={{0,1},{1,0}}
  ROOT %agd = f32[4,8] all-gather-done(%cps)
}
)");
  expect_error(text, "%agd =", "all-gather-done operand %cps is a collective-permute-start, not the matching start");
}

TEST(VerifyAsync, StartWithoutDone) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %ags = (f32[4,8], f32[8,8]) all-gather-start(%x), dimensions={0}, replica_groups={{0,1}}, channel_id=1, use_global_device_ids=true
  ROOT %y = f32[4,8] copy(%x)
}
)");
  expect_error(text, "%ags =", "%ags has no matching all-gather-done");
}

TEST(VerifyAsync, TwoDonesForOneStart) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %y = f32[8,2] parameter(1)
  %s = ((f32[4,8], f32[8,2]), f32[4,2]) async-start(%x, %y), calls=%gemm
  %g1 = f32[4,2] async-done(%s)
  %g2 = f32[4,2] async-done(%s)
  ROOT %t = (f32[4,2], f32[4,2]) tuple(%g1, %g2)
}
)");
  expect_error(text, "%g2 =", "%g2 is a second done for %s (the first is %g1)");
}

TEST(VerifyAsync, UpdateShape) {
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %y = f32[8,2] parameter(1)
  %s = ((f32[4,8], f32[8,2]), f32[4,2]) async-start(%x, %y), calls=%gemm
  %u = ((f32[4,8], f32[8,2]), f32[4,4]) async-update(%s)
  ROOT %g = f32[4,2] async-done(%u)
}
)");
  expect_error(text, "%u =", "async-update shape ((f32[4,8], f32[8,2]), f32[4,4]) must equal the shape of its start %s");
}

TEST(VerifyAsync, CopyStartShape) {
  expect_valid(program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %cs = (f32[4,8], f32[4,8], u32[]) copy-start(%x)
  ROOT %cd = f32[4,8] copy-done(%cs)
}
)"));
  std::string text = program(R"(
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %cs = ((f32[4,8]), f32[4,8]) copy-start(%x)
  ROOT %cd = f32[4,8] copy-done(%cs)
}
)");
  expect_error(text, "%cs =", "copy-start shape must be (f32[4,8], f32[4,8], u32[]), but is ((f32[4,8]), f32[4,8])");
}

}  // namespace
}  // namespace sl::hlo
