#pragma once
// Values the CPU evaluator passes between instructions: an array literal or a
// (nested) tuple of values. Arrays are shared and immutable, so tuples,
// get-tuple-element and while loop state never copy element data.

#include <memory>
#include <utility>
#include <vector>

#include "core/exec/literal.h"

namespace sl::exec::cpu {

struct Value {
  std::shared_ptr<const Literal> array;  // set for arrays and tokens
  std::vector<Value> elements;           // tuples

  static Value of(Literal literal) { return Value{std::make_shared<const Literal>(std::move(literal)), {}}; }
  static Value tuple(std::vector<Value> elements) { return Value{nullptr, std::move(elements)}; }

  bool is_tuple() const { return array == nullptr; }
  const Literal& literal() const { return *array; }

  // Leaves in order (an array is its own only leaf).
  void collect_leaves(std::vector<const Literal*>* out) const {
    if (!is_tuple()) {
      out->push_back(array.get());
      return;
    }
    for (const Value& e : elements) e.collect_leaves(out);
  }
};

// A value of `shape` with every element zero (tuples recursively).
Value zeros_value(const hlo::Shape& shape);

}  // namespace sl::exec::cpu
