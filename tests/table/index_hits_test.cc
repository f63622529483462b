// A row an index answer names must hold a value its leaf matches, unless an overlay has
// changed it since the index was built (table/hit_check.h): an index whose file lists a
// wrong id is refused by the scan that reads the row, with nothing returned or written.
#include <gtest/gtest.h>


#include "format/lance_file.h"
#include "io/object_store.h"
#include "lancelet//builder.h"
#include "lancelet/dataset.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"

namespace lancelet::testing {
namespace {

template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  auto e = ThrownError(fn);
  return e ? e->what() : "no error";
}

class IndexHitsTest : public ::testing::Test {
 protected:
  // 100 rows, one fragment: id, a = id % 10, b = id; a BTree on a, and on b when asked.
  DatasetPtr Create(bool index_b = false, bool stable_row_ids = false) {
    WriteOptions options;
    options.enable_stable_row_ids = stable_row_ids;
    auto ds = Dataset::Write(dir_.Uri("t.lance"), {IdABBatch(100)}, options)->CreateIndex("a", IndexType::kBTree);
    return index_b ? ds->CreateIndex("b", IndexType::kBTree) : ds;
  }

  // The dataset with index `name`'s page_data listing `to` where it listed `from`, and
  // the manifest recording the file's new size.
  static DatasetPtr Relist(const DatasetPtr& ds, const std::string& name, uint64_t from, uint64_t to) {
    const auto& s = table::StateOf(ds);
    lance::table::IndexSection section = s.indices;
    for (auto& meta : *section.mutable_indices()) {
      if (meta.name() != name) continue;
      const std::string path = s.IndexDirectory(meta) + "/page_data.lance";
      auto file = format::LanceFileReader::Open(*s.store, path);
      ArrayPtr values = file->ReadField(0, 0, file->num_rows(0)), ids = file->ReadField(1, 0, file->num_rows(1));
      FixedWidthBuilder<uint64_t> relisted(DataType::UInt64());
      for (int64_t i = 0; i < ids->length; ++i) {
        const uint64_t id = ids->values<uint64_t>()[i];
        relisted.Append(id == from ? to : id);
      }
      auto schema = file->schema().ToArrow();
      format::LanceFileWriter writer(*s.store, path, format::LanceSchema::FromArrow(*schema),
                                     format::FileWriterOptions{file->version()});
      writer.Write(RecordBatch(schema, {values, relisted.Finish()}, values->length));
      const uint64_t size = writer.Finish();
      for (auto& f : *meta.mutable_files())
        if (f.path() == "page_data.lance") f.set_size_bytes(size);
    }
    return table::MakeDataset(table::MakeState(s.store, s.session, s.uri, s.manifest_path, s.manifest, section));
  }

  std::string PageData(const DatasetPtr& ds, const std::string& name) const {
    for (const auto& meta : table::StateOf(ds).indices.indices())
      if (meta.name() == name) return table::StateOf(ds).IndexDirectory(meta) + "/page_data.lance";
    return "";
  }

  TempDir dir_;
};

TEST_F(IndexHitsTest, AHitWhoseValueDoesNotMatchIsRefused) {
  auto ds = Create();
  EXPECT_EQ(ds->CountRows("a = 3"), 10u);
  // Row 13 (a = 3) listed as row 14 (a = 4): row 13 would be missing from every answer.
  auto damaged = Relist(ds, "a_idx", 13, 14);
  const std::string error = "index 'a_idx': '" + PageData(ds, "a_idx") +
                            "' page 0 (file row 31), row 31: it lists row 14 of fragment 0 as matching a = 3, but the "
                            "row's value does not (the index file is damaged: rebuild the index)";
  auto count = ThrownError([&] { damaged->CountRows("a = 3"); });
  ASSERT_TRUE(count);
  EXPECT_EQ(count->kind(), ErrorKind::kCorrupt);
  EXPECT_EQ(std::string(count->what()), error);
  // Writes through it are refused before they commit.
  EXPECT_EQ(ErrorOf([&] { damaged->Update({{"b", "-1"}}, "a = 3"); }), error);
  EXPECT_EQ(ErrorOf([&] { damaged->Delete("a = 3"); }), error);
  EXPECT_EQ(Dataset::Open(ds->uri())->version(), ds->version());
  // Answers the index does not touch row 14 in are unaffected; a rebuild repairs it.
  EXPECT_EQ(damaged->CountRows("a = 5"), 10u);
  EXPECT_EQ(damaged->CreateIndex("a", IndexType::kBTree, "a_idx", true)->CountRows("a = 3"), 10u);
}

TEST_F(IndexHitsTest, UnderAnOrEveryCandidateIsChecked) {
  // Row 14 passes through b = 14, so only checking rows the filter rejected would miss
  // that a_idx lists it for a = 3 (and has lost row 13).
  auto damaged = Relist(Create(true), "a_idx", 13, 14);
  EXPECT_EQ(ErrorOf([&] { damaged->CountRows("a = 3 OR b = 14"); }),
            "index 'a_idx': '" + PageData(damaged, "a_idx") +
                "' page 0 (file row 31), row 31: it lists row 14 of fragment 0 as matching a = 3, but the row's value "
                "does not (the index file is damaged: rebuild the index)");
}

TEST_F(IndexHitsTest, RowsChangedSinceTheIndexAreNotChecked) {
  for (bool stable : {false, true}) {
    SCOPED_TRACE(stable ? "stable row ids" : "row addresses");
    io::OpenStore(dir_.Uri("t.lance")).store->DeleteTree(dir_.Uri("t.lance"));
    auto ds = Create(true, stable)->Update({{"a", "7"}}, "id = 13");  // a_idx still says 3
    EXPECT_EQ(ds->CountRows("a = 3"), 9u);
    EXPECT_EQ(ds->CountRows("a = 3 OR b = 50"), 10u);
    EXPECT_EQ(ds->CountRows("a = 7"), 11u);
  }
}

}  // namespace
}  // namespace lancelet::testing
