#include "core/xla/instruction_match.h"

#include <deque>
#include <map>
#include <set>

#include "core/hlo/opcode.h"

namespace sl::xla {
namespace {

using hlo::Opcode;

std::string shapes_of(const hlo::Computation& c, const hlo::Instruction& inst) {
  std::string out = hlo::to_string(inst.shape) + "(";
  for (size_t o = 0; o < inst.operands.size(); ++o) {
    out += (o ? "," : "") + hlo::to_string(c.instructions.at(static_cast<size_t>(inst.operands[o])).shape);
  }
  return out + ")";
}

// A fused computation op by op: opcode, shapes, and the typed attributes
// that change the work (dimensions, slices).
std::string fused_text(const hlo::Module& m, const hlo::Computation& c, int depth) {
  std::string out = "{";
  for (const hlo::Instruction& inst : c.instructions) {
    out += std::string(hlo::opcode_name(inst.opcode)) + " " + shapes_of(c, inst);
    for (int64_t d : inst.dimensions) out += " " + std::to_string(d);
    for (const hlo::SliceDim& s : inst.slice) out += " " + std::to_string(s.start) + ":" + std::to_string(s.limit);
    if (inst.opcode == Opcode::kFusion && !inst.called.empty() && depth < 4) {
      out += fused_text(m, m.computations.at(static_cast<size_t>(inst.called[0])), depth + 1);
    }
    out += ";";
  }
  return out + "}";
}

Fingerprint fingerprint_of(const hlo::Module& m, const hlo::Computation& c, const hlo::Instruction& inst) {
  Fingerprint f{inst.name, std::string(hlo::opcode_name(inst.opcode)) + " " + shapes_of(c, inst), ""};
  if (!inst.custom_call_target.empty()) f.work += " " + inst.custom_call_target;
  if (inst.opcode == Opcode::kFusion && !inst.called.empty()) {
    f.work += fused_text(m, m.computations.at(static_cast<size_t>(inst.called[0])), 0);
    const std::string key = "\"kind\":\"";  // fusion_backend_config's kind (compact JSON)
    const size_t at = inst.backend_config.find(key);
    const size_t end = at == std::string::npos ? at : inst.backend_config.find('"', at + key.size());
    f.emitter = inst.fusion_kind;
    if (end != std::string::npos) f.emitter += " " + inst.backend_config.substr(at + key.size(), end - at - key.size());
  }
  return f;
}

// Opcodes whose called computations run as thunks of their own.
bool runs_callees(Opcode op) {
  return op == Opcode::kWhile || op == Opcode::kConditional || op == Opcode::kCall || op == Opcode::kAsyncStart;
}

}  // namespace

std::vector<Fingerprint> instruction_fingerprints(const hlo::Module& module) {
  std::vector<Fingerprint> out;
  if (module.entry < 0) return out;
  std::set<int> seen{module.entry};
  std::deque<int> todo{module.entry};
  while (!todo.empty()) {
    const hlo::Computation& c = module.computations.at(static_cast<size_t>(todo.front()));
    todo.pop_front();
    for (const hlo::Instruction& inst : c.instructions) {
      out.push_back(fingerprint_of(module, c, inst));
      if (!runs_callees(inst.opcode)) continue;
      for (int callee : inst.called) {
        if (seen.insert(callee).second) todo.push_back(callee);
      }
    }
  }
  return out;
}

std::unordered_map<std::string, std::string> match_by_content(const std::vector<Fingerprint>& target,
                                                              const std::vector<Fingerprint>& source) {
  std::unordered_map<std::string, std::string> out;
  std::vector<bool> taken(source.size(), false);
  // One round: each target instruction still alone takes the first source
  // instruction left whose key is equal to its own.
  auto round = [&](auto key) {
    std::map<std::string, std::deque<size_t>> left;
    for (size_t s = 0; s < source.size(); ++s) {
      if (!taken[s]) left[key(source[s])].push_back(s);
    }
    for (const Fingerprint& t : target) {
      if (out.count(t.name) > 0) continue;
      auto it = left.find(key(t));
      if (it == left.end() || it->second.empty()) continue;
      taken[it->second.front()] = true;
      out[t.name] = source[it->second.front()].name;
      it->second.pop_front();
    }
  };
  round([](const Fingerprint& f) { return f.name + "\n" + f.work + "\n" + f.emitter; });
  round([](const Fingerprint& f) { return f.work + "\n" + f.emitter; });
  round([](const Fingerprint& f) { return f.work; });
  for (const Fingerprint& t : target) out.try_emplace(t.name, "");
  return out;
}

}  // namespace sl::xla
