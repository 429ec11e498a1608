#pragma once
// XLA's `*.thunk_sequence.txt` and `*.thunk_sequence_after_thunk_passes.txt`
// dumps: the GPU executable's thunks in issue order, as XLA prints them
// (xla/backends/gpu/runtime: each thunk's ToString). One line a thunk:
//   001: kCustomKernel [source | next=002 (1)] loop_gather_fusion grid: [..] ...
//   008: kAsyncStart   [prev=006 (2) | next=018 (7)] stream=computation_stream[0], async_id=8
// nested thunks (command buffers, async starts, dynamic-slice fusions) are
// indented below their owner; a kWhile has `condition:` and `body:` blocks.

#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace sl::xla {

struct Thunk {
  int id = 0;                 // the dump's number ("001" -> 1); ids repeat across blocks
  std::string kind;           // "kCustomKernel", "kCublasLtMatmul", "kCommandBuffer", ...
  std::string kernel;         // kCustomKernel/kKernel: the kernel's name; empty otherwise
  std::string stream;         // kAsyncStart: "computation_stream[1]", "communication_stream[0]"
  int async_id = -1;          // kAsyncStart / kAsyncDone
  std::vector<int> prev;      // DAG edges inside a command buffer (ids of this block)
  std::vector<int> next;
  std::vector<Thunk> nested;  // command buffer, async start, dynamic-slice fusion, sequential
  std::vector<Thunk> condition, body;  // kWhile
  int line = 0;               // 1-based line in the dump
};

struct ThunkSequence {
  std::vector<Thunk> thunks;
  bool has_command_buffers = false;
};

// Lines that are not thunks and not block labels are an error naming the line.
Result<ThunkSequence> parse_thunk_sequence(std::string_view text, std::string_view file_name);
Result<ThunkSequence> read_thunk_sequence(const std::string& path);

// The thunk dump XLA wrote beside an HLO dump (module_N.NAME.*.txt), or an
// empty string when there is none. `after_passes` picks the dump made after
// the thunk passes (command buffers formed).
std::string thunk_sequence_path_for(const std::string& module_path, bool after_passes);

}  // namespace sl::xla
