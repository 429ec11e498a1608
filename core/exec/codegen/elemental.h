#pragma once
// The elemental part of the generator (fusion_codegen.h), in XLA's manner:
// the value of an instruction at an index is emitted as statements into a
// scope, and a value already emitted at the same index in this scope (or an
// enclosing one) is reused, so shared subexpressions are computed once per
// element. Reductions loop over their reduced elements in row-major order,
// the cpu backend's order. Internal to core/exec/codegen.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/exec/codegen/index_text.h"
#include "core/hlo/module.h"

namespace sl::exec::codegen {


// Statements being emitted and the values they hold ("instruction@index" ->
// variable); values of enclosing scopes are visible inside.
struct Scope {
  std::string code;
  std::string indent = "  ";
  std::map<std::string, std::string> values;
  const Scope* parent = nullptr;

  const std::string* find(const std::string& key) const;
  Scope child() const;
  void line(const std::string& text) { code += indent + text + "\n"; }
};

class Elemental {
 public:
  // Text reading parameter(N) at linear index `index`, in compute form.
  using ParamFn = std::function<std::string(int64_t number, const std::string& index)>;

  // `globals` collects what must precede the kernel (reducer functions,
  // constant arrays); `unique` numbers names across one source.
  Elemental(const hlo::Module& module, const hlo::Computation& computation, ParamFn param, std::string* globals,
            int* unique)
      : module_(module), c_(computation), param_(std::move(param)), globals_(globals), unique_(unique) {}

  // A variable (or constant) holding instruction `k` at linear `index`;
  // emits what it needs into `scope`.
  Result<std::string> value(int k, const std::string& index, Scope& scope);
  // Names instruction `k`'s value at `index` in `scope` (a loop that computed it).
  static void define(Scope& scope, int k, const std::string& index, const std::string& var);
  // The scalar reducer function of a reduce's to_apply (`T f(T acc, T x)`).
  Result<std::string> reducer(const hlo::Instruction& reduce);
  // Instruction `k` is read from the array `pointer` (a buffer an earlier
  // kernel of the same fusion wrote: a hoisted reduce, a GEMM's result)
  // instead of being computed.
  void load_from(int k, std::string pointer) { loaded_[k] = std::move(pointer); }
  // Instruction `k` is `var` at whatever index it is asked for, until
  // unbind_all: a reduce a warp computed for the row its loop is on, where
  // row_local.h proved every read is at that row.
  void bind(int k, std::string var) { bound_[k] = std::move(var); }
  void unbind_all() { bound_.clear(); }
  // A fresh variable name.
  std::string fresh(const char* stem = "t") { return fmt_name(stem, (*unique_)++); }
  // `expr` as an index variable of `scope` (reused for the same text).
  std::string index(const std::string& expr, Scope& scope);

 private:
  static std::string fmt_name(const char* stem, int n) { return std::string(stem) + std::to_string(n); }
  Result<std::string> compute(int k, const std::string& index, Scope& scope);
  Result<std::string> elementwise(const hlo::Instruction& inst, const std::string& index, Scope& scope);
  Result<std::string> reduce(int k, const std::string& index, Scope& scope);
  Result<std::string> gather(const hlo::Instruction& inst, const std::vector<std::string>& oc, Scope& scope);
  Result<std::string> constant(const hlo::Instruction& inst, const std::string& index);
  const hlo::Instruction& at(int k) const { return c_.instructions.at(static_cast<size_t>(k)); }

  const hlo::Module& module_;
  const hlo::Computation& c_;
  ParamFn param_;
  std::string* globals_;
  int* unique_;
  std::map<int, std::string> reducers_;  // to_apply computation -> function name
  std::map<int, std::string> loaded_;    // instruction -> array holding it
  std::map<int, std::string> bound_;     // instruction -> register holding it (bind)
};

}  // namespace sl::exec::codegen
