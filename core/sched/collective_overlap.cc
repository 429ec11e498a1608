#include "core/sched/collective_overlap.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

namespace sl::sched {

namespace {

// clock[r]: index of the last thunk on stream r that the next thunk of the
// stream owning this clock is ordered after (-1: none).
using Clock = std::vector<int64_t>;

void merge(Clock& into, const Clock& from) {
  for (size_t r = 0; r < into.size(); ++r) into[r] = std::max(into[r], from[r]);
}

// Ring collectives run a CTA on every NCCL channel (24 on 2 H200s). A
// collective-permute's send/recv use a few channels per peer and got their
// SMs beside GEMMs without help (measured on 2 H200s: windowed_einsum was 4-7%
// slower when its GEMMs left 16-32 SMs to the permute, while the all-gather
// beside a GEMM ran 1.34x faster).
bool takes_every_channel(const Thunk& t) { return t.collective.op != hlo::Opcode::kCollectivePermute; }

}  // namespace

void mark_gemms_beside_collectives(std::span<Thunk> thunks) {
  std::map<int, size_t> dense;  // program stream -> clock slot
  bool any_collective = false;
  for (const Thunk& t : thunks) {
    dense.emplace(t.stream, dense.size());
    any_collective |= t.kind == ThunkKind::kCollective;
  }
  if (!any_collective) return;
  const size_t streams = dense.size();
  std::vector<size_t> slot(thunks.size());
  for (size_t i = 0; i < thunks.size(); ++i) slot[i] = dense.at(thunks[i].stream);

  std::vector<Clock> clock(streams, Clock(streams, -1));
  std::map<int, Clock> recorded;                   // event -> clock of its recording stream
  Clock last_collective(streams, -1);              // per stream
  std::vector<std::pair<size_t, Clock>> collectives;  // index, its stream's clock before it
  for (size_t i = 0; i < thunks.size(); ++i) {
    Thunk& t = thunks[i];
    Clock& own = clock[slot[i]];
    switch (t.kind) {
      case ThunkKind::kRecordEvent: recorded[t.event] = own; continue;
      case ThunkKind::kWaitEvent:
        if (auto it = recorded.find(t.event); it != recorded.end()) merge(own, it->second);
        continue;
      case ThunkKind::kGemm:
        // Beside a collective issued earlier that this stream has not waited for.
        for (size_t r = 0; r < streams; ++r) {
          if (r != slot[i] && last_collective[r] > own[r]) t.gemm.beside_collective = true;
        }
        break;
      case ThunkKind::kCollective:
        if (!takes_every_channel(t)) break;
        collectives.emplace_back(i, own);
        last_collective[slot[i]] = static_cast<int64_t>(i);
        break;
      default: break;
    }
    own[slot[i]] = static_cast<int64_t>(i);
  }

  // Beside a collective issued later that does not wait for the GEMM. Walking
  // backwards, earliest[r] is the least, over the collectives issued after
  // the current thunk on streams other than r, of the last thunk on r that
  // each is ordered after: a GEMM on r past that index is concurrent with it.
  Clock earliest(streams, std::numeric_limits<int64_t>::max());
  auto next = collectives.rbegin();
  for (size_t i = thunks.size(); i-- > 0;) {
    for (; next != collectives.rend() && next->first > i; ++next) {
      const size_t from = slot[next->first];
      for (size_t r = 0; r < streams; ++r) {
        if (r != from) earliest[r] = std::min(earliest[r], next->second[r]);
      }
    }
    Thunk& t = thunks[i];
    if (t.kind == ThunkKind::kGemm && earliest[slot[i]] < static_cast<int64_t>(i)) t.gemm.beside_collective = true;
  }
}

}  // namespace sl::sched
