#pragma once
// `streamlens suggest` (docs/cli.md): search stream assignments with
// the simulator, print the best with the `--stream` flags that reproduce
// them, and with `--verify cuda` measure them against the original.

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace sl::cli {

struct SuggestArgs {
  std::string program;
  int64_t replicas = 0;        // 0: the module's
  int64_t partitions = 0;
  std::string device;          // "": h200, or with --kernel-times the GPU its capture ran on
  int64_t budget = 2000;       // simulations of the local search
  int top = 5;
  uint64_t seed = 0;
  std::string search = "auto";  // auto | exhaustive | local
  std::string comm_sms;        // "N[,N...]": values to try, the first is the original's
  int streams = 0;             // compute streams the search may use; 0: its default
  int comm_streams = 0;        // communication streams; 0: its default
  bool allow_tf32 = false;
  bool json = false;
  std::string db = "streamlens.db";
  std::string kernel_times;    // --kernel-times RUN: a linked capture in --db costs the instructions
  // --verify cuda: run the original and every candidate on the GPU.
  std::string verify;
  int repeats = 3;
  int warmup = 2;
  int iterations = 5;
};

// Declares the subcommand and its options on `app`; `args` receives them.
CLI::App* add_suggest_command(CLI::App& app, SuggestArgs& args);

int cmd_suggest(const SuggestArgs& args);

}  // namespace sl::cli
