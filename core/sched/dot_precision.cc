#include "core/sched/dot_precision.h"

#include <algorithm>
#include <cctype>
#include <string>

#include <nlohmann/json.hpp>

namespace sl::sched {
namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// The rule on upper-cased settings: `precisions` holds the operand
// precisions as written (e.g. "{HIGHEST,DEFAULT}" or one per entry),
// `algorithm` is empty or unset when none is given.
bool allows(const std::string& precisions, const std::string& algorithm) {
  const std::string a = upper(algorithm);
  if (!a.empty() && a != "ALG_UNSET" && a != "UNSET") return a.find("TF32") != std::string::npos;
  return upper(precisions).find("HIGHEST") == std::string::npos;
}

}  // namespace

bool xla_allows_tf32(const hlo::Instruction& gemm) {
  if (gemm.opcode == hlo::Opcode::kCustomCall) {
    const nlohmann::json config = nlohmann::json::parse(gemm.backend_config, nullptr, false);
    if (config.is_discarded() || !config.is_object()) return true;
    const auto g = config.find("gemm_backend_config");
    if (g == config.end() || !g->is_object()) return true;
    const auto p = g->find("precision_config");
    if (p == g->end() || !p->is_object()) return true;
    std::string precisions, algorithm;
    if (const auto o = p->find("operand_precision"); o != p->end() && o->is_array()) {
      for (const auto& v : *o) precisions += (v.is_string() ? v.get<std::string>() : v.dump()) + ",";
    }
    if (const auto al = p->find("algorithm"); al != p->end() && al->is_string()) algorithm = al->get<std::string>();
    // Proto enums may come as numbers: HIGHEST is 2.
    if (precisions.find('2') != std::string::npos) precisions += "HIGHEST";
    return allows(precisions, algorithm);
  }
  const auto p = gemm.attributes.find("operand_precision");
  const auto a = gemm.attributes.find("algorithm");
  return allows(p == gemm.attributes.end() ? "" : p->second, a == gemm.attributes.end() ? "" : a->second);
}

}  // namespace sl::sched
