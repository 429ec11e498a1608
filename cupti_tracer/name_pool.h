#pragma once
// Interned names for the tracer's hot paths: a launch or a kernel record
// carries a small id instead of a heap-allocated copy of its name (a launch
// is a few microseconds; a string copy and a hash-map node per launch were a
// measurable share of the tracer's cost on tiny kernels).

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace sl::cupti {

class NamePool {
 public:
  // Id 0 is the empty name. Not thread-safe: the owner locks.
  uint32_t intern(std::string_view name) {
    if (auto it = ids_.find(name); it != ids_.end()) return it->second;
    const auto id = static_cast<uint32_t>(names_.size());
    const std::string& kept = names_.emplace_back(name);  // a deque never moves its elements
    ids_.emplace(kept, id);
    return id;
  }
  const std::string& get(uint32_t id) const { return names_[id]; }
  size_t size() const { return names_.size(); }

 private:
  std::deque<std::string> names_{std::string()};
  std::unordered_map<std::string_view, uint32_t> ids_{{std::string_view(), 0}};
};

}  // namespace sl::cupti
