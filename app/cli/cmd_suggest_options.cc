// The options of `streamlens suggest`, kept beside the command rather than in main.cc.

#include <CLI/CLI.hpp>

#include "app/cli/cmd_suggest.h"

namespace sl::cli {

CLI::App* add_suggest_command(CLI::App& app, SuggestArgs& args) {
  CLI::App* cmd = app.add_subcommand("suggest", "search stream assignments with the simulator and print the best");
  cmd->add_option("program", args.program, "program in HLO text (.hlo)")->required();
  cmd->add_option("--device", args.device,
                  "simulated device: h200, h100, a100 or a device .json (default h200; with --kernel-times, the "
                  "GPU that run ran on)");
  cmd->add_option("--budget", args.budget, "simulations the local search may run")->check(CLI::Range(1, 100000000));
  cmd->add_option("--top", args.top, "candidates to print")->check(CLI::Range(1, 1000));
  cmd->add_option("--seed", args.seed, "seed of the local search");
  cmd->add_option("--search", args.search, "auto (exhaustive when at most 4096 assignments), exhaustive or local")
      ->check(CLI::IsMember({"auto", "exhaustive", "local"}));
  cmd->add_option("--comm-sms", args.comm_sms,
                  "SMs a GEMM beside a collective leaves to NCCL, values to try (N[,N...]; the first is the "
                  "original's; default 32,0,16,24,48 when a collective can meet a GEMM, else 32)");
  cmd->add_option("--streams", args.streams, "compute streams the search may use (default: max(3, the program's))")
      ->check(CLI::Range(1, 99));
  cmd->add_option("--comm-streams", args.comm_streams,
                  "communication streams the search may use (default: 2 with two or more collectives, else 1)")
      ->check(CLI::Range(1, 16));
  cmd->add_option("--replicas", args.replicas, "number of replicas (default: the module's replica_count)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--partitions", args.partitions, "number of partitions (default: the module's num_partitions)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--allow-tf32", args.allow_tf32, "let f32 GEMMs use TF32");
  cmd->add_flag("--json", args.json, "print one JSON object");
  cmd->add_option("--kernel-times", args.kernel_times,
                    "cost instructions as they ran in this linked capture's median step (run in --db)");
  cmd->add_option("--db", args.db, "trace database (SQLite) for --verify runs");
  cmd->add_option("--verify", args.verify, "measure the original and each candidate on this backend")
      ->check(CLI::IsMember({"cuda"}));
  cmd->add_option("--repeats", args.repeats, "--verify: runs of each, alternating")->check(CLI::Range(1, 1000));
  cmd->add_option("--warmup", args.warmup, "--verify: untimed iterations per run")->check(CLI::Range(0, 1000000));
  cmd->add_option("--iterations", args.iterations, "--verify: recorded iterations per run (the median counts)")
      ->check(CLI::Range(1, 1000000));
  return cmd;
}

}  // namespace sl::cli
