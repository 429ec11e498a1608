// `streamlens`: the headless command line (docs/cli.md). Builds and runs
// with no GPU, no display and no GLFW.

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/cmd_suggest.h"
#include "app/cli/commands.h"
#include "app/cli/exit_codes.h"

namespace {

using sl::cli::ProgramArgs;

// Every subcommand that reads a program takes the device counts; they apply
// before verification, so replica groups are checked against them.
void add_device_options(CLI::App* cmd, ProgramArgs* args) {
  cmd->add_option("--replicas", args->replicas,
                  "number of replicas (default: the module's replica_count, else what its collectives need)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--partitions", args->partitions,
                  "number of partitions (default: the module's num_partitions, else what its collectives need)")
      ->check(CLI::Range(1, 4096));
}

void add_program_options(CLI::App* cmd, ProgramArgs* args) {
  cmd->add_option("program", args->program, "program in HLO text (.hlo)")->required();
  cmd->add_option("--stream", args->streams, "run instruction NAME on stream N (N or 'comm'), repeatable")
      ->type_name("NAME=N");
  add_device_options(cmd, args);
  cmd->add_option("--max-unroll", args->max_unroll,
                  "most thunks a program may unroll to (while loops), default 1000000")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"streamlens: simulate, run and compare GPU stream schedules of HLO programs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "streamlens 0.1.0");

  ProgramArgs check_args;
  auto* check = app.add_subcommand("check", "parse and verify a program");
  check->add_option("program", check_args.program, "program in HLO text (.hlo)")->required();
  add_device_options(check, &check_args);

  ProgramArgs lower_args;
  int64_t lower_device = -1;
  auto* lower = app.add_subcommand("lower", "print the per-device thunk sequence and buffer assignment");
  add_program_options(lower, &lower_args);
  lower->add_option("--device-id", lower_device, "print only this device (global id)");

  sl::cli::RunArgs run_args;
  auto* run = app.add_subcommand("run", "run a program on a backend and record it in the database");
  add_program_options(run, &run_args.program);
  run->add_option("--backend", run_args.backend, "auto (cuda when a GPU is present, else sim), sim, cpu or cuda")
      ->check(CLI::IsMember({"auto", "sim", "cpu", "cuda"}));
  run->add_option("--device", run_args.device,
                  "simulated device: h200, h100, a100 or a device .json (default h200; with --kernel-times, the "
                  "GPU that run ran on)");
  run->add_option("--db", run_args.db, "trace database (SQLite)");
  run->add_option("--name", run_args.name, "name of the run");
  run->add_option("--init", run_args.init, "parameter values")->check(CLI::IsMember({"ramp", "random"}));
  run->add_option("--seed", run_args.seed, "seed for --init random");
  run->add_option("--results", run_args.results, "write the ROOT's values as JSON (cpu, cuda)");
  run->add_option("--warmup", run_args.warmup, "untimed iterations first (cuda)")->check(CLI::Range(0, 1000000));
  run->add_option("--iterations", run_args.iterations, "recorded iterations (cuda)")->check(CLI::Range(1, 1000000));
  run->add_flag("--json", run_args.json, "print the run as one JSON object");
  run->add_flag("--allow-tf32", run_args.allow_tf32,
                "every f32 GEMM may use TF32 (without it, cuda and sim use it where XLA does: DEFAULT or HIGH precision)");
  run->add_option("--kernel-times", run_args.kernel_times,
                  "sim: cost each instruction as it ran in this linked capture's median step (run in --db)");
  run->add_option("--host-costs", run_args.host_costs,
                  "sim with --kernel-times: XLA's host-issue costs estimated from that run (capture) or the "
                  "device file's (device)")
      ->check(CLI::IsMember({"capture", "device"}));
  run->add_option("--command-buffers", run_args.command_buffers,
                  "sim, cuda: run XLA's command buffers as CUDA graphs (auto: as the module's "
                  "thunk_sequence_after_thunk_passes.txt says; on: that dump must show some; off: every kernel "
                  "launched one by one on its stream)")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  run->add_option("--comm-sms", run_args.comm_sms,
                  "SMs a GEMM beside an in-flight collective leaves to NCCL (cuda, sim); 0: none")
      ->check(CLI::Range(0, 1024));
  run->add_option(
         "--nccl-timeout", run_args.nccl_timeout_s,
         "seconds without an iteration issued or finished before a multi-GPU run stops NCCL and fails "
         "(cuda); 0: wait forever")
      ->check(CLI::Range(0, 86400 * 365));

  sl::cli::StoreArgs store_args;
  auto add_db = [&](CLI::App* cmd) { cmd->add_option("--db", store_args.db, "trace database (SQLite)"); };

  auto* runs = app.add_subcommand("runs", "list the runs in the database");
  add_db(runs);
  runs->add_flag("--json", store_args.json, "print JSON");

  std::string show_run;
  auto* show = app.add_subcommand("show", "print a run's events");
  show->add_option("run", show_run, "run id, last or last-N")->required();
  add_db(show);
  show->add_flag("--json", store_args.json, "print one JSON object");

  std::string run_a, run_b;
  auto* compare = app.add_subcommand("compare", "compare two runs");
  compare->add_option("run_a", run_a, "baseline run id")->required();
  compare->add_option("run_b", run_b, "current run id")->required();
  add_db(compare);
  compare->add_flag("--json", store_args.json, "print one JSON object");

  std::string export_run, export_format = "chrome", export_out;
  auto* exp = app.add_subcommand("export", "export a run as Chrome trace JSON (Perfetto) or CSV");
  exp->add_option("run", export_run, "run id, last or last-N")->required();
  exp->add_option("--format", export_format, "chrome or csv")->check(CLI::IsMember({"chrome", "csv"}));
  exp->add_option("-o,--output", export_out, "output file")->required();
  add_db(exp);

  std::string import_file, import_name, import_xla_dump;
  auto* imp = app.add_subcommand("import", "import an Nsight Systems SQLite export, or a streamlens capture file, as a run");
  imp->add_option("file", import_file, "`nsys export --type sqlite` output, or a capture's .jsonl")->required();
  imp->add_option("--name", import_name, "name of the run");
  imp->add_option("--xla-dump", import_xla_dump, "link a capture file to the XLA module of DIR that ran");
  add_db(imp);

  sl::cli::CaptureArgs capture_args;
  auto* capture = app.add_subcommand("capture", "record every CUDA kernel of a command, a run per process: capture -- CMD ARGS...");
  add_db(capture);
  capture->add_option("--name", capture_args.name, "name of the run");
  capture->add_option("--xla-dump", capture_args.xla_dump,
                      "have XLA dump its modules and its autotuning log into DIR (added to XLA_FLAGS) and link the run to the one that ran");
  capture->add_option("--capture-range", capture_args.capture_range,
                      "keep only what runs between cudaProfilerStart and cudaProfilerStop (cudaProfilerApi), "
                      "or inside the NVTX ranges named NAME (nvtx:NAME)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v == "cudaProfilerApi" || (v.rfind("nvtx:", 0) == 0 && v.size() > 5)) return "";
            return "expected cudaProfilerApi or nvtx:NAME, got '" + v + "'";
          },
          "cudaProfilerApi|nvtx:NAME"));
  capture->add_option("--delay", capture_args.delay_s, "keep records from S seconds after each process first uses CUDA")
      ->check(CLI::Range(0.0, 1e6));
  capture->add_option("--duration", capture_args.duration_s, "keep records for S seconds (after --delay)")
      ->check(CLI::Range(0.0, 1e6));
  capture->add_option("command", capture_args.command, "the command to record (after --)")->required();

  std::vector<std::string> calibrate_runs;
  std::string calibrate_out;
  auto* calibrate = app.add_subcommand("calibrate", "fit a device model to measured runs");
  calibrate->add_option("runs", calibrate_runs, "measured run ids")->required();
  calibrate->add_option("-o,--output", calibrate_out, "device file to write")->required();
  add_db(calibrate);

  sl::cli::MergeArgs merge_args;
  auto* merge = app.add_subcommand("merge", "join runs recorded by the processes of one job into one run");
  merge->add_option("out", merge_args.out, "database that receives the merged run")->required();
  merge->add_option("inputs", merge_args.inputs, "IN.db[:RUN] (RUN: id, last or last-N; default last), read-only")
      ->required();
  merge->add_option("--name", merge_args.name, "name of the merged run");
  merge->add_flag("--allow-overlap", merge_args.allow_overlap,
                  "merge even when two inputs hold the same (device, stream) track");

  sl::cli::LinkArgs link_args;
  auto* link = app.add_subcommand("link", "tie a captured run's kernels to the XLA module that ran, step by step");
  link->add_option("run", link_args.run, "captured run: id, last or last-N")->required();
  link->add_option("module", link_args.module, "XLA's MODULE.sm_*_gpu_after_optimizations.txt")->required();
  link->add_option("--thunks", link_args.thunks, "XLA's thunk dump (default: the one beside the module)");
  link->add_option("--name", link_args.name, "name of the linked run");
  link->add_option("--db", link_args.db, "trace database (SQLite)");
  sl::cli::SuggestArgs suggest_args;
  auto* suggest = sl::cli::add_suggest_command(app, suggest_args);
  sl::cli::QueryArgs query_args;
  auto* query = app.add_subcommand("query", "run one SQL statement over the database; `events` holds every event");
  query->add_option("sql", query_args.sql, "SQL statement, e.g. \"select name, sum(dur_ns) from events group by name\"")
      ->required();
  query->add_option("--db", query_args.db, "trace database (SQLite), opened read-only");
  query->add_flag("--csv", query_args.csv, "print CSV with a header line (default: tab-separated)");
  query->add_flag("--json", query_args.json, "print a JSON array of row objects");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return sl::cli::kExitUsage;
  }

  if (*check) return sl::cli::cmd_check(check_args);
  if (*lower) return sl::cli::cmd_lower(lower_args, lower_device);
  if (*run) return sl::cli::cmd_run(run_args);
  if (*runs) return sl::cli::cmd_runs(store_args);
  if (*show) return sl::cli::cmd_show(store_args, show_run);
  if (*compare) return sl::cli::cmd_compare(store_args, run_a, run_b);
  if (*exp) return sl::cli::cmd_export(store_args, export_run, export_format, export_out);
  if (*imp && import_file.size() > 6 && import_file.substr(import_file.size() - 6) == ".jsonl") {
    return sl::cli::cmd_import_capture(store_args, import_file, import_name, import_xla_dump);
  }
  if (*imp && !import_xla_dump.empty()) {
    std::fprintf(stderr, "streamlens: error: --xla-dump goes with a capture file (.jsonl)\n");
    return sl::cli::kExitUsage;
  }
  if (*imp) return sl::cli::cmd_import(store_args, import_file, import_name);
  if (*capture) return sl::cli::cmd_capture(store_args, capture_args);
  if (*calibrate) return sl::cli::cmd_calibrate(store_args, calibrate_runs, calibrate_out);
  if (*merge) return sl::cli::cmd_merge(merge_args);
  if (*link) return sl::cli::cmd_link(link_args);
  if (*suggest) return sl::cli::cmd_suggest(suggest_args);
  if (*query) return sl::cli::cmd_query(query_args);
  return sl::cli::kExitUsage;
}
