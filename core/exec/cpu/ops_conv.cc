// convolution as XLA's operation reference defines it, by a direct loop: for
// each output element, the sum over the kernel window and the input features
// of its group of lhs * rhs, with window strides, padding, base (lhs) and
// window (rhs) dilation, window reversal, feature_group_count and
// batch_group_count. dim_labels (`b01f_01io->b01f`) say which dimension is
// which. Sums run in double and round to the result type.

#include <fmt/format.h>

#include <string>

#include "core/exec/cpu/ops.h"

namespace sl::exec::cpu {
namespace {

// One side of dim_labels: the batch (b, or o for the kernel), feature (f, or
// i) and spatial dimensions (the digits, by number).
struct Labels {
  int64_t batch = -1, feature = -1;
  std::vector<int64_t> spatial;
};

Result<Labels> parse_side(std::string_view text, char batch, char feature) {
  Labels l;
  std::vector<int64_t> spatial(text.size(), -1);
  size_t count = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == batch) {
      l.batch = static_cast<int64_t>(i);
    } else if (c == feature) {
      l.feature = static_cast<int64_t>(i);
    } else if (c >= '0' && c <= '9' && static_cast<size_t>(c - '0') < text.size()) {
      spatial[static_cast<size_t>(c - '0')] = static_cast<int64_t>(i);
      ++count;
    } else {
      return invalid_input(fmt::format("dim_labels part '{}' has '{}'", text, c));
    }
  }
  spatial.resize(count);
  for (int64_t s : spatial) {
    if (s < 0) return invalid_input(fmt::format("dim_labels part '{}' skips a spatial dimension", text));
  }
  if (l.batch < 0 || l.feature < 0) {
    return invalid_input(fmt::format("dim_labels part '{}' needs '{}' and '{}'", text, batch, feature));
  }
  l.spatial = std::move(spatial);
  return l;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

}  // namespace

Result<Literal> eval_convolution(const hlo::Instruction& inst, const Literal& lhs, const Literal& rhs,
                                 const hlo::Shape& result_shape) {
  const std::string& labels = inst.dim_labels;
  const size_t under = labels.find('_'), arrow = labels.find("->");
  if (under == std::string::npos || arrow == std::string::npos || arrow < under) {
    return invalid_input(fmt::format("dim_labels='{}' is not lhs_rhs->out", labels));
  }
  const std::string_view all(labels);
  SL_ASSIGN_OR_RETURN(Labels in, parse_side(all.substr(0, under), 'b', 'f'));
  SL_ASSIGN_OR_RETURN(Labels kernel, parse_side(all.substr(under + 1, arrow - under - 1), 'o', 'i'));
  SL_ASSIGN_OR_RETURN(Labels out, parse_side(all.substr(arrow + 2), 'b', 'f'));
  const size_t spatial = in.spatial.size();
  if (kernel.spatial.size() != spatial || out.spatial.size() != spatial ||
      static_cast<size_t>(lhs.shape.rank()) != spatial + 2 || static_cast<size_t>(rhs.shape.rank()) != spatial + 2 ||
      static_cast<size_t>(result_shape.rank()) != spatial + 2) {
    return invalid_input(fmt::format("dim_labels='{}' do not fit {}, {} -> {}", labels, hlo::to_string(lhs.shape),
                                     hlo::to_string(rhs.shape), hlo::to_string(result_shape)));
  }
  if (!inst.window.empty() && inst.window.size() != spatial) {
    return invalid_input(fmt::format("window has {} dimensions for {} spatial ones", inst.window.size(), spatial));
  }
  const auto& ld = lhs.shape.dims;
  const auto& rd = rhs.shape.dims;
  const auto& od = result_shape.dims;
  const int64_t groups = inst.feature_group_count, batch_groups = inst.batch_group_count;
  const int64_t in_features = rd[static_cast<size_t>(kernel.feature)];
  const int64_t out_features = rd[static_cast<size_t>(kernel.batch)];
  if (groups < 1 || batch_groups < 1 || ld[static_cast<size_t>(in.feature)] != in_features * groups ||
      out_features % groups != 0 || out_features % batch_groups != 0 ||
      ld[static_cast<size_t>(in.batch)] % batch_groups != 0) {
    return invalid_input(fmt::format("features do not divide into feature_group_count={} / batch_group_count={}",
                                     groups, batch_groups));
  }
  const int64_t out_batch = ld[static_cast<size_t>(in.batch)] / batch_groups;
  const std::vector<int64_t> ls = strides_of(ld), rs = strides_of(rd), os = strides_of(od);
  int64_t window_elements = 1;
  for (size_t k = 0; k < spatial; ++k) window_elements *= rd[static_cast<size_t>(kernel.spatial[k])];

  Literal result{result_shape, std::vector<double>(static_cast<size_t>(result_shape.element_count()), 0.0)};
  std::vector<int64_t> index(od.size()), w(spatial);
  for (int64_t o = 0; o < result_shape.element_count(); ++o) {
    for (size_t d = 0, rest = static_cast<size_t>(o); d < od.size(); ++d) {
      index[d] = static_cast<int64_t>(rest) / os[d];
      rest %= static_cast<size_t>(os[d]);
    }
    const int64_t b = index[static_cast<size_t>(out.batch)], f = index[static_cast<size_t>(out.feature)];
    if (b >= out_batch) continue;
    const int64_t feature_group = f / (out_features / groups);
    const int64_t lhs_batch = (f / (out_features / batch_groups)) * out_batch + b;
    double sum = 0;
    for (int64_t e = 0; e < window_elements; ++e) {
      // Kernel position e, row-major over the kernel's spatial sizes.
      int64_t rest = e, lhs_at = lhs_batch * ls[static_cast<size_t>(in.batch)], rhs_at = f * rs[static_cast<size_t>(kernel.batch)];
      bool inside = true;
      for (size_t k = spatial; k-- > 0;) {
        const int64_t size = rd[static_cast<size_t>(kernel.spatial[k])];
        w[k] = rest % size;
        rest /= size;
      }
      for (size_t k = 0; k < spatial && inside; ++k) {
        const hlo::WindowDim win = inst.window.empty() ? hlo::WindowDim{} : inst.window[k];
        const int64_t size = rd[static_cast<size_t>(kernel.spatial[k])];
        const int64_t pos = index[static_cast<size_t>(out.spatial[k])] * win.stride - win.padding_low +
                            w[k] * win.window_dilation;
        if (pos < 0 || pos % win.base_dilation != 0 || pos / win.base_dilation >= ld[static_cast<size_t>(in.spatial[k])]) {
          inside = false;
          break;
        }
        lhs_at += (pos / win.base_dilation) * ls[static_cast<size_t>(in.spatial[k])];
        rhs_at += (win.window_reversal ? size - 1 - w[k] : w[k]) * rs[static_cast<size_t>(kernel.spatial[k])];
      }
      if (!inside) continue;
      for (int64_t i = 0; i < in_features; ++i) {
        const int64_t c = feature_group * in_features + i;
        sum += lhs.values[static_cast<size_t>(lhs_at + c * ls[static_cast<size_t>(in.feature)])] *
               rhs.values[static_cast<size_t>(rhs_at + i * rs[static_cast<size_t>(kernel.feature)])];
      }
    }
    result.values[static_cast<size_t>(o)] = round_to_type(sum, result_shape.type);
  }
  return result;
}

}  // namespace sl::exec::cpu
