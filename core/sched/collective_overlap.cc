#include "core/sched/collective_overlap.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace sl::sched {

namespace {

// Ring collectives run a CTA on every NCCL channel (24 on 2 H200s). A
// collective-permute's send/recv use a few channels per peer and got their
// SMs beside GEMMs without help (measured on 2 H200s: windowed_einsum was 4-7%
// slower when its GEMMs left 16-32 SMs to the permute, while the all-gather
// beside a GEMM ran 1.34x faster).
bool takes_every_channel(const Thunk& t) { return t.collective.op != hlo::Opcode::kCollectivePermute; }

// Vector clocks, one row of `width` entries per owner, in one allocation:
// entry r of a row is the index of the last thunk on stream slot r that the
// owner is ordered after (-1: none).
class Clocks {
 public:
  Clocks(size_t rows, size_t width) : width_(width), data_(rows * width, -1) {}
  int64_t* row(size_t i) { return data_.data() + i * width_; }
  void grow(size_t rows) {
    if (rows * width_ > data_.size()) data_.resize(rows * width_, -1);
  }

 private:
  size_t width_;
  std::vector<int64_t> data_;
};

}  // namespace

void mark_gemms_beside_collectives(std::span<Thunk> thunks) {
  bool any_gemm = false, any_collective = false;
  std::vector<int> numbers;  // program stream of each slot; programs have a handful
  std::vector<uint8_t> slot(thunks.size());
  int max_event = -1;
  for (size_t i = 0; i < thunks.size(); ++i) {
    const Thunk& t = thunks[i];
    any_gemm |= t.kind == ThunkKind::kGemm;
    any_collective |= t.kind == ThunkKind::kCollective && takes_every_channel(t);
    max_event = std::max(max_event, t.event);
    auto it = std::find(numbers.begin(), numbers.end(), t.stream);
    if (it == numbers.end()) it = numbers.insert(numbers.end(), t.stream);
    slot[i] = static_cast<uint8_t>(it - numbers.begin());
  }
  const size_t streams = numbers.size();
  if (!any_gemm || !any_collective || streams < 2 || streams > 255) return;

  Clocks clock(streams, streams);                                  // per stream
  Clocks recorded(static_cast<size_t>(max_event + 1), streams);    // per event: its recorder's clock
  std::vector<int64_t> last_collective(streams, -1);               // per stream
  std::vector<size_t> collectives;                                 // indices
  Clocks before(0, streams);                                       // per collective: its stream's clock
  for (size_t i = 0; i < thunks.size(); ++i) {
    Thunk& t = thunks[i];
    int64_t* own = clock.row(slot[i]);
    switch (t.kind) {
      case ThunkKind::kRecordEvent:
        if (t.event >= 0) std::copy(own, own + streams, recorded.row(static_cast<size_t>(t.event)));
        continue;
      case ThunkKind::kWaitEvent:
        if (t.event >= 0) {
          const int64_t* from = recorded.row(static_cast<size_t>(t.event));
          for (size_t r = 0; r < streams; ++r) own[r] = std::max(own[r], from[r]);
        }
        continue;
      case ThunkKind::kGemm:
        // Beside a collective issued earlier that this stream has not waited for.
        for (size_t r = 0; r < streams; ++r) {
          if (r != slot[i] && last_collective[r] > own[r]) t.gemm.beside_collective = true;
        }
        break;
      case ThunkKind::kCollective:
        if (!takes_every_channel(t)) break;
        before.grow(collectives.size() + 1);
        std::copy(own, own + streams, before.row(collectives.size()));
        collectives.push_back(i);
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
  std::vector<int64_t> earliest(streams, std::numeric_limits<int64_t>::max());
  size_t next = collectives.size();  // collectives[next..] are already folded in
  for (size_t i = thunks.size(); i-- > 0;) {
    for (; next > 0 && collectives[next - 1] > i; --next) {
      const size_t from = slot[collectives[next - 1]];
      const int64_t* c = before.row(next - 1);
      for (size_t r = 0; r < streams; ++r) {
        if (r != from) earliest[r] = std::min(earliest[r], c[r]);
      }
    }
    Thunk& t = thunks[i];
    if (t.kind == ThunkKind::kGemm && earliest[slot[i]] < static_cast<int64_t>(i)) t.gemm.beside_collective = true;
  }
}

}  // namespace sl::sched
