// MergeInsert (lancelet/merge_insert.h): pylance's merge_insert over rows in memory, one
// commit per call, nothing left behind on failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "lancelet/dataset.h"
#include "lancelet/merge_insert.h"
#include "lancelet/scalar.h"
#include "lancelet/sql.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

Scalar I32(std::optional<int64_t> v) { return v ? Scalar{DataType::Int32(), *v} : Scalar::Null(DataType::Int32()); }
Scalar I64(std::optional<int64_t> v) { return v ? Scalar{DataType::Int64(), *v} : Scalar::Null(DataType::Int64()); }
Scalar Str(const char* v) { return v ? Scalar{DataType::Utf8(), std::string(v)} : Scalar::Null(DataType::Utf8()); }

// Rows as "id:name:qty" lines, in id order (NULL printed as NULL).
std::string Rows(const DatasetPtr& ds) {
  auto batch = ds->NewScan().Columns({"id", "name", "qty"}).ToBatch();
  std::vector<std::string> lines;
  for (int64_t r = 0; r < batch->num_rows(); ++r) {
    std::string line;
    for (size_t c = 0; c < 3; ++c) {
      Scalar v = GetScalar(*batch->column(c), r);
      if (c) line += ":";
      line += v.is_null() ? "NULL" : c == 1 ? v.as_string() : std::to_string(v.as_int());
    }
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// A dataset at version 1: ids 1, 2, 3, NULL, 5 with names and quantities.
DatasetPtr Target(const std::string& uri) {
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("id", DataType::Int32()), Field::Make("name", DataType::Utf8()), Field::Make("qty", DataType::Int64())});
  auto batch = RecordBatch::Make(schema, {MakeArray(DataType::Int32(), {I32(1), I32(2), I32(3), I32({}), I32(5)}),
                                          MakeArray(DataType::Utf8(), {Str("a"), Str("b"), Str("c"), Str("n"), Str("e")}),
                                          MakeArray(DataType::Int64(), {I64(10), I64(20), I64(30), I64(40), I64(50)})});
  return Dataset::Write(uri, {batch});
}

// A source of (id int64, qty int32): other types than the dataset's, read as its types.
std::vector<RecordBatchPtr> Source(std::vector<std::optional<int64_t>> ids, std::vector<int64_t> qty) {
  std::vector<Scalar> id_values, qty_values;
  for (auto id : ids) id_values.push_back(I64(id));
  for (auto q : qty) qty_values.push_back(I32(q));
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("id", DataType::Int64()), Field::Make("qty", DataType::Int32())});
  return {RecordBatch::Make(schema, {MakeArray(DataType::Int64(), id_values), MakeArray(DataType::Int32(), qty_values)})};
}

TEST(MergeInsertTest, AllThreeClausesInOneVersion) {
  TempDir dir;
  auto ds = Target(dir.Uri("t.lance"));
  MergeInsertOptions o;
  o.on = {"id"};
  o.when_matched_update_all = o.when_not_matched_insert_all = o.when_not_matched_by_source_delete = true;
  auto r = MergeInsert(ds, Source({2, 3, 6, std::nullopt}, {21, 31, 60, 70}), o);
  EXPECT_EQ(r.dataset->version(), 2u);
  EXPECT_EQ(Dataset::Open(dir.Uri("t.lance"))->version(), 2u);
  EXPECT_EQ(r.updated, 2u);
  EXPECT_EQ(r.inserted, 2u);  // 6 and the NULL key, which matches nothing
  EXPECT_EQ(r.deleted, 3u);   // 1, 5 and the target's NULL key
  EXPECT_EQ(Rows(r.dataset), "2:b:21\n3:c:31\n6:NULL:60\nNULL:NULL:70\n");
}

TEST(MergeInsertTest, ConditionsOnMatchedAndBySourceRows) {
  TempDir dir;
  auto ds = Target(dir.Uri("t.lance"));
  MergeInsertOptions o;
  o.on = {"id"};
  o.when_matched_update_all = true;
  o.matched_condition = "source.qty > target.qty";
  o.when_not_matched_by_source_delete = true;
  o.by_source_condition = "qty >= 40";
  auto r = MergeInsert(ds, Source({1, 2}, {11, 19}), o);
  EXPECT_EQ(r.updated, 1u);
  EXPECT_EQ(r.deleted, 2u);  // NULL (40) and 5 (50); 3 (30) stays
  EXPECT_EQ(r.inserted, 0u);
  EXPECT_EQ(Rows(r.dataset), "1:a:11\n2:b:20\n3:c:30\n");
}

TEST(MergeInsertTest, InsertOnlyAndNothingToDo) {
  TempDir dir;
  auto ds = Target(dir.Uri("t.lance"));
  MergeInsertOptions o;
  o.on = {"id"};
  o.when_not_matched_insert_all = true;
  auto r = MergeInsert(ds, Source({1, 7}, {0, 70}), o);
  EXPECT_EQ(r.inserted, 1u);
  EXPECT_EQ(r.updated + r.deleted, 0u);
  EXPECT_EQ(r.dataset->version(), 2u);
  auto none = MergeInsert(r.dataset, Source({1}, {0}), o);  // every key present: no commit
  EXPECT_EQ(none.dataset->version(), 2u);
  EXPECT_EQ(none.inserted, 0u);
  // No source batch: a by-source delete removes every row.
  MergeInsertOptions d;
  d.on = {"id"};
  d.when_not_matched_by_source_delete = true;
  auto gone = MergeInsert(r.dataset, std::vector<RecordBatchPtr>{}, d);
  EXPECT_EQ(gone.deleted, 6u);
  EXPECT_EQ(gone.dataset->CountRows(), 0u);
}

TEST(MergeInsertTest, CompositeKeys) {
  TempDir dir;
  auto ds = Target(dir.Uri("t.lance"));
  MergeInsertOptions o;
  o.on = {"id", "name"};
  o.when_matched_update_all = o.when_not_matched_by_source_delete = true;
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("id", DataType::Int32()), Field::Make("name", DataType::Utf8()), Field::Make("qty", DataType::Int64())});
  auto src = RecordBatch::Make(schema, {MakeArray(DataType::Int32(), {I32(1), I32(2), I32({})}),
                                        MakeArray(DataType::Utf8(), {Str("a"), Str("x"), Str("n")}),
                                        MakeArray(DataType::Int64(), {I64(100), I64(200), I64(400)})});
  auto r = MergeInsert(ds, {src}, o);
  EXPECT_EQ(r.updated, 1u);  // (1, a); (2, x) differs in name, (NULL, n) has a NULL key
  EXPECT_EQ(r.deleted, 4u);
  EXPECT_EQ(Rows(r.dataset), "1:a:100\n");
}

TEST(MergeInsertTest, RefusalsLeaveTheDatasetAlone) {
  TempDir dir;
  auto ds = Target(dir.Uri("t.lance"));
  size_t files = ObjectsUnder(dir.Uri("t.lance")).size();
  MergeInsertOptions o;
  o.on = {"id"};
  o.when_matched_update_all = o.when_not_matched_insert_all = o.when_not_matched_by_source_delete = true;
  EXPECT_EQ(ThrownMessage([&] { MergeInsert(ds, Source({2, 2}, {1, 2}), o); }),
            "merge_insert: a row of target matches more than one source row; MERGE needs at most one");
  auto wide = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("id", DataType::Int32()),
                                                             Field::Make("other", DataType::Int32())});
  EXPECT_EQ(ThrownMessage([&] {
              MergeInsert(ds, {RecordBatch::Make(wide, {MakeArray(DataType::Int32(), {I32(1)}),
                                                        MakeArray(DataType::Int32(), {I32(1)})})},
                          o);
            }),
            "merge_insert: the source's column 'other' is not a column of the dataset");
  auto text = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("id", DataType::Utf8())});
  EXPECT_NE(ThrownMessage([&] { MergeInsert(ds, {RecordBatch::Make(text, {MakeArray(DataType::Utf8(), {Str("x")})})}, o); })
                .find("merge_insert: the source's column 'id': "),
            std::string::npos);
  o.on = {"qty2"};
  EXPECT_EQ(ThrownMessage([&] { MergeInsert(ds, Source({1}, {1}), o); }),
            "merge_insert: key column 'qty2' is not a column of the dataset");
  o.on = {"name"};
  EXPECT_EQ(ThrownMessage([&] { MergeInsert(ds, Source({1}, {1}), o); }),
            "merge_insert: key column 'name' is not in the source");
  o.on = {"id"};
  o.by_source_condition = "nope > 1";
  EXPECT_NE(ThrownMessage([&] { MergeInsert(ds, Source({1}, {1}), o); }).find("merge_insert: "), std::string::npos);
  EXPECT_EQ(Dataset::Open(dir.Uri("t.lance"))->version(), 1u);
  EXPECT_EQ(ObjectsUnder(dir.Uri("t.lance")).size(), files);
}

// A concurrent commit between the merge's read and its commit: it plans again on the
// latest version, so the concurrent change survives and the merge sees its rows.
TEST(MergeInsertTest, PlansAgainAfterAConcurrentAppend) {
  TempDir dir;
  auto stale = Target(dir.Uri("t.lance"));
  SqlSession db(dir.RootUri());
  db.Execute("INSERT INTO t VALUES (6, 'f', 60)");  // version 2, after `stale` was opened
  MergeInsertOptions o;
  o.on = {"id"};
  o.when_matched_update_all = o.when_not_matched_insert_all = true;
  auto r = MergeInsert(stale, Source({6, 8}, {61, 80}), o);
  EXPECT_EQ(r.dataset->version(), 3u);
  EXPECT_EQ(r.updated, 1u);  // the row appended concurrently
  EXPECT_EQ(r.inserted, 1u);
  EXPECT_EQ(Rows(r.dataset), "1:a:10\n2:b:20\n3:c:30\n5:e:50\n6:f:61\n8:NULL:80\nNULL:n:40\n");
}

}  // namespace
}  // namespace lancelet::testing
