#include "core/sched/gemm.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "core/sched/dot_precision.h"

namespace sl::sched {
namespace {

using hlo::Opcode;

// backend_config lists hold numbers or numeric strings ("1").
std::vector<int64_t> int_list(const nlohmann::json& value) {
  std::vector<int64_t> out;
  if (!value.is_array()) return out;
  for (const auto& v : value) {
    if (v.is_number_integer()) {
      out.push_back(v.get<int64_t>());
    } else if (v.is_string()) {
      try {
        out.push_back(std::stoll(v.get<std::string>()));
      } catch (...) {
      }
    }
  }
  return out;
}

// The dot_dimension_numbers of a cuBLAS custom-call, when backend_config has them.
bool dims_from_backend_config(const std::string& config, hlo::DotDims* dims) {
  if (config.empty()) return false;
  nlohmann::json json = nlohmann::json::parse(config, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return false;
  const nlohmann::json* gemm = &json;
  if (json.contains("gemm_backend_config")) gemm = &json["gemm_backend_config"];
  if (!gemm->is_object() || !gemm->contains("dot_dimension_numbers")) return false;
  const nlohmann::json& numbers = (*gemm)["dot_dimension_numbers"];
  if (!numbers.is_object()) return false;
  auto list = [&](const char* key) {
    return numbers.contains(key) ? int_list(numbers[key]) : std::vector<int64_t>{};
  };
  dims->lhs_contracting = list("lhs_contracting_dimensions");
  dims->rhs_contracting = list("rhs_contracting_dimensions");
  dims->lhs_batch = list("lhs_batch_dimensions");
  dims->rhs_batch = list("rhs_batch_dimensions");
  return !dims->lhs_contracting.empty() || !dims->rhs_contracting.empty();
}

// [batch..., m, k] x [batch..., k, n].
hlo::DotDims assumed_dims(int64_t lhs_rank, int64_t rhs_rank) {
  hlo::DotDims dims;
  if (lhs_rank >= 1) dims.lhs_contracting = {lhs_rank - 1};
  if (rhs_rank >= 2) dims.rhs_contracting = {rhs_rank - 2};
  else if (rhs_rank == 1) dims.rhs_contracting = {0};
  for (int64_t d = 0; d + 2 < std::min(lhs_rank, rhs_rank); ++d) {
    dims.lhs_batch.push_back(d);
    dims.rhs_batch.push_back(d);
  }
  return dims;
}

bool contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

int64_t product(const hlo::Shape& shape, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d >= 0 && d < shape.rank()) p *= shape.dims[static_cast<size_t>(d)];
  }
  return p;
}

// Product of the dims that are neither batch nor contracting.
int64_t free_product(const hlo::Shape& shape, const std::vector<int64_t>& batch,
                     const std::vector<int64_t>& contracting) {
  int64_t p = 1;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (!contains(batch, d) && !contains(contracting, d)) p *= shape.dims[static_cast<size_t>(d)];
  }
  return p;
}

}  // namespace

bool is_gemm(const hlo::Instruction& instruction) {
  Opcode op = instruction.async_wrapped.value_or(instruction.opcode);
  if (op == Opcode::kDot) return true;
  return op == Opcode::kCustomCall && instruction.custom_call_target.rfind("__cublas$", 0) == 0;
}

const hlo::Instruction* library_call_in_fusion(const hlo::Module& module, const hlo::Instruction& fusion) {
  if (fusion.opcode != Opcode::kFusion || fusion.fusion_kind != "kCustom" || fusion.called.empty()) return nullptr;
  const int c = fusion.called[0];
  if (c < 0 || static_cast<size_t>(c) >= module.computations.size()) return nullptr;
  const hlo::Instruction* found = nullptr;
  for (const hlo::Instruction& i : module.computations[static_cast<size_t>(c)].instructions) {
    if (i.opcode != Opcode::kCustomCall || !is_gemm(i)) continue;
    if (found != nullptr) return nullptr;  // not one call: XLA's custom fusions hold one
    found = &i;
  }
  return found;
}

GemmDims gemm_dims(const hlo::Computation& computation, const hlo::Instruction& gemm) {
  GemmDims out;
  if (gemm.operands.size() < 2) return out;
  const hlo::Shape& lhs = computation.instructions[static_cast<size_t>(gemm.operands[0])].shape;
  const hlo::Shape& rhs = computation.instructions[static_cast<size_t>(gemm.operands[1])].shape;
  if (!lhs.is_array() || !rhs.is_array()) return out;

  hlo::DotDims dims = gemm.dot;
  const bool is_dot = gemm.async_wrapped.value_or(gemm.opcode) == Opcode::kDot;
  const bool parsed = !dims.lhs_contracting.empty() || !dims.rhs_contracting.empty();
  if (!is_dot && !parsed && !dims_from_backend_config(gemm.backend_config, &dims)) {
    dims = assumed_dims(lhs.rank(), rhs.rank());
  }
  out.type = lhs.type;
  out.batch = product(lhs, dims.lhs_batch);
  out.k = product(lhs, dims.lhs_contracting);
  out.m = free_product(lhs, dims.lhs_batch, dims.lhs_contracting);
  out.n = free_product(rhs, dims.rhs_batch, dims.rhs_contracting);
  out.tf32 = out.type == hlo::PrimitiveType::kF32 && xla_allows_tf32(gemm);
  return out;
}

int gemm_workspace_leaf(const hlo::Instruction& gemm, const hlo::Shape& shape) {
  if (gemm.async_wrapped.value_or(gemm.opcode) != Opcode::kCustomCall) return -1;
  if (!shape.is_tuple() || shape.elements.size() < 2) return -1;
  const hlo::Shape& last = shape.elements.back();
  if (!last.is_array() || last.type != hlo::PrimitiveType::kS8) return -1;
  return static_cast<int>(shape.leaves().size()) - 1;
}

bool takes_gemm_workspace(const hlo::Computation& computation, const hlo::Instruction& gte) {
  if (gte.opcode != Opcode::kGetTupleElement || gte.operands.empty()) return false;
  const int call = gte.operands[0];
  if (call < 0 || static_cast<size_t>(call) >= computation.instructions.size()) return false;
  const hlo::Instruction& c = computation.instructions[static_cast<size_t>(call)];
  return is_gemm(c) && gte.tuple_index == gemm_workspace_leaf(c, c.shape);
}

int fusion_workspace_leaf(const hlo::Computation& body) {
  if (body.root < 0 || static_cast<size_t>(body.root) >= body.instructions.size()) return -1;
  const hlo::Instruction& root = body.instructions[static_cast<size_t>(body.root)];
  if (is_gemm(root)) return gemm_workspace_leaf(root, root.shape);
  if (root.opcode != Opcode::kTuple) return -1;
  int leaf = 0;  // the root's elements may be tuples: count leaves, not elements
  for (int32_t element : root.operands) {
    if (element < 0 || static_cast<size_t>(element) >= body.instructions.size()) return -1;
    const hlo::Instruction& e = body.instructions[static_cast<size_t>(element)];
    if (takes_gemm_workspace(body, e)) return leaf;
    leaf += static_cast<int>(e.shape.leaves().size());
  }
  return -1;
}

}  // namespace sl::sched
