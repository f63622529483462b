// Index kinds: known by their type URL or name in any case, an unknown one refused rather
// than taken for a kind lancelet has, and every opened segment saying its kind.
#include <gtest/gtest.h>

#include "index/index.h"
#include "index/scalar_index.h"
#include "lancelet/builder.h"

namespace lancelet::index {
namespace {

TEST(IndexKindTest, TypeUrlsAndNamesMapBothWaysAndAnUnknownOneIsNotTakenForAKnownKind) {
  EXPECT_EQ(KindOfTypeUrl("/lance.table.BTreeIndexDetails"), IndexKind::kBTree);
  EXPECT_EQ(KindOfTypeUrl("/LANCE.TABLE.BITMAPINDEXDETAILS"), IndexKind::kBitmap);
  EXPECT_EQ(KindOfTypeUrl("btree"), IndexKind::kBTree);
  EXPECT_EQ(KindOfTypeUrl("Bitmap"), IndexKind::kBitmap);
  EXPECT_EQ(KindOfTypeUrl("/lance.table.LabelListIndexDetails"), std::nullopt);
  EXPECT_EQ(KindOfTypeUrl("/lance.index.pb.VectorIndexDetails"), std::nullopt);
  EXPECT_EQ(KindOfTypeUrl(""), std::nullopt);
  for (IndexKind kind : {IndexKind::kBTree, IndexKind::kBitmap}) {
    EXPECT_EQ(KindOfTypeUrl(TypeUrl(kind)), kind);
    EXPECT_EQ(KindOfTypeUrl(KindName(kind)), kind);
  }
  EXPECT_STREQ(TypeUrl(IndexKind::kBitmap), "/lance.table.BitmapIndexDetails");
  EXPECT_STREQ(KindName(IndexKind::kBTree), "BTree");
}

TEST(IndexKindTest, AnOpenedSegmentIsAnIndexOfItsKind) {
  FixedWidthBuilder<int64_t> values(DataType::Int64());
  for (int64_t v : {3, 1, 2}) values.Append(v);
  const std::vector<uint64_t> ids = {0, 1, 2};
  std::unique_ptr<Index> btree = InMemoryBTree(*values.Finish(), ids, 2);
  EXPECT_EQ(btree->kind(), IndexKind::kBTree);
  EXPECT_EQ(btree->num_rows(), 3u);
}

}  // namespace
}  // namespace lancelet::index
