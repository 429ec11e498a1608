#pragma once
// `capture --capture-range nvtx:NAME`, as Nsight Systems' --nvtx-capture:
// which NVTX calls open and close the range the capture keeps. A range
// pushed (nvtxRangePushA/Ex, nvtxDomainRangePushEx) or started
// (nvtxRangeStartA/Ex, nvtxDomainRangeStartEx) with message NAME opens it;
// its pop on the same thread, or its end, closes it. Messages may be ASCII
// or strings registered with nvtxDomainRegisterStringA (how XLA's
// annotations name their ranges). Any domain. Pure logic: CUPTI's NVTX
// callbacks (cupti_api.cc) feed it.

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sl::cupti {

class NvtxRangeTracker {
 public:
  explicit NvtxRangeTracker(std::string name) : name_(std::move(name)) {}

  enum class Change { kNone, kOpened, kClosed };

  // One NVTX call: its CUPTI callback id (CUPTI_CBID_NVTX_*), the call's
  // parameters and return value (CUpti_NvtxData), and the calling thread.
  // kOpened when the first range named NAME opens, kClosed when the last
  // open one closes (ranges of that name may nest or overlap).
  Change on_call(uint32_t cbid, const void* params, const void* return_value, uint64_t thread);

 private:
  std::string message_of(const void* event_attributes);
  Change open();
  Change close();

  std::string name_;
  std::mutex mu_;  // NVTX calls come from any thread
  std::unordered_map<uint64_t, std::vector<bool>> pushed_;  // per thread: is each pushed range NAME
  std::unordered_set<uint64_t> started_;                    // ids of started ranges named NAME
  std::unordered_map<const void*, std::string> registered_;  // nvtxStringHandle_t -> string
  int open_ = 0;
};

}  // namespace sl::cupti
