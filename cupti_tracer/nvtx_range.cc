#include "cupti_tracer/nvtx_range.h"

#include <cupti_nvtx_cbid.h>
#include <generated_nvtx_meta.h>

#include <cstddef>

namespace sl::cupti {

std::string NvtxRangeTracker::message_of(const void* event_attributes) {
  const auto* a = static_cast<const nvtxEventAttributes_t*>(event_attributes);
  // Older callers pass a shorter struct: read only what its size covers.
  if (a == nullptr || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message)) return {};
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii != nullptr) return a->message.ascii;
  if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
    auto it = registered_.find(a->message.registered);
    if (it != registered_.end()) return it->second;
  }
  return {};
}

NvtxRangeTracker::Change NvtxRangeTracker::open() { return ++open_ == 1 ? Change::kOpened : Change::kNone; }

NvtxRangeTracker::Change NvtxRangeTracker::close() {
  if (open_ == 0) return Change::kNone;
  return --open_ == 0 ? Change::kClosed : Change::kNone;
}

NvtxRangeTracker::Change NvtxRangeTracker::on_call(uint32_t cbid, const void* params, const void* return_value,
                                                   uint64_t thread) {
  if (params == nullptr) return Change::kNone;
  std::lock_guard<std::mutex> lock(mu_);
  auto push = [&](const std::string& message) {
    const bool ours = message == name_;
    pushed_[thread].push_back(ours);
    return ours ? open() : Change::kNone;
  };
  auto pop = [&] {
    auto& stack = pushed_[thread];
    if (stack.empty()) return Change::kNone;  // a pop without a push we saw
    const bool ours = stack.back();
    stack.pop_back();
    return ours ? close() : Change::kNone;
  };
  auto start = [&](const std::string& message) {
    if (message != name_ || return_value == nullptr) return Change::kNone;
    started_.insert(*static_cast<const nvtxRangeId_t*>(return_value));
    return open();
  };
  auto end = [&](nvtxRangeId_t id) { return started_.erase(id) != 0 ? close() : Change::kNone; };

  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
      const auto* p = static_cast<const nvtxDomainRegisterStringA_params*>(params);
      if (return_value != nullptr && p->string != nullptr) {
        registered_[*static_cast<const nvtxStringHandle_t*>(return_value)] = p->string;
      }
      return Change::kNone;
    }
    case CUPTI_CBID_NVTX_nvtxRangePushA: {
      const char* m = static_cast<const nvtxRangePushA_params*>(params)->message;
      return push(m != nullptr ? m : "");
    }
    case CUPTI_CBID_NVTX_nvtxRangePushW:
      return push("");  // wide messages are not matched, but keep the stack balanced
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      return push(message_of(static_cast<const nvtxRangePushEx_params*>(params)->eventAttrib));
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
      return push(message_of(static_cast<const nvtxDomainRangePushEx_params*>(params)->core.eventAttrib));
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      return pop();
    case CUPTI_CBID_NVTX_nvtxRangeStartA: {
      const char* m = static_cast<const nvtxRangeStartA_params*>(params)->message;
      return start(m != nullptr ? m : "");
    }
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      return start(message_of(static_cast<const nvtxRangeStartEx_params*>(params)->eventAttrib));
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
      return start(message_of(static_cast<const nvtxDomainRangeStartEx_params*>(params)->core.eventAttrib));
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      return end(static_cast<const nvtxRangeEnd_params*>(params)->id);
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
      return end(static_cast<const nvtxDomainRangeEnd_params*>(params)->core.id);
    default:
      return Change::kNone;
  }
}

}  // namespace sl::cupti
