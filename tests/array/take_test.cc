// Take on fixed-size lists: rows of fixed-width items without NULLs are copied as blocks,
// the rest item by item; both give what the rows say.
#include <gtest/gtest.h>

#include "lancelet/array.h"
#include "lancelet/error.h"
#include "lancelet/scalar.h"

namespace lancelet {
namespace {

Scalar Row(const TypePtr& list, const std::vector<std::optional<float>>& items) {
  std::vector<Scalar> values;
  for (auto v : items) values.push_back(v ? Scalar{DataType::Float32(), double(*v)} : Scalar::Null(DataType::Float32()));
  return Scalar{list, std::move(values)};
}

TEST(Take, FixedSizeListRowsInAnyOrderWithRepeatsAndNullRows) {
  const TypePtr list = DataType::FixedSizeList(DataType::Float32(), 3);
  for (bool null_item : {false, true}) {
    SCOPED_TRACE(null_item ? "an item is NULL: item by item" : "no NULL item: row blocks");
    std::vector<Scalar> rows;
    for (int r = 0; r < 5; ++r)
      rows.push_back(Row(list, {float(r), float(r) + 0.5f,
                                null_item && r == 4 ? std::optional<float>() : std::optional<float>(-r)}));
    ArrayPtr array = MakeArray(list, rows);
    ASSERT_EQ(array->children[0]->validity() != nullptr, null_item);
    // Row 2 is NULL at the list level only (its items stay valid), as decoders leave it.
    array->buffers[0] = Buffer::Allocate(1);
    array->buffers[0]->mutable_data()[0] = 0x1b;  // rows 0, 1, 3, 4
    array->null_count = 1;
    rows[2] = Scalar::Null(list);
    const std::vector<int64_t> idx = {4, 0, 2, 4, 1};
    ArrayPtr taken = Take(*array, idx);
    ASSERT_EQ(taken->length, 5);
    EXPECT_EQ(taken->null_count, 1);
    EXPECT_EQ(taken->children[0]->length, 15);
    for (size_t k = 0; k < idx.size(); ++k)
      EXPECT_TRUE(GetScalar(*taken, int64_t(k)).Equals(rows[size_t(idx[k])])) << k;
    ValidateArray(*taken, "take");
  }
  EXPECT_THROW(Take(*MakeArray(list, {Row(list, {1, 2, 3})}), std::vector<int64_t>{1}), Error);
}

TEST(Take, StringsOfEveryShortLengthAreCopiedWhole) {
  // Lengths 0 to 40 cross each way short strings are copied (bytes, 4, 8, 16, memcpy).
  for (const TypePtr& type : {DataType::Utf8(), DataType::LargeUtf8()}) {
    std::vector<Scalar> rows;
    for (int n = 0; n <= 40; ++n) {
      std::string s;
      for (int k = 0; k < n; ++k) s += char('a' + (k * 7 + n) % 26);
      rows.push_back(Scalar{type, s});
    }
    ArrayPtr array = MakeArray(type, rows);
    std::vector<int64_t> idx;
    for (int64_t r = 40; r >= 0; --r) idx.push_back(r);
    for (int64_t r = 0; r <= 40; r += 3) idx.push_back(r);
    ArrayPtr taken = Take(*array, idx);
    ASSERT_EQ(taken->length, int64_t(idx.size()));
    for (size_t k = 0; k < idx.size(); ++k)
      EXPECT_EQ(taken->GetView(int64_t(k)), array->GetView(idx[k])) << type->ToString() << " row " << k;
    ValidateArray(*taken, "take");
  }
}

}  // namespace
}  // namespace lancelet
