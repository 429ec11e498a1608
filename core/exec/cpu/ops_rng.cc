// rng-bit-generator as XLA's RngBitGeneratorExpander lowers it (the
// ThreeFry2x32 and Philox4x32 bit generators of its builder library
// `prng.cc`), element for element: the same counters, the same split of the
// shape into halves for ThreeFry, the same round-robin of Philox's four
// words, the same updated state.

#include <fmt/format.h>

#include <array>

#include "core/exec/cpu/element_bits.h"
#include "core/exec/cpu/ops.h"
#include "core/exec/cpu/rng_bits.h"

namespace sl::exec::cpu {
namespace {

using Words2 = std::array<uint32_t, 2>;
using Words4 = std::array<uint32_t, 4>;

uint32_t lo32(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t hi32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
uint64_t join64(uint32_t lo, uint32_t hi) { return uint64_t{lo} | (uint64_t{hi} << 32); }
uint32_t rotate_left(uint32_t v, int distance) { return (v << distance) | (v >> (32 - distance)); }

}  // namespace

// Threefry2x32 with 20 rounds (Salmon et al., SC 2011): five blocks of four
// rounds, a key injection after each.
std::array<uint32_t, 2> threefry2x32(std::array<uint32_t, 2> x, std::array<uint32_t, 2> key) {
  static constexpr std::array<int, 8> kRotations = {13, 15, 26, 6, 17, 29, 16, 24};
  const std::array<uint32_t, 3> ks = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  x[0] += ks[0];
  x[1] += ks[1];
  for (uint32_t block = 0; block < 5; ++block) {
    for (int r = 0; r < 4; ++r) {
      x[0] += x[1];
      x[1] = rotate_left(x[1], kRotations[(block % 2) * 4 + r]);
      x[1] ^= x[0];
    }
    x[0] += ks[(block + 1) % 3];
    x[1] += ks[(block + 2) % 3] + block + 1;
  }
  return x;
}

// Philox4x32 with 10 rounds; the key is raised after every round.
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> x, std::array<uint32_t, 2> key) {
  constexpr uint64_t kMulA = 0xD2511F53u, kMulB = 0xCD9E8D57u;
  constexpr uint32_t kRaiseA = 0x9E3779B9u, kRaiseB = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = kMulA * x[0], p1 = kMulB * x[2];
    x = {hi32(p1) ^ x[1] ^ key[0], lo32(p1), hi32(p0) ^ x[3] ^ key[1], lo32(p0)};
    key = {key[0] + kRaiseA, key[1] + kRaiseB};
  }
  return x;
}

namespace {

// ThreeFry's SplitShapeIntoHalves: the first even dimension, else the
// largest (the first of equals); -1 for a scalar.
int64_t split_dimension(const std::vector<int64_t>& dims) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] % 2 == 0) return static_cast<int64_t>(i);
  }
  int64_t best = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (best < 0 || dims[i] > dims[static_cast<size_t>(best)]) best = static_cast<int64_t>(i);
  }
  return best;
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// 32 bits and narrower: each ThreeFry block gives two words, x0 and x1,
// which land side by side along the split dimension (x0 at even indices).
// The counter of a block is the state's plus the block's row-major index in
// the half shape. Returns the number of blocks (the state advances by it).
int64_t threefry_narrow(uint64_t key, uint64_t counter, const std::vector<int64_t>& dims, std::vector<uint64_t>& out) {
  const Words2 k = {lo32(key), hi32(key)};
  if (dims.empty()) {
    out[0] = threefry2x32({lo32(counter), hi32(counter)}, k)[0];
    return 1;
  }
  const auto split = static_cast<size_t>(split_dimension(dims));
  std::vector<int64_t> half = dims;
  half[split] = (dims[split] + 1) / 2;
  const std::vector<int64_t> strides = row_major_strides(dims), half_strides = row_major_strides(half);
  int64_t blocks = 1;
  for (int64_t d : half) blocks *= d;
  for (int64_t b = 0; b < blocks; ++b) {
    const uint64_t c = counter + static_cast<uint64_t>(b);
    const Words2 x = threefry2x32({lo32(c), hi32(c)}, k);
    // The block's position in the full shape, with the split index doubled.
    int64_t base = 0, rest = b, h = 0;
    for (size_t i = 0; i < half.size(); ++i) {
      const int64_t index = rest / half_strides[i];
      rest %= half_strides[i];
      if (i == split) {
        h = index;
      } else {
        base += index * strides[i];
      }
    }
    for (int64_t which = 0; which < 2; ++which) {
      const int64_t at = 2 * h + which;
      if (at < dims[split]) out[static_cast<size_t>(base + at * strides[split])] = x[static_cast<size_t>(which)];
    }
  }
  return blocks;
}

// 64 bits: one block per element, counter = state + row-major index.
int64_t threefry_wide(uint64_t key, uint64_t counter, std::vector<uint64_t>& out) {
  const Words2 k = {lo32(key), hi32(key)};
  for (size_t i = 0; i < out.size(); ++i) {
    const uint64_t c = counter + i;
    const Words2 x = threefry2x32({lo32(c), hi32(c)}, k);
    out[i] = join64(x[0], x[1]);
  }
  return static_cast<int64_t>(out.size());
}

struct U128 {
  uint64_t lo = 0, hi = 0;
  U128 plus(uint64_t n) const {
    const uint64_t sum = lo + n;
    return {sum, sum < lo ? hi + 1 : hi};
  }
};

// Philox: block j runs on counter + j; its four words are elements 4j..4j+3
// (32 bits and narrower) or pairs of words are elements 2j, 2j+1 (64 bits).
// Returns the number of blocks.
int64_t philox_bits(uint64_t key, U128 counter, bool wide, std::vector<uint64_t>& out) {
  const Words2 k = {lo32(key), hi32(key)};
  const auto n = static_cast<int64_t>(out.size());
  const int64_t per_block = wide ? 2 : 4;
  const int64_t blocks = (n + per_block - 1) / per_block;
  for (int64_t j = 0; j < blocks; ++j) {
    const U128 c = counter.plus(static_cast<uint64_t>(j));
    const Words4 x = philox4x32({lo32(c.lo), hi32(c.lo), lo32(c.hi), hi32(c.hi)}, k);
    const std::array<uint64_t, 4> values =
        wide ? std::array<uint64_t, 4>{join64(x[0], x[1]), join64(x[2], x[3]), 0, 0}
             : std::array<uint64_t, 4>{x[0], x[1], x[2], x[3]};
    for (int64_t i = 0; i < per_block && j * per_block + i < n; ++i) {
      out[static_cast<size_t>(j * per_block + i)] = values[static_cast<size_t>(i)];
    }
  }
  return blocks;
}

Literal literal_of(const hlo::Shape& shape, const std::vector<uint64_t>& bits) {
  Literal out{shape, {}};
  out.values.reserve(bits.size());
  for (uint64_t b : bits) out.values.push_back(decode_bits(b, shape.type));
  return out;
}

}  // namespace

Result<std::vector<Literal>> eval_rng_bit_generator(const hlo::Instruction& instruction, const Literal& state,
                                                    const std::vector<hlo::Shape>& result_shapes) {
  if (result_shapes.size() != 2) return invalid_input("the result must be a (state, bits) tuple");
  const hlo::Shape& bits_shape = result_shapes[1];
  if (state.shape.type != hlo::PrimitiveType::kU64 || state.shape.rank() != 1 || state.values.size() < 2) {
    return invalid_input(fmt::format("the state must be u64[n] with n >= 2, got {}", hlo::to_string(state.shape)));
  }
  const int width = hlo::primitive_type_bits(bits_shape.type);
  if (bits_shape.type == hlo::PrimitiveType::kPred || hlo::is_complex(bits_shape.type) ||
      (width != 8 && width != 16 && width != 32 && width != 64)) {
    return invalid_input(fmt::format("XLA's bit generators do not produce {}",
                                     hlo::primitive_type_name(bits_shape.type)));
  }
  std::vector<uint64_t> words;
  for (double v : state.values) words.push_back(integer_bits(v));
  const uint64_t key = words[0];
  std::vector<uint64_t> bits(static_cast<size_t>(bits_shape.element_count()));
  std::vector<uint64_t> new_state = {key};
  const std::string& algorithm = instruction.rng_algorithm;
  if (algorithm == "rng_three_fry") {
    if (words.size() != 2) return invalid_input("the ThreeFry state must be u64[2] (key, counter)");
    const int64_t blocks = width == 64 ? threefry_wide(key, words[1], bits)
                                       : threefry_narrow(key, words[1], bits_shape.dims, bits);
    new_state.push_back(words[1] + static_cast<uint64_t>(blocks));
  } else if (algorithm == "rng_philox" || algorithm.empty() || algorithm == "rng_default") {
    // rng_default is Philox on GPU (the GPU compiler's expander default).
    if (words.size() > 3) return invalid_input("the Philox state must be u64[2] or u64[3]");
    // u64[2] is (key, counter) with the key as the counter's high word
    // (XLA reverses the state); u64[3] is (key, counter low, counter high).
    const U128 counter = words.size() == 3 ? U128{words[1], words[2]} : U128{words[1], words[0]};
    const U128 next = counter.plus(static_cast<uint64_t>(philox_bits(key, counter, width == 64, bits)));
    new_state.push_back(next.lo);
    if (words.size() == 3) new_state.push_back(next.hi);
  } else {
    return invalid_input(fmt::format("unknown algorithm={}", algorithm));
  }
  for (uint64_t& b : bits) b &= low_mask(width);  // narrower kinds keep the low bits, as XLA's convert does
  return std::vector<Literal>{literal_of(result_shapes[0], new_state), literal_of(bits_shape, bits)};
}

}  // namespace sl::exec::cpu
