// Instructions as lambdas of their linear index (elemental.h).

#include "core/exec/codegen/elemental.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "core/exec/codegen/codegen_types.h"

namespace sl::exec::codegen {

using hlo::Opcode;
using hlo::PrimitiveType;

namespace {

Status unsupported(const hlo::Instruction& inst, const std::string& why) {
  return runtime_error(fmt::format("{} '{}': {}", hlo::opcode_name(inst.opcode), inst.name, why));
}

const char* float_fn(Opcode op) {
  switch (op) {
    case Opcode::kExp: return "exp";
    case Opcode::kExpm1: return "expm1";
    case Opcode::kLog: return "log";
    case Opcode::kLog1p: return "log1p";
    case Opcode::kSqrt: return "sqrt";
    case Opcode::kRsqrt: return "rsqrt";
    case Opcode::kCbrt: return "cbrt";
    case Opcode::kTanh: return "tanh";
    case Opcode::kTan: return "tan";
    case Opcode::kSin: return "sin";
    case Opcode::kCos: return "cos";
    case Opcode::kSinh: return "sinh";
    case Opcode::kCosh: return "cosh";
    case Opcode::kAsin: return "asin";
    case Opcode::kAcos: return "acos";
    case Opcode::kAtan: return "atan";
    case Opcode::kAsinh: return "asinh";
    case Opcode::kAcosh: return "acosh";
    case Opcode::kAtanh: return "atanh";
    case Opcode::kErf: return "erf";
    case Opcode::kFloor: return "floor";
    case Opcode::kCeil: return "ceil";
    case Opcode::kRoundNearestAfz: return "round";
    case Opcode::kRoundNearestEven: return "rint";
    case Opcode::kAbs: return "fabs";
    case Opcode::kRemainder: return "fmod";
    case Opcode::kPower: return "pow";
    case Opcode::kAtan2: return "atan2";
    default: return nullptr;
  }
}

const char* comparison(hlo::ComparisonDirection d) {
  switch (d) {
    case hlo::ComparisonDirection::kEq: return "==";
    case hlo::ComparisonDirection::kNe: return "!=";
    case hlo::ComparisonDirection::kLt: return "<";
    case hlo::ComparisonDirection::kLe: return "<=";
    case hlo::ComparisonDirection::kGt: return ">";
    case hlo::ComparisonDirection::kGe: return ">=";
  }
  return "==";
}

}  // namespace

const std::string* Scope::find(const std::string& key) const {
  for (const Scope* s = this; s != nullptr; s = s->parent) {
    if (auto it = s->values.find(key); it != s->values.end()) return &it->second;
  }
  return nullptr;
}

Scope Scope::child() const {
  Scope s;
  s.indent = indent + "  ";
  s.parent = this;
  return s;
}

void Elemental::define(Scope& scope, int k, const std::string& index, const std::string& var) {
  scope.values[fmt::format("{}@{}", k, index)] = var;
}

std::string Elemental::index(const std::string& expr, Scope& scope) {
  if (expr == "i" || expr.find_first_of(" (*+/%") == std::string::npos) return expr;
  const std::string key = "index@" + expr;
  if (const std::string* v = scope.find(key)) return *v;
  const std::string var = fresh("j");
  scope.line(fmt::format("const IX {} = {};", var, expr));
  scope.values[key] = var;
  return var;
}

Result<std::string> Elemental::value(int k, const std::string& idx, Scope& scope) {
  if (auto b = bound_.find(k); b != bound_.end()) return b->second;
  const std::string key = fmt::format("{}@{}", k, idx);
  if (const std::string* v = scope.find(key)) return *v;
  const hlo::Instruction& inst = at(k);
  if (inst.opcode == Opcode::kTuple) return unsupported(inst, "a tuple inside the fusion");
  if (!inst.shape.is_array()) return unsupported(inst, "a non-array result");
  SL_ASSIGN_OR_RETURN(TypeNames t, type_names(inst.shape.type));
  SL_ASSIGN_OR_RETURN(std::string expr, compute(k, idx, scope));
  std::string var = expr;
  if ((inst.opcode != Opcode::kReduce || loaded_.count(k) > 0) && !(inst.opcode == Opcode::kConstant && inst.shape.element_count() == 1)) {
    var = fresh();
    scope.line(fmt::format("const {} {} = {};", t.compute, var, expr));
  }
  scope.values[key] = var;
  return var;
}

Result<std::string> Elemental::constant(const hlo::Instruction& inst, const std::string& idx) {
  const int64_t n = inst.shape.element_count();
  if (n == 1 && !inst.literal.empty()) return literal_value(inst.shape.type, inst.literal[0]);
  if (static_cast<int64_t>(inst.literal.size()) != n) return unsupported(inst, "constant without its values");
  if (n > (int64_t{1} << 16)) return unsupported(inst, "constant of more than 65536 elements");
  const PrimitiveType type = inst.shape.type;
  const bool narrow = type == PrimitiveType::kBF16 || type == PrimitiveType::kF16;
  SL_ASSIGN_OR_RETURN(TypeNames t, type_names(type));
  const std::string name = fresh("sl_const");
  std::string values;
  for (int64_t e = 0; e < n; ++e) {
    const double v = inst.literal[static_cast<size_t>(e)];
    values += (e ? "," : "") + (narrow ? literal_value(PrimitiveType::kF32, v) : literal_value(type, v));
  }
  *globals_ += fmt::format("__device__ const {} {}[{}] = {{{}}};\n", narrow ? "float" : t.compute, name, n, values);
  const std::string read = fmt::format("{}[{}]", name, idx);
  return narrow ? round_to(type, read) : read;
}

Result<std::string> Elemental::reducer(const hlo::Instruction& reduce) {
  if (reduce.called.empty()) return unsupported(reduce, "reduce without to_apply");
  const int comp = reduce.called[0];
  if (auto it = reducers_.find(comp); it != reducers_.end()) return it->second;
  const hlo::Computation& c = module_.computations.at(static_cast<size_t>(comp));
  if (c.instructions.empty()) return unsupported(reduce, "an empty reducer");
  const int root = c.root >= 0 ? c.root : static_cast<int>(c.instructions.size()) - 1;
  if (c.instructions[static_cast<size_t>(root)].opcode == Opcode::kTuple) return unsupported(reduce, "a variadic reducer");
  SL_ASSIGN_OR_RETURN(TypeNames t, type_names(reduce.shape.type));
  Elemental inner(module_, c, [](int64_t number, const std::string&) {
    return std::string(number == 0 ? "acc" : "x");
  }, globals_, unique_);
  Scope body;
  SL_ASSIGN_OR_RETURN(std::string result, inner.value(root, ix(0), body));
  const std::string name = fresh("sl_reducer");
  *globals_ += fmt::format("__device__ __forceinline__ {0} {1}({0} acc, {0} x) {{\n{2}  return {3};\n}}\n",
                           t.compute, name, body.code, result);
  reducers_[comp] = name;
  return name;
}

Result<std::string> Elemental::reduce(int k, const std::string& idx, Scope& scope) {
  const hlo::Instruction& inst = at(k);
  if (inst.operands.size() != 2) return unsupported(inst, "a variadic reduce");
  const hlo::Instruction& in = at(inst.operands[0]);
  if (in.shape.type != inst.shape.type) return unsupported(inst, "a reduce changing the element type");
  SL_ASSIGN_OR_RETURN(std::string red, reducer(inst));
  SL_ASSIGN_OR_RETURN(TypeNames t, type_names(inst.shape.type));
  const auto& dims = in.shape.dims;
  const auto strides = row_major(dims);
  std::vector<bool> reduced(dims.size(), false);
  for (int64_t d : inst.dimensions) {
    if (d < 0 || d >= static_cast<int64_t>(dims.size())) return unsupported(inst, "a reduced dimension out of range");
    reduced[static_cast<size_t>(d)] = true;
  }
  std::vector<int64_t> kept_dims, red_dims, kept_strides, red_strides;
  for (size_t d = 0; d < dims.size(); ++d) {
    (reduced[d] ? red_dims : kept_dims).push_back(dims[d]);
    (reduced[d] ? red_strides : kept_strides).push_back(strides[d]);
  }
  std::vector<std::string> kc, rc;
  for (size_t d = 0; d < kept_dims.size(); ++d) kc.push_back(coordinate(idx, kept_dims, d));
  int64_t count = 1;
  for (int64_t d : red_dims) count *= d;
  SL_ASSIGN_OR_RETURN(std::string init, value(inst.operands[1], ix(0), scope));
  const std::string base = index(linear(kc, kept_strides), scope);
  const std::string acc = fresh("acc");
  const std::string r = fresh("r");
  for (size_t d = 0; d < red_dims.size(); ++d) rc.push_back(coordinate(r, red_dims, d));
  scope.line(fmt::format("{} {} = {};", t.compute, acc, init));
  scope.line(fmt::format("for (IX {0} = 0; {0} < {1}; ++{0}) {{", r, ix(count)));
  Scope loop = scope.child();
  const std::string off = linear(rc, red_strides);
  const std::string j = index(base == ix(0) ? off : (off == ix(0) ? base : base + " + " + off), loop);
  SL_ASSIGN_OR_RETURN(std::string x, value(inst.operands[0], j, loop));
  loop.line(fmt::format("{0} = {1}({0}, {2});", acc, red, x));
  scope.code += loop.code;
  scope.line("}");
  return acc;
}

namespace {

// A bitcast reinterprets memory: the result element at logical coordinates
// `oc` is the operand element at the same physical offset (the cpu backend's
// bitcast_between_layouts), composed with physical_index on the loads.
std::string between_layouts(const hlo::Shape& from, const hlo::Shape& to, const std::vector<std::string>& oc) {
  const std::string p = linear(oc, physical_strides(to));
  const std::vector<int64_t> in_strides = physical_strides(from);
  std::vector<std::string> coords;
  for (size_t d = 0; d < from.dims.size(); ++d) {
    coords.push_back(from.dims[d] == 1 ? ix(0)
                                       : fmt::format("(({} / {}) % {})", p, ix(in_strides[d]), ix(from.dims[d])));
  }
  return linear(coords, row_major(from.dims));
}

bool has(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

// XLA's gather at output coordinates `oc`: the start vector read from the
// indices at the output's batch coordinates, clamped so the slice fits, plus
// the output's offset coordinates in the operand's window dimensions.
Result<std::string> Elemental::gather(const hlo::Instruction& inst, const std::vector<std::string>& oc, Scope& scope) {
  const hlo::GatherDims& g = inst.gather;
  const auto& in = at(inst.operands.at(0)).shape.dims;
  const auto& idx = at(inst.operands.at(1)).shape.dims;
  const auto out_rank = static_cast<int64_t>(inst.shape.dims.size());
  const auto irank = static_cast<int64_t>(idx.size());
  if (g.slice_sizes.size() != in.size()) return unsupported(inst, "slice_sizes do not cover the operand");
  std::vector<int64_t> batch_dims, window_dims;
  for (int64_t d = 0; d < out_rank; ++d) {
    if (!has(g.offset_dims, d)) batch_dims.push_back(d);
  }
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    if (!has(g.collapsed_slice_dims, d) && !has(g.operand_batching_dims, d)) window_dims.push_back(d);
  }
  const int64_t batch_rank = irank - (g.index_vector_dim < irank ? 1 : 0);
  if (window_dims.size() != g.offset_dims.size() || static_cast<int64_t>(batch_dims.size()) != batch_rank) {
    return unsupported(inst, "dimension numbers that do not match the shapes");
  }
  const int64_t components = g.index_vector_dim < irank ? idx[static_cast<size_t>(g.index_vector_dim)] : 1;
  if (components != static_cast<int64_t>(g.start_index_map.size())) return unsupported(inst, "index vectors of another size");
  auto batch_position = [&](int64_t dim) { return dim < g.index_vector_dim ? dim : dim - 1; };
  std::vector<std::string> coords(in.size(), ix(0));
  for (size_t k = 0; k < g.start_index_map.size(); ++k) {
    std::vector<std::string> ic;
    for (int64_t e = 0; e < irank; ++e) {
      ic.push_back(e == g.index_vector_dim ? ix(static_cast<int64_t>(k))
                                           : oc[static_cast<size_t>(batch_dims[static_cast<size_t>(batch_position(e))])]);
    }
    SL_ASSIGN_OR_RETURN(std::string start, value(inst.operands[1], index(linear(ic, row_major(idx)), scope), scope));
    const auto d = static_cast<size_t>(g.start_index_map[k]);
    const std::string s = fresh("s");
    scope.line(fmt::format("const long long {} = sl_clamp_start((long long){}, {}LL);", s, start,
                           std::max<int64_t>(in[d] - g.slice_sizes[d], 0)));
    coords[d] = fmt::format("(IX){}", s);
  }
  for (size_t k = 0; k < g.operand_batching_dims.size() && k < g.start_indices_batching_dims.size(); ++k) {
    coords[static_cast<size_t>(g.operand_batching_dims[k])] =
        oc[static_cast<size_t>(batch_dims[static_cast<size_t>(batch_position(g.start_indices_batching_dims[k]))])];
  }
  for (size_t k = 0; k < window_dims.size(); ++k) {
    std::string& c = coords[static_cast<size_t>(window_dims[k])];
    const std::string& o = oc[static_cast<size_t>(g.offset_dims[k])];
    c = c == ix(0) ? o : fmt::format("({} + {})", c, o);
  }
  return value(inst.operands[0], index(linear(coords, row_major(in)), scope), scope);
}

Result<std::string> Elemental::compute(int k, const std::string& i, Scope& scope) {
  const hlo::Instruction& inst = at(k);
  if (auto it = loaded_.find(k); it != loaded_.end()) {
    return load_value(inst.shape.type, fmt::format("{}[{}]", it->second, i));
  }
  auto operand = [&](size_t n) -> const hlo::Instruction& { return at(inst.operands.at(n)); };
  auto get = [&](size_t n, const std::string& idx) { return value(inst.operands.at(n), index(idx, scope), scope); };
  const auto& out = inst.shape.dims;
  std::vector<std::string> oc;
  for (size_t d = 0; d < out.size(); ++d) oc.push_back(coordinate(i, out, d));
  const PrimitiveType type = inst.shape.type;

  switch (inst.opcode) {
    case Opcode::kParameter: return param_(inst.parameter_number, i);
    case Opcode::kConstant: return constant(inst, i);
    case Opcode::kIota:
      if (inst.iota_dimension < 0 || inst.iota_dimension >= static_cast<int64_t>(out.size())) {
        return unsupported(inst, "iota dimension out of range");
      }
      return convert_value(PrimitiveType::kS64, type, "(long long)" + oc[static_cast<size_t>(inst.iota_dimension)]);
    case Opcode::kBitcast:
    case Opcode::kReshape:
    case Opcode::kCopy:
      if (operand(0).shape.type != type) return unsupported(inst, "a bitcast changing the element type");
      if (operand(0).shape.element_count() != inst.shape.element_count()) return unsupported(inst, "element counts differ");
      if (inst.opcode == Opcode::kBitcast && (!operand(0).shape.is_row_major() || !inst.shape.is_row_major())) {
        return get(0, between_layouts(operand(0).shape, inst.shape, oc));
      }
      return get(0, i);
    case Opcode::kConvert: {
      SL_ASSIGN_OR_RETURN(std::string a, get(0, i));
      return convert_value(operand(0).shape.type, type, a);
    }
    case Opcode::kBroadcast: {
      std::vector<std::string> coords;
      for (int64_t d : inst.dimensions) coords.push_back(oc.at(static_cast<size_t>(d)));
      return get(0, linear(coords, row_major(operand(0).shape.dims)));
    }
    case Opcode::kTranspose: {
      const auto in_strides = row_major(operand(0).shape.dims);
      std::vector<int64_t> strides;
      for (int64_t p : inst.dimensions) strides.push_back(in_strides.at(static_cast<size_t>(p)));
      return get(0, linear(oc, strides));
    }
    case Opcode::kSlice: {
      if (inst.slice.size() != out.size()) return unsupported(inst, "slice rank mismatch");
      std::vector<std::string> coords;
      for (size_t d = 0; d < out.size(); ++d) {
        const auto& s = inst.slice[d];
        std::string e = s.stride == 1 ? oc[d] : fmt::format("{} * {}", oc[d], ix(s.stride));
        coords.push_back(s.start == 0 ? e : fmt::format("({} + {})", e, ix(s.start)));
      }
      return get(0, linear(coords, row_major(operand(0).shape.dims)));
    }
    case Opcode::kReverse: {
      std::vector<std::string> coords = oc;
      for (int64_t d : inst.dimensions) {
        auto u = static_cast<size_t>(d);
        coords.at(u) = fmt::format("({} - {})", ix(out[u] - 1), oc[u]);
      }
      return get(0, linear(coords, row_major(operand(0).shape.dims)));
    }
    case Opcode::kConcatenate: {
      // Each piece in its own branch: only the operand that holds the element is read.
      SL_ASSIGN_OR_RETURN(TypeNames t, type_names(type));
      const auto dim = static_cast<size_t>(inst.dimensions.at(0));
      const std::string cc = index(oc.at(dim), scope), result = fresh();
      scope.line(fmt::format("{} {};", t.compute, result));
      int64_t offset = 0;
      for (size_t n = 0; n < inst.operands.size(); ++n) {
        const auto& in = operand(n).shape.dims;
        std::vector<std::string> coords = oc;
        coords[dim] = offset == 0 ? cc : fmt::format("({} - {})", cc, ix(offset));
        const int64_t start = offset;
        offset += in.at(dim);
        scope.line(fmt::format("{}if ({} >= {} && {} < {}) {{", n ? "else " : "", cc, ix(start), cc, ix(offset)));
        Scope branch = scope.child();
        SL_ASSIGN_OR_RETURN(std::string v, value(inst.operands[n], index(linear(coords, row_major(in)), branch), branch));
        branch.line(fmt::format("{} = {};", result, v));
        scope.code += branch.code;
        scope.line("}");
      }
      return result;
    }
    case Opcode::kPad: {
      const auto& in = operand(0).shape.dims;
      if (inst.padding.size() != out.size()) return unsupported(inst, "padding rank mismatch");
      SL_ASSIGN_OR_RETURN(TypeNames t, type_names(type));
      SL_ASSIGN_OR_RETURN(std::string pad_value, get(1, ix(0)));
      std::string inside;
      std::vector<std::string> coords;
      for (size_t d = 0; d < out.size(); ++d) {
        const auto& p = inst.padding[d];
        const int64_t step = p.interior + 1;
        const std::string q = fresh("q");
        scope.line(fmt::format("const long long {} = (long long){} - {}LL;", q, oc[d], p.low));
        inside += fmt::format("{}{q} >= 0 && {q} % {s}LL == 0 && {q} / {s}LL < {n}LL", inside.empty() ? "" : " && ",
                              fmt::arg("q", q), fmt::arg("s", step), fmt::arg("n", in[d]));
        coords.push_back(fmt::format("(IX)({} / {}LL)", q, step));
      }
      const std::string result = fresh();
      scope.line(fmt::format("{} {} = {};", t.compute, result, pad_value));
      scope.line(fmt::format("if ({}) {{", inside.empty() ? "true" : inside));
      Scope branch = scope.child();
      SL_ASSIGN_OR_RETURN(std::string v, value(inst.operands[0], index(linear(coords, row_major(in)), branch), branch));
      branch.line(fmt::format("{} = {};", result, v));
      scope.code += branch.code;
      scope.line("}");
      return result;
    }
    case Opcode::kGather: return gather(inst, oc, scope);
    case Opcode::kDynamicSlice: {
      const auto& in = operand(0).shape.dims;
      if (inst.operands.size() != 1 + out.size()) return unsupported(inst, "needs one scalar start per dimension");
      std::vector<std::string> coords;
      for (size_t d = 0; d < out.size(); ++d) {
        SL_ASSIGN_OR_RETURN(std::string start, get(1 + d, ix(0)));
        const std::string s = fresh("s");
        scope.line(fmt::format("const long long {0} = sl_clamp_start((long long){1}, {2}LL);", s, start, in[d] - out[d]));
        coords.push_back(fmt::format("({} + (IX){})", oc[d], s));
      }
      return get(0, linear(coords, row_major(in)));
    }
    case Opcode::kDynamicUpdateSlice: {
      const auto& up = operand(1).shape.dims;
      if (inst.operands.size() != 2 + out.size()) return unsupported(inst, "needs one scalar start per dimension");
      SL_ASSIGN_OR_RETURN(TypeNames t, type_names(type));
      std::string inside;
      std::vector<std::string> coords;
      for (size_t d = 0; d < out.size(); ++d) {
        SL_ASSIGN_OR_RETURN(std::string start, get(2 + d, ix(0)));
        const std::string s = fresh("s"), u = fresh("u");
        scope.line(fmt::format("const long long {0} = sl_clamp_start((long long){1}, {2}LL);", s, start, out[d] - up[d]));
        scope.line(fmt::format("const long long {} = (long long){} - {};", u, oc[d], s));
        inside += fmt::format("{}{u} >= 0 && {u} < {n}LL", inside.empty() ? "" : " && ", fmt::arg("u", u),
                              fmt::arg("n", up[d]));
        coords.push_back(fmt::format("(IX){}", u));
      }
      const std::string result = fresh();
      scope.line(fmt::format("{} {};", t.compute, result));
      scope.line(fmt::format("if ({}) {{", inside.empty() ? "true" : inside));
      Scope update = scope.child();
      SL_ASSIGN_OR_RETURN(std::string v, value(inst.operands[1], index(linear(coords, row_major(up)), update), update));
      update.line(fmt::format("{} = {};", result, v));
      scope.code += update.code;
      scope.line("} else {");
      Scope keep = scope.child();
      SL_ASSIGN_OR_RETURN(std::string w, value(inst.operands[0], i, keep));
      keep.line(fmt::format("{} = {};", result, w));
      scope.code += keep.code;
      scope.line("}");
      return result;
    }
    case Opcode::kReduce: return reduce(k, i, scope);
    default: break;
  }
  if (hlo::is_elementwise(inst.opcode)) return elementwise(inst, i, scope);
  return unsupported(inst, "no generated kernel for this op");
}

Result<std::string> Elemental::elementwise(const hlo::Instruction& inst, const std::string& i, Scope& scope) {
  std::vector<std::string> v;
  for (size_t n = 0; n < inst.operands.size(); ++n) {
    const hlo::Instruction& o = at(inst.operands[n]);
    const bool scalar = o.shape.element_count() == 1 && inst.shape.element_count() != 1;
    SL_ASSIGN_OR_RETURN(std::string a, value(inst.operands[n], scalar ? ix(0) : i, scope));
    v.push_back(a);
  }
  const PrimitiveType type = inst.shape.type;
  const PrimitiveType in_type =
      inst.operands.empty() ? type : at(inst.operands[inst.opcode == Opcode::kSelect ? 1 : 0]).shape.type;
  const bool flt = hlo::is_floating(type) || (inst.opcode == Opcode::kCompare && hlo::is_floating(in_type));
  const bool f32 = flt && in_type != PrimitiveType::kF64;
  const bool pred = type == PrimitiveType::kPred;
  const int bits = hlo::primitive_type_bits(type);
  const std::string mask = bits >= 64 ? "0xffffffffffffffffULL" : fmt::format("{}ULL", (1ULL << bits) - 1);
  auto need = [&](size_t n) -> Status {
    if (v.size() != n) return unsupported(inst, fmt::format("expects {} operands", n));
    return ok_status();
  };
  auto wrap_int = [&](const char* op) {
    return fmt::format("(long long)((unsigned long long){} {} (unsigned long long){})", v[0], op, v[1]);
  };
  std::string e;
  const Opcode op = inst.opcode;
  if (op == Opcode::kCompare) {
    SL_RETURN_IF_ERROR(need(2));
    const char* cmp = comparison(inst.comparison_direction.value_or(hlo::ComparisonDirection::kEq));
    if (inst.comparison_type == "TOTALORDER" && flt) {
      e = fmt::format("(sl_total_key({}) {} sl_total_key({}))", v[0], cmp, v[1]);
    } else {
      e = fmt::format("({} {} {})", v[0], cmp, v[1]);
    }
    return e;
  }
  if (op == Opcode::kSelect) {
    SL_RETURN_IF_ERROR(need(3));
    return fmt::format("({} ? {} : {})", v[0], v[1], v[2]);
  }
  if (op == Opcode::kClamp) {
    SL_RETURN_IF_ERROR(need(3));
    return round_to(type, fmt::format("sl_min(sl_max({}, {}), {})", v[1], v[0], v[2]));
  }
  if (flt) {
    const std::string suffix = f32 ? "f" : "";
    switch (op) {
      case Opcode::kAdd: e = v.at(0) + " + " + v.at(1); break;
      case Opcode::kSubtract: e = v.at(0) + " - " + v.at(1); break;
      case Opcode::kMultiply: e = v.at(0) + " * " + v.at(1); break;
      case Opcode::kDivide: e = v.at(0) + " / " + v.at(1); break;
      case Opcode::kMaximum: e = fmt::format("sl_max({}, {})", v.at(0), v.at(1)); break;
      case Opcode::kMinimum: e = fmt::format("sl_min({}, {})", v.at(0), v.at(1)); break;
      case Opcode::kNegate: e = "-" + v.at(0); break;
      case Opcode::kSign: e = fmt::format("sl_sign({})", v.at(0)); break;
      case Opcode::kLogistic: e = fmt::format("{0}(1) / ({0}(1) + exp{1}(-{2}))", f32 ? "float" : "double", suffix, v.at(0)); break;
      case Opcode::kIsFinite: return fmt::format("(bool)isfinite({})", v.at(0));
      default: {
        const char* f = float_fn(op);
        if (f == nullptr) return unsupported(inst, "no generated kernel for this op on floats");
        std::string args = v.at(0);
        for (size_t n = 1; n < v.size(); ++n) args += ", " + v[n];
        e = fmt::format("{}{}({})", f, suffix, args);
      }
    }
    return round_to(type, e);
  }
  if (pred) {
    switch (op) {
      case Opcode::kAnd: e = v.at(0) + " && " + v.at(1); break;
      case Opcode::kOr: e = v.at(0) + " || " + v.at(1); break;
      case Opcode::kXor: e = v.at(0) + " != " + v.at(1); break;
      case Opcode::kNot: e = "!" + v.at(0); break;
      case Opcode::kConvert: e = v.at(0); break;
      default: return unsupported(inst, "no generated kernel for this op on pred");
    }
    return e;
  }
  const bool is_signed = hlo::is_signed_integral(type);
  switch (op) {
    case Opcode::kAdd: e = wrap_int("+"); break;
    case Opcode::kSubtract: e = wrap_int("-"); break;
    case Opcode::kMultiply: e = wrap_int("*"); break;
    case Opcode::kDivide: e = fmt::format("sl_idiv({}, {})", v.at(0), v.at(1)); break;
    case Opcode::kRemainder: e = fmt::format("sl_irem({}, {})", v.at(0), v.at(1)); break;
    case Opcode::kMaximum: e = fmt::format("sl_max({}, {})", v.at(0), v.at(1)); break;
    case Opcode::kMinimum: e = fmt::format("sl_min({}, {})", v.at(0), v.at(1)); break;
    case Opcode::kAnd: e = v.at(0) + " & " + v.at(1); break;
    case Opcode::kOr: e = v.at(0) + " | " + v.at(1); break;
    case Opcode::kXor: e = v.at(0) + " ^ " + v.at(1); break;
    case Opcode::kNot: e = "~" + v.at(0); break;
    case Opcode::kNegate: e = fmt::format("(long long)(0ULL - (unsigned long long){})", v.at(0)); break;
    case Opcode::kAbs:
      e = fmt::format("({0} < 0 ? (long long)(0ULL - (unsigned long long){0}) : (long long){0})", v.at(0));
      break;
    case Opcode::kSign: e = fmt::format("sl_sign({})", v.at(0)); break;
    case Opcode::kShiftLeft:
      e = fmt::format("((unsigned long long){1} >= {2}ULL ? 0ULL : ((unsigned long long){0} << {1}))", v.at(0),
                      v.at(1), bits);
      break;
    case Opcode::kShiftRightLogical:
      e = fmt::format("((unsigned long long){1} >= {2}ULL ? 0ULL : (((unsigned long long){0} & {3}) >> {1}))",
                      v.at(0), v.at(1), bits, mask);
      break;
    case Opcode::kShiftRightArithmetic:
      if (!is_signed) return unsupported(inst, "arithmetic shift of an unsigned type");
      e = fmt::format("((unsigned long long){1} >= {2}ULL ? ({0} < 0 ? -1LL : 0LL) : ((long long){0} >> {1}))",
                      v.at(0), v.at(1), bits);
      break;
    case Opcode::kPopulationCount: e = fmt::format("__popcll((unsigned long long){} & {})", v.at(0), mask); break;
    case Opcode::kClz:
      e = fmt::format("(__clzll((long long)((unsigned long long){} & {})) - {})", v.at(0), mask, 64 - bits);
      break;
    default: return unsupported(inst, "no generated kernel for this op on integers");
  }
  return round_to(type, e);
}

}  // namespace sl::exec::codegen
