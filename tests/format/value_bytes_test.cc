// EstimatedValueBytes: the size by type that batch sizes, take gaps and UPDATE's cost
// model share.
#include <gtest/gtest.h>

#include "format/value_bytes.h"

namespace lancelet::format {
namespace {

TEST(EstimatedValueBytes, WidthsSumsAndTheVariableWidthGuess) {
  EXPECT_EQ(EstimatedValueBytes(*DataType::Bool()), 1u);
  EXPECT_EQ(EstimatedValueBytes(*DataType::Int32()), 4u);
  EXPECT_EQ(EstimatedValueBytes(*DataType::Float16()), 2u);
  EXPECT_EQ(EstimatedValueBytes(*DataType::FixedSizeBinary(12)), 12u);
  EXPECT_EQ(EstimatedValueBytes(*DataType::FixedSizeList(DataType::Float32(), 768)), 3072u);
  EXPECT_EQ(EstimatedValueBytes(*DataType::Utf8()), 64u);
  EXPECT_EQ(EstimatedValueBytes(*DataType::List(DataType::Int64())), 64u);
  EXPECT_EQ(EstimatedValueBytes(*DataType::Struct({Field::Make("a", DataType::Int64()), Field::Make("b", DataType::Utf8())})),
            72u);
  EXPECT_EQ(EstimatedValueBytes(*DataType::Struct({})), 0u);
}

}  // namespace
}  // namespace lancelet::format
