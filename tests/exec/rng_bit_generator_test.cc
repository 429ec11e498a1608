// rng-bit-generator: the two bit generators against the known-answer vectors
// of Random123 (the reference implementation of Salmon et al.), and the
// layout XLA's RngBitGeneratorExpander gives their words and state, worked
// out by hand from xla/hlo/builder/lib/prng.cc.

#include <gtest/gtest.h>

#include "core/exec/cpu/rng_bits.h"
#include "tests/exec/cpu_test_util.h"

namespace sl::exec {
namespace {

using cpu::philox4x32;
using cpu::threefry2x32;
using testing::run_hlo;
using testing::shape_of;
using testing::values_of;

using V = std::vector<double>;
using W2 = std::array<uint32_t, 2>;
using W4 = std::array<uint32_t, 4>;

TEST(RngBits, ThreefryKnownAnswers) {
  EXPECT_EQ(threefry2x32({0, 0}, {0, 0}), (W2{0x6b200159u, 0x99ba4efeu}));
  EXPECT_EQ(threefry2x32({0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}), (W2{0x1cb996fcu, 0xbb002be7u}));
  EXPECT_EQ(threefry2x32({0x243f6a88u, 0x85a308d3u}, {0x13198a2eu, 0x03707344u}), (W2{0xc4923a9cu, 0x483df7a0u}));
}

TEST(RngBits, PhiloxKnownAnswers) {
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}), (W4{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
            (W4{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
            (W4{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

std::string rng_module(const std::string& bits, const std::string& algorithm, const std::string& state = "{0, 0}",
                       const std::string& state_shape = "u64[2]") {
  return "HloModule t\n\nENTRY main {\n  s = " + state_shape + " constant(" + state + ")\n  ROOT r = (" +
         state_shape + ", " + bits + ") rng-bit-generator(s), algorithm=" + algorithm + "\n}\n";
}

double d(uint32_t v) { return static_cast<double>(v); }

// ThreeFry: state (key, counter). u32[2,2] splits dimension 0 (the first
// even one) into halves [1,2]: block b runs on counter + b and puts x0 at
// [0,b], x1 at [1,b]; the counter advances by the 2 blocks.
TEST(RngBitGenerator, ThreefrySplitsTheShapeIntoHalves) {
  auto ran = run_hlo(rng_module("u32[2,2]", "rng_three_fry"));
  const W2 b0 = threefry2x32({0, 0}, {0, 0}), b1 = threefry2x32({1, 0}, {0, 0});
  EXPECT_EQ(values_of(ran, 0, 1), (V{d(b0[0]), d(b1[0]), d(b0[1]), d(b1[1])}));
  EXPECT_EQ(values_of(ran, 0, 0), (V{0, 2}));
  EXPECT_EQ(d(b0[0]), d(0x6b200159u));
  // No even dimension: the largest (3) splits into 2 blocks, the 4th word cut.
  auto odd = run_hlo(rng_module("u32[3]", "rng_three_fry", "{5, 7}"));
  const W2 c0 = threefry2x32({7, 0}, {5, 0}), c1 = threefry2x32({8, 0}, {5, 0});
  EXPECT_EQ(values_of(odd, 0, 1), (V{d(c0[0]), d(c0[1]), d(c1[0])}));
  EXPECT_EQ(values_of(odd, 0, 0), (V{5, 9}));
  // Narrower kinds keep the low bits of the u32 words.
  auto narrow = run_hlo(rng_module("u16[2]", "rng_three_fry"));
  EXPECT_EQ(values_of(narrow, 0, 1), (V{d(0x6b200159u & 0xffffu), d(0x99ba4efeu & 0xffffu)}));
  EXPECT_EQ(shape_of(narrow, 0, 1), "u16[2]");
}

// 64 bits: one block per element, x0 the low word; a scalar is one block.
TEST(RngBitGenerator, ThreefryWideAndScalar) {
  auto wide = run_hlo(rng_module("u64[1]", "rng_three_fry"));
  EXPECT_EQ(values_of(wide, 0, 1), (V{static_cast<double>(0x99ba4efe6b200159ull)}));
  EXPECT_EQ(values_of(wide, 0, 0), (V{0, 1}));
  auto scalar = run_hlo(rng_module("u32[]", "rng_three_fry"));
  EXPECT_EQ(values_of(scalar, 0, 1), (V{d(0x6b200159u)}));
  EXPECT_EQ(values_of(scalar, 0, 0), (V{0, 1}));
}

// Philox with a u64[2] state: the counter is (low = state[1], high = key),
// four words per block in order, and the new state is (key, low + blocks).
TEST(RngBitGenerator, PhiloxWordsRoundRobinAndState) {
  auto ran = run_hlo(rng_module("u32[5]", "rng_philox"));
  const W4 b1 = philox4x32({1, 0, 0, 0}, {0, 0});
  EXPECT_EQ(values_of(ran, 0, 1), (V{d(0x6627e8d5u), d(0xe169c58du), d(0xbc57ac4cu), d(0x9b00dbd8u), d(b1[0])}));
  EXPECT_EQ(values_of(ran, 0, 0), (V{0, 2}));
  // rng_default is Philox (the GPU compiler's default).
  EXPECT_EQ(values_of(run_hlo(rng_module("u32[5]", "rng_default")), 0, 1), values_of(ran, 0, 1));
  // u64[3]: (key, counter low, counter high); the key stays out of the counter.
  auto three = run_hlo(rng_module("u32[2,2]", "rng_philox", "{3, 1, 2}", "u64[3]"));
  const W4 c = philox4x32({1, 0, 2, 0}, {3, 0});
  EXPECT_EQ(values_of(three, 0, 1), (V{d(c[0]), d(c[1]), d(c[2]), d(c[3])}));
  EXPECT_EQ(values_of(three, 0, 0), (V{3, 2, 2}));
  // 64 bits: words (0,1) and (2,3) of a block make two elements.
  auto wide = run_hlo(rng_module("u64[2]", "rng_philox"));
  EXPECT_EQ(values_of(wide, 0, 1), (V{static_cast<double>(0xe169c58d6627e8d5ull),
                                      static_cast<double>(0x9b00dbd8bc57ac4cull)}));
  EXPECT_EQ(values_of(wide, 0, 0), (V{0, 1}));
}

TEST(RngBitGenerator, RefusesWhatXlaDoesNotGenerate) {
  auto bad = run_hlo(rng_module("pred[2]", "rng_philox"));
  EXPECT_FALSE(bad.status.is_ok());
  auto state = run_hlo(rng_module("u32[2]", "rng_three_fry", "{0, 0, 0}", "u64[3]"));
  ASSERT_FALSE(state.status.is_ok());
  EXPECT_NE(state.status.message().find("ThreeFry state must be u64[2]"), std::string::npos) << state.status.message();
}

}  // namespace
}  // namespace sl::exec
