#pragma once
// The counter-based bit generators behind rng-bit-generator, as XLA's
// builder library defines them (Salmon et al., "Parallel random numbers: as
// easy as 1, 2, 3", SC 2011): Threefry2x32 with 20 rounds and Philox4x32
// with 10.

#include <array>
#include <cstdint>

namespace sl::exec::cpu {

std::array<uint32_t, 2> threefry2x32(std::array<uint32_t, 2> counter, std::array<uint32_t, 2> key);
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

}  // namespace sl::exec::cpu
