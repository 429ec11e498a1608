// HLO text parser: replica groups in all of XLA's spellings -- the list
// {{0,1},{2,3}}, the iota form [2,2]<=[4]T(1,0), and the mesh form of current
// SPMD dumps, mesh['x'=2,'y'=4] {'y'} (with sub-axes 'y':(1)2 and an
// explicit device order `, device_ids=(...)`) -- all expanded into groups of
// ids; plus collective-permute's source_target_pairs.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/hlo/parser_impl.h"

namespace sl::hlo::parser_internal {
namespace {

constexpr int64_t kMaxGroupDevices = int64_t{1} << 20;

}  // namespace

bool Parser::parse_replica_groups(ReplicaGroups& groups) {
  groups = ReplicaGroups{};
  if (is(TokenKind::kLbrace)) return parse_int_list_list(groups.groups);
  if (is_ident("mesh") || is_ident("maximal_mesh")) return parse_mesh_groups(groups);
  if (!is(TokenKind::kLbracket)) {
    return fail_expected("replica groups ('{{...}}', '[G,S]<=[...]' or 'mesh[...] {...}')");
  }
  SourceLoc loc = cur_.loc;
  std::vector<int64_t> group_dims, reshape_dims, perm;
  if (!parse_bracket_int_list(group_dims)) return false;
  if (!expect(TokenKind::kLeq, "'<=' in iota replica groups")) return false;
  if (!parse_bracket_int_list(reshape_dims)) return false;
  if (is_ident("T")) {
    advance();
    if (!expect(TokenKind::kLparen, "'(' after T")) return false;
    if (!accept(TokenKind::kRparen)) {
      for (;;) {
        int64_t v = 0;
        if (!parse_int(v)) return false;
        perm.push_back(v);
        if (accept(TokenKind::kComma)) continue;
        if (!expect(TokenKind::kRparen, "',' or ')' in the transpose")) return false;
        break;
      }
    }
  }
  // Canonical spelling (no spaces or comments), e.g. [3,10]<=[6,5]T(1,0).
  groups.iota_text = fmt::format("[{}]<=[{}]", fmt::join(group_dims, ","), fmt::join(reshape_dims, ","));
  if (!perm.empty()) groups.iota_text += fmt::format("T({})", fmt::join(perm, ","));
  std::string problem = expand_iota_groups(group_dims, reshape_dims, perm, groups.groups);
  if (!problem.empty()) return fail(loc, problem);
  return true;
}

bool Parser::parse_pairs(std::vector<std::pair<int64_t, int64_t>>& pairs) {
  pairs.clear();
  if (!expect(TokenKind::kLbrace, "'{' to open source_target_pairs")) return false;
  if (accept(TokenKind::kRbrace)) return true;
  for (;;) {
    SourceLoc loc = cur_.loc;
    std::vector<int64_t> pair;
    if (!parse_int_list(pair)) return false;
    if (pair.size() != 2) return fail(loc, fmt::format("a source-target pair needs 2 ids, got {}", pair.size()));
    pairs.emplace_back(pair[0], pair[1]);
    if (accept(TokenKind::kComma)) continue;
    return expect(TokenKind::kRbrace, "',' or '}' in source_target_pairs");
  }
}

std::string expand_iota_groups(const std::vector<int64_t>& group_dims, const std::vector<int64_t>& reshape_dims,
                               const std::vector<int64_t>& perm, std::vector<std::vector<int64_t>>& groups) {
  constexpr int64_t kMaxDevices = kMaxGroupDevices;
  if (group_dims.size() != 2) {
    return fmt::format("iota replica groups need [groups,size] (2 numbers), got {}", group_dims.size());
  }
  int64_t total = 0;
  if (group_dims[0] <= 0 || group_dims[1] <= 0 || __builtin_mul_overflow(group_dims[0], group_dims[1], &total) ||
      total > kMaxDevices) {
    return fmt::format("iota replica groups [{},{}] must be positive and at most {} devices", group_dims[0],
                       group_dims[1], kMaxDevices);
  }
  if (reshape_dims.empty()) return "iota replica groups need reshape dimensions after '<='";
  int64_t product = 1;
  for (int64_t d : reshape_dims) {
    if (d <= 0 || __builtin_mul_overflow(product, d, &product) || product > kMaxDevices) {
      return "iota reshape dimensions must be positive and hold at most 2^20 devices";
    }
  }
  if (product != total) {
    return fmt::format("iota replica groups [{},{}] hold {} devices but the reshape dimensions hold {}", group_dims[0],
                       group_dims[1], total, product);
  }
  size_t rank = reshape_dims.size();
  std::vector<int64_t> order = perm;
  if (order.empty()) {
    for (size_t i = 0; i < rank; ++i) order.push_back(static_cast<int64_t>(i));
  }
  if (order.size() != rank) {
    return fmt::format("transpose T(...) has {} entries but there are {} reshape dimensions", order.size(), rank);
  }
  std::vector<bool> seen(rank, false);
  for (int64_t p : order) {
    if (p < 0 || static_cast<size_t>(p) >= rank || seen[static_cast<size_t>(p)]) {
      return "transpose T(...) must be a permutation of the reshape dimensions";
    }
    seen[static_cast<size_t>(p)] = true;
  }
  // Row-major strides of the reshaped iota; walk the transposed array in
  // row-major order and read the iota value (= flat input index).
  std::vector<int64_t> in_stride(rank, 1);
  for (size_t i = rank - 1; i > 0; --i) in_stride[i - 1] = in_stride[i] * reshape_dims[i];
  std::vector<int64_t> out_dims(rank), out_stride(rank);
  for (size_t i = 0; i < rank; ++i) {
    out_dims[i] = reshape_dims[static_cast<size_t>(order[i])];
    out_stride[i] = in_stride[static_cast<size_t>(order[i])];
  }
  std::vector<int64_t> index(rank, 0);
  groups.assign(static_cast<size_t>(group_dims[0]), {});
  for (int64_t k = 0; k < total; ++k) {
    int64_t value = 0;
    for (size_t i = 0; i < rank; ++i) value += index[i] * out_stride[i];
    groups[static_cast<size_t>(k / group_dims[1])].push_back(value);
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < out_dims[i]) break;
      index[i] = 0;
    }
  }
  return {};
}


bool Parser::parse_mesh_name(std::string& name) {
  if (is(TokenKind::kString)) {
    name = cur_.value;
  } else if (is(TokenKind::kIdent) || is(TokenKind::kInt)) {
    name = std::string(cur_.text);
  } else {
    return fail_expected("a mesh axis name");
  }
  advance();
  return true;
}

bool Parser::parse_mesh_groups(ReplicaGroups& groups) {
  SourceLoc loc = cur_.loc;
  size_t begin = cur_.begin;
  MeshGroups mesh;
  const bool maximal = is_ident("maximal_mesh");
  advance();
  if (!expect(TokenKind::kLbracket, "'[' after mesh")) return false;
  if (maximal) {
    // maximal_mesh[device_id=N]: one device, no axes.
    if (!is_ident("device_id")) return fail_expected("device_id= in maximal_mesh");
    advance();
    int64_t id = 0;
    if (!expect(TokenKind::kEquals, "'=' after device_id") || !parse_int(id)) return false;
    mesh.device_ids = {id};
    if (!expect(TokenKind::kRbracket, "']' to close maximal_mesh")) return false;
  } else {
    for (;;) {
      std::string name;
      int64_t size = 0;
      SourceLoc axis_loc = cur_.loc;
      if (!parse_mesh_name(name)) return false;
      if (!expect(TokenKind::kEquals, "'=' after the mesh axis name") || !parse_int(size)) return false;
      if (size <= 0) return fail(axis_loc, fmt::format("mesh axis '{}' has size {}", name, size));
      if (std::find(mesh.axis_names.begin(), mesh.axis_names.end(), name) != mesh.axis_names.end()) {
        return fail(axis_loc, fmt::format("mesh axis '{}' appears twice", name));
      }
      mesh.axis_names.push_back(std::move(name));
      mesh.axis_sizes.push_back(size);
      if (accept(TokenKind::kComma)) continue;
      if (!expect(TokenKind::kRbracket, "',' or ']' in the mesh axes")) return false;
      break;
    }
    if (is(TokenKind::kComma) && peek_next().kind == TokenKind::kIdent && peek_next().text == "device_ids") {
      advance();
      advance();
      if (!expect(TokenKind::kEquals, "'=' after device_ids")) return false;
      if (!expect(TokenKind::kLparen, "'(' to open device_ids")) return false;
      // XLA prints the device array's values in row-major order; brackets or
      // braces around rows are accepted and ignored.
      int depth = 0;
      while (depth > 0 || !is(TokenKind::kRparen)) {
        if (is(TokenKind::kInt)) {
          int64_t id = 0;
          if (!parse_int(id)) return false;
          mesh.device_ids.push_back(id);
          continue;
        }
        if (is(TokenKind::kLbrace) || is(TokenKind::kLbracket)) ++depth;
        else if (is(TokenKind::kRbrace) || is(TokenKind::kRbracket)) --depth;
        else if (!is(TokenKind::kComma)) return fail_expected("a device id in device_ids");
        if (depth < 0) return fail_here("unbalanced bracket in device_ids");
        advance();
      }
      advance();  // ')'
    }
  }
  if (!expect(TokenKind::kLbrace, "'{' with the mesh axes of the groups")) return false;
  if (!accept(TokenKind::kRbrace)) {
    for (;;) {
      MeshGroups::AxisRef ref;
      std::string name;
      ref.loc = cur_.loc;
      if (!parse_mesh_name(name)) return false;
      auto it = std::find(mesh.axis_names.begin(), mesh.axis_names.end(), name);
      if (it == mesh.axis_names.end()) return fail(ref.loc, fmt::format("'{}' is not an axis of the mesh", name));
      ref.axis = static_cast<size_t>(it - mesh.axis_names.begin());
      if (accept(TokenKind::kColon)) {
        // Sub-axis name:(pre)size: `size` devices of the axis, strided by `pre`.
        if (!expect(TokenKind::kLparen, "'(' in a sub-axis") || !parse_int(ref.pre_size) ||
            !expect(TokenKind::kRparen, "')' in a sub-axis") || !parse_int(ref.size)) {
          return false;
        }
      }
      mesh.refs.push_back(ref);
      if (accept(TokenKind::kComma)) continue;
      if (!expect(TokenKind::kRbrace, "',' or '}' in the mesh group axes")) return false;
      break;
    }
  }
  std::string written(text_.substr(begin, prev_.end - begin));
  groups.mesh_text.clear();
  for (char c : written) {
    if (c != '\n' && c != '\r') groups.mesh_text += c;
  }
  SourceLoc problem_loc = loc;
  std::string problem = expand_mesh_groups(mesh, groups.groups, problem_loc);
  if (!problem.empty()) return fail(problem_loc, problem);
  return true;
}

std::string expand_mesh_groups(const MeshGroups& mesh, std::vector<std::vector<int64_t>>& groups,
                               SourceLoc& where) {
  int64_t total = 1;
  for (int64_t s : mesh.axis_sizes) {
    if (__builtin_mul_overflow(total, s, &total) || total > kMaxGroupDevices) {
      return fmt::format("the mesh holds more than {} devices", kMaxGroupDevices);
    }
  }
  if (mesh.axis_sizes.empty()) total = static_cast<int64_t>(mesh.device_ids.size());
  if (!mesh.device_ids.empty() && static_cast<int64_t>(mesh.device_ids.size()) != total) {
    return fmt::format("device_ids holds {} ids but the mesh has {} devices", mesh.device_ids.size(), total);
  }
  // Split every mesh axis into the pieces its references use (a sub-axis
  // a:(pre)size is the middle of [pre, size, rest]); `grouped` lists the
  // pieces of the group axes in the order the group names them.
  std::vector<int64_t> dims;
  std::vector<size_t> grouped(mesh.refs.size());
  for (size_t axis = 0; axis < mesh.axis_sizes.size(); ++axis) {
    const int64_t full = mesh.axis_sizes[axis];
    std::vector<size_t> on_axis;
    for (size_t r = 0; r < mesh.refs.size(); ++r) {
      if (mesh.refs[r].axis == axis) on_axis.push_back(r);
    }
    std::sort(on_axis.begin(), on_axis.end(),
              [&](size_t a, size_t b) { return mesh.refs[a].pre_size < mesh.refs[b].pre_size; });
    int64_t prefix = 1;
    for (size_t r : on_axis) {
      const MeshGroups::AxisRef& ref = mesh.refs[r];
      where = ref.loc;
      int64_t pre = ref.size == 0 ? 1 : ref.pre_size;
      int64_t size = ref.size == 0 ? full : ref.size;
      if (ref.size != 0 && (pre < 1 || size < 1 || full % (pre * size) != 0)) {
        return fmt::format("sub-axis ({}){} does not divide the axis of size {}", pre, size, full);
      }
      if (on_axis.size() > 1 && ref.size == 0) return "a full mesh axis is named twice or with its sub-axes";
      if (pre < prefix || pre % prefix != 0) return "sub-axes of one mesh axis overlap";
      if (pre != prefix) dims.push_back(pre / prefix);
      grouped[r] = dims.size();
      dims.push_back(size);
      prefix = pre * size;
    }
    if (prefix != full) {
      if (full % prefix != 0) return "sub-axes do not divide their mesh axis";
      dims.push_back(full / prefix);
    }
  }
  where = {};
  // Transpose: the other pieces first (they pick the group), the grouped ones
  // last (they order the devices inside a group); then cut into groups.
  std::vector<bool> is_grouped(dims.size(), false);
  for (size_t g : grouped) is_grouped[g] = true;
  std::vector<size_t> order;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!is_grouped[d]) order.push_back(d);
  }
  int64_t group_size = 1;
  for (size_t g : grouped) {
    order.push_back(g);
    group_size *= dims[g];
  }
  std::vector<int64_t> stride(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) stride[d - 1] = stride[d] * dims[d];
  std::vector<int64_t> index(order.size(), 0);
  groups.assign(static_cast<size_t>(total / group_size), {});
  for (int64_t k = 0; k < total; ++k) {
    int64_t flat = 0;
    for (size_t i = 0; i < order.size(); ++i) flat += index[i] * stride[order[i]];
    int64_t id = mesh.device_ids.empty() ? flat : mesh.device_ids[static_cast<size_t>(flat)];
    groups[static_cast<size_t>(k / group_size)].push_back(id);
    for (size_t i = order.size(); i-- > 0;) {
      if (++index[i] < dims[order[i]]) break;
      index[i] = 0;
    }
  }
  return {};
}

}  // namespace sl::hlo::parser_internal
