#include "cupti_tracer/nvtx_range.h"

#include <cupti_nvtx_cbid.h>
#include <generated_nvtx_meta.h>
#include <gtest/gtest.h>

namespace sl::cupti {
namespace {

using Change = NvtxRangeTracker::Change;

nvtxEventAttributes_t ascii(const char* message) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

Change push_a(NvtxRangeTracker& t, const char* message, uint64_t thread = 1) {
  nvtxRangePushA_params p{message};
  return t.on_call(CUPTI_CBID_NVTX_nvtxRangePushA, &p, nullptr, thread);
}

Change pop(NvtxRangeTracker& t, uint64_t thread = 1) {
  nvtxRangePop_params p{};
  return t.on_call(CUPTI_CBID_NVTX_nvtxRangePop, &p, nullptr, thread);
}

TEST(NvtxRange, OpensAtThePushOfItsNameAndClosesAtItsPop) {
  NvtxRangeTracker t("train");
  EXPECT_EQ(push_a(t, "setup"), Change::kNone);
  EXPECT_EQ(pop(t), Change::kNone);
  EXPECT_EQ(push_a(t, "train"), Change::kOpened);
  EXPECT_EQ(push_a(t, "step"), Change::kNone);  // nested inside: the range stays open
  EXPECT_EQ(pop(t), Change::kNone);
  EXPECT_EQ(pop(t), Change::kClosed);
  EXPECT_EQ(pop(t), Change::kNone) << "a pop without a push is ignored";
  EXPECT_EQ(push_a(t, "training"), Change::kNone) << "the whole name, not a prefix";
}

TEST(NvtxRange, PushesOnOtherThreadsKeepTheirOwnStacks) {
  NvtxRangeTracker t("train");
  EXPECT_EQ(push_a(t, "train", 1), Change::kOpened);
  EXPECT_EQ(push_a(t, "loader", 2), Change::kNone);
  EXPECT_EQ(push_a(t, "train", 2), Change::kNone);  // a second range of the name: still open
  EXPECT_EQ(pop(t, 1), Change::kNone);
  EXPECT_EQ(pop(t, 2), Change::kClosed);
  EXPECT_EQ(pop(t, 2), Change::kNone);  // thread 2's "loader"
}

TEST(NvtxRange, StartedRangesCloseAtTheirEndById) {
  NvtxRangeTracker t("train");
  nvtxEventAttributes_t a = ascii("train");
  nvtxRangeStartEx_params start{&a};
  nvtxRangeId_t id = 7;
  EXPECT_EQ(t.on_call(CUPTI_CBID_NVTX_nvtxRangeStartEx, &start, &id, 1), Change::kOpened);
  nvtxRangeEnd_params other{8};
  EXPECT_EQ(t.on_call(CUPTI_CBID_NVTX_nvtxRangeEnd, &other, nullptr, 1), Change::kNone);
  nvtxRangeEnd_params end{7};
  EXPECT_EQ(t.on_call(CUPTI_CBID_NVTX_nvtxRangeEnd, &end, nullptr, 2), Change::kClosed) << "any thread may end it";
}

TEST(NvtxRange, DomainRangesMayNameThemselvesWithRegisteredStrings) {
  NvtxRangeTracker t("train_loop");
  int token = 0;  // any address stands for the handle NVTX returns
  auto handle = reinterpret_cast<nvtxStringHandle_t>(&token);
  nvtxDomainRegisterStringA_params reg{nullptr, "train_loop"};
  EXPECT_EQ(t.on_call(CUPTI_CBID_NVTX_nvtxDomainRegisterStringA, &reg, &handle, 1), Change::kNone);
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = handle;
  nvtxDomainRangePushEx_params push{nullptr, {&a}};
  EXPECT_EQ(t.on_call(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &push, nullptr, 1), Change::kOpened);
  nvtxDomainRangePop_params pop_params{nullptr};
  EXPECT_EQ(t.on_call(CUPTI_CBID_NVTX_nvtxDomainRangePop, &pop_params, nullptr, 1), Change::kClosed);
}

TEST(NvtxRange, AttributesTooShortForAMessageNameNothing) {
  NvtxRangeTracker t("train");
  nvtxEventAttributes_t a = ascii("train");
  a.size = 8;  // an old or broken caller
  nvtxRangePushEx_params push{&a};
  EXPECT_EQ(t.on_call(CUPTI_CBID_NVTX_nvtxRangePushEx, &push, nullptr, 1), Change::kNone);
  EXPECT_EQ(pop(t), Change::kNone);
  EXPECT_EQ(t.on_call(CUPTI_CBID_NVTX_nvtxRangePushA, nullptr, nullptr, 1), Change::kNone);
}

}  // namespace
}  // namespace sl::cupti
