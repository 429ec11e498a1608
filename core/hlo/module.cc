#include "core/hlo/module.h"

#include <charconv>

namespace sl::hlo {

std::optional<int64_t> Instruction::requested_stream() const {
  if (operation_queue_id) return operation_queue_id;
  auto it = frontend_attributes.find("_xla_stream_annotation");
  if (it == frontend_attributes.end()) return std::nullopt;
  int64_t value = 0;
  const std::string& text = it->second;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

int Computation::find(std::string_view instruction_name) const {
  for (size_t i = 0; i < instructions.size(); ++i) {
    if (instructions[i].name == instruction_name) return static_cast<int>(i);
  }
  return -1;
}

int Module::find_computation(std::string_view computation_name) const {
  for (size_t i = 0; i < computations.size(); ++i) {
    if (computations[i].name == computation_name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace sl::hlo
