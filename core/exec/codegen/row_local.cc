// Which reduces a warp computes for its row (row_local.h).

#include "core/exec/codegen/row_local.h"

#include <algorithm>
#include <utility>

namespace sl::exec::codegen {
namespace {

using hlo::Opcode;

// What a loop's index means at an instruction: the element the loop is on
// (i = row * R + r), that element's row, or something the walk cannot tell.
enum class Level { kElement, kRow, kOther };

int64_t elements(const hlo::Instruction& inst) { return inst.shape.is_array() ? inst.shape.element_count() : -1; }

int64_t product(const std::vector<int64_t>& dims, size_t from) {
  int64_t p = 1;
  for (size_t d = from; d < dims.size(); ++d) p *= dims[d];
  return p;
}

class Walk {
 public:
  Walk(const hlo::Computation& c, int64_t row, const std::vector<int>& loaded)
      : c_(c), row_(row), loaded_(loaded.begin(), loaded.end()) {}

  void visit(int k, Level level) {
    if (!seen_.insert({k, static_cast<int>(level)}).second || loaded_.count(k) > 0) return;
    const hlo::Instruction& inst = at(k);
    if (level == Level::kOther) {
      if (inst.opcode == Opcode::kReduce) other_.insert(k);
      for (int o : inst.operands) visit(o, Level::kOther);
      return;
    }
    switch (inst.opcode) {
      case Opcode::kParameter:
      case Opcode::kConstant:
      case Opcode::kIota: return;  // any index is as good as another
      case Opcode::kReduce: return reduce(k, inst, level);
      case Opcode::kBroadcast: return broadcast(inst, level);
      default: break;
    }
    const bool same_index = hlo::is_elementwise(inst.opcode) || inst.opcode == Opcode::kReshape ||
                            inst.opcode == Opcode::kCopy ||
                            (inst.opcode == Opcode::kBitcast && inst.shape.is_row_major() && !inst.operands.empty() &&
                             at(inst.operands[0]).shape.is_row_major());
    for (int o : inst.operands) {
      visit(o, same_index && elements(at(o)) == elements(inst) ? level : Level::kOther);
    }
  }

  const std::set<int>& candidates() const { return candidates_; }
  const std::set<int>& other() const { return other_; }

 private:
  const hlo::Instruction& at(int k) const { return c_.instructions.at(static_cast<size_t>(k)); }

  // A reduce of each row's R elements (the operand's trailing dimensions).
  bool reduces_rows(const hlo::Instruction& reduce) const {
    if (reduce.operands.size() != 2 || reduce.dimensions.empty() || row_ < 32) return false;
    const hlo::Shape& in = at(reduce.operands[0]).shape;
    if (!in.is_array() || in.type != reduce.shape.type) return false;  // as Elemental::reduce
    std::vector<int64_t> dims = reduce.dimensions;
    std::sort(dims.begin(), dims.end());
    const auto rank = static_cast<int64_t>(in.dims.size());
    for (size_t q = 0; q < dims.size(); ++q) {
      if (dims[q] != rank - static_cast<int64_t>(dims.size() - q)) return false;
    }
    return product(in.dims, static_cast<size_t>(rank) - dims.size()) == row_;
  }

  void reduce(int k, const hlo::Instruction& inst, Level level) {
    if (level == Level::kRow && reduces_rows(inst)) {
      candidates_.insert(k);
      visit(inst.operands[0], Level::kElement);
      visit(inst.operands[1], Level::kOther);
      return;
    }
    other_.insert(k);
    for (int o : inst.operands) visit(o, Level::kOther);
  }

  void broadcast(const hlo::Instruction& inst, Level level) {
    if (inst.operands.empty()) return;
    const hlo::Instruction& operand = at(inst.operands[0]);
    const size_t m = operand.shape.dims.size();
    bool prefix = m > 0 && inst.dimensions.size() == m;
    for (size_t d = 0; prefix && d < m; ++d) prefix = inst.dimensions[d] == static_cast<int64_t>(d);
    if (prefix && operand.shape.dims == inst.shape.dims) return visit(inst.operands[0], level);
    // Along the trailing R elements: the operand's index is the element's row.
    if (prefix && level == Level::kElement && row_ > 0 && product(inst.shape.dims, m) == row_) {
      return visit(inst.operands[0], Level::kRow);
    }
    visit(inst.operands[0], Level::kOther);
  }

  const hlo::Computation& c_;
  int64_t row_;
  std::set<int> loaded_;
  std::set<std::pair<int, int>> seen_;
  std::set<int> candidates_, other_;
};

// Instructions below `k` in dependency order (operands first).
void post_order(const hlo::Computation& c, int k, std::set<int>& seen, std::vector<int>& order) {
  if (!seen.insert(k).second) return;
  for (int o : c.instructions.at(static_cast<size_t>(k)).operands) post_order(c, o, seen, order);
  order.push_back(k);
}

}  // namespace

RowLocalPlan plan_row_local(const hlo::Computation& c, const std::vector<int>& outputs,
                            const std::vector<int64_t>& driven_rows, const std::vector<bool>& row_major,
                            const std::vector<int>& loaded) {
  RowLocalPlan plan;
  std::set<int> other;
  std::vector<std::set<int>> candidates(outputs.size());
  for (size_t n = 0; n < outputs.size(); ++n) {
    const int k = outputs[n];
    RowLoop& loop = plan.loops.emplace_back(RowLoop{k, 0, {}});
    const int64_t driven = n < driven_rows.size() ? driven_rows[n] : -1;
    const bool in_order = n < row_major.size() && row_major[n];
    if (driven > 0) {
      Walk w(c, driven, loaded);
      w.visit(k, Level::kRow);
      candidates[n] = w.candidates();
      other.insert(w.other().begin(), w.other().end());
      continue;
    }
    const hlo::Shape& shape = c.instructions.at(static_cast<size_t>(k)).shape;
    if (driven == 0 && in_order && shape.is_array()) {
      // The shortest row (trailing dimensions) that some reduce is read at.
      for (size_t s = 1; s < shape.dims.size() && loop.row == 0; ++s) {
        const int64_t row = product(shape.dims, shape.dims.size() - s);
        if (row < 32 || row > kMaxWarpRow) continue;
        Walk w(c, row, loaded);
        w.visit(k, Level::kElement);
        bool any = false;
        for (int r : w.candidates()) any = any || w.other().count(r) == 0;
        if (!any) continue;
        loop.row = row;
        candidates[n] = w.candidates();
        other.insert(w.other().begin(), w.other().end());
      }
      if (loop.row > 0) continue;
    }
    // Not a warp per row: every reduce it reads may be at any index.
    Walk w(c, 0, loaded);
    w.visit(k, driven == 0 ? Level::kElement : Level::kOther);
    other.insert(w.other().begin(), w.other().end());
  }
  for (size_t n = 0; n < outputs.size(); ++n) {
    RowLoop& loop = plan.loops[n];
    std::set<int> seen;
    std::vector<int> order;
    post_order(c, outputs[n], seen, order);
    for (int r : order) {
      if (candidates[n].count(r) > 0 && other.count(r) == 0) loop.reduces.push_back(r);
    }
    if (loop.reduces.empty()) loop.row = 0;
    plan.in_warp.insert(loop.reduces.begin(), loop.reduces.end());
  }
  return plan;
}

}  // namespace sl::exec::codegen
