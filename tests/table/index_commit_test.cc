// CreateIndex commits: which concurrent commits they rebase over (docs/conflicts.md),
// how the index section changes, and that a failed build leaves nothing behind.

#include <gtest/gtest.h>

#include "io/object_store.h"
#include "lancelet//dataset.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/commit.h"
#include "table/dataset_state.h"
#include "table/index_section.h"

namespace lancelet::testing {
namespace {

using lance::table::Transaction;
using table::ConflictResult;

Transaction CreateIndexNamed(const std::string& name, int32_t field) {
  Transaction t;
  auto* index = t.mutable_create_index()->add_new_indices();
  index->set_name(name);
  index->add_fields(field);
  return t;
}

TEST(IndexCommitTest, ABuildRebasesOverDataChangesAndFailsOverRewritesAndItsOwnName) {
  const Transaction ours = CreateIndexNamed("v_idx", 1);
  Transaction append, del, overlay, update_rows, update_columns, other_field_columns, rewrite, overwrite;
  append.mutable_append();
  del.mutable_delete_()->add_deleted_fragment_ids(0);
  overlay.mutable_data_overlay()->add_groups()->set_fragment_id(0);
  update_rows.mutable_update()->add_fields_modified(1);  // REWRITE_ROWS (lancelet's MERGE)
  update_columns.mutable_update()->add_fields_modified(1);
  update_columns.mutable_update()->set_update_mode(Transaction::REWRITE_COLUMNS);
  other_field_columns.mutable_update()->add_fields_modified(2);
  other_field_columns.mutable_update()->set_update_mode(Transaction::REWRITE_COLUMNS);
  rewrite.mutable_rewrite();
  overwrite.mutable_overwrite();
  EXPECT_EQ(table::CheckConflict(ours, append), ConflictResult::kCompatible);
  EXPECT_EQ(table::CheckConflict(ours, del), ConflictResult::kCompatible);
  EXPECT_EQ(table::CheckConflict(ours, overlay), ConflictResult::kCompatible);
  EXPECT_EQ(table::CheckConflict(ours, update_rows), ConflictResult::kCompatible);
  EXPECT_EQ(table::CheckConflict(ours, update_columns), ConflictResult::kIncompatible);
  EXPECT_EQ(table::CheckConflict(ours, other_field_columns), ConflictResult::kCompatible);
  EXPECT_EQ(table::CheckConflict(ours, rewrite), ConflictResult::kIncompatible);
  EXPECT_EQ(table::CheckConflict(ours, overwrite), ConflictResult::kIncompatible);
  EXPECT_EQ(table::CheckConflict(ours, CreateIndexNamed("v_idx", 2)), ConflictResult::kIncompatible);
  EXPECT_EQ(table::CheckConflict(ours, CreateIndexNamed("w_idx", 1)), ConflictResult::kCompatible);
  // Data commits rebase over an index build too.
  EXPECT_EQ(table::CheckConflict(overlay, ours), ConflictResult::kCompatible);
  EXPECT_EQ(table::CheckConflict(del, ours), ConflictResult::kCompatible);
}

TEST(IndexCommitTest, CreateIndexAddsAndRemovesSegmentsByUuid) {
  lance::table::IndexSection before;
  auto* a = before.add_indices();
  a->set_name("a");
  a->mutable_uuid()->set_uuid(std::string(16, '\1'));
  auto* b = before.add_indices();
  b->set_name("b");
  b->mutable_uuid()->set_uuid(std::string(16, '\2'));
  Transaction t;
  *t.mutable_create_index()->add_removed_indices() = *a;
  auto* c = t.mutable_create_index()->add_new_indices();
  c->set_name("a");
  c->mutable_uuid()->set_uuid(std::string(16, '\3'));
  auto after = table::CarryIndexes(before, nullptr, lance::table::Manifest(), t);
  ASSERT_EQ(after.indices_size(), 2);
  EXPECT_EQ(after.indices(0).uuid().uuid(), std::string(16, '\2'));
  EXPECT_EQ(after.indices(1).uuid().uuid(), std::string(16, '\3'));
}

TEST(IndexCommitTest, UuidTextRoundTrips) {
  const std::string text = "77f2eef4-d0bd-405d-9951-7a1f3a7b5848";
  EXPECT_EQ(table::UuidText(table::UuidBytes(text)), text);
  EXPECT_THROW(table::UuidBytes("77f2eef4"), Error);
}

TEST(IndexCommitTest, RefusedBuildsLeaveTheDatasetAsItWas) {
  TempDir dir;
  const std::string uri = dir.Uri("t.lance");
  auto ds = Dataset::Write(uri, {IdNameBatch(0, 50)});
  ds = ds->CreateIndex("id", IndexType::kBTree);
  auto error = ThrownError([&] { ds->CreateIndex("id", IndexType::kBitmap, "id_idx"); });
  ASSERT_TRUE(error);
  EXPECT_STREQ(error->what(), ("dataset '" + uri + "' already has an index named 'id_idx' (replace it, or choose another name)").c_str());
  error = ThrownError([&] { ds->CreateIndex("nope", IndexType::kBTree); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind(), ErrorKind::kNotFound);
  // An index type the library does not know (a third kind added to the enum, or a cast
  // value) is refused by number, never built as a Bitmap.
  error = ThrownError([&] { ds->CreateIndex("name", static_cast<IndexType>(7), "third_kind"); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind(), ErrorKind::kNotSupported);
  EXPECT_STREQ(error->what(), "index type 7 is not one lancelet builds (BTree, Bitmap)");
  error = ThrownError([&] { ds->DropIndex("nope"); });
  ASSERT_TRUE(error);
  EXPECT_EQ(std::string(error->what()), "dataset '" + uri + "' has no index named 'nope'");
  EXPECT_EQ(Dataset::Open(uri)->version(), 2u);
  EXPECT_EQ(io::OpenStore(uri).store->List(uri + "/_indices").size(), 1u);
  // Replacing commits a new segment and the old one leaves the index section.
  ds = ds->CreateIndex("id", IndexType::kBitmap, "id_idx", true);
  ASSERT_EQ(ds->ListIndices().size(), 1u);
  EXPECT_EQ(ds->ListIndices()[0].type, "Bitmap");
  EXPECT_EQ(ds->CountRows("id BETWEEN 10 AND 19"), 10u);
}

}  // namespace
}  // namespace lancelet::testing
