// Control flow: call (operands vs callee parameters, result vs root), while
// (condition and body signatures), conditional (branch signatures).

#include <fmt/format.h>

#include "core/hlo/verify_context.h"

namespace sl::hlo::verify_detail {
namespace {

void expect_root(const Site& site, const Computation& callee, const Shape& expected, std::string_view role) {
  const Shape* root = root_shape(callee);
  if (root != nullptr && *root != expected) {
    site.error(fmt::format("{} {} computation %{} returns {}, but {} is required", written_opcode(site.inst), role,
                           callee.name, str(*root), str(expected)));
  }
}

void verify_call(const Site& site) {
  const Computation* callee = called_computation(site, 0, "to_apply");
  if (callee == nullptr) return;
  expect_arguments(site, *callee, site.operand_shapes(), "called");
  expect_root(site, *callee, site.inst.shape, "called");
}

void verify_while(const Site& site) {
  if (!expect_operand_count(site, 1)) return;
  const Shape& state = site.operand_shape(0);
  if (site.inst.shape != state) {
    site.error(fmt::format("while shape {} must equal its operand's shape {}", str(site.inst.shape), str(state)));
  }
  if (site.inst.known_trip_count && *site.inst.known_trip_count < 0) {
    site.error(fmt::format("while known_trip_count {} is negative", *site.inst.known_trip_count));
  }
  const Computation* condition = called_computation(site, 0, "condition");
  const Computation* body = called_computation(site, 1, "body");
  if (condition != nullptr) {
    expect_arguments(site, *condition, {&state}, "condition");
    expect_root(site, *condition, Shape::array(PrimitiveType::kPred, {}), "condition");
  }
  if (body != nullptr) {
    expect_arguments(site, *body, {&state}, "body");
    expect_root(site, *body, state, "body");
  }
}

void verify_conditional(const Site& site) {
  if (!expect_min_operand_count(site, 1)) return;
  const Shape& selector = site.operand_shape(0);
  const size_t branches = site.inst.called.size();
  if (selector == Shape::array(PrimitiveType::kPred, {})) {
    if (branches != 2) {
      site.error(fmt::format("conditional with a pred selector needs 2 branch computations, but has {}", branches));
      return;
    }
  } else if (selector != Shape::array(PrimitiveType::kS32, {})) {
    site.error(fmt::format("conditional selector must be pred[] or s32[], but is {}", str(selector)));
    return;
  }
  if (branches == 0 || site.operand_count() != branches + 1) {
    site.error(fmt::format("conditional has {} branch computation{} but {} branch operand{}", branches,
                           branches == 1 ? "" : "s", site.operand_count() - 1, site.operand_count() == 2 ? "" : "s"));
    return;
  }
  for (size_t b = 0; b < branches; ++b) {
    const Computation* branch = called_computation(site, b, "branch");
    if (branch == nullptr) continue;
    expect_arguments(site, *branch, {&site.operand_shape(b + 1)}, fmt::format("branch {}", b));
    expect_root(site, *branch, site.inst.shape, fmt::format("branch {}", b));
  }
}

}  // namespace

void verify_control(const Site& site) {
  switch (site.inst.opcode) {
    case Opcode::kCall: verify_call(site); return;
    case Opcode::kWhile: verify_while(site); return;
    case Opcode::kConditional: verify_conditional(site); return;
    default: return;
  }
}

}  // namespace sl::hlo::verify_detail
