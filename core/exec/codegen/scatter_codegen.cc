// The scatter kernel of a scatter fusion (scatter_codegen.h).

#include "core/exec/codegen/scatter_codegen.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/exec/codegen/codegen_types.h"
#include "core/exec/codegen/elemental.h"

namespace sl::exec::codegen {

using hlo::Opcode;
using hlo::PrimitiveType;

namespace {

bool has(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

Status refuse(const hlo::Instruction& s, const std::string& why) {
  return runtime_error(fmt::format("scatter '{}': {}", s.name, why));
}

// How a to_apply combines: add(acc, x), or x replacing acc.
enum class Combine { kAdd, kAssign };

Result<Combine> combiner(const hlo::Module& module, const hlo::Instruction& s) {
  if (s.called.empty()) return refuse(s, "no to_apply");
  const hlo::Computation& c = module.computations.at(static_cast<size_t>(s.called[0]));
  if (c.instructions.empty()) return refuse(s, "an empty to_apply");
  const int root = c.root >= 0 ? c.root : static_cast<int>(c.instructions.size()) - 1;
  const hlo::Instruction& r = c.instructions[static_cast<size_t>(root)];
  auto param = [&](int k) {
    const hlo::Instruction& p = c.instructions[static_cast<size_t>(k)];
    return p.opcode == Opcode::kParameter ? p.parameter_number : int64_t{-1};
  };
  if (r.opcode == Opcode::kParameter && r.parameter_number == 1) return Combine::kAssign;
  if (r.opcode == Opcode::kAdd && r.operands.size() == 2) {
    const int64_t a = param(r.operands[0]), b = param(r.operands[1]);
    if ((a == 0 && b == 1) || (a == 1 && b == 0)) return Combine::kAdd;
  }
  return refuse(s, fmt::format("to_apply '{}' is neither add nor assignment", c.name));
}

// A device function adding a compute value to a storage element atomically.
Result<std::string> atomic_add(PrimitiveType type, std::string* fn) {
  switch (type) {
    case PrimitiveType::kF32: *fn = "atomicAdd"; return std::string();
    case PrimitiveType::kF64: *fn = "atomicAdd"; return std::string();
    case PrimitiveType::kS32: *fn = "atomicAdd"; return std::string();
    case PrimitiveType::kU32: *fn = "atomicAdd"; return std::string();
    case PrimitiveType::kBF16:
    case PrimitiveType::kF16: {
      // No 16-bit float atomics without CUDA's headers: compare-and-swap on the
      // aligned 32-bit word, rounding after the add as the cpu backend does.
      *fn = "sl_atomic_add16";
      return fmt::format(
          "__device__ __forceinline__ void sl_atomic_add16(unsigned short* p, float v) {{\n"
          "  unsigned int* w = (unsigned int*)((unsigned long long)p & ~3ull);\n"
          "  const unsigned shift = ((unsigned long long)p & 2ull) ? 16u : 0u;\n"
          "  unsigned int old = *w, assumed;\n"
          "  do {{\n"
          "    assumed = old;\n"
          "    const unsigned short h = (unsigned short)((assumed >> shift) & 0xffffu);\n"
          "    const unsigned short r = {};\n"
          "    old = atomicCAS(w, assumed, (assumed & ~(0xffffu << shift)) | ((unsigned int)r << shift));\n"
          "  }} while (assumed != old);\n"
          "}}\n",
          store_value(type, load_value(type, "h") + " + v"));
    }
    default:
      return runtime_error(fmt::format("no atomic add for {}", hlo::primitive_type_name(type)));
  }
}

}  // namespace

Result<GeneratedKernel> generate_scatter_kernel(const hlo::Module& module, const hlo::Computation& c, int k,
                                                const std::string& name) {
  const hlo::Instruction& s = c.instructions.at(static_cast<size_t>(k));
  if (s.opcode != Opcode::kScatter || s.operands.size() != 3) return refuse(s, "not a scatter of one operand");
  const hlo::ScatterDims& d = s.scatter;
  const hlo::Shape& op = c.instructions[static_cast<size_t>(s.operands[0])].shape;
  const hlo::Shape& ind = c.instructions[static_cast<size_t>(s.operands[1])].shape;
  const hlo::Shape& up = c.instructions[static_cast<size_t>(s.operands[2])].shape;
  if (!op.is_array() || !up.is_array() || up.type != s.shape.type) return refuse(s, "operand and updates of other types");
  SL_ASSIGN_OR_RETURN(Combine how, combiner(module, s));
  std::string add_fn;
  std::string helpers;
  if (how == Combine::kAdd) {
    auto h = atomic_add(s.shape.type, &add_fn);
    if (!h.is_ok()) return refuse(s, h.status().message());
    helpers = *h;
  }
  const auto irank = ind.rank();
  std::vector<int64_t> scatter_dims, window_dims;
  for (int64_t x = 0; x < up.rank(); ++x) {
    if (!has(d.update_window_dims, x)) scatter_dims.push_back(x);
  }
  for (int64_t x = 0; x < op.rank(); ++x) {
    if (!has(d.inserted_window_dims, x) && !has(d.input_batching_dims, x)) window_dims.push_back(x);
  }
  const int64_t batch_rank = irank - (d.index_vector_dim < irank ? 1 : 0);
  const int64_t components = d.index_vector_dim < irank ? ind.dims[static_cast<size_t>(d.index_vector_dim)] : 1;
  if (window_dims.size() != d.update_window_dims.size() || static_cast<int64_t>(scatter_dims.size()) != batch_rank ||
      components != static_cast<int64_t>(d.scatter_dims_to_operand_dims.size())) {
    return refuse(s, "dimension numbers that do not match the shapes");
  }
  std::vector<int64_t> window_size(op.dims.size(), 1);
  for (size_t w = 0; w < window_dims.size(); ++w) {
    window_size[static_cast<size_t>(window_dims[w])] = up.dims[static_cast<size_t>(d.update_window_dims[w])];
  }

  GeneratedKernel kernel;
  kernel.name = name;
  std::vector<std::string> args;
  if (!s.shape.is_row_major()) return refuse(s, "a result laid out other than row-major");
  std::vector<const hlo::Shape*> param_shapes(c.parameters.size());
  for (size_t n = 0; n < c.parameters.size(); ++n) {
    const hlo::Instruction& p = c.instructions.at(static_cast<size_t>(c.parameters[n]));
    if (!p.shape.is_array()) return refuse(s, fmt::format("parameter {} is not an array", n));
    SL_ASSIGN_OR_RETURN(TypeNames t, type_names(p.shape.type));
    param_shapes[n] = &p.shape;
    args.push_back(fmt::format("const {}* p{}", t.storage, n));  // p0 may be o0 (in place)
  }
  kernel.inputs = static_cast<int>(c.parameters.size());
  SL_ASSIGN_OR_RETURN(TypeNames out_t, type_names(s.shape.type));
  args.push_back(fmt::format("{}* o0", out_t.storage));
  kernel.outputs = 1;
  kernel.loops = {{LoopKind::kElementwise, up.element_count(), up.element_count()}};

  int64_t largest = 1;
  for (const hlo::Instruction& inst : c.instructions) {
    if (inst.shape.is_array()) largest = std::max(largest, inst.shape.element_count());
  }
  std::string globals;
  int unique = 0;
  Elemental e(module, c, [&](int64_t number, const std::string& index) {
    const auto n = static_cast<size_t>(number);
    if (n >= param_shapes.size()) return std::string("0");
    return load_value(param_shapes[n]->type, fmt::format("p{}[{}]", n, physical_index(*param_shapes[n], index)));
  }, &globals, &unique);
  Scope body;
  body.indent = "    ";
  std::vector<std::string> uc;  // the update element's coordinates
  for (size_t x = 0; x < up.dims.size(); ++x) uc.push_back(coordinate("i", up.dims, x));
  auto batch_position = [&](int64_t dim) { return dim < d.index_vector_dim ? dim : dim - 1; };
  std::vector<std::string> start(op.dims.size(), "0LL");
  for (size_t q = 0; q < d.scatter_dims_to_operand_dims.size(); ++q) {
    std::string lin;
    const auto strides = row_major(ind.dims);
    for (int64_t x = 0; x < irank; ++x) {
      const std::string co = x == d.index_vector_dim
                                 ? ix(static_cast<int64_t>(q))
                                 : uc[static_cast<size_t>(scatter_dims[static_cast<size_t>(batch_position(x))])];
      lin += fmt::format("{}{} * {}", lin.empty() ? "" : " + ", co, ix(strides[static_cast<size_t>(x)]));
    }
    auto v = e.value(s.operands[1], e.index(lin.empty() ? ix(0) : "(" + lin + ")", body), body);
    if (!v.is_ok()) return refuse(s, v.status().message());
    start[static_cast<size_t>(d.scatter_dims_to_operand_dims[q])] = fmt::format("(long long){}", *v);
  }
  for (size_t q = 0; q < d.input_batching_dims.size() && q < d.scatter_indices_batching_dims.size(); ++q) {
    start[static_cast<size_t>(d.input_batching_dims[q])] = fmt::format(
        "(long long){}", uc[static_cast<size_t>(scatter_dims[static_cast<size_t>(
                             batch_position(d.scatter_indices_batching_dims[q]))])]);
  }
  std::string fits = "true";
  std::string offset;
  const auto op_strides = row_major(op.dims);
  for (size_t x = 0; x < op.dims.size(); ++x) {
    const std::string st = e.fresh("st");
    body.line(fmt::format("const long long {} = {};", st, start[x]));
    fits += fmt::format(" && {0} >= 0 && {0} + {1}LL <= {2}LL", st, window_size[x], op.dims[x]);
    std::string at = st;
    for (size_t w = 0; w < window_dims.size(); ++w) {
      if (window_dims[w] == static_cast<int64_t>(x)) {
        at = fmt::format("({} + (long long){})", st, uc[static_cast<size_t>(d.update_window_dims[w])]);
      }
    }
    offset += fmt::format("{}{} * {}LL", offset.empty() ? "" : " + ", at, op_strides[x]);
  }
  auto value = e.value(s.operands[2], "i", body);
  if (!value.is_ok()) return refuse(s, value.status().message());
  body.line(fmt::format("if ({}) {{", fits));
  const std::string target = fmt::format("o0[(IX)({})]", offset.empty() ? "0" : offset);
  if (how == Combine::kAdd) {
    body.line(fmt::format("  {}(&{}, {});", add_fn, target, *value));
  } else {
    body.line(fmt::format("  {} = {};", target, store_value(s.shape.type, *value)));
  }
  body.line("}");
  kernel.source = std::string(kPrelude) +
                  fmt::format("typedef {} IX;\n", largest < (int64_t{1} << 31) ? "unsigned" : "unsigned long long") +
                  helpers + globals + fmt::format("// {}: the updates of {}\n", name, s.name) +
                  fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}({}) {{\n", kBlockThreads, name,
                              fmt::format("{}", fmt::join(args, ", "))) +
                  "  const IX tid = (IX)blockIdx.x * (IX)blockDim.x + (IX)threadIdx.x;\n"
                  "  const IX nthreads = (IX)gridDim.x * (IX)blockDim.x;\n" +
                  fmt::format("  for (IX i = tid; i < {}; i += nthreads) {{\n{}  }}\n", ix(up.element_count()),
                              body.code) +
                  "}\n";
  return kernel;
}

}  // namespace sl::exec::codegen
