// pad, reverse, reduce-window and select-and-scatter: ops that walk a window
// (or padding) over the operand's index space.

#include <fmt/format.h>

#include <algorithm>

#include "core/exec/cpu/array_util.h"
#include "core/exec/cpu/ops.h"

namespace sl::exec::cpu {
namespace {

int64_t offset_of(const std::vector<int64_t>& index, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t d = 0; d < index.size(); ++d) off += index[d] * strides[d];
  return off;
}

// Window dims for `rank` (missing ones are size-1, stride-1 windows).
std::vector<hlo::WindowDim> window_of(const hlo::Instruction& inst, int64_t rank) {
  std::vector<hlo::WindowDim> w = inst.window;
  w.resize(static_cast<size_t>(rank));
  return w;
}

// The operand index a window element reads, or false when it falls in
// padding or between dilated base elements.
bool window_source(const std::vector<hlo::WindowDim>& window, const std::vector<int64_t>& dims,
                   const std::vector<int64_t>& out_index, const std::vector<int64_t>& w_index,
                   std::vector<int64_t>* in) {
  for (size_t d = 0; d < dims.size(); ++d) {
    const hlo::WindowDim& w = window[d];
    const int64_t pos = out_index[d] * w.stride + w_index[d] * w.window_dilation - w.padding_low;
    if (pos < 0 || pos % w.base_dilation != 0) return false;
    const int64_t i = pos / w.base_dilation;
    if (i >= dims[d]) return false;
    (*in)[d] = i;
  }
  return true;
}

}  // namespace

Result<Literal> eval_pad(const hlo::Instruction& inst, const Literal& operand, const Literal& value) {
  const int64_t rank = operand.shape.rank();
  if (static_cast<int64_t>(inst.padding.size()) != rank || value.values.size() != 1) {
    return invalid_input(fmt::format("'{}': pad needs a scalar value and padding for all {} dimensions", inst.name, rank));
  }
  std::vector<int64_t> dims;
  for (size_t d = 0; d < inst.padding.size(); ++d) {
    const hlo::PadDim& p = inst.padding[d];
    const int64_t n = operand.shape.dims[d];
    dims.push_back(p.low + p.high + n + std::max<int64_t>(n - 1, 0) * p.interior);
  }
  if (dims != inst.shape.dims) {
    return invalid_input(fmt::format("'{}': pad result {} does not match the padding (dims [{}])", inst.name,
                                     hlo::to_string(inst.shape), fmt::join(dims, ",")));
  }
  Literal out{inst.shape, std::vector<double>(static_cast<size_t>(inst.shape.element_count()), value.values[0])};
  if (operand.values.empty()) return out;
  const auto strides = row_major_strides(dims);
  std::vector<int64_t> index(static_cast<size_t>(rank), 0), to(static_cast<size_t>(rank));
  size_t i = 0;
  do {
    bool inside = true;
    for (size_t d = 0; d < index.size(); ++d) {
      to[d] = inst.padding[d].low + index[d] * (inst.padding[d].interior + 1);
      inside = inside && to[d] >= 0 && to[d] < dims[d];  // negative padding cuts elements off
    }
    if (inside) out.values[static_cast<size_t>(offset_of(to, strides))] = operand.values[i];
    ++i;
  } while (next_index(index, operand.shape.dims));
  return out;
}

Result<Literal> eval_reverse(const hlo::Instruction& inst, const Literal& operand) {
  std::vector<bool> flip(operand.shape.dims.size(), false);
  for (int64_t d : inst.dimensions) {
    if (d < 0 || d >= operand.shape.rank()) return invalid_input(fmt::format("'{}': reverse dimension {}", inst.name, d));
    flip[static_cast<size_t>(d)] = true;
  }
  Literal out{inst.shape, std::vector<double>(operand.values.size())};
  if (operand.values.empty()) return out;
  const auto strides = row_major_strides(operand.shape.dims);
  std::vector<int64_t> index(operand.shape.dims.size(), 0), from(index.size());
  size_t i = 0;
  do {
    for (size_t d = 0; d < index.size(); ++d) from[d] = flip[d] ? operand.shape.dims[d] - 1 - index[d] : index[d];
    out.values[i++] = operand.values[static_cast<size_t>(offset_of(from, strides))];
  } while (next_index(index, operand.shape.dims));
  return out;
}

Result<std::vector<Literal>> eval_reduce_window(const hlo::Instruction& inst, const Operands& operands,
                                                const std::vector<hlo::Shape>& result_shapes,
                                                const Combiner& combine) {
  if (operands.empty() || operands.size() % 2 != 0 || result_shapes.size() != operands.size() / 2) {
    return invalid_input(fmt::format("'{}': reduce-window takes N inputs and N init values", inst.name));
  }
  const size_t n = operands.size() / 2;
  const std::vector<int64_t>& dims = operands[0]->shape.dims;
  const auto window = window_of(inst, static_cast<int64_t>(dims.size()));
  std::vector<int64_t> wsize;
  for (const hlo::WindowDim& w : window) wsize.push_back(w.size);
  const std::vector<int64_t>& out_dims = result_shapes[0].dims;
  if (out_dims.size() != dims.size()) return invalid_input(fmt::format("'{}': reduce-window rank differs", inst.name));
  std::vector<Literal> out;
  for (size_t k = 0; k < n; ++k) {
    out.push_back(Literal{result_shapes[k], std::vector<double>(static_cast<size_t>(result_shapes[k].element_count()))});
  }
  if (out[0].values.empty()) return out;
  const auto strides = row_major_strides(dims);
  std::vector<int64_t> index(dims.size(), 0), in(dims.size());
  std::vector<double> acc(n), x(n);
  size_t o = 0;
  do {
    for (size_t k = 0; k < n; ++k) acc[k] = operands[n + k]->values[0];
    std::vector<int64_t> w(dims.size(), 0);
    bool any = std::all_of(wsize.begin(), wsize.end(), [](int64_t s) { return s > 0; });
    while (any) {
      if (window_source(window, dims, index, w, &in)) {
        const auto off = static_cast<size_t>(offset_of(in, strides));
        for (size_t k = 0; k < n; ++k) x[k] = operands[k]->values[off];
        SL_RETURN_IF_ERROR(combine(acc, x));
      }
      any = next_index(w, wsize);
    }
    for (size_t k = 0; k < n; ++k) out[k].values[o] = round_to_type(acc[k], result_shapes[k].type);
    ++o;
  } while (next_index(index, out_dims));
  return out;
}

Result<Literal> eval_select_and_scatter(const hlo::Instruction& inst, const Operands& operands,
                                        const Combiner& select, const Combiner& scatter) {
  if (operands.size() != 3 || operands[2]->values.size() != 1) {
    return invalid_input(fmt::format("'{}': select-and-scatter takes operand, source and a scalar init", inst.name));
  }
  const Literal& operand = *operands[0];
  const Literal& source = *operands[1];
  const std::vector<int64_t>& dims = operand.shape.dims;
  const auto window = window_of(inst, static_cast<int64_t>(dims.size()));
  std::vector<int64_t> wsize;
  for (const hlo::WindowDim& w : window) wsize.push_back(w.size);
  Literal out{inst.shape, std::vector<double>(operand.values.size(), operands[2]->values[0])};
  if (source.values.empty()) return out;
  const auto strides = row_major_strides(dims);
  std::vector<int64_t> index(source.shape.dims.size(), 0), in(dims.size());
  std::vector<double> a(1), b(1);
  size_t s = 0;
  do {
    // XLA keeps the first in-bounds element and replaces it with each later
    // one the select computation does not prefer it over.
    int64_t selected = -1;
    std::vector<int64_t> w(dims.size(), 0);
    bool more = std::all_of(wsize.begin(), wsize.end(), [](int64_t v) { return v > 0; });
    while (more) {
      if (window_source(window, dims, index, w, &in)) {
        const int64_t off = offset_of(in, strides);
        if (selected < 0) {
          selected = off;
        } else {
          a[0] = operand.values[static_cast<size_t>(selected)];
          b[0] = operand.values[static_cast<size_t>(off)];
          SL_RETURN_IF_ERROR(select(a, b));
          if (a[0] == 0.0) selected = off;
        }
      }
      more = next_index(w, wsize);
    }
    if (selected >= 0) {
      a[0] = out.values[static_cast<size_t>(selected)];
      b[0] = source.values[s];
      SL_RETURN_IF_ERROR(scatter(a, b));
      out.values[static_cast<size_t>(selected)] = round_to_type(a[0], inst.shape.type);
    }
    ++s;
  } while (next_index(index, source.shape.dims));
  return out;
}

}  // namespace sl::exec::cpu
