// format_lowered: the `streamlens lower` listing.
#include <fmt/format.h>

#include <span>

#include "core/sched/lowering.h"

namespace sl::sched {
namespace {

std::string stream_label(int stream) {
  if (stream_kind(stream) == StreamKind::kCompute) return fmt::format("s{}", stream);
  return stream == kCommStreamBase ? "comm" : fmt::format("comm{}", stream - kCommStreamBase);
}

const char* kind_label(ThunkKind kind) {
  switch (kind) {
    case ThunkKind::kKernel: return "kernel";
    case ThunkKind::kGemm: return "gemm";
    case ThunkKind::kCollective: return "collective";
    case ThunkKind::kRecordEvent: return "record";
    case ThunkKind::kWaitEvent: return "wait";
  }
  return "?";
}

std::string slices(std::span<const BufferSlice> list) {
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) out += ' ';
    out += list[i].offset < 0 ? std::string("-") : fmt::format("@{}+{}", list[i].offset, list[i].size);
  }
  return out + "]";
}

std::string ids(std::span<const int64_t> list) {
  std::string out = "{";
  for (size_t i = 0; i < list.size(); ++i) out += fmt::format("{}{}", i ? "," : "", list[i]);
  return out + "}";
}

std::string details(const Thunk& thunk) {
  switch (thunk.kind) {
    case ThunkKind::kRecordEvent:
      return fmt::format("record event e{}", thunk.event);
    case ThunkKind::kWaitEvent:
      return fmt::format("wait for event e{}", thunk.event);
    case ThunkKind::kGemm:
      return fmt::format("m={} n={} k={} batch={} {} flops={} in={} out={} ws={}{}", thunk.gemm.m, thunk.gemm.n,
                         thunk.gemm.k, thunk.gemm.batch, hlo::primitive_type_name(thunk.gemm.type), thunk.flops,
                         slices(thunk.operands), slices(thunk.results), slices(std::span(&thunk.workspace, 1)),
                         thunk.gemm.beside_collective ? " beside-collective" : "");
    case ThunkKind::kCollective: {
      const CollectiveInfo& c = thunk.collective;
      std::string peers;
      if (c.op == hlo::Opcode::kCollectivePermute) peers = fmt::format(" send_to={} recv_from={}", c.send_to, c.recv_from);
      return fmt::format("{} group={} rank={}{} bytes={}->{} rendezvous={} in={} out={}", hlo::opcode_name(c.op),
                         ids(c.group), c.rank_in_group, peers, c.bytes_in, c.bytes_out, c.rendezvous_id,
                         slices(thunk.operands), slices(thunk.results));
    }
    case ThunkKind::kKernel:
      return fmt::format("{} bytes={} in={} out={}",
                         thunk.instruction ? hlo::opcode_name(thunk.instruction->async_wrapped.value_or(
                                                 thunk.instruction->opcode))
                                           : "?",
                         thunk.bytes_accessed, slices(thunk.operands), slices(thunk.results));
  }
  return "";
}

void format_device(std::string& out, const DeviceProgram& device) {
  out += fmt::format("device {} (replica {}, partition {}): {} thunks, {} events\n", device.device, device.replica,
                     device.partition, device.thunks.size(), device.num_events);
  for (size_t i = 0; i < device.thunks.size(); ++i) {
    const Thunk& thunk = device.thunks[i];
    std::string name(thunk.attributed_name);
    if (thunk.instruction && thunk.instruction->name != thunk.attributed_name) {
      name += fmt::format(" ({})", thunk.instruction->name);
    }
    if (thunk.instruction && thunk.occurrence > 0) name += fmt::format(" #{}", thunk.occurrence);
    out += fmt::format("  {:>5}  {:<6} {:<10} {:<28} {}\n", i, stream_label(thunk.stream), kind_label(thunk.kind),
                       name, details(thunk));
  }
}

}  // namespace

std::string format_lowered(const LoweredProgram& program, int64_t device) {
  std::string out;
  const std::string module_name = program.module ? program.module->name : std::string("?");
  out += fmt::format("module {}: {} replica(s) x {} partition(s)\n", module_name, program.replica_count,
                     program.num_partitions);
  for (const std::string& warning : program.warnings) out += fmt::format("warning: {}\n", warning);

  out += "streams:\n";
  for (const StreamAssignmentEntry& entry : program.streams) {
    if (!entry.async_capable && !entry.overridden) continue;  // aliases and dones follow their producers
    // XLA's name for the stream, as thunk_sequence.txt prints it.
    const std::string xla = entry.stream == kMainStream ? std::string() : xla_stream_name(entry.stream);
    out += fmt::format("  {:<32} {:<6} {:<24} {}{}\n", entry.instruction, stream_label(entry.stream), xla,
                       entry.overridden ? "overridden" : "", entry.async_capable ? "" : " (fixed)");
  }
  const BufferAssignment& b = program.buffers;
  out += fmt::format("buffers: {} values, peak {} bytes ({:.2f} MiB), arena {} bytes ({:.2f} MiB)\n",
                     b.buffers.size(), b.peak_bytes, static_cast<double>(b.peak_bytes) / (1 << 20), b.arena_bytes,
                     static_cast<double>(b.arena_bytes) / (1 << 20));
  for (const DeviceProgram& d : program.devices) {
    if (device >= 0 && d.device != device) continue;
    format_device(out, d);
  }
  return out;
}

}  // namespace sl::sched
