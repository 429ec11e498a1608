// The fusion source generator without a compiler: which loop each output
// gets, and the error naming what it cannot generate (the fallback's reason).

#include <gtest/gtest.h>

#include "core/exec/codegen/fusion_codegen.h"
#include "tests/codegen/fusion_test_modules.h"
#include "core/hlo/parser.h"

namespace sl::exec::codegen {
namespace {

Result<GeneratedKernel> generate(const std::string& text) {
  auto module = hlo::parse_program(text, "test.hlo");
  if (!module.is_ok()) return module.status();
  static std::vector<hlo::Module> keep;  // the kernel refers to nothing, but keep modules alive anyway
  keep.push_back(std::move(*module));
  for (const hlo::Computation& c : keep.back().computations) {
    for (const hlo::Instruction& inst : c.instructions) {
      if (inst.opcode == hlo::Opcode::kFusion) return generate_fusion_kernel(keep.back(), inst);
    }
  }
  return runtime_error("no fusion");
}

constexpr const char* kReductions = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  p = f32[64,128] parameter(0)
  z = f32[] constant(0)
  rows = f32[64] reduce(p, z), dimensions={1}, to_apply=add
  cols = f32[128] reduce(p, z), dimensions={0}, to_apply=add
  e = f32[64,128] exponential(p)
  ROOT t = (f32[64], f32[128], f32[64,128]) tuple(rows, cols, e)
}
ENTRY e {
  x = f32[64,128] parameter(0)
  ROOT f = (f32[64], f32[128], f32[64,128]) fusion(x), kind=kInput, calls=fused
})";

TEST(FusionCodegen, TransposesOfTheMinorDimensionsGoThroughSharedMemoryTiles) {
  auto k = generate(test_modules::kTransposes);
  ASSERT_TRUE(k.is_ok()) << k.status().message();
  ASSERT_EQ(k->loops.size(), 3u);
  EXPECT_EQ(k->loops[0].loop, LoopKind::kTransposeTile);
  EXPECT_EQ(k->loops[2].loop, LoopKind::kTransposeTile);  // a bitcast of one keeps its index
  EXPECT_EQ(k->loops[0].threads, 2 * 2 * 4 * 256);  // 2 batches x 2 x 4 tiles of 32x32 (48 x 100)
  EXPECT_EQ(k->loops[1].loop, LoopKind::kElementwise);  // the minor dimension stays: already coalesced
  EXPECT_NE(k->source.find("__shared__ float tile0[32][33]"), std::string::npos) << k->source;
}

TEST(FusionCodegen, RowColumnAndElementwiseLoops) {
  auto k = generate(kReductions);
  ASSERT_TRUE(k.is_ok()) << k.status().message();
  EXPECT_EQ(k->name, "f");
  EXPECT_EQ(k->inputs, 1);
  EXPECT_EQ(k->outputs, 3);
  ASSERT_EQ(k->loops.size(), 3u);
  EXPECT_EQ(k->loops[0].loop, LoopKind::kRowReduce);
  EXPECT_EQ(k->loops[1].loop, LoopKind::kColumnReduce);
  EXPECT_EQ(k->loops[2].loop, LoopKind::kElementwise);
  EXPECT_EQ(k->loops[2].threads, 64 * 128);
  EXPECT_NE(k->source.find("extern \"C\" __global__"), std::string::npos);
  EXPECT_NE(k->source.find("expf("), std::string::npos);
  EXPECT_GE(k->blocks(132), 1);
  EXPECT_LE(k->blocks(132), 132 * 16);
}

std::string negate_fusion(int64_t n) {
  const std::string shape = "f32[" + std::to_string(n) + "]";
  return "HloModule m\nfused {\n  p = " + shape + " parameter(0)\n  ROOT r = " + shape +
         " negate(p)\n}\nENTRY e {\n  x = " + shape + " parameter(0)\n  ROOT f = " + shape +
         " fusion(x), kind=kLoop, calls=fused\n}\n";
}

// Large elementwise loops run 4 elements a thread apart per iteration (loads
// in flight, as XLA's unrolled loop emitter), then the remainder one by one.
TEST(FusionCodegen, LargeElementwiseLoopsAreUnrolled) {
  auto big = generate(negate_fusion(int64_t{1} << 22));
  ASSERT_TRUE(big.is_ok()) << big.status().message();
  EXPECT_NE(big->source.find("i0 += 4 * nthreads"), std::string::npos) << big->source;
  EXPECT_NE(big->source.find("#pragma unroll"), std::string::npos) << big->source;
  EXPECT_NE(big->source.find("for (IX i = i0; i < (IX)4194304; i += nthreads)"), std::string::npos) << big->source;
  auto small = generate(negate_fusion(4096));
  ASSERT_TRUE(small.is_ok()) << small.status().message();
  EXPECT_EQ(small->source.find("#pragma unroll"), std::string::npos) << small->source;
}

// An output laid out column-major ({0,1}): threads walk its memory order, so
// the store and the load of the alike-laid-out parameter are consecutive.
TEST(FusionCodegen, ElementwiseLoopsWalkTheOutputsMemoryOrder) {
  auto k = generate(R"(HloModule m
fused {
  p = bf16[64,128]{0,1} parameter(0)
  s = bf16[64] parameter(1)
  b = bf16[64,128]{0,1} broadcast(s), dimensions={0}
  ROOT m = bf16[64,128]{0,1} multiply(p, b)
}
ENTRY e {
  x = bf16[64,128]{0,1} parameter(0)
  y = bf16[64] parameter(1)
  ROOT f = bf16[64,128]{0,1} fusion(x, y), kind=kLoop, calls=fused
})");
  ASSERT_TRUE(k.is_ok()) << k.status().message();
  EXPECT_NE(k->source.find("for (IX q = tid; q < (IX)8192; q += nthreads)"), std::string::npos) << k->source;
  EXPECT_NE(k->source.find("const IX i = (((q / (IX)1) % (IX)64) * (IX)128 + ((q / (IX)64) % (IX)128));"),
            std::string::npos)
      << k->source;
  EXPECT_NE(k->source.find("o0[q] = "), std::string::npos) << k->source;
}

TEST(FusionCodegen, UnsupportedOpIsNamed) {
  auto k = generate(R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
fused {
  p = f32[16] parameter(0)
  ROOT s = f32[16] sort(p), dimensions={0}, to_apply=cmp
}
ENTRY e {
  x = f32[16] parameter(0)
  ROOT f = f32[16] fusion(x), kind=kLoop, calls=fused
})");
  ASSERT_FALSE(k.is_ok());
  EXPECT_NE(k.status().message().find("sort 's'"), std::string::npos) << k.status().message();
}

TEST(FusionCodegen, CustomFusionsAreNotGenerated) {
  EXPECT_TRUE(generates_kind("kLoop"));
  EXPECT_TRUE(generates_kind("kInput"));
  EXPECT_FALSE(generates_kind("kCustom"));
  EXPECT_FALSE(generates_kind("kOutput"));
}

TEST(FusionCodegen, Identifiers) {
  EXPECT_EQ(identifier("fused_computation.14"), "fused_computation_14");
  EXPECT_EQ(identifier("1x"), "k_1x");
}

}  // namespace
}  // namespace sl::exec::codegen
