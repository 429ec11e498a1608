#include "core/hlo/module.h"

#include <fmt/format.h>

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

bool Instruction::is_pdl_launch() const {
  auto it = frontend_attributes.find("xla.pdl_launch");
  return it != frontend_attributes.end() && it->second == "true";
}

std::string Module::source_location(const Instruction& instruction) const {
  const StackFrameTables& t = stack_frames;
  const int64_t frame = instruction.metadata.stack_frame_id;
  if (frame >= 1 && frame <= static_cast<int64_t>(t.frames.size())) {
    const int64_t loc = t.frames[static_cast<size_t>(frame - 1)].location_id;
    if (loc >= 1 && loc <= static_cast<int64_t>(t.locations.size())) {
      const StackFrameTables::Location& l = t.locations[static_cast<size_t>(loc - 1)];
      std::string file = l.file_id >= 1 && l.file_id <= static_cast<int64_t>(t.file_names.size())
                             ? t.file_names[static_cast<size_t>(l.file_id - 1)]
                             : "?";
      std::string out = fmt::format("{}:{}", file, l.line);
      if (l.function_id >= 1 && l.function_id <= static_cast<int64_t>(t.function_names.size())) {
        out += fmt::format(" ({})", t.function_names[static_cast<size_t>(l.function_id - 1)]);
      }
      return out;
    }
  }
  if (!instruction.metadata.source_file.empty()) {
    return fmt::format("{}:{}", instruction.metadata.source_file, instruction.metadata.source_line);
  }
  return {};
}

}  // namespace sl::hlo
