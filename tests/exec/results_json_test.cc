#include "core/exec/results_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sl::exec {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;

TEST(ResultsJson, ExactFormat) {
  std::vector<DeviceResults> results;
  results.push_back({0, 0, 0,
                     {Literal{Shape::array(PrimitiveType::kF32, {2, 2}), {1.5, -2, 0.25, 3}},
                      Literal{Shape::array(PrimitiveType::kS32, {}), {-7}}}});
  results.push_back({1, 0, 1, {Literal{Shape::array(PrimitiveType::kPred, {2}), {1, 0}}}});
  EXPECT_EQ(results_to_json(results),
            "{\"devices\":[{\"device\":0,\"replica\":0,\"partition\":0,\"outputs\":["
            "{\"shape\":\"f32[2,2]\",\"values\":[1.5,-2.0,0.25,3.0]},{\"shape\":\"s32[]\",\"values\":[-7]}]},"
            "{\"device\":1,\"replica\":0,\"partition\":1,\"outputs\":[{\"shape\":\"pred[2]\",\"values\":[1,0]}]}]}\n");
}

TEST(ResultsJson, NonFiniteAndRoundTrip) {
  std::vector<DeviceResults> results;
  results.push_back({3, 1, 1,
                     {Literal{Shape::array(PrimitiveType::kBF16, {3}),
                              {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                               std::numeric_limits<double>::quiet_NaN()}},
                      Literal{Shape::array(PrimitiveType::kU32, {1}), {4294967295.0}}}});
  std::string text = results_to_json(results);
  EXPECT_NE(text.find("[\"inf\",\"-inf\",\"nan\"]"), std::string::npos) << text;
  EXPECT_NE(text.find("[4294967295]"), std::string::npos) << text;
  auto back = results_from_json(text);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].device, 3);
  EXPECT_EQ((*back)[0].outputs[0].shape, Shape::array(PrimitiveType::kBF16, {3}));
  EXPECT_TRUE(std::isnan((*back)[0].outputs[0].values[2]));
  EXPECT_EQ((*back)[0].outputs[1].values[0], 4294967295.0);
  EXPECT_FALSE(results_from_json("{\"devices\":[{\"outputs\":[{\"shape\":\"f32[2]\",\"values\":[1]}]}]}").is_ok());
  EXPECT_FALSE(results_from_json("not json").is_ok());
}

}  // namespace
}  // namespace sl::exec
