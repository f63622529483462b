#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "array/dictionary_array.h"
#include "lancelet/error.h"

namespace lancelet {
namespace {

// Keys by first appearance, through several table growths; repeated values find their key.
TEST(DictionaryKeyer, KeysFollowFirstAppearanceThroughGrowth) {
  DictionaryKeyer keyer(*DataType::Int32(), "a page");
  std::vector<std::string> values;
  for (int k = 0; k < 5000; ++k) values.push_back("v" + std::to_string(k * 7919 % 5000));
  for (int k = 0; k < 5000; ++k) EXPECT_EQ(keyer.KeyOf(values[size_t(k)], k), uint64_t(k));
  for (int k = 4999; k >= 0; --k) EXPECT_EQ(keyer.KeyOf(values[size_t(k)], 10000 + k), uint64_t(k));
  ASSERT_EQ(keyer.item_sources().size(), 5000u);
  EXPECT_EQ(keyer.item_sources()[4321], 4321);
}

// The null key is an item of its own: the empty string, seen later, gets the next key.
TEST(DictionaryKeyer, NullKeyIsNotTheEmptyString) {
  DictionaryKeyer keyer(*DataType::Int8(), "a page");
  EXPECT_EQ(keyer.KeyOf("a", 0), 0u);
  EXPECT_EQ(keyer.NullKey(1), 1u);
  EXPECT_EQ(keyer.KeyOf("", 2), 2u);
  EXPECT_EQ(keyer.NullKey(3), 1u);
  EXPECT_EQ(keyer.KeyOf("", 4), 2u);
  EXPECT_EQ(keyer.item_sources(), (std::vector<int64_t>{0, 1, 2}));
}

TEST(DictionaryKeyer, RefusesMoreValuesThanTheKeysIndex) {
  DictionaryKeyer keyer(*DataType::Int8(), "field 'c' (dictionary<int8,utf8>): a page");
  std::vector<std::string> values;  // views passed to KeyOf must outlive the keyer's use of them
  for (int k = 0; k < 128; ++k) values.push_back(std::string(1, char(k)));
  for (int k = 0; k < 128; ++k) keyer.KeyOf(values[size_t(k)], k);
  EXPECT_EQ(keyer.KeyOf(values[5], 500), 5u);
  try {
    keyer.KeyOf("new", 128);
    FAIL() << "expected Invalid";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "field 'c' (dictionary<int8,utf8>): a page holds more than 128 distinct values, more than int8 keys "
              "can index");
  }
}

}  // namespace
}  // namespace lancelet
