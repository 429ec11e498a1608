// Bad input never crashes or hangs: truncations, garbage bytes, mutations,
// deep nesting, huge inputs. Whatever parses also round-trips.

#include <algorithm>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>

#include "tests/hlo/parser_test_util.h"

namespace sl::hlo {
namespace {

std::string read_data(std::string_view name) {
  std::ifstream in(testing::data_path(name), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Parses; on success the module must print and parse back to itself.
// Returns whether it parsed.
bool parse_and_check(std::string_view text) {
  Result<Module> result = parse_program(text, "fuzz.hlo");
  if (!result.is_ok()) {
    EXPECT_EQ(result.status().code(), ErrorCode::kInvalidInput);
    EXPECT_EQ(result.status().message().rfind("fuzz.hlo:", 0), 0u) << result.status().message();
    return false;
  }
  std::string printed = print_module(result.value());
  Result<Module> again = parse_program(printed, "printed.hlo");
  EXPECT_TRUE(again.is_ok()) << again.status().message() << "\n" << printed;
  if (again.is_ok()) {
    EXPECT_EQ(module_difference(result.value(), again.value()), "") << printed;
  }
  return true;
}

TEST(ParserRobustness, EveryTruncationIsAnErrorOrAModule) {
  // Every offset of one sample; every 5th of a larger one (time is quadratic
  // in the sample size, and Debug + sanitizers is slow).
  for (auto [file, stride] : {std::pair{"async_streams.hlo", 1}, std::pair{"windowed_einsum.hlo", 5}}) {
    std::string text = read_data(file);
    ASSERT_FALSE(text.empty());
    int parsed = 0;
    for (size_t n = 0; n <= text.size(); n += static_cast<size_t>(stride)) {
      parsed += parse_and_check(std::string_view(text).substr(0, n));
    }
    EXPECT_TRUE(parse_and_check(text)) << "the whole file parses";
    EXPECT_LT(parsed, static_cast<int>(text.size()) / stride / 4) << "most truncations are errors";
  }
}

TEST(ParserRobustness, RandomGarbageBytes) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 3000; ++round) {
    std::string text(rng() % 200, '\0');
    for (char& c : text) c = static_cast<char>(rng() % 256);
    EXPECT_FALSE(parse_and_check(text));
  }
}

TEST(ParserRobustness, RandomTokenSoup) {
  // Garbage made of valid tokens reaches deeper into the grammar than bytes.
  const char* pieces[] = {"HloModule", "m", "ENTRY", "ROOT", "%x", "x", "=", "f32", "[", "]", "{", "}", "(", ")",
                          ",", ":", "->", "<=", "T", "1", "-2", "1.5", "\"s\"", "parameter", "add", "tuple",
                          "constant", "all-gather-start", "replica_groups", "dimensions", "to_apply", "\n", " ",
                          "backend_config", "{\"operation_queue_id\":\"1\"}", "...", "-inf", "/*c*/", "//c\n"};
  std::mt19937 rng(99);
  int parsed = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    size_t n = rng() % 60;
    for (size_t i = 0; i < n; ++i) {
      text += pieces[rng() % std::size(pieces)];
      text += ' ';
    }
    parsed += parse_and_check(text);
  }
  SUCCEED() << parsed << " parsed";
}

TEST(ParserRobustness, MutatedSamples) {
  std::string original = read_data("fsdp_all_gather.hlo");
  std::mt19937 rng(7);
  const char bytes[] = "{}[](),=%:\"\\ \n0-9aZ/*.<";
  for (int round = 0; round < 1500; ++round) {
    std::string text = original;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0: text[at] = bytes[rng() % (sizeof(bytes) - 1)]; break;
        case 1: text.erase(at, 1 + rng() % 8); break;
        default: text.insert(at, 1, bytes[rng() % (sizeof(bytes) - 1)]); break;
      }
      if (text.empty()) text = "x";
    }
    parse_and_check(text);
  }
}

TEST(ParserRobustness, DeepNestingIsAnErrorNotACrash) {
  const int kDepth = 100000;
  std::string tuple = "HloModule m\nENTRY e {\n  ROOT p = " + std::string(kDepth, '(') + "f32[]" + std::string(kDepth, ')') +
                      " parameter(0)\n}\n";
  std::string message = testing::parse_error(tuple);
  EXPECT_NE(message.find("nests deeper than 64"), std::string::npos) << message.substr(0, 200);

  std::string attribute = "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), metadata=" + std::string(kDepth, '{') +
                          std::string(kDepth, '}') + "\n}\n";
  message = testing::parse_error(attribute);
  EXPECT_NE(message.find("nests deeper than 64"), std::string::npos) << message.substr(0, 200);

  std::string dims = "1";
  for (int i = 0; i < 200; ++i) dims += ",1";
  std::string literal = "HloModule m\nENTRY e {\n  ROOT c = f32[" + dims + "] constant(" + std::string(201, '{') + "1" +
                        std::string(201, '}') + ")\n}\n";
  message = testing::parse_error(literal);
  EXPECT_NE(message.find("nests deeper than 64"), std::string::npos) << message.substr(0, 200);

  // Deep JSON inside a quoted backend_config is only a warning.
  std::string json = "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), backend_config=\"" + std::string(kDepth, '[') +
                     std::string(kDepth, ']') + "\"\n}\n";
  Module m = testing::parse_ok(json);
  EXPECT_TRUE(m.warnings.empty()) << "not an object: nothing to read, nothing to warn";
  json = "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), backend_config=\"{\\\"a\\\":" + std::string(kDepth, '[') +
         std::string(kDepth, ']') + "}\"\n}\n";
  m = testing::parse_ok(json);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("nests deeper than 64"), std::string::npos);
}

TEST(ParserRobustness, LongLinesAndNames) {
  std::string name(100000, 'a');
  Module m = testing::parse_ok("HloModule m\nENTRY e {\n  ROOT " + name + " = f32[] parameter(0)\n}\n");
  EXPECT_EQ(m.entry_computation().instructions[0].name, name);
  testing::expect_round_trip(m);
}

std::string big_module(int instructions) {
  std::string text = "HloModule big, replica_count=2\nENTRY %main {\n  %p0 = f32[128,128]{1,0} parameter(0)\n";
  text.reserve(static_cast<size_t>(instructions) * 80);
  for (int i = 1; i < instructions; ++i) {
    text += "  %a" + std::to_string(i) + " = f32[128,128]{1,0} add(f32[128,128]{1,0} %" +
            (i == 1 ? std::string("p0") : "a" + std::to_string(i - 1)) + ", %p0), metadata={op_name=\"x\"}\n";
  }
  return text + "}\n";
}

// CPU time of this thread: other processes on a loaded machine do not count.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double parse_seconds(const std::string& text, size_t expect_instructions) {
  const double start = thread_cpu_seconds();
  Result<Module> m = parse_program(text, "big.hlo");
  double seconds = thread_cpu_seconds() - start;
  EXPECT_TRUE(m.is_ok()) << m.status().message().substr(0, 500);
  if (m.is_ok()) {
    EXPECT_EQ(m->entry_computation().instructions.size(), expect_instructions);
  }
  return seconds;
}

TEST(ParserRobustness, ParseTimeGrowsLinearly) {
  // 8x the instructions must cost well under 8^2/2 = 32x the time (a
  // quadratic name lookup or string copy would). Absolute speed is
  // bench/pipeline_bench's business; this holds under sanitizers, and thread
  // CPU time keeps other processes' load out of it.
  std::string small = big_module(2500);
  std::string large = big_module(20000);
  double t_small = std::min(parse_seconds(small, 2500), parse_seconds(small, 2500));
  double t_large = parse_seconds(large, 20000);
  EXPECT_LT(t_large, 24 * t_small + 0.05) << "small " << t_small << " s, large " << t_large << " s";
  Result<Module> m = parse_program(large, "big.hlo");
  ASSERT_TRUE(m.is_ok());
  EXPECT_EQ(m->entry_computation().instructions.back().operands, (std::vector<int>{19998, 0}));
}

}  // namespace
}  // namespace sl::hlo
