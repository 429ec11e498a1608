// `streamlens merge OUT.db IN.db[:RUN]...`: joins the runs that the processes
// of a multi-process job recorded (one database per process and device) into
// one new run. Reads the inputs read-only, through the public TraceStore only.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "app/cli/commands.h"
#include "app/cli/exit_codes.h"
#include "app/cli/output_guard.h"
#include "app/common/run_ref.h"
#include "app/cli/store_access.h"
#include "core/trace/host_probe.h"
#include "core/trace/store/trace_store.h"

namespace sl::cli {
namespace {

constexpr size_t kAppendBatch = 65536;

struct MergeInput {
  std::string db;
  std::string run_ref = "last";
  int64_t run_id = 0;
  trace::RunInfo info;
  trace::Trace trace;
  std::optional<int64_t> time_origin_ns;  // from config_json, when the backend recorded it
};

// "a.db:3", "a.db:last-1" or plain "a.db" (its latest run). A suffix that is
// not a run reference stays part of the path.
MergeInput parse_input(const std::string& arg) {
  MergeInput in;
  in.db = arg;
  size_t colon = arg.rfind(':');
  if (colon == std::string::npos || colon == 0) return in;
  std::string ref = arg.substr(colon + 1);
  bool digits =
      !ref.empty() && std::all_of(ref.begin(), ref.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits || ref == "last" || ref.rfind("last-", 0) == 0) {
    in.db = arg.substr(0, colon);
    in.run_ref = ref;
  }
  return in;
}

std::string describe(const MergeInput& in) { return in.db + " run " + std::to_string(in.run_id); }

Status load_input(MergeInput& in, std::string* program_text,
                  std::vector<sched::StreamAssignmentEntry>* streams) {
  SL_ASSIGN_OR_RETURN(std::unique_ptr<trace::TraceStore> store,
                      trace::TraceStore::open(in.db, trace::TraceStore::Mode::kReadOnly));
  SL_ASSIGN_OR_RETURN(app::StoredRun run, app::load_stored_run(*store, in.run_ref));
  in.run_id = run.id;
  in.info = std::move(run.info);
  in.trace = std::move(run.trace);
  if (program_text != nullptr) {
    SL_ASSIGN_OR_RETURN(*program_text, store->program_text(in.run_id));
    SL_ASSIGN_OR_RETURN(*streams, store->stream_assignment(in.run_id));
  }
  nlohmann::json config = nlohmann::json::parse(in.info.config_json, nullptr, /*allow_exceptions=*/false);
  if (config.is_object() && config.contains("time_origin_ns") &&
      config["time_origin_ns"].is_number_integer()) {
    in.time_origin_ns = config["time_origin_ns"].get<int64_t>();
  }
  return ok_status();
}

// Two inputs recording the same (device, stream) track means the same device
// was recorded twice (or the inputs are not one job's processes).
Status check_overlap(const std::vector<MergeInput>& inputs) {
  std::map<std::pair<int32_t, int32_t>, size_t> owner;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::set<std::pair<int32_t, int32_t>> tracks;
    for (const trace::Event& e : inputs[i].trace.events) tracks.insert({e.device, e.stream});
    for (const auto& track : tracks) {
      auto [it, inserted] = owner.emplace(track, i);
      if (!inserted) {
        return invalid_input(
            describe(inputs[it->second]) + " and " + describe(inputs[i]) + " both hold device " +
            std::to_string(track.first) + " stream " + std::to_string(track.second) +
            "; each process should record only its own devices (--allow-overlap merges anyway)");
      }
    }
  }
  return ok_status();
}

struct Merged {
  trace::Trace trace;
  int64_t num_devices = 0;
  std::optional<int64_t> time_origin_ns;
};

Merged merge_traces(const std::vector<MergeInput>& inputs) {
  Merged merged;
  trace::Trace& out = merged.trace;
  bool aligned =
      std::all_of(inputs.begin(), inputs.end(), [](const MergeInput& in) { return in.time_origin_ns; });
  if (aligned) {
    merged.time_origin_ns = inputs[0].time_origin_ns;
    for (const MergeInput& in : inputs)
      merged.time_origin_ns = std::min(*merged.time_origin_ns, *in.time_origin_ns);
  }
  std::set<int32_t> devices;
  std::map<std::string, int64_t> slowest_host;  // host probe counter -> its largest value
  for (const MergeInput& in : inputs) {
    // Each input's times count from its own origin; move them onto the earliest.
    int64_t shift = aligned ? *in.time_origin_ns - *merged.time_origin_ns : 0;
    uint32_t base = static_cast<uint32_t>(out.events.size());
    for (trace::Event e : in.trace.events) {
      e.name = out.strings.intern(in.trace.name_of(e));
      e.instruction = out.strings.intern(in.trace.instruction_of(e));
      e.start_ns += shift;
      e.end_ns += shift;
      devices.insert(e.device);
      out.events.push_back(e);
    }
    for (const trace::Dependency& d : in.trace.dependencies)
      out.dependencies.push_back({d.from + base, d.to + base});
    for (const trace::Counter& c : in.trace.counters) {
      if (c.name == trace::kHostProbeStartCounter || c.name == trace::kHostProbeEndCounter) {
        int64_t& slowest = slowest_host[c.name];
        slowest = std::max(slowest, c.value);
      } else {
        out.add_counter(c.name, c.value, c.description);
      }
    }
  }
  // A pace is not a count: the merged run keeps the slowest process's host.
  for (const auto& [counter, ns] : slowest_host) {
    out.add_counter(counter, ns,
                    "the slowest merged process's host probe (ns; host_probe_start_ns says more)");
  }
  if (!aligned && inputs.size() > 1) {
    int64_t unaligned =
        std::count_if(inputs.begin(), inputs.end(), [](const MergeInput& in) { return !in.time_origin_ns; });
    out.add_counter(
        "merge_unaligned_inputs", unaligned,
        "merged inputs without a time_origin_ns in their config: times kept as recorded, not aligned");
  }
  merged.num_devices = std::max<int64_t>(1, static_cast<int64_t>(devices.size()));
  return merged;
}

// The first input's options (replicas, partitions, ... for a rerun), plus
// where the events came from and the merged time origin.
std::string merged_config(const std::vector<MergeInput>& inputs, const Merged& merged) {
  nlohmann::json config = nlohmann::json::parse(inputs[0].info.config_json, nullptr, false);
  if (!config.is_object()) config = nlohmann::json::object();
  nlohmann::json sources = nlohmann::json::array();
  for (const MergeInput& in : inputs) {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(in.db, ec);
    sources.push_back({{"db", ec ? in.db : absolute.lexically_normal().string()}, {"run", in.run_id}});
  }
  config["merged_from"] = sources;
  if (merged.time_origin_ns) {
    config["time_origin_ns"] = *merged.time_origin_ns;
  } else {
    config.erase("time_origin_ns");
  }
  return config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<int64_t> write_merged(trace::TraceStore& store, const trace::RunInfo& info,
                             const std::string& program_text,
                             const std::vector<sched::StreamAssignmentEntry>& streams,
                             const trace::Trace& trace) {
  SL_ASSIGN_OR_RETURN(int64_t run_id, store.begin_run(info, program_text, streams));
  Status status;
  for (size_t first = 0; first < trace.events.size() && status.is_ok(); first += kAppendBatch) {
    status = store.append(run_id, trace, first, std::min(kAppendBatch, trace.events.size() - first));
  }
  if (status.is_ok()) status = store.append_dependencies(run_id, trace.dependencies);
  if (!status.is_ok()) {
    (void)store.finish_run(run_id, trace::RunStatus::kFailed, 0,
                           trace.counters);  // the first error is reported
    return status;
  }
  SL_RETURN_IF_ERROR(
      store.finish_run(run_id, trace::RunStatus::kComplete, trace.makespan_ns(), trace.counters));
  return run_id;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec) && !ec;
}

}  // namespace

int cmd_merge(const MergeArgs& args) {
  if (args.inputs.empty()) return fail(usage_error("merge needs at least one input database"));
  std::vector<MergeInput> inputs;
  for (const std::string& arg : args.inputs) inputs.push_back(parse_input(arg));
  for (const MergeInput& in : inputs) {
    if (same_file(in.db, args.out)) {
      return fail(usage_error(args.out + " is also an input; merge writes a new database and never modifies "
                                         "its inputs"));
    }
    Status safe = refuse_overwrite(args.out, in.db, {});  // OUT named as an input's -wal or -shm file
    if (!safe.is_ok()) return fail(safe);
  }

  // Load everything before touching OUT, so a bad input leaves no trace.
  std::string program_text;
  std::vector<sched::StreamAssignmentEntry> streams;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Status loaded = load_input(inputs[i], i == 0 ? &program_text : nullptr, &streams);
    if (!loaded.is_ok()) return fail(loaded);
  }
  if (!args.allow_overlap) {
    Status overlap = check_overlap(inputs);
    if (!overlap.is_ok()) return fail(overlap);
  }
  Merged merged = merge_traces(inputs);

  const trace::RunInfo& first = inputs[0].info;
  trace::RunInfo info;
  info.name = args.name.empty() ? first.name + " (merged from " + std::to_string(inputs.size()) + " runs)"
                                : args.name;
  info.program_name = first.program_name;
  info.backend = first.backend;
  info.device_model = first.device_model;
  info.num_devices = merged.num_devices;
  info.config_json = merged_config(inputs, merged);

  Result<std::unique_ptr<trace::TraceStore>> out = open_store_for_writing(args.out);
  if (!out) return fail(out.status());
  Result<int64_t> id = write_merged(**out, info, program_text, streams, merged.trace);
  if (!id) return fail(id.status());

  if (!merged.time_origin_ns && inputs.size() > 1) {
    std::fprintf(stderr,
                 "streamlens: warning: not every input records time_origin_ns; times are kept as recorded, "
                 "not aligned (counter merge_unaligned_inputs)\n");
  }
  std::printf("merged %zu runs (%zu events, %lld devices) into %s as run %lld\n", inputs.size(),
              merged.trace.events.size(), static_cast<long long>(merged.num_devices), args.out.c_str(),
              static_cast<long long>(*id));
  return kExitOk;
}

}  // namespace sl::cli
