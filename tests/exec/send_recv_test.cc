// send / recv between the devices of one cpu run, against values worked out
// by hand: the peers of `_xla_send_recv_source_target_pairs`, zeros where no
// pair names the device, messages paired in order through a pipelined loop
// (execution_stream_assignment_test's PipelinedSendRecv).

#include <gtest/gtest.h>

#include "tests/exec/cpu_test_util.h"

namespace sl::exec {
namespace {

using testing::run_hlo;
using testing::values_of;

using V = std::vector<double>;

TEST(SendRecv, DataGoesFromSourceToTarget) {
  auto ran = run_hlo(R"(HloModule t, num_partitions=2
ENTRY main {
  pid = u32[] partition-id()
  id = f32[] convert(pid)
  base = f32[2] constant({1, 2})
  ids = f32[2] broadcast(id), dimensions={}
  data = f32[2] add(base, ids)
  tok = token[] after-all()
  s = (f32[2], u32[], token[]) send(data, tok), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs={{0,1}}}
  r = (f32[2], u32[], token[]) recv(tok), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs={{0,1}}}
  sd = token[] send-done(s), channel_id=1
  rd = (f32[2], token[]) recv-done(r), channel_id=1
  ROOT got = f32[2] get-tuple-element(rd), index=0
})",
                     1, 2);
  EXPECT_EQ(values_of(ran, 1), (V{1, 2})) << "partition 1 receives partition 0's data";
  EXPECT_EQ(values_of(ran, 0), (V{0, 0})) << "partition 0 is no target: zeros";
}

// Two loop iterations forward what arrived: partition 1 receives the entry's
// send, then the first iteration's, then the second's; partition 0 only
// sends (its receives are zeros, which it forwards).
TEST(SendRecv, PipelinedThroughALoopInOrder) {
  auto ran = run_hlo(R"(HloModule test, num_partitions=2
cond {
  param = (u32[], (f32[2], u32[], token[]), (f32[2], u32[], token[])) parameter(0)
  i = u32[] get-tuple-element(param), index=0
  c2 = u32[] constant(2)
  ROOT cmp = pred[] compare(i, c2), direction=LT
}
body {
  param = (u32[], (f32[2], u32[], token[]), (f32[2], u32[], token[])) parameter(0)
  i = u32[] get-tuple-element(param), index=0
  send_ctx = (f32[2], u32[], token[]) get-tuple-element(param), index=1
  recv_ctx = (f32[2], u32[], token[]) get-tuple-element(param), index=2
  send_done = token[] send-done(send_ctx), channel_id=1
  recv_done = (f32[2], token[]) recv-done(recv_ctx), channel_id=2
  data = f32[2] get-tuple-element(recv_done), index=0
  one = f32[] constant(1)
  ones = f32[2] broadcast(one), dimensions={}
  bumped = f32[2] add(data, ones)
  after_all = token[] after-all()
  send_next = (f32[2], u32[], token[]) send(bumped, after_all), frontend_attributes={_xla_send_recv_source_target_pairs={{0,1}}}, channel_id=1
  recv_next = (f32[2], u32[], token[]) recv(after_all), frontend_attributes={_xla_send_recv_source_target_pairs={{0,1}}}, channel_id=2
  c1 = u32[] constant(1)
  i_ = u32[] add(i, c1)
  ROOT result = (u32[], (f32[2], u32[], token[]), (f32[2], u32[], token[])) tuple(i_, send_next, recv_next)
}
ENTRY main {
  data = f32[2] constant({10, 20})
  i = u32[] constant(0)
  after_all = token[] after-all()
  send_ctx = (f32[2], u32[], token[]) send(data, after_all), frontend_attributes={_xla_send_recv_source_target_pairs={{0,1}}}, channel_id=1
  recv_ctx = (f32[2], u32[], token[]) recv(after_all), frontend_attributes={_xla_send_recv_source_target_pairs={{0,1}}}, channel_id=2
  init = (u32[], (f32[2], u32[], token[]), (f32[2], u32[], token[])) tuple(i, send_ctx, recv_ctx)
  while = (u32[], (f32[2], u32[], token[]), (f32[2], u32[], token[])) while(init), condition=cond, body=body
  send_last = (f32[2], u32[], token[]) get-tuple-element(while), index=1
  recv_last = (f32[2], u32[], token[]) get-tuple-element(while), index=2
  send_done = token[] send-done(send_last), channel_id=1
  recv_done = (f32[2], token[]) recv-done(recv_last), channel_id=2
  ROOT out = f32[2] get-tuple-element(recv_done), index=0
})",
                     1, 2);
  // Partition 0 sends {10,20}, then zeros+1 twice: {1,1}, {1,1}. Partition 1
  // receives them in order; its last recv-done holds the third message.
  EXPECT_EQ(values_of(ran, 1), (V{1, 1}));
  EXPECT_EQ(values_of(ran, 0), (V{0, 0}));
}

TEST(SendRecv, RefusesWhatHasNoPeer) {
  auto host = run_hlo(R"(HloModule t
ENTRY main {
  tok = token[] after-all()
  r = (f32[], u32[], token[]) recv(tok), channel_id=15, is_host_transfer=true
  ROOT rd = (f32[], token[]) recv-done(r), channel_id=15, is_host_transfer=true
})");
  ASSERT_FALSE(host.status.is_ok());
  EXPECT_NE(host.status.message().find("transfer with the host"), std::string::npos) << host.status.message();
  auto bare = run_hlo(R"(HloModule t
ENTRY main {
  tok = token[] after-all()
  r = (f32[], u32[], token[]) recv(tok), channel_id=15
  ROOT rd = (f32[], token[]) recv-done(r), channel_id=15
})");
  ASSERT_FALSE(bare.status.is_ok());
  EXPECT_NE(bare.status.message().find("_xla_send_recv_source_target_pairs"), std::string::npos)
      << bare.status.message();
}

}  // namespace
}  // namespace sl::exec
