#include "core/xla/thunk_sequence.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace sl::xla {
namespace {

const std::string kThunkCorpus = std::string(SL_SOURCE_DIR) + "/tests/corpus";

TEST(ThunkSequence, ReadsKernelsCublasCallsAndEdges) {
  auto seq = parse_thunk_sequence(
      "001: kCustomKernel   [source        | next=002 (1)] loop_gather_fusion grid: [16384, 1, 1] threads: [128, 1, 1]\n"
      "002: kCublasLtMatmul [prev=001 (1)  | sink        ] kCublasLtMatmul\n",
      "t.txt");
  ASSERT_TRUE(seq.is_ok()) << seq.status().message();
  ASSERT_EQ(seq->thunks.size(), 2u);
  EXPECT_EQ(seq->thunks[0].kind, "kCustomKernel");
  EXPECT_EQ(seq->thunks[0].kernel, "loop_gather_fusion");
  EXPECT_EQ(seq->thunks[0].next, std::vector<int>{2});
  EXPECT_TRUE(seq->thunks[0].prev.empty());
  EXPECT_EQ(seq->thunks[1].kind, "kCublasLtMatmul");
  EXPECT_EQ(seq->thunks[1].prev, std::vector<int>{1});
  EXPECT_FALSE(seq->has_command_buffers);
}

TEST(ThunkSequence, NestsWhileBlocksAsyncStartsAndCommandBuffers) {
  auto seq = parse_thunk_sequence(
      "001: kCopy         [source       | next=004 (3)] kCopy\n"
      "004: kWhile        [prev=003 (1) | sink        ]   \n"
      "condition:\n"
      "    005: kCustomKernel [source | sink] loop_compare_fusion grid: [1, 1, 1]\n"
      "  body:\n"
      "    000: kCommandBuffer [source | sink] \n"
      "        006: kAsyncStart   [source       | next=011 (3)] stream=computation_stream[1], async_id=6\n"
      "            008: kDynamicSliceFusion [source | sink] params=1, results=1\n"
      "                007: kCopy [source | sink] kCopy\n"
      "        010: kAsyncDone    [source       | sink        ] async_id=6\n"
      "009: kCustomKernel [source | sink] after_loop grid: [1, 1, 1]\n",
      "t.txt");
  ASSERT_TRUE(seq.is_ok()) << seq.status().message();
  ASSERT_EQ(seq->thunks.size(), 3u);
  const Thunk& loop = seq->thunks[1];
  ASSERT_EQ(loop.condition.size(), 1u);
  EXPECT_EQ(loop.condition[0].kernel, "loop_compare_fusion");
  ASSERT_EQ(loop.body.size(), 1u);
  const Thunk& cb = loop.body[0];
  EXPECT_EQ(cb.kind, "kCommandBuffer");
  ASSERT_EQ(cb.nested.size(), 2u);
  EXPECT_EQ(cb.nested[0].stream, "computation_stream[1]");
  EXPECT_EQ(cb.nested[0].async_id, 6);
  ASSERT_EQ(cb.nested[0].nested.size(), 1u);
  EXPECT_EQ(cb.nested[0].nested[0].nested[0].kind, "kCopy");
  EXPECT_EQ(cb.nested[1].async_id, 6);
  EXPECT_EQ(seq->thunks[2].kernel, "after_loop");
  EXPECT_TRUE(seq->has_command_buffers);
}

TEST(ThunkSequence, ABadLineIsAnErrorNamingIt) {
  auto seq = parse_thunk_sequence("001: kCopy [source | sink] kCopy\nthis is not a thunk\n", "bad.txt");
  ASSERT_FALSE(seq.is_ok());
  EXPECT_NE(seq.status().message().find("bad.txt:2:"), std::string::npos) << seq.status().message();
}

TEST(ThunkSequence, FindsTheDumpBesideAModule) {
  const std::string dir = kThunkCorpus + "/jax/small/transformer_train_step";
  const std::string module = dir + "/module_0000.jit_step.sm_9.0a_gpu_after_optimizations.txt";
  EXPECT_EQ(thunk_sequence_path_for(module, false), dir + "/module_0000.jit_step.thunk_sequence.txt");
  EXPECT_EQ(thunk_sequence_path_for(module, true), dir + "/module_0000.jit_step.thunk_sequence_after_thunk_passes.txt");
  EXPECT_EQ(thunk_sequence_path_for(dir + "/nothing_here.txt", false), "");
}

// Every thunk dump XLA wrote for the corpus parses.
TEST(ThunkSequence, ReadsEveryRealDump) {
  int files = 0;
  for (const char* sub : {"/jax/small", "/jax/large", "/captures"}) {
    for (const auto& program : std::filesystem::directory_iterator(kThunkCorpus + sub)) {
      for (const auto& f : std::filesystem::directory_iterator(program.path())) {
        if (f.path().string().find("thunk_sequence") == std::string::npos) continue;
        auto seq = read_thunk_sequence(f.path().string());
        EXPECT_TRUE(seq.is_ok()) << seq.status().message();
        if (seq.is_ok()) {
          EXPECT_FALSE(seq->thunks.empty()) << f.path();
        }
        ++files;
      }
    }
  }
  EXPECT_GT(files, 30);
}

}  // namespace
}  // namespace sl::xla
