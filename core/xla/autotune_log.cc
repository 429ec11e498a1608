#include "core/xla/autotune_log.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <filesystem>

#include "core/hlo/opcode.h"
#include "core/hlo/shape.h"
#include "core/sched/gemm.h"
#include "core/xla/dump_file.h"
#include "core/xla/instruction_match.h"

namespace sl::xla {
namespace {

// A log of a large module is a few MiB; past this it is no autotuning log.
constexpr uintmax_t kMaxLogBytes = 256ull << 20;
// Text protos nest a few levels (profile, config, backend config, tiles).
constexpr int kMaxDepth = 64;

// A text-proto field: a scalar (`name: value`) or a message (`name { ... }`).
struct Field {
  std::string name;
  std::string value;  // scalars: the string unescaped, or the number/enum as written
  std::vector<Field> fields;
};

class Reader {
 public:
  Reader(std::string_view text, std::string_view file) : text_(text), file_(file) {}

  Result<std::vector<Field>> message(int depth, bool top) {
    if (depth > kMaxDepth) return error("nested deeper than any autotuning log");
    std::vector<Field> out;
    for (;;) {
      skip_space();
      if (at_end()) {
        if (top) return out;
        return error("the file ends inside a message");
      }
      if (peek() == '}' || peek() == '>') {
        if (top) return error("'}' with no message open");
        ++pos_;
        return out;
      }
      Field f;
      if (!ident(f.name)) return error("expected a field name");
      skip_space();
      const bool colon = !at_end() && peek() == ':';
      if (colon) ++pos_, skip_space();
      if (!at_end() && (peek() == '{' || peek() == '<')) {
        ++pos_;
        auto inner = message(depth + 1, false);
        if (!inner) return inner.status();
        f.fields = std::move(*inner);
      } else if (!colon) {
        return error(fmt::format("expected ':' or '{{' after {}", f.name));
      } else if (auto s = scalar(f.value); !s.is_ok()) {
        return s;
      }
      out.push_back(std::move(f));
      skip_space();
      if (!at_end() && (peek() == ',' || peek() == ';')) ++pos_;
    }
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }

  void skip_space() {
    while (!at_end()) {
      if (peek() == '#') {
        while (!at_end() && peek() != '\n') ++pos_;
      } else if (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r') {
        ++pos_;
      } else {
        return;
      }
    }
  }

  bool ident(std::string& out) {
    const size_t start = pos_;
    while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' || peek() == '.' ||
                         (pos_ > start && (peek() == '-' || peek() == '+')))) {
      ++pos_;
    }
    out.assign(text_.substr(start, pos_ - start));
    return !out.empty();
  }

  // A number, an enum value, or one or more adjacent quoted strings.
  Status scalar(std::string& out) {
    if (at_end()) return error("the file ends before a value");
    if (peek() != '"' && peek() != '\'') {
      if (!ident(out)) return error("expected a value");
      return {};
    }
    while (!at_end() && (peek() == '"' || peek() == '\'')) {
      if (auto s = quoted(out); !s.is_ok()) return s;
      skip_space();
    }
    return {};
  }

  Status quoted(std::string& out) {
    const char quote = text_[pos_++];
    while (!at_end() && peek() != quote) {
      char c = text_[pos_++];
      if (c == '\n') return error("a line break inside a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (at_end()) break;
      c = text_[pos_++];
      switch (c) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case 'x': {
          int v = 0, n = 0;
          while (n < 2 && !at_end() && std::isxdigit(static_cast<unsigned char>(peek()))) {
            const char h = static_cast<char>(std::tolower(static_cast<unsigned char>(text_[pos_++])));
            v = v * 16 + (h <= '9' ? h - '0' : h - 'a' + 10), ++n;
          }
          out.push_back(static_cast<char>(v));
          break;
        }
        default:
          if (c >= '0' && c <= '7') {
            int v = c - '0', n = 1;
            while (n < 3 && !at_end() && peek() >= '0' && peek() <= '7') v = v * 8 + (text_[pos_++] - '0'), ++n;
            out.push_back(static_cast<char>(v));
          } else {
            out.push_back(c);  // \" \' \\ and the rest stand for themselves
          }
      }
    }
    if (at_end()) return error("the file ends inside a string");
    ++pos_;
    return {};
  }

  Status error(const std::string& what) const {
    int64_t line = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) line += text_[i] == '\n';
    return invalid_input(fmt::format("{}:{}: {} (not an XLA autotuning log?)", file_, line, what));
  }

  std::string_view text_, file_;
  size_t pos_ = 0;
};

const Field* child(const Field& f, std::string_view name) {
  for (const Field& c : f.fields) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

int64_t number(const Field* f) {
  if (f == nullptr) return 0;
  try {
    return std::stoll(f->value);
  } catch (...) {
    return 0;
  }
}

// "%name = shape ..." -> name; "" when the text does not start so.
std::string name_of(std::string_view hlo_text) {
  if (hlo_text.empty() || hlo_text[0] != '%') return {};
  const size_t eq = hlo_text.find(" = ");
  return eq == std::string_view::npos ? std::string{} : std::string(hlo_text.substr(1, eq - 1));
}

// What XLA's autotuner tells apart: the work (opcode, shapes, a fusion's
// computation), how it is emitted, and a library call's GEMM configuration
// (its dimensions, strides, epilogue).
std::string autotuning_key(const Fingerprint& f, const hlo::Instruction& instruction) {
  std::string key = f.work + "\n" + f.emitter;
  if (instruction.custom_call_target.empty()) return key;
  const std::string& config = instruction.backend_config;
  const size_t at = config.find("\"gemm_backend_config\"");
  if (at == std::string::npos) return key;
  // The configuration object, to its matching brace.
  size_t end = config.find('{', at);
  for (int depth = 0; end < config.size(); ++end) {
    depth += config[end] == '{' ? 1 : config[end] == '}' ? -1 : 0;
    if (depth == 0) break;
  }
  return key + "\n" + config.substr(at, end == std::string::npos ? end : end + 1 - at);
}

// A cuBLAS call's GEMM without what the autotuner chose for it: its target,
// its result's first element and operand shapes, and its GEMM configuration
// less the algorithm and workspace (`c`: the computation that holds it).
std::string gemm_key(const hlo::Computation& c, const hlo::Instruction& call) {
  const hlo::Shape& result =
      call.shape.is_tuple() && !call.shape.elements.empty() ? call.shape.elements[0] : call.shape;
  std::string key = call.custom_call_target + " " + hlo::to_string_with_layout(result) + "(";
  for (int o : call.operands) {
    key += hlo::to_string_with_layout(c.instructions.at(static_cast<size_t>(o)).shape) + ",";
  }
  std::string config = call.backend_config;
  for (const char* chosen : {"\"selected_algorithm\":\"", "\"autotune_workspace_size\":\""}) {
    const size_t at = config.find(chosen);
    if (at == std::string::npos) continue;
    const size_t end = config.find('"', at + std::strlen(chosen));
    if (end == std::string::npos) continue;
    config.erase(at, end + 1 - at);
    // And one comma beside it, so that the rest reads the same either way.
    if (at < config.size() && config[at] == ',') {
      config.erase(at, 1);
    } else if (at > 0 && config[at - 1] == ',') {
      config.erase(at - 1, 1);
    }
  }
  return key + ")" + config;
}

bool is_cublas_call(const hlo::Instruction& i) { return i.custom_call_target.starts_with("__cublas"); }

}  // namespace

Result<std::vector<AutotunedInstruction>> parse_autotune_log(std::string_view text, std::string_view file_name) {
  Reader reader(text, file_name);
  auto top = reader.message(0, true);
  if (!top) return top.status();
  std::vector<AutotunedInstruction> out;
  for (const Field& profile : *top) {
    if (profile.name != "instruction_profiles") continue;
    AutotunedInstruction entry;
    if (const Field* t = child(profile, "hlo_text")) entry.hlo_text = t->value;
    entry.name = name_of(entry.hlo_text);
    for (const Field& c : profile.fields) {
      if (c.name != "config_profiles") continue;
      const Field* run_time = child(c, "run_time");
      if (run_time == nullptr) continue;  // a candidate that failed to compile or run
      const int64_t ns = number(child(*run_time, "seconds")) * 1'000'000'000 + number(child(*run_time, "nanos"));
      if (ns <= 0) continue;
      ++entry.candidates;
      if (entry.best_ns == 0 || ns < entry.best_ns) {
        entry.best_ns = ns;
        const Field* config = child(c, "config");
        const Field* backend = config != nullptr ? child(*config, "backend") : nullptr;
        entry.best_backend = backend != nullptr ? backend->value : std::string{};
      }
    }
    if (!entry.name.empty() && entry.candidates > 0) out.push_back(std::move(entry));
  }
  return out;
}

Result<std::vector<AutotunedInstruction>> read_autotune_log(const std::string& path) {
  auto text = read_dump_file(path, kMaxLogBytes, "an autotuning log");
  if (!text) return text.status();
  return parse_autotune_log(*text, path);
}

std::unordered_map<std::string, AutotunedTime> autotuned_times_of(const std::vector<AutotunedInstruction>& log,
                                                                  const hlo::Module& module) {
  std::unordered_map<std::string, const hlo::Instruction*> by_name;
  for (const hlo::Computation& c : module.computations) {
    for (const hlo::Instruction& i : c.instructions) by_name.emplace(i.name, &i);
  }
  std::unordered_map<std::string, AutotunedTime> out;
  for (const AutotunedInstruction& e : log) {
    auto it = by_name.find(e.name);
    if (it == by_name.end()) continue;
    // "%name = " then the result shape as the module prints it.
    const std::string shape = hlo::to_string_with_layout(it->second->shape);
    const size_t at = e.name.size() + 4;
    if (e.hlo_text.compare(at, shape.size(), shape) != 0) continue;
    out[e.name] = AutotunedTime{e.best_ns, e.best_backend};
  }
  for (const auto& [name, instruction] : by_name) {
    const std::string& original = instruction->metadata.deduplicated_name;
    if (original.empty() || out.count(name) != 0) continue;
    if (auto o = out.find(original); o != out.end()) {
      AutotunedTime time = o->second;  // copied: the insertion below may rehash
      out[name] = std::move(time);
    }
  }
  // XLA's autotuner caches its results by the instruction's canonical text,
  // so of several thunks that compute the same GEMM the log names the first
  // it tuned only (ahg's notriton module: custom-call.11 is custom-call.9's
  // product again, and has no entry). The others take that entry.
  std::vector<std::pair<std::string, std::string>> keys;  // thunk -> its autotuning key
  for (const Fingerprint& f : instruction_fingerprints(module)) {
    if (auto it = by_name.find(f.name); it != by_name.end()) keys.emplace_back(f.name, autotuning_key(f, *it->second));
  }
  std::unordered_map<std::string, AutotunedTime> by_key;
  for (const auto& [name, key] : keys) {
    if (auto o = out.find(name); o != out.end()) by_key.emplace(key, o->second);
  }
  for (const auto& [name, key] : keys) {
    if (auto k = by_key.find(key); k != by_key.end()) out.try_emplace(name, k->second);
  }
  // A cuBLAS call inside a dynamic-slice fusion is not tuned on its own
  // (XLA runs it with its default algorithm), and the fusion's thunk runs
  // nothing else: it takes the entry of a call that computes the same GEMM
  // (set 21's xat: four such fusions of 256x512x512, measured 3.3 us each,
  // were modelled at 19 us).
  std::unordered_map<std::string, AutotunedTime> by_gemm;
  std::vector<std::pair<std::string, std::string>> fused_calls;  // fusion -> its call's GEMM
  for (const hlo::Computation& c : module.computations) {
    for (const hlo::Instruction& i : c.instructions) {
      if (auto o = out.find(i.name); o != out.end() && is_cublas_call(i)) {
        by_gemm.emplace(gemm_key(c, i), o->second);
      }
      if (const hlo::Instruction* call = sched::library_call_in_fusion(module, i)) {
        const hlo::Computation& fused = module.computations.at(static_cast<size_t>(i.called[0]));
        fused_calls.emplace_back(i.name, gemm_key(fused, *call));
      }
    }
  }
  for (const auto& [fusion, key] : fused_calls) {
    if (auto g = by_gemm.find(key); g != by_gemm.end()) out.try_emplace(fusion, g->second);
  }
  return out;
}

std::string autotune_log_path_for(const std::string& module_path) {
  const std::filesystem::path candidate = std::filesystem::path(module_path).parent_path() / "autotune_logs.txt";
  std::error_code ec;
  return std::filesystem::is_regular_file(candidate, ec) ? candidate.string() : std::string{};
}

}  // namespace sl::xla
