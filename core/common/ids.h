#pragma once
// Strong ids for things that are easy to mix up (STYLE: naming).

#include <compare>
#include <cstdint>
#include <functional>

namespace sl {

template <typename Tag, typename Rep = int32_t>
struct StrongId {
  Rep value{};
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value(v) {}
  constexpr auto operator<=>(const StrongId&) const = default;
};

struct DeviceTag {};
struct RunTag {};
using DeviceId = StrongId<DeviceTag>;   // global id = replica * num_partitions + partition
using RunId = StrongId<RunTag, int64_t>;

}  // namespace sl

template <typename Tag, typename Rep>
struct std::hash<sl::StrongId<Tag, Rep>> {
  size_t operator()(const sl::StrongId<Tag, Rep>& id) const noexcept { return std::hash<Rep>{}(id.value); }
};
