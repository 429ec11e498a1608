// Every module under tests/corpus (real JAX dumps, modules from XLA's own
// tests) goes as far through the pipeline as expected_status.tsv says it went
// last time: a module that gets worse fails; one that gets better passes and
// says to regenerate the file (scripts/corpus-report --update).

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "tests/corpus/corpus_pipeline.h"
#include "tests/corpus/expectations.h"

namespace sl::corpus {

// gtest prints a test's parameter; the module's path says which one failed.
void PrintTo(const Entry& entry, std::ostream* os) { *os << entry.relative; }

namespace {

constexpr int kModuleTimeoutS = 300;  // a hang guard, not a performance bound

std::string corpus_root() { return std::string(SL_SOURCE_DIR) + "/tests/corpus"; }

const std::map<std::string, Expectation>& expectations() {
  static const std::map<std::string, Expectation> table =
      read_expectations(corpus_root() + "/expected_status.tsv");
  return table;
}

std::string test_name(const ::testing::TestParamInfo<Entry>& info) {
  std::string name;
  for (char c : info.param.relative) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

class CorpusModule : public ::testing::TestWithParam<Entry> {};

TEST_P(CorpusModule, ReachesItsExpectedStage) {
  const Entry& entry = GetParam();
  Outcome outcome = run_isolated(entry, kModuleTimeoutS);
  auto it = expectations().find(entry.relative);
  const Expectation* expected = it == expectations().end() ? nullptr : &it->second;
  std::printf("%s: reached %s%s%s\n", entry.relative.c_str(), stage_name(outcome.reached),
              outcome.detail.empty() ? "" : "; ", outcome.detail.c_str());
  switch (compare(entry, outcome, expected)) {
    case Verdict::kWorse:
      if (entry.rejected) {
        ADD_FAILURE() << entry.relative << ": XLA's own test expects its parser or verifier to refuse this "
                      << "module (xla/MANIFEST.tsv), but it passed check";
      } else {
        ADD_FAILURE() << entry.relative << ": reached " << stage_name(outcome.reached) << " ("
                      << outcome.detail << "), expected " << stage_name(expected->reached) << " ("
                      << expected->detail << ")";
      }
      break;
    case Verdict::kBetter:
      std::printf("note: %s now reaches %s (expected %s): update expected_status.tsv "
                  "(scripts/corpus-report --update)\n",
                  entry.relative.c_str(), stage_name(outcome.reached), stage_name(expected->reached));
      break;
    case Verdict::kNew:
      std::printf("note: %s is not in expected_status.tsv: update it (scripts/corpus-report --update)\n",
                  entry.relative.c_str());
      break;
    case Verdict::kSame:
      if (entry.rejected && outcome.reached >= Stage::kCheck) {
        std::printf("note: %s: XLA rejects this module but it passes check here (a known gap, pinned in "
                    "expected_status.tsv)\n",
                    entry.relative.c_str());
      }
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusModule, ::testing::ValuesIn(list_corpus(corpus_root())), test_name);

// The harness itself: the walk finds both corpora, the manifest's device
// counts and verdicts reach the entries, and a module that cannot parse is a
// value, not a crash.
TEST(CorpusHarness, FindsBothCorporaAndTheManifest) {
  std::vector<Entry> entries = list_corpus(corpus_root());
  int jax = 0, xla = 0, rejected = 0, with_counts = 0;
  for (const Entry& entry : entries) {
    std::string group = group_of(entry);
    jax += group == "jax";
    xla += group == "xla";
    rejected += group == "xla-rejected";
    with_counts += entry.replicas > 0 || entry.partitions > 0;
  }
  EXPECT_GE(jax, 30);
  EXPECT_GE(xla + rejected, 150);
  EXPECT_GE(rejected, 10);
  EXPECT_GE(with_counts, 10);
}

TEST(CorpusHarness, ParseFailureIsAValueAndCrashesAreIsolated) {
  Entry garbage;
  garbage.relative = "xla/hlo_parser_test/Garbage.hlo";
  garbage.path = corpus_root() + "/" + garbage.relative;
  garbage.rejected = true;
  Outcome outcome = run_isolated(garbage, kModuleTimeoutS);
  EXPECT_EQ(outcome.reached, Stage::kNone);
  EXPECT_EQ(outcome.detail.rfind("parse: ", 0), 0u) << outcome.detail;

  Entry missing;
  missing.relative = "no/such/module.hlo";
  missing.path = corpus_root() + "/" + missing.relative;
  outcome = run_isolated(missing, kModuleTimeoutS);
  EXPECT_EQ(outcome.reached, Stage::kNone);
  EXPECT_EQ(outcome.detail, "parse: cannot read no/such/module.hlo");
}

TEST(CorpusHarness, AHangIsAValue) {
  Entry entry;
  entry.relative = "xla/hlo_parser_test/AxpyParam.hlo";
  entry.path = corpus_root() + "/" + entry.relative;
  Outcome outcome = run_isolated(entry, /*timeout_s=*/0);  // the deadline passes before the child reports
  EXPECT_EQ(outcome.reached, Stage::kNone);
  EXPECT_EQ(outcome.detail, "parse: timed out after 0 s");
}

TEST(CorpusHarness, ComparisonRules) {
  Entry entry;
  Outcome lowered{Stage::kLower, "simulate: x"};
  Expectation checked{Stage::kCheck, "lower: y"};
  Expectation simulated{Stage::kSimulate, ""};
  EXPECT_EQ(compare(entry, lowered, &checked), Verdict::kBetter);
  EXPECT_EQ(compare(entry, lowered, &simulated), Verdict::kWorse);
  EXPECT_EQ(compare(entry, lowered, nullptr), Verdict::kNew);
  Expectation lower_same{Stage::kLower, "simulate: another reason"};
  EXPECT_EQ(compare(entry, lowered, &lower_same), Verdict::kSame);
  // A module XLA rejects: failing check is the expectation.
  entry.rejected = true;
  Expectation none{Stage::kNone, "parse: z"};
  Expectation gap{Stage::kCheck, ""};
  EXPECT_EQ(compare(entry, Outcome{Stage::kCheck, ""}, &none), Verdict::kWorse);
  EXPECT_EQ(compare(entry, Outcome{Stage::kCheck, ""}, nullptr), Verdict::kWorse);
  EXPECT_EQ(compare(entry, Outcome{Stage::kParse, "check: w"}, &none), Verdict::kSame);
  EXPECT_EQ(compare(entry, Outcome{Stage::kNone, "parse: w"}, nullptr), Verdict::kNew);
  EXPECT_EQ(compare(entry, Outcome{Stage::kCheck, ""}, &gap), Verdict::kSame);
  EXPECT_EQ(compare(entry, Outcome{Stage::kParse, "check: w"}, &gap), Verdict::kBetter);
}

TEST(CorpusHarness, ExpectationsRoundTrip) {
  std::vector<ModuleResult> results(2);
  results[0].entry.relative = "jax/a.txt";
  results[0].outcome = {Stage::kSimulate, "evaluate: skipped (big)"};
  results[1].entry.relative = "xla/b/c.hlo";
  results[1].outcome = {Stage::kNone, "parse: x.hlo:1:1: error: bad"};
  std::string path = ::testing::TempDir() + "/corpus_expected_roundtrip.tsv";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::string text = format_expectations(results);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  std::map<std::string, Expectation> read = read_expectations(path);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read["jax/a.txt"].reached, Stage::kSimulate);
  EXPECT_EQ(read["jax/a.txt"].detail, "evaluate: skipped (big)");
  EXPECT_EQ(read["xla/b/c.hlo"].reached, Stage::kNone);
  EXPECT_EQ(read["xla/b/c.hlo"].detail, "parse: x.hlo:1:1: error: bad");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace sl::corpus
