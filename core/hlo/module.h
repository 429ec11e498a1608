#pragma once
// The program IR: a Module of Computations of Instructions, as parsed from
// XLA HLO text (docs/program-format.md). Operands are indices into the owning
// computation's instruction list; called computations are indices into the
// module's computation list. Attributes the tool understands are typed
// fields; any other attribute is kept verbatim in `attributes` (the parser
// warns once per unknown name).

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
  std::string mesh_text;                      // original mesh spelling (mesh['x'=2] {'x'}), for printing
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

// gather's dimension numbers (XLA's GatherDimensionNumbers).
struct GatherDims {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  std::vector<int64_t> operand_batching_dims, start_indices_batching_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> slice_sizes;
  bool indices_are_sorted = false;
};

// scatter's dimension numbers (XLA's ScatterDimensionNumbers).
struct ScatterDims {
  std::vector<int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims, scatter_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool indices_are_sorted = false;
  bool unique_indices = false;
};

// One dimension of `window={size=3x3 stride=2x2 pad=1_1x0_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}`.
struct WindowDim {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t base_dilation = 1;     // lhs_dilate
  int64_t window_dilation = 1;   // rhs_dilate
  bool window_reversal = false;  // rhs_reversal
};

// One dimension of pad's `padding=low_high[_interior]x...`.
struct PadDim {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
};

// Where an instruction came from: `metadata={op_name=".." source_file=".."
// source_line=N stack_frame_id=N}`.
struct OpMetadata {
  std::string op_type;
  std::string op_name;
  std::string source_file;
  int64_t source_line = 0;
  int64_t stack_frame_id = 0;  // 1-based into Module::stack_frames; 0 = none
  // The instruction whose code XLA reuses for this one (same fusion body):
  // its autotuning log entry is this one's too (core/xla/autotune_log.h).
  std::string deduplicated_name;
};

// The tables current XLA prints after the module header (FileNames,
// FunctionNames, FileLocations, StackFrames); ids in the text are 1-based.
struct StackFrameTables {
  struct Location {
    int64_t file_id = 0, function_id = 0, line = 0, end_line = 0, column = 0, end_column = 0;
  };
  struct Frame {
    int64_t location_id = 0;
    int64_t parent_frame_id = 0;  // 0 = outermost
  };
  std::vector<std::string> file_names;
  std::vector<std::string> function_names;
  std::vector<Location> locations;
  std::vector<Frame> frames;
};

// cuBLAS GEMM custom-calls (`__cublas$gemm`, `__cublas$lt$matmul`): their
// backend_config's gemm_backend_config fields the evaluator needs.
struct GemmConfig {
  double alpha_real = 1.0;
  double alpha_imag = 0.0;
  double beta = 0.0;
  std::string epilogue = "DEFAULT";  // DEFAULT, RELU, BIAS, BIAS_RELU, GELU, GELU_AUX, BIAS_GELU, ...
};

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
  std::vector<double> literal;                   // constant values, row-major; complex: (re, im) pairs
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
  GatherDims gather;                             // gather
  ScatterDims scatter;                           // scatter
  std::vector<WindowDim> window;                 // reduce-window, select-and-scatter, convolution
  std::vector<PadDim> padding;                   // pad
  std::optional<bool> is_stable;                 // sort
  std::optional<int64_t> k;                      // topk
  std::optional<bool> largest;                   // topk
  std::string rng_algorithm;                     // rng-bit-generator: rng_default, rng_three_fry, rng_philox
  std::string rng_distribution;                  // rng: rng_uniform, rng_normal
  std::optional<int64_t> exponent_bits, mantissa_bits;  // reduce-precision
  std::string dim_labels;                        // convolution: b01f_01io->b01f
  int64_t feature_group_count = 1, batch_group_count = 1;  // convolution
  std::optional<GemmConfig> gemm_config;         // __cublas$gemm / __cublas$lt$matmul

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
  std::vector<int64_t> wait_on_operation_queues;  // backend_config wait_on_operation_queues

  // Scheduling and provenance.
  std::vector<int> control_predecessors;         // indices into Computation::instructions
  std::string async_execution_thread;            // async_execution_thread="parallel"; empty = main
  OpMetadata metadata;

  // Attributes with no typed field above, verbatim: name -> the text after '='.
  std::map<std::string, std::string, std::less<>> attributes;

  // Compute stream requested by the program: operation_queue_id, or
  // _xla_stream_annotation on this instruction; nullopt when neither is set.
  std::optional<int64_t> requested_stream() const;
  // XLA launches its kernel with programmatic dependent launch
  // (frontend attribute xla.pdl_launch="true", its Triton GEMM fusions):
  // in a graph, the next node starts before CUPTI's end of it.
  bool is_pdl_launch() const;
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
  bool replica_count_declared = false;    // the header set replica_count=
  bool num_partitions_declared = false;   // the header set num_partitions=
  bool is_scheduled = false;              // is_scheduled=true: text order is XLA's issue order
  StackFrameTables stack_frames;
  std::vector<Computation> computations;  // callees may come before callers, as in XLA dumps
  int entry = -1;
  std::string file_name;                  // for diagnostics
  std::string source_text;                // for diagnostics (source line + caret)
  std::vector<std::string> warnings;      // formatted diagnostics, e.g. unknown attributes

  const Computation& entry_computation() const { return computations.at(static_cast<size_t>(entry)); }
  int find_computation(std::string_view computation_name) const;  // -1 if absent
  int64_t device_count() const { return replica_count * num_partitions; }

  // "file.py:42 (function)" of an instruction's innermost stack frame, or of
  // its metadata's source_file/source_line; empty when neither is known.
  std::string source_location(const Instruction& instruction) const;
};

}  // namespace sl::hlo
