#pragma once
// The program IR: a Module of Computations of Instructions, as parsed from
// XLA HLO text (DESIGN section 2). Operands are indices into the owning
// computation's instruction list; called computations are indices into the
// module's computation list. Attributes the tool understands are typed
// fields; unknown ones are dropped by the parser with a warning.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/hlo/opcode.h"
#include "core/hlo/shape.h"

namespace sl::hlo {

struct SourceLoc {
  int line = 0;  // 1-based; 0 = unknown (built in code, not parsed)
  int col = 0;   // 1-based
};

// `replica_groups=`: list form {{0,1},{2,3}}, empty {}, or iota form
// [2,2]<=[4] / [3,10]<=[6,5]T(1,0), which the parser expands into `groups`.
struct ReplicaGroups {
  std::vector<std::vector<int64_t>> groups;  // empty = every participant in one group
  std::string iota_text;                      // original iota spelling, for printing; empty for list form
};

struct SliceDim {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
};

struct DotDims {
  std::vector<int64_t> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
};

enum class ComparisonDirection { kEq, kNe, kLt, kLe, kGt, kGe };

struct Instruction {
  std::string name;           // without '%'
  Opcode opcode = Opcode::kParameter;
  Shape shape;
  std::vector<int> operands;  // indices into Computation::instructions
  bool is_root = false;
  SourceLoc loc;              // where the instruction's name starts
  SourceLoc opcode_loc;       // where the opcode starts

  // For kAsyncStart/kAsyncUpdate/kAsyncDone written in sugared form
  // (`all-gather-start`, `custom-call-done`, ...): the wrapped opcode, whose
  // attributes are stored on this instruction. Empty for explicit async-start
  // (which wraps `called[0]`) and for every other opcode.
  std::optional<Opcode> async_wrapped;

  // --- typed attributes (present only where the opcode uses them) ---
  int64_t parameter_number = -1;                 // parameter(N)
  std::vector<double> literal;                   // constant values, row-major
  std::string literal_text;                      // constant(...) as written, for printing
  int64_t tuple_index = -1;                      // get-tuple-element index=
  int64_t iota_dimension = -1;
  std::vector<int64_t> dimensions;               // dimensions={...}: broadcast, transpose, reduce,
                                                 // concatenate, all-gather, reduce-scatter
  std::vector<SliceDim> slice;                   // slice={[a:b:s], ...}
  std::vector<int64_t> dynamic_slice_sizes;
  std::optional<ComparisonDirection> comparison_direction;
  std::string comparison_type;                   // type=TOTALORDER etc, kept for printing
  DotDims dot;

  // Collectives.
  std::optional<ReplicaGroups> replica_groups;
  std::optional<int64_t> channel_id;
  std::optional<bool> use_global_device_ids;
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;

  // Called computations: to_apply= / calls= / condition=,body= (in that order:
  // called[0] = condition, called[1] = body for while) / branch_computations=.
  std::vector<int> called;
  std::string fusion_kind;                       // kind=kLoop ...
  std::string custom_call_target;

  // backend_config: raw text plus the fields the tool reads.
  std::string backend_config;
  std::optional<int64_t> operation_queue_id;     // {"operation_queue_id":"N"}
  std::optional<int64_t> known_trip_count;       // {"known_trip_count":{"n":"N"}}
  std::map<std::string, std::string, std::less<>> frontend_attributes;  // transparent: finds by view

  // Compute stream requested by the program: operation_queue_id, or
  // _xla_stream_annotation on this instruction; nullopt when neither is set.
  std::optional<int64_t> requested_stream() const;
};

struct Computation {
  std::string name;
  std::vector<Instruction> instructions;  // in text (= schedule) order
  int root = -1;                          // index of ROOT (last instruction if none is marked)
  std::vector<int> parameters;            // parameters[N] = index of parameter(N)
  bool is_entry = false;
  SourceLoc loc;
  // The header's `(p: shape, ...) -> shape` when the text has one (nullopt
  // otherwise); the verifier checks it against the parameters and the ROOT.
  std::optional<std::vector<Shape>> declared_parameters;
  std::optional<Shape> declared_result;

  int find(std::string_view instruction_name) const;  // -1 if absent
};

struct Module {
  std::string name;
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  std::vector<Computation> computations;  // callees may come before callers, as in XLA dumps
  int entry = -1;
  std::string file_name;                  // for diagnostics
  std::string source_text;                // for diagnostics (source line + caret)
  std::vector<std::string> warnings;      // formatted diagnostics, e.g. unknown attributes

  const Computation& entry_computation() const { return computations.at(static_cast<size_t>(entry)); }
  int find_computation(std::string_view computation_name) const;  // -1 if absent
  int64_t device_count() const { return replica_count * num_partitions; }
};

}  // namespace sl::hlo
