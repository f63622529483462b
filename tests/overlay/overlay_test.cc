// Resolution rules of data overlay files (spec "Coverage and resolution"), one test each,
// through the public API: OverlayWriter, Update, scan and take.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <map>

#include "format/roaring_bitmap.h"
#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/record_batch.h"
#include "lancelet/error.h"
#include "lancelet/overlay_writer.h"
#include "lancelet/text.h"
#include "overlay/patch.h"
#include "overlay/resolution.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/session.h"

namespace lancelet {
namespace {

using testing::Strings;
using testing::TempDir;

ArrayPtr Int32s(const std::vector<std::optional<int32_t>>& values) {
  FixedWidthBuilder<int32_t> b(DataType::Int32());
  for (auto v : values) v ? b.Append(*v) : b.AppendNull();
  return b.Finish();
}

// id int32, age int32, name utf8: ids 0..n-1, age = 10 * id, name = "n<id>".
DatasetPtr MakeDataset(const std::string& uri, int n, const std::string& version = "2.0", int64_t rows_per_file = 1 << 20) {
  std::vector<std::optional<int32_t>> ids, ages;
  std::vector<std::optional<std::string>> names;
  for (int i = 0; i < n; ++i) {
    ids.push_back(i);
    ages.push_back(10 * i);
    names.push_back("n" + std::to_string(i));
  }
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("id", DataType::Int32()),
                                                               Field::Make("age", DataType::Int32()),
                                                               Field::Make("name", DataType::Utf8())});
  WriteOptions o;
  o.file_version = version;
  o.max_rows_per_file = rows_per_file;
  return Dataset::Write(uri, {RecordBatch::Make(schema, {Int32s(ids), Int32s(ages), Strings(names)})}, o);
}

std::string Column(const DatasetPtr& ds, const std::string& column) {
  auto batch = ds->NewScan().Columns({column}).ToBatch();
  std::string out;
  for (int64_t i = 0; i < batch->num_rows(); ++i)
    out += (i ? "," : "") + (batch->column(0)->IsNull(i) ? std::string("NULL") : FormatValue(*batch->column(0), i, ValueStyle::kCsv));
  return out;
}

// `ds`'s version read through another manifest (hand-edited in a test).
DatasetPtr WithManifest(const DatasetPtr& ds, const lance::table::Manifest& manifest) {
  const auto& state = table::StateOf(ds);
  return table::MakeDataset(table::MakeState(state.store, state.session, state.uri, state.manifest_path, manifest));
}

// 600 rows in fragments of 300, then two overlay commits. The first: age at offsets
// every3 = {0, 3, ..} of fragment 0 (-o for even o, NULL for odd) and at every5 =
// {1, 6, 11, ..} of fragment 1 (1000 + o). The second: age (1000 + o) and name ("s<o>")
// at every5 of fragment 0.
DatasetPtr MakeLayeredDataset(const std::string& uri, const std::string& version) {
  auto ds = MakeDataset(uri, 600, version, 300);
  std::vector<uint32_t> every3, every5;
  std::vector<std::optional<int32_t>> ages3, ages5;
  std::vector<std::optional<std::string>> names5;
  for (uint32_t o = 0; o < 300; o += 3) every3.push_back(o), ages3.push_back(o % 2 ? std::optional<int32_t>() : -int32_t(o));
  for (uint32_t o = 1; o < 300; o += 5) every5.push_back(o), ages5.push_back(1000 + o), names5.push_back("s" + std::to_string(o));
  ds = OverlayWriter(ds).Set(0, "age", every3, Int32s(ages3)).Set(1, "age", every5, Int32s(ages5)).Commit();
  return OverlayWriter(ds).Set(0, "age", every5, Int32s(ages5)).Set(0, "name", every5, Strings(names5)).Commit();
}

// `ds` with every overlay's file size erased: a scan cannot bound a whole read of them,
// so it reads them batch by batch instead of merging them.
DatasetPtr WithoutOverlaySizes(const DatasetPtr& ds) {
  auto m = table::StateOf(ds).manifest;
  for (auto& f : *m.mutable_fragments())
    for (auto& o : *f.mutable_overlays()) o.mutable_data_file()->set_file_size_bytes(0);
  return WithManifest(ds, m);
}

class OverlayTest : public ::testing::TestWithParam<std::string> {
 protected:
  // 100000 rows (version 1) whose ages one overlay replaces with -offset, as a full-column
  // UPDATE does (version 2). Returns the overlay file's size.
  uint64_t OverlayEveryAge() {
    const uint32_t n = 100000;
    auto ds = MakeDataset(uri_, int(n), GetParam());
    std::vector<uint32_t> offsets(n);
    std::vector<std::optional<int32_t>> values(n);
    for (uint32_t o = 0; o < n; ++o) offsets[o] = o, values[o] = -int32_t(o);
    ds = OverlayWriter(ds).Set(0, "age", offsets, Int32s(values)).Commit();
    return table::StateOf(ds).manifest.fragments(0).overlays(0).data_file().file_size_bytes();
  }
  // The bytes `read` costs on `version` freshly opened; the age column it returns (its
  // first column) must print as `expect`.
  uint64_t BytesOfFirstRead(uint64_t version, const std::function<RecordBatchPtr(const DatasetPtr&)>& read,
                            const std::string& expect) {
    Session::Default()->Clear();  // nothing kept from an earlier read
    auto d = Dataset::Open(uri_, version);
    const uint64_t before = table::StateOf(d).store->stats().bytes_read;
    auto batch = read(d);
    std::string text;
    for (int64_t i = 0; i < batch->num_rows(); ++i) text += (i ? "," : "") + FormatValue(*batch->column(0), i, ValueStyle::kCsv);
    EXPECT_EQ(text, expect);
    return table::StateOf(d).store->stats().bytes_read - before;
  }

  TempDir dir_;
  std::string uri_ = dir_.Join("o.lance");
};

TEST_P(OverlayTest, NewerVersionWins) {
  auto ds = MakeDataset(uri_, 5, GetParam());
  ds = OverlayWriter(ds).Set(0, "age", {1, 2}, Int32s({100, 200})).Commit();
  ds = OverlayWriter(ds).Set(0, "age", {2, 3}, Int32s({2000, 3000})).Commit();
  EXPECT_EQ(Column(ds, "age"), "0,100,2000,3000,40");
  EXPECT_EQ(table::StateOf(ds).manifest.fragments(0).overlays(1).committed_version(), 3u);
  // Time travel: version 2 shows the values as they stood then.
  EXPECT_EQ(Column(ds->Checkout(2), "age"), "0,100,200,30,40");
  EXPECT_EQ(Column(ds->Checkout(1), "age"), "0,10,20,30,40");
}

TEST_P(OverlayTest, PositionBreaksTiesBetweenEqualVersions) {
  auto ds = MakeDataset(uri_, 4, GetParam());
  OverlayWriter w(ds);
  w.Set(0, "age", {1}, Int32s({111})).Set(0, "name", {1, 2}, Strings({"x", "y"}));
  OverlayWriter::Options split;
  split.split_into_dense = true;  // two overlays, same committed_version
  ds = w.Commit(split);
  ASSERT_EQ(table::StateOf(ds).manifest.fragments(0).overlays_size(), 2);
  // Hand-made tie: a second commit whose two overlays cover the same cell.
  auto& state = const_cast<table::DatasetState&>(table::StateOf(ds));
  auto* frag = state.manifest.mutable_fragments(0);
  *frag->add_overlays() = frag->overlays(0);  // same age overlay (111) ...
  frag->mutable_overlays(2)->set_committed_version(frag->overlays(0).committed_version());
  // ... and the later position of an equal version wins: read value stays 111 from the copy.
  auto reread = WithManifest(ds, state.manifest);
  EXPECT_EQ(Column(reread, "age"), "0,111,20,30");
  // Now an overlay stored later with the same version but another value wins.
  ds = OverlayWriter(Dataset::Open(uri_)).Set(0, "age", {1}, Int32s({222})).Commit();
  auto m = table::StateOf(ds).manifest;
  auto* f = m.mutable_fragments(0);
  uint64_t v = f->overlays(0).committed_version();
  f->mutable_overlays(2)->set_committed_version(v);  // 222 now ties with 111 but comes later
  auto tied = WithManifest(ds, m);
  EXPECT_EQ(Column(tied, "age"), "0,222,20,30");
  std::swap(*f->mutable_overlays(0), *f->mutable_overlays(2));  // equal versions: the later position wins
  auto swapped = WithManifest(ds, m);
  EXPECT_EQ(Column(swapped, "age"), "0,111,20,30");
}

TEST_P(OverlayTest, CoveredNullOverridesAbsentFallsThrough) {
  auto ds = MakeDataset(uri_, 4, GetParam());
  ds = OverlayWriter(ds).Set(0, "name", {0, 2}, Strings({std::nullopt, "two"})).Commit();
  EXPECT_EQ(Column(ds, "name"), "NULL,n1,two,n3");
  EXPECT_EQ(ds->CountRows("name IS NULL"), 1u);
}

TEST_P(OverlayTest, DeletionsWinInEitherOrder) {
  auto ds = MakeDataset(uri_, 5, GetParam());
  ds = OverlayWriter(ds).Set(0, "age", {1, 3}, Int32s({-1, -3})).Commit();
  ds = ds->Delete("id = 1");  // delete after the overlay
  EXPECT_EQ(Column(ds, "age"), "0,20,-3,40");
  ds = ds->Delete("age = -3");  // the filter sees the overlaid value
  EXPECT_EQ(Column(ds, "age"), "0,20,40");
  ds = OverlayWriter(ds).Set(0, "age", {1, 3, 4}, Int32s({7, 7, 7})).Commit();  // overlay after the delete
  EXPECT_EQ(Column(ds, "age"), "0,20,7");
  std::vector<uint64_t> rows = {2, 0};
  auto taken = ds->Take(rows, {"age"});
  EXPECT_EQ(taken->column(0)->values<int32_t>()[0], 7);
  EXPECT_EQ(taken->column(0)->values<int32_t>()[1], 0);
}

TEST_P(OverlayTest, SparseColumnsOfUnequalLength) {
  auto ds = MakeDataset(uri_, 4, GetParam());
  ds = OverlayWriter(ds).Set(0, "name", {2, 3}, Strings({"Caroline", "David"})).Set(0, "age", {1}, Int32s({99})).Commit();
  const auto& o = table::StateOf(ds).manifest.fragments(0).overlays(0);
  ASSERT_TRUE(o.has_field_coverage());
  EXPECT_EQ(o.field_coverage().offset_bitmaps_size(), 2);
  EXPECT_EQ(Column(ds, "name"), "n0,n1,Caroline,David");
  EXPECT_EQ(Column(ds, "age"), "0,99,20,30");
}

TEST_P(OverlayTest, RankAddressingAcrossBatchesAndTake) {
  auto ds = MakeDataset(uri_, 3000, GetParam(), 1000);
  std::vector<uint32_t> offsets;
  std::vector<std::optional<int32_t>> values;
  for (uint32_t o = 5; o < 1000; o += 7) {
    offsets.push_back(o);
    values.push_back(-int32_t(o));
  }
  ds = OverlayWriter(ds).Set(1, "age", offsets, Int32s(values)).Commit();
  auto batch = ds->NewScan().Columns({"id", "age"}).BatchSize(128).ToBatch();
  for (int64_t i = 0; i < 3000; ++i) {
    int32_t id = batch->column(0)->values<int32_t>()[i];
    int32_t expect = (id >= 1000 && id < 2000 && (id - 1000) % 7 == 5) ? -(id - 1000) : 10 * id;
    ASSERT_EQ(batch->column(1)->values<int32_t>()[i], expect) << "row " << i;
  }
  std::vector<uint64_t> rows = {1012, 5, 1005, 2999};
  auto taken = ds->Take(rows, {"age"});
  EXPECT_EQ(taken->column(0)->values<int32_t>()[0], -12);
  EXPECT_EQ(taken->column(0)->values<int32_t>()[1], 50);
  EXPECT_EQ(taken->column(0)->values<int32_t>()[2], -5);
  EXPECT_EQ(taken->column(0)->values<int32_t>()[3], 29990);
}

// A scan merges small overlays into one resolved column per field; larger ones (here:
// overlay files whose size is not recorded, so no bound is known) are read batch by
// batch, rank ranges only. Both paths give the values a take gives, across batches,
// with shadowed cells, NULL overrides and variable-width values.
TEST_P(OverlayTest, MergedAndBatchByBatchScansAgree) {
  auto ds = MakeLayeredDataset(uri_, GetParam());
  std::vector<uint64_t> all(600);
  for (uint64_t i = 0; i < 600; ++i) all[i] = i;
  auto taken = ds->Take(all, {"age", "name"});
  for (const DatasetPtr& d : {ds, WithoutOverlaySizes(ds)}) {
    auto scanned = d->NewScan().Columns({"age", "name"}).BatchSize(64).ToBatch();
    for (int c = 0; c < 2; ++c)
      for (int64_t i = 0; i < 600; ++i)
        ASSERT_EQ(FormatValue(*scanned->column(c), i, ValueStyle::kCsv), FormatValue(*taken->column(c), i, ValueStyle::kCsv))
            << "column " << c << " row " << i;
  }
  // Spot values. every3 = {0, 3, ..}, every5 = {1, 6, 11, ..}: 12 only every3 (even:
  // -12), 9 only every3 (odd: NULL), 6 both (the newer every5 value wins), 15 only
  // every3 (NULL), 11 only every5.
  EXPECT_EQ(FormatValue(*taken->column(0), 12, ValueStyle::kCsv), "-12");
  EXPECT_TRUE(taken->column(0)->IsNull(9));
  EXPECT_EQ(FormatValue(*taken->column(0), 6, ValueStyle::kCsv), "1006");
  EXPECT_TRUE(taken->column(0)->IsNull(15));
  EXPECT_EQ(FormatValue(*taken->column(0), 11, ValueStyle::kCsv), "1011");
  EXPECT_EQ(FormatValue(*taken->column(0), 13, ValueStyle::kCsv), "130");
  EXPECT_EQ(FormatValue(*taken->column(1), 16, ValueStyle::kCsv), "s16");
  EXPECT_EQ(FormatValue(*taken->column(0), 301, ValueStyle::kCsv), "1001");
  EXPECT_EQ(FormatValue(*taken->column(1), 301, ValueStyle::kCsv), "n301");
}

// Fragments with deletions, and the rows a filter keeps, are read by offset list rather
// than by range; small overlays still come from the merged column there, large ones from
// the overlay files. Checked against a model of the expected values.
TEST_P(OverlayTest, FilteredScansOfFragmentsWithDeletionsSeeResolvedValues) {
  auto ds = MakeLayeredDataset(uri_, GetParam())->Delete("id % 7 = 0");
  auto expected_age = [](int id) -> std::string {
    int o = id % 300;
    if (o % 5 == 1) return std::to_string(1000 + o);
    if (id < 300 && o % 3 == 0) return o % 2 ? "" : std::to_string(-o);
    return std::to_string(10 * id);
  };
  auto expected_name = [](int id) { return id < 300 && id % 5 == 1 ? "s" + std::to_string(id) : "n" + std::to_string(id); };
  for (const DatasetPtr& d : {ds, WithoutOverlaySizes(ds)}) {
    auto batch = d->NewScan().Columns({"id", "age", "name"}).Filter("id % 2 = 0").BatchSize(64).ToBatch();
    ASSERT_EQ(batch->num_rows(), 257);  // even ids below 600 (300) minus multiples of 14 (43)
    for (int64_t i = 0; i < batch->num_rows(); ++i) {
      int id = batch->column(0)->values<int32_t>()[i];
      ASSERT_EQ(FormatValue(*batch->column(1), i, ValueStyle::kCsv), expected_age(id)) << "id " << id;
      ASSERT_EQ(FormatValue(*batch->column(2), i, ValueStyle::kCsv), expected_name(id)) << "id " << id;
    }
    // The filter itself sees resolved values: base ages are multiples of 10, so ages of
    // 5k + 1 are the 120 overlaid 1000 + o, less the 8 + 9 of them deleted.
    EXPECT_EQ(d->CountRows("age % 5 = 1"), 103u);
  }
}

// A take reads overlay values at the ranks it needs, never a whole overlay column (a
// scan may: it visits the whole fragment).
TEST_P(OverlayTest, TakeReadsOnlyTheOverlayValuesItReturns) {
  const uint64_t overlay_bytes = OverlayEveryAge();
  ASSERT_GT(overlay_bytes, 200000u);
  std::vector<uint64_t> rows = {7, 50000, 99999};
  auto take = [&](const DatasetPtr& d) { return d->Take(rows, {"age"}); };
  const uint64_t base = BytesOfFirstRead(1, take, "70,500000,999990");
  const uint64_t looked_up = overlay::Counters().offsets_looked_up;
  const uint64_t overlaid = BytesOfFirstRead(2, take, "-7,-50000,-99999");
  // The overlay file's footer and metadata, and the pages of three values: far below the
  // column.
  EXPECT_LT(overlaid - base, overlay_bytes / 4) << "base " << base << ", overlaid " << overlaid;
  // A coverage of exactly [0, n) answers membership and rank without a bitmap search.
  EXPECT_EQ(overlay::Counters().offsets_looked_up, looked_up);
}

// A scan whose filter keeps a few rows reads an overlay that covers them all (a
// full-column UPDATE) as it reads a base column: the pages of the kept rows, never the
// whole overlay column into memory.
TEST_P(OverlayTest, AFilteredScanReadsACoveringOverlayOnlyWhereTheFilterKeepsRows) {
  const uint64_t overlay_bytes = OverlayEveryAge();
  ASSERT_GT(overlay_bytes, 200000u);
  auto scan = [](const DatasetPtr& d) {
    return d->NewScan().Columns({"age"}).Filter("id = 7 OR id = 50000 OR id = 99999").ToBatch();
  };
  const uint64_t base = BytesOfFirstRead(1, scan, "70,500000,999990");
  const uint64_t overlaid = BytesOfFirstRead(2, scan, "-7,-50000,-99999");
  EXPECT_LT(overlaid - base, overlay_bytes / 4) << "base " << base << ", overlaid " << overlaid;
}

// Rank addressing needs one value per covered cell: an overlay whose coverage has more or
// fewer cells than its value column has values (a bitmap or a page length damaged) is
// refused as corrupt by scan and take alike, naming the fragment, file and field, and
// again on a retry. So is a listed field the file has no column for, even by reads of
// the other fields.
TEST_P(OverlayTest, CoverageAndValueColumnMustAgree) {
  auto ds = MakeDataset(uri_, 8, GetParam());
  ds = OverlayWriter(ds).Set(0, "age", {1, 2, 3}, Int32s({-1, -2, -3})).Commit();
  const std::string& file = table::StateOf(ds).manifest.fragments(0).overlays(0).data_file().path();
  const std::string prefix = fmt::format("'{}' fragment 0: overlay file '{}' ", uri_, file);
  auto expect_corrupt = [&](const lance::table::Manifest& m, const std::string& expected) {
    auto bad = WithManifest(ds, m);
    std::vector<uint64_t> rows = {1};  // a covered row: a take opens no file for others
    for (const auto& read : std::vector<std::function<void()>>{[&] { bad->NewScan().Columns({"age"}).ToBatch(); },
                                                               [&] { bad->NewScan().Columns({"age"}).ToBatch(); },
                                                               [&] { bad->Take(rows, {"age"}); }}) {
      auto error = testing::ThrownError(read);
      ASSERT_TRUE(error) << "expected: " << expected;
      EXPECT_EQ(error->kind(), ErrorKind::kCorrupt) << error->what();
      EXPECT_EQ(std::string(error->what()), prefix + expected);
    }
  };
  auto with_cells = [&](std::vector<uint32_t> cells) {
    auto m = table::StateOf(ds).manifest;
    m.mutable_fragments(0)->mutable_overlays(0)->set_shared_offset_bitmap(
        format::RoaringBitmap::FromValues(cells).SerializePortable());
    return m;
  };
  expect_corrupt(with_cells({1, 2, 3, 5, 6}), "holds 3 values of field 1 for 5 covered cells");
  expect_corrupt(with_cells({1, 2}), "holds 3 values of field 1 for 2 covered cells");
  auto m = table::StateOf(ds).manifest;
  m.mutable_fragments(0)->mutable_overlays(0)->mutable_data_file()->add_fields(2);  // name: not in the file
  expect_corrupt(m, "lists field 2 but has no column for it");
}

// A sparse overlay whose columns were all written to one length (the reference's
// equal-length writer pads them to the largest coverage) reads: the values past a field's
// coverage are not cells. Any other length is refused.
TEST_P(OverlayTest, ASparseOverlayMayPadItsColumnsToTheLargestCoverage) {
  auto ds = MakeDataset(uri_, 8, GetParam());
  ds = OverlayWriter(ds)
           .Set(0, "age", {1, 2, 3}, Int32s({-1, -2, -3}))
           .Set(0, "name", {1, 2, 3}, Strings({"a", "b", "c"}))
           .Commit();
  auto sparse = [&](std::vector<uint32_t> ages, std::vector<uint32_t> names) {
    auto m = table::StateOf(ds).manifest;
    auto* o = m.mutable_fragments(0)->mutable_overlays(0);
    o->clear_shared_offset_bitmap();
    o->mutable_field_coverage()->add_offset_bitmaps(format::RoaringBitmap::FromValues(ages).SerializePortable());
    o->mutable_field_coverage()->add_offset_bitmaps(format::RoaringBitmap::FromValues(names).SerializePortable());
    return WithManifest(ds, m);
  };
  auto padded = sparse({1, 2, 3}, {4, 6});
  EXPECT_EQ(Column(padded, "age"), "0,-1,-2,-3,40,50,60,70");
  EXPECT_EQ(Column(padded, "name"), "n0,n1,n2,n3,a,n5,b,n7");
  auto error = testing::ThrownError([&] { sparse({1, 2}, {4})->NewScan().Columns({"name"}).ToBatch(); });
  ASSERT_TRUE(error);
  EXPECT_EQ(std::string(error->what()),
            fmt::format("'{}' fragment 0: overlay file '{}' holds 3 values of field 1 for 2 covered cells (or 2, the "
                        "overlay's largest coverage)",
                        uri_, table::StateOf(ds).manifest.fragments(0).overlays(0).data_file().path()));
}

// A read parses the coverage of the overlays it reads: a scan of `age` reads past an
// unparseable bitmap of an overlay on `name` in the same fragment, which a read of name
// still refuses as corrupt.
TEST_P(OverlayTest, AReadParsesOnlyTheCoverageOfTheFieldsItReads) {
  auto ds = MakeDataset(uri_, 8, GetParam());
  ds = OverlayWriter(ds).Set(0, "age", {1, 2, 3}, Int32s({-1, -2, -3})).Commit();
  ds = OverlayWriter(ds).Set(0, "name", {4}, Strings({"x"})).Commit();
  auto m = table::StateOf(ds).manifest;
  ASSERT_EQ(m.fragments(0).overlays_size(), 2);
  m.mutable_fragments(0)->mutable_overlays(1)->set_shared_offset_bitmap("garbage");
  auto bad = WithManifest(ds, m);
  auto ages = bad->NewScan().Columns({"age"}).ToBatch();
  EXPECT_EQ(FormatValue(*ages->column(0), 2, ValueStyle::kCsv), "-2");
  auto error = testing::ThrownError([&] { bad->NewScan().Columns({"name"}).ToBatch(); });
  ASSERT_TRUE(error) << "expected a Corrupt error";
  EXPECT_EQ(error->kind(), ErrorKind::kCorrupt) << error->what();
  EXPECT_NE(std::string(error->what()).find("shared_offset_bitmap: 7 bytes are not a portable roaring bitmap"),
            std::string::npos)
      << error->what();
}

// An overlay without a data file, or whose data file lists no field, is corrupt: a read
// of any field of its fragment refuses it, also of a field no overlay lists (which
// otherwise skips the overlays entirely).
TEST_P(OverlayTest, AnOverlayWithoutADataFileOrFieldsIsRefusedByReadsOfAnyField) {
  auto ds = MakeDataset(uri_, 3, GetParam());
  ds = OverlayWriter(ds).Set(0, "age", {0}, Int32s({5})).Commit();
  for (const char* fault : {"the overlay has no data_file", "data_file lists no fields"}) {
    auto m = table::StateOf(ds).manifest;
    auto* overlay = m.mutable_fragments(0)->mutable_overlays(0);
    if (std::string(fault) == "data_file lists no fields") overlay->mutable_data_file()->clear_fields();
    else overlay->clear_data_file();
    auto bad = WithManifest(ds, m);
    for (const char* column : {"age", "id"}) {
      auto error = testing::ThrownError([&] { bad->NewScan().Columns({column}).ToBatch(); });
      ASSERT_TRUE(error) << column;
      EXPECT_EQ(error->kind(), ErrorKind::kCorrupt) << column;
      EXPECT_EQ(std::string(error->what()),
                fmt::format("'{}' fragment 0, overlay 0 (committed_version 2): {}", uri_, fault));
    }
  }
}

TEST_P(OverlayTest, TombstonedFieldIsIgnored) {
  auto ds = MakeDataset(uri_, 3, GetParam());
  ds = OverlayWriter(ds).Set(0, "age", {0}, Int32s({5})).Commit();
  auto m = table::StateOf(ds).manifest;
  m.mutable_fragments(0)->mutable_overlays(0)->mutable_data_file()->set_fields(0, -2);
  auto tomb = WithManifest(ds, m);
  EXPECT_EQ(Column(tomb, "age"), "0,10,20");
}

TEST_P(OverlayTest, UpdateWritesOneDenseOverlayPerFragment) {
  auto ds = MakeDataset(uri_, 10, GetParam(), 4);
  // (Explicitly: the cost model would move these rows, as age and name are most of a row.)
  ds = ds->Update({{"age", "age + 1"}, {"name", "'x'"}}, "id % 3 = 0", nullptr, UpdateMode::kOverlay);
  EXPECT_EQ(Column(ds, "age"), "1,10,20,31,40,50,61,70,80,91");
  EXPECT_EQ(Column(ds, "name"), "x,n1,n2,x,n4,n5,x,n7,n8,x");
  for (const auto& f : table::StateOf(ds).manifest.fragments()) {
    ASSERT_EQ(f.overlays_size(), 1) << "fragment " << f.id();
    EXPECT_TRUE(f.overlays(0).has_shared_offset_bitmap());
    EXPECT_EQ(f.overlays(0).data_file().fields_size(), 2);
  }
  EXPECT_EQ(table::StateOf(ds).manifest.reader_feature_flags() & 64, 64u);
  // No match: no new version.
  EXPECT_EQ(ds->Update({{"age", "0"}}, "id > 100")->version(), ds->version());
}

TEST_P(OverlayTest, WriterRefusesBadInputAndChangesNothing) {
  auto ds = MakeDataset(uri_, 4, GetParam());
  auto expect_error = [&](auto f, const std::string& needle) {
    auto error = testing::ThrownError(f);
    ASSERT_TRUE(error) << "expected: " << needle;
    EXPECT_NE(std::string(error->what()).find(needle), std::string::npos) << error->what();
  };
  expect_error([&] { OverlayWriter(ds).Set(0, "nope", {1}, Int32s({1})); }, "no column 'nope'");
  expect_error([&] { OverlayWriter(ds).Set(0, "age", {1}, Strings({"a"})); }, "has type int32, but the values have type utf8");
  expect_error([&] { OverlayWriter(ds).Set(0, "age", {2, 1}, Int32s({1, 2})); }, "strictly increasing");
  expect_error([&] { OverlayWriter(ds).Set(0, "age", {1, 1}, Int32s({1, 2})); }, "strictly increasing");
  expect_error([&] { OverlayWriter(ds).Set(0, "age", {4}, Int32s({1})); }, "at or beyond the fragment's 4 physical rows");
  expect_error([&] { OverlayWriter(ds).Set(7, "age", {0}, Int32s({1})); }, "fragment 7 does not exist");
  EXPECT_EQ(Dataset::Open(uri_)->version(), 1u);
}

INSTANTIATE_TEST_SUITE_P(FileVersions, OverlayTest, ::testing::Values("2.0", "2.1", "2.2"),
                         [](const auto& info) { return "v" + std::string(1, info.param[0]) + "_" + info.param[2]; });

std::vector<uint32_t> Positions(const overlay::OverlayPatch& patch) {
  std::vector<uint32_t> out = patch.ListCells();
  EXPECT_EQ(out.size(), patch.size());
  for (uint32_t& cell : out) cell -= patch.origin;
  return out;
}

// A fragment of `rows` rows whose overlays on field 7 cover the given cells, oldest first.
struct LayeredFragment {
  lance::table::DataFragment fragment;
  std::shared_ptr<const overlay::FragmentOverlays> set;
  std::shared_ptr<const overlay::FieldLayers> layers;
  std::shared_ptr<const overlay::CoverageLayers> coverage;

  LayeredFragment(uint64_t rows, const std::vector<std::pair<std::vector<uint32_t>, uint64_t>>& overlays) {
    fragment.set_physical_rows(rows);
    for (const auto& [cells, version] : overlays) {
      auto* o = fragment.add_overlays();
      o->mutable_data_file()->add_fields(7);
      o->set_shared_offset_bitmap(format::RoaringBitmap::FromValues(cells).SerializePortable());
      o->set_committed_version(version);
    }
    set = overlay::FragmentOverlays::Load(fragment, UINT64_MAX, "test");
    coverage = overlay::CoverageLayers::Of(*set, 7);
    layers = overlay::FieldLayers::Build(*coverage);
  }

  // ResolveOffsets and ResolveRange against the listed layers, checked to equal the
  // answers from the coverage bitmaps (a range from fresh cursors and from cursors
  // carried to its start).
  overlay::Resolution Take(std::span<const uint64_t> offsets) const;
  overlay::Resolution Range(uint64_t start, uint64_t count) const;
};

std::vector<uint64_t> Ranks(const overlay::OverlayPatch& patch) {
  std::vector<uint64_t> out;
  for (size_t k = 0; k < patch.size(); ++k) out.push_back(patch.Rank(k));
  return out;
}

void ExpectSameResolution(const overlay::Resolution& a, const overlay::Resolution& b) {
  EXPECT_EQ(a.base.has_value(), b.base.has_value());
  if (a.base && b.base) {
    EXPECT_EQ(a.base->overlay, b.base->overlay);
    EXPECT_EQ(a.base->first_rank, b.base->first_rank);
    EXPECT_EQ(a.base->count, b.base->count);
    EXPECT_EQ(a.base->ranks, b.base->ranks);
  }
  ASSERT_EQ(a.patches.size(), b.patches.size());
  for (size_t p = 0; p < a.patches.size(); ++p) {
    EXPECT_EQ(a.patches[p].overlay, b.patches[p].overlay) << "patch " << p;
    EXPECT_EQ(Positions(a.patches[p]), Positions(b.patches[p])) << "patch " << p;
    EXPECT_EQ(Ranks(a.patches[p]), Ranks(b.patches[p])) << "patch " << p;
  }
}

overlay::Resolution LayeredFragment::Take(std::span<const uint64_t> offsets) const {
  overlay::Resolution listed = overlay::ResolveOffsets(*layers, offsets);
  ExpectSameResolution(listed, overlay::ResolveOffsets(*coverage, offsets));
  return listed;
}

overlay::Resolution LayeredFragment::Range(uint64_t start, uint64_t count) const {
  overlay::Resolution listed = overlay::ResolveRange(*layers, start, count);
  std::vector<overlay::RangeCursor> fresh;
  ExpectSameResolution(listed, overlay::ResolveRange(*coverage, start, count, fresh));
  std::vector<overlay::RangeCursor> carried;
  if (start > 0) overlay::ResolveRange(*coverage, 0, start, carried);
  ExpectSameResolution(listed, overlay::ResolveRange(*coverage, start, count, carried));
  return listed;
}

TEST(OverlayResolution, WalksOnlyTheRange) {
  LayeredFragment f(100, {{{1, 3, 50, 60}, 2}, {{3, 55}, 3}});
  auto resolution = f.Range(2, 57);  // rows [2, 59)
  EXPECT_FALSE(resolution.base);
  const auto& patches = resolution.patches;
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_EQ(patches[0].overlay, 0u);  // oldest first: the newer one writes last
  EXPECT_EQ(Positions(patches[0]), (std::vector<uint32_t>{1, 48}));
  EXPECT_TRUE(patches[0].contiguous());
  EXPECT_EQ(Ranks(patches[0]), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(patches[1].overlay, 1u);
  EXPECT_EQ(Positions(patches[1]), (std::vector<uint32_t>{1, 53}));
  EXPECT_EQ(Ranks(patches[1]), (std::vector<uint64_t>{0, 1}));
  EXPECT_TRUE(overlay::FieldLayers::Build(*overlay::CoverageLayers::Of(*f.set, 8))->empty());  // absent field
  EXPECT_TRUE(overlay::ResolveRange(*overlay::FieldLayers::Build(*overlay::CoverageLayers::Of(*f.set, 8)), 0, 100).patches.empty());
}

// Applied in order, the newer layer's value stands where both cover a cell.
TEST(OverlayResolution, NewerLayersOverwriteOlderOnes) {
  LayeredFragment f(10, {{{1, 2, 3, 4}, 2}, {{2}, 3}});
  auto resolution = f.Range(1, 9);  // rows [1, 10)
  ASSERT_EQ(resolution.patches.size(), 2u);
  std::vector<overlay::Replacement> replacements;
  for (const auto& patch : resolution.patches) {
    std::vector<std::optional<int32_t>> column;  // value = 100 * (overlay + 1) + rank
    for (int rank = 0; rank < 4; ++rank) column.push_back(int32_t(100 * (patch.overlay + 1) + rank));
    replacements.push_back({patch.cells, Int32s(column), int64_t(patch.first_rank), patch.origin});
  }
  ArrayPtr out = overlay::ApplyReplacements(Int32s({1, 2, 3, 4, 5, 6, 7, 8, 9}), replacements);
  const int32_t* v = out->values<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(v, v + out->length), (std::vector<int32_t>{100, 200, 102, 103, 5, 6, 7, 8, 9}));
}

// An overlay that covers every row of a batch is the batch's base: no data file is read
// and older overlays are not consulted; newer ones patch it.
TEST(OverlayResolution, AnOverlayCoveringTheWholeRangeIsReadAsTheColumn) {
  LayeredFragment f(20, {{{5}, 2}, {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 3}, {{4, 15}, 4}});
  auto resolution = f.Range(2, 8);  // rows [2, 10)
  ASSERT_TRUE(resolution.base);
  EXPECT_EQ(resolution.base->overlay, 1u);
  EXPECT_EQ(resolution.base->count, 8u);
  EXPECT_EQ(resolution.base->first_rank, 2u);
  EXPECT_TRUE(resolution.base->ranks.empty());
  ASSERT_EQ(resolution.patches.size(), 1u);
  EXPECT_EQ(resolution.patches[0].overlay, 2u);
  EXPECT_EQ(Positions(resolution.patches[0]), (std::vector<uint32_t>{2}));
  // Rows [10, 14) are only partly covered: the base file is read.
  EXPECT_FALSE(f.Range(10, 4).base);
  std::vector<uint64_t> offsets = {9, 3, 4};
  auto taken = f.Take(offsets);
  ASSERT_TRUE(taken.base);
  EXPECT_EQ(taken.base->overlay, 1u);
  EXPECT_EQ(taken.base->ranks, (std::vector<uint64_t>{9, 3, 4}));  // in the offsets' order
  ASSERT_EQ(taken.patches.size(), 1u);
  EXPECT_EQ(Positions(taken.patches[0]), (std::vector<uint32_t>{2}));
}

// Coverage made of runs is held as runs: a full-column layer costs one entry, and its
// ranks come out the same as from a list.
TEST(OverlayResolution, RunsResolveLikeLists) {
  std::vector<uint32_t> blocks;  // [100, 1100) and [5000, 9000)
  for (uint32_t c = 100; c < 1100; ++c) blocks.push_back(c);
  for (uint32_t c = 5000; c < 9000; ++c) blocks.push_back(c);
  LayeredFragment f(10000, {{blocks, 2}, {{1000, 5001}, 3}});
  ASSERT_EQ(f.layers->newest_first.size(), 2u);
  EXPECT_TRUE(f.layers->newest_first[0].listed());
  ASSERT_FALSE(f.layers->newest_first[1].listed());
  EXPECT_EQ(f.layers->newest_first[1].runs.size(), 2u);
  auto range = f.Range(1000, 4010);  // rows [1000, 5010)
  ASSERT_EQ(range.patches.size(), 2u);
  EXPECT_EQ(range.patches[0].overlay, 0u);
  EXPECT_EQ(range.patches[0].size(), 100u + 10u);  // 1000..1099 and 5000..5009
  EXPECT_EQ(range.patches[0].Position(0), 0u);
  EXPECT_EQ(range.patches[0].Position(100), 4000u);
  EXPECT_EQ(range.patches[0].first_rank, 900u);
  auto whole = f.Range(6000, 3000);
  ASSERT_TRUE(whole.base);
  EXPECT_EQ(whole.base->first_rank, 1000u + 1000u);
  std::vector<uint64_t> offsets = {8999, 99, 100, 1000, 1099, 5001, 4999};
  auto taken = f.Take(offsets);
  ASSERT_EQ(taken.patches.size(), 2u);
  EXPECT_EQ(taken.patches[0].overlay, 1u);  // newest first: 1000 and 5001
  EXPECT_EQ(Positions(taken.patches[0]), (std::vector<uint32_t>{3, 5}));
  EXPECT_EQ(taken.patches[0].ranks, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(taken.patches[1].overlay, 0u);  // 8999, 100 and 1099
  EXPECT_EQ(Positions(taken.patches[1]), (std::vector<uint32_t>{0, 2, 4}));
  EXPECT_EQ(taken.patches[1].ranks, (std::vector<uint64_t>{4999, 0, 999}));
}

TEST(OverlayResolution, OffsetsInAnyOrderGoToTheNewestCoveringOverlay) {
  // Overlays 1 and 2 share a version: the later position is newer.
  LayeredFragment f(20, {{{2, 4, 6, 8}, 2}, {{4, 9}, 3}, {{1, 8}, 3}});
  std::vector<uint64_t> offsets = {9, 8, 6, 4, 2, 1, 0, 4};
  auto resolution = f.Take(offsets);
  EXPECT_FALSE(resolution.base);
  const auto& patches = resolution.patches;
  ASSERT_EQ(patches.size(), 3u);
  EXPECT_EQ(patches[0].overlay, 2u);
  EXPECT_EQ(Positions(patches[0]), (std::vector<uint32_t>{1, 5}));  // offsets 8 and 1
  EXPECT_EQ(Ranks(patches[0]), (std::vector<uint64_t>{1, 0}));
  EXPECT_EQ(patches[1].overlay, 1u);
  EXPECT_EQ(Positions(patches[1]), (std::vector<uint32_t>{0, 3, 7}));  // 9, and 4 twice
  EXPECT_EQ(Ranks(patches[1]), (std::vector<uint64_t>{1, 0, 0}));
  EXPECT_EQ(patches[2].overlay, 0u);
  EXPECT_EQ(Positions(patches[2]), (std::vector<uint32_t>{2, 4}));  // 6 and 2; 8 and 4 are taken
  EXPECT_EQ(Ranks(patches[2]), (std::vector<uint64_t>{2, 0}));
}

// Ascending offsets and cells of very different densities meet at every common value.
TEST(OverlayResolution, OffsetsFindEveryCellAmongDenseOrSparseCells) {
  std::vector<uint32_t> cells;
  for (uint32_t c = 3; c < 5000; c += 7) cells.push_back(c);
  LayeredFragment f(6000, {{cells, 2}});
  for (uint64_t stride : {1, 2, 61, 997}) {
    std::vector<uint64_t> offsets;
    std::vector<uint32_t> expected_positions;
    std::vector<uint64_t> expected_ranks;
    for (uint64_t o = 0; o < 6000; o += stride) {
      if (o < 5000 && o % 7 == 3) expected_positions.push_back(uint32_t(offsets.size())), expected_ranks.push_back(o / 7);
      offsets.push_back(o);
    }
    auto resolution = f.Take(offsets);
    ASSERT_EQ(resolution.patches.size(), 1u) << "stride " << stride;
    EXPECT_EQ(Positions(resolution.patches[0]), expected_positions) << "stride " << stride;
    EXPECT_EQ(Ranks(resolution.patches[0]), expected_ranks) << "stride " << stride;
  }
  // A few offsets against many cells are searched for one by one: in any order, repeated,
  // at the first and last cell, between cells and past them.
  std::vector<uint64_t> few = {5999, 10, 4994, 10, 0, 3};
  auto resolution = f.Take(few);
  ASSERT_EQ(resolution.patches.size(), 1u);
  EXPECT_EQ(Positions(resolution.patches[0]), (std::vector<uint32_t>{1, 2, 3, 5}));
  EXPECT_EQ(Ranks(resolution.patches[0]), (std::vector<uint64_t>{1, 713, 1, 0}));
}

// A scan's ranges carry each layer's rank from one to the next: walking in order ranks
// nothing, and a range elsewhere ranks once per layer.
TEST(OverlayResolution, RangeCursorsCarryTheRankAcrossBatches) {
  std::vector<uint32_t> tenth, full;
  for (uint32_t c = 0; c < 100000; ++c) {
    if (c % 10 == 3) tenth.push_back(c);
    full.push_back(c);
  }
  LayeredFragment f(100000, {{full, 2}, {tenth, 3}, {{5, 77777}, 4}});
  std::vector<overlay::RangeCursor> cursors;
  const uint64_t ranks = format::RoaringBitmap::RankCalls();
  for (uint64_t start = 0; start < 100000; start += 8192) {
    auto r = overlay::ResolveRange(*f.coverage, start, std::min<uint64_t>(8192, 100000 - start), cursors);
    ASSERT_TRUE(r.base);  // the full layer is every batch's base, patched by the newer ones
    EXPECT_EQ(r.base->overlay, 0u);
    EXPECT_EQ(r.base->first_rank, start);
    ASSERT_GE(r.patches.size(), 1u);
    EXPECT_EQ(r.patches[0].overlay, 1u);
    EXPECT_EQ(r.patches[0].first_rank, (start + 6) / 10);
  }
  EXPECT_EQ(format::RoaringBitmap::RankCalls(), ranks);
  auto jumped = overlay::ResolveRange(*f.coverage, 50000, 30000, cursors);
  EXPECT_EQ(format::RoaringBitmap::RankCalls(), ranks + 3);
  ExpectSameResolution(jumped, f.Range(50000, 30000));
}

// Merging layers keeps, per cell, the newest layer covering it and that layer's rank,
// whatever the forms (list, runs) and however thinly the cells spread (the slot array
// for a dense span, a sort for a thin one).
TEST(OverlayResolution, MergeKeepsTheNewestLayerAndItsRankPerCell) {
  std::vector<uint32_t> run;  // [10, 210): a run-form layer
  for (uint32_t c = 10; c < 210; ++c) run.push_back(c);
  LayeredFragment f(1000, {{run, 2}, {{5, 10, 12, 300}, 3}, {{12, 209}, 4}});
  ASSERT_FALSE(f.layers->newest_first[2].listed());
  overlay::MergedCells merged = overlay::MergeCells(*f.layers);
  ASSERT_EQ(merged.cells.size(), 202u);  // 5, [10, 210), 300
  EXPECT_EQ(merged.cells.front(), 5u);
  EXPECT_EQ(merged.cells.back(), 300u);
  auto at = [&](uint32_t cell) {
    size_t k = size_t(std::lower_bound(merged.cells.begin(), merged.cells.end(), cell) - merged.cells.begin());
    return std::make_pair(merged.source[k], merged.ranks[k]);  // source: 0 is the newest layer
  };
  EXPECT_EQ(at(5), std::make_pair(1u, uint64_t{0}));
  EXPECT_EQ(at(10), std::make_pair(1u, uint64_t{1}));
  EXPECT_EQ(at(11), std::make_pair(2u, uint64_t{1}));
  EXPECT_EQ(at(12), std::make_pair(0u, uint64_t{0}));
  EXPECT_EQ(at(208), std::make_pair(2u, uint64_t{198}));
  EXPECT_EQ(at(209), std::make_pair(0u, uint64_t{1}));
  EXPECT_EQ(at(300), std::make_pair(1u, uint64_t{3}));

  LayeredFragment thin(4000000000u, {{{7, 3000000000u}, 2}, {{7, 9}, 3}});
  overlay::MergedCells sparse = overlay::MergeCells(*thin.layers);
  EXPECT_EQ(sparse.cells, (std::vector<uint32_t>{7, 9, 3000000000u}));
  EXPECT_EQ(sparse.source, (std::vector<uint32_t>{0, 0, 1}));
  EXPECT_EQ(sparse.ranks, (std::vector<uint64_t>{0, 1, 1}));

  // The merged layer takes the run form only for long runs.
  auto long_runs = overlay::MergedLayers(run, Int32s(std::vector<std::optional<int32_t>>(run.size(), 1)));
  ASSERT_EQ(long_runs->newest_first.size(), 1u);
  EXPECT_EQ(long_runs->newest_first[0].overlay, overlay::kMergedOverlay);
  EXPECT_EQ(long_runs->newest_first[0].runs.size(), 1u);
  auto short_runs = overlay::MergedLayers({1, 2, 3, 7, 8, 9}, Int32s({1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(short_runs->newest_first[0].listed());
}

// A version read again resolves against its layers merged into one: scans (with and
// without a filter) and takes (any order, repeats) return what the unmerged layers gave,
// for fixed-width and string columns, NULLs, and an overlay covering whole batches.
TEST(OverlayResolution, ReadsAfterTheMergeMatchTheFirstRead) {
  testing::TempDir dir;
  constexpr int kRows = 5000;
  auto ds = MakeDataset(dir.Join("m.lance"), kRows, "2.2", 2500);
  std::vector<uint32_t> all;
  std::vector<std::optional<int32_t>> all_ages;
  for (uint32_t o = 0; o < 2500; ++o) all.push_back(o), all_ages.push_back(int32_t(o) + 7);
  ds = OverlayWriter(ds).Set(1, "age", all, Int32s(all_ages)).Commit();
  for (uint32_t k = 0; k < 5; ++k) {
    std::vector<uint32_t> cells;
    std::vector<std::optional<int32_t>> ages;
    std::vector<std::optional<std::string>> names;
    for (uint32_t o = k; o < 2500; o += 3 + k) {
      cells.push_back(o);
      ages.push_back(o % 11 == 0 ? std::optional<int32_t>() : int32_t(100000 * (k + 1) + o));
      names.push_back(o % 13 == 0 ? std::optional<std::string>() : "k" + std::to_string(k) + "_" + std::to_string(o));
    }
    ds = OverlayWriter(ds).Set(0, "age", cells, Int32s(ages)).Set(1, "age", cells, Int32s(ages))
             .Set(0, "name", cells, Strings(names)).Commit();
  }
  ds = Dataset::Open(ds->uri());
  std::vector<uint64_t> rows = {4999, 3, 2503, 3, 0, 1234, 2500, 4444, 17, 2};
  // `fresh`: each read opens the version anew, so its layers are read once and not merged.
  auto read_all = [&](bool fresh) {
    auto reopen = [&] { return fresh ? Dataset::Open(ds->uri()) : ds; };
    std::vector<std::string> out = {Column(reopen(), "age"), Column(reopen(), "name")};
    auto filtered = reopen()->NewScan().Columns({"id", "name"}).Filter("age % 2 = 0").ToBatch();
    out.push_back(std::to_string(filtered->num_rows()) + ":" + FormatValue(*filtered->column(1), 0, ValueStyle::kCsv));
    auto taken = reopen()->Take(rows, {"age", "name"});
    for (int64_t i = 0; i < taken->num_rows(); ++i)
      for (size_t c = 0; c < 2; ++c)
        out.push_back(taken->column(c)->IsNull(i) ? "NULL" : FormatValue(*taken->column(c), i, ValueStyle::kCsv));
    return out;
  };
  auto& visited = overlay::Counters().cells_visited;
  uint64_t before = visited;
  const auto first = read_all(true);
  const uint64_t unmerged_visits = visited - before;
  const auto second = read_all(false);  // the second reader of each field merges
  EXPECT_EQ(second, first);
  before = visited;
  EXPECT_EQ(read_all(false), first);
  EXPECT_LT(visited - before, unmerged_visits * 3 / 4);  // one layer of distinct cells
  // And against the rule itself: the newest k whose cells (o = k mod 3 + k) hold o.
  std::string ages, names;
  for (int r = 0; r < kRows; ++r) {
    const int o = r % 2500;
    std::string age = std::to_string(r < 2500 ? 10 * r : o + 7), name = r < 2500 ? "n" + std::to_string(r) : "";
    for (int k = 4; k >= 0; --k) {
      if (o < k || (o - k) % (3 + k) != 0) continue;
      age = o % 11 == 0 ? "NULL" : std::to_string(100000 * (k + 1) + o);
      if (r < 2500) name = o % 13 == 0 ? "NULL" : "k" + std::to_string(k) + "_" + std::to_string(o);
      break;
    }
    ages += (r ? "," : "") + age;
    if (r < 2500) names += (r ? "," : "") + name;
  }
  EXPECT_EQ(second[0], ages);
  EXPECT_EQ(second[1].substr(0, names.size()), names);
}

// Decoded once per dataset version and shared.
TEST(OverlayLoad, OverlaysAreDecodedOnceAndShared) {
  testing::TempDir dir;
  auto ds = MakeDataset(dir.Join("o.lance"), 6);
  ds = OverlayWriter(ds).Set(0, "age", {1, 2, 4}, Int32s({1, 2, 4})).Commit();
  ds = OverlayWriter(ds).Set(0, "age", {2}, Int32s({22})).Commit();
  const auto& fragment = table::StateOf(ds).manifest.fragments(0);
  auto first = table::StateOf(ds).OverlaysOf(fragment);
  EXPECT_EQ(first.get(), table::StateOf(ds).OverlaysOf(fragment).get());
  EXPECT_GT(first->MemoryBytes(), 0u);
  const int32_t age = table::StateOf(ds).schema.FindByName("age")->id;
  EXPECT_EQ(first->overlays()[0].CoverageOf(age)->ToVector(), (std::vector<uint32_t>{1, 2, 4}));
  EXPECT_EQ(first->overlays()[1].CoverageOf(age)->ToVector(), (std::vector<uint32_t>{2}));
  EXPECT_EQ(Column(ds, "age"), "0,1,22,30,4,50");
}

// Resolution pays once per covered cell, whatever the layers and container kinds: a
// dense 10% layer (bitset containers) under 16 sparse ones that shadow some of its
// cells. Reads make no bitmap rank call; a first take or scan lists no cell, and the scan
// meets each covered cell once; a version read again has its layers listed and merged
// once; a later take meets fewer cells than the layers hold.
// The cost counters count one reader's work. A scan read in parallel gives each thread's
// morsels a FragmentReader of its own (table/parallel_scan.cc), and each counts a read of
// the field, so the layers would be merged during the first scan.
struct OneThread {
  OneThread() { SetReadAheadThreads(1); }
  ~OneThread() { SetReadAheadThreads(0); }
};

TEST(OverlayCost, ResolutionVisitsEachCoveredCellOnceAndRanksNone) {
  const OneThread one_thread;
  testing::TempDir dir;
  constexpr int kRows = 200000;
  auto ds = MakeDataset(dir.Join("cost.lance"), kRows);
  std::vector<uint32_t> tenth;
  std::vector<std::optional<int32_t>> tenth_values;
  for (uint32_t o = 3; o < kRows; o += 10) tenth.push_back(o), tenth_values.push_back(-int32_t(o));
  ds = OverlayWriter(ds).Set(0, "age", tenth, Int32s(tenth_values)).Commit();
  uint64_t covered = tenth.size();
  for (uint32_t k = 0; k < 16; ++k) {
    std::vector<uint32_t> cells;
    std::vector<std::optional<int32_t>> values;
    for (uint32_t o = k; o < kRows; o += 1000) cells.push_back(o), values.push_back(int32_t(1000000 + k));
    ds = OverlayWriter(ds).Set(0, "age", cells, Int32s(values)).Commit();
    covered += cells.size();
  }
  auto& counters = overlay::Counters();
  auto expected_age = [](int o) { return o % 1000 < 16 ? 1000000 + o % 1000 : o % 10 == 3 ? -o : 10 * o; };
  std::vector<uint64_t> rows;
  for (uint64_t r = 7; r < kRows; r += 1999) rows.push_back(r);
  {
    // A take that a fresh reader starts with lists no cell and ranks none: each layer's
    // bitmap is searched for the offsets in one pass.
    const uint64_t listed = counters.cells_listed, looked_up = counters.offsets_looked_up;
    const uint64_t ranks = format::RoaringBitmap::RankCalls(), decoded = counters.values_decoded_whole;
    auto taken = Dataset::Open(ds->uri())->Take(rows, {"age"});
    for (size_t k = 0; k < rows.size(); ++k)
      EXPECT_EQ(taken->column(0)->values<int32_t>()[k], expected_age(int(rows[k]))) << rows[k];
    EXPECT_EQ(counters.cells_listed, listed);
    EXPECT_EQ(counters.offsets_looked_up - looked_up, 17 * rows.size());
    EXPECT_EQ(format::RoaringBitmap::RankCalls(), ranks);
    // It wants a value or two of each small layer: it decodes those, not the layers whole.
    EXPECT_EQ(counters.values_decoded_whole, decoded);
    // A take wanting every cell of the small layers decodes each whole, once.
    std::vector<uint64_t> small_cells;
    for (uint64_t o = 0; o < kRows; ++o)
      if (o % 1000 < 16) small_cells.push_back(o);
    Session::Default()->Clear();  // a version read again would merge its layers instead
    auto many = Dataset::Open(ds->uri())->Take(small_cells, {"age"});
    for (size_t k = 0; k < small_cells.size(); ++k)
      ASSERT_EQ(many->column(0)->values<int32_t>()[k], expected_age(int(small_cells[k]))) << small_cells[k];
    EXPECT_EQ(counters.values_decoded_whole - decoded, 16u * 200u);
  }
  Session::Default()->Clear();
  ds = Dataset::Open(ds->uri());  // a fresh reader, as a new process has
  const uint64_t listed = counters.cells_listed, visited = counters.cells_visited;
  const uint64_t ranks = format::RoaringBitmap::RankCalls();
  const uint64_t decoded_whole = counters.values_decoded_whole;

  auto batch = ds->NewScan().Columns({"age"}).ToBatch();
  ASSERT_EQ(batch->num_rows(), kRows);
  const int32_t* age = batch->column(0)->values<int32_t>();
  int wrong = 0;
  for (int o = 0; o < kRows; ++o) {
    const int32_t expected = o % 1000 < 16 ? 1000000 + o % 1000 : o % 10 == 3 ? -o : 10 * o;
    wrong += age[o] != expected;
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(counters.cells_listed - listed, 0u);
  EXPECT_EQ(counters.cells_visited - visited, covered);
  EXPECT_EQ(format::RoaringBitmap::RankCalls(), ranks);
  // Only the 16 small layers' columns (within a take's 64 KiB tail) are decoded whole; the
  // 80 KB tenth layer gives each batch its ranks.
  EXPECT_EQ(counters.values_decoded_whole - decoded_whole, 16u * 200u);
  // Their files are not kept beside the columns: open are the base file and the tenth layer's.
  EXPECT_EQ(table::StateOf(ds).session->DataFiles(), 2u);

  // The same version again: this second reader lists the layers and merges them into one
  // (listing each distinct cell once), which it and every later read walk.
  uint64_t distinct = 0;
  for (int o = 0; o < kRows; ++o) distinct += o % 1000 < 16 || o % 10 == 3;
  auto again = ds->NewScan().Columns({"age"}).ToBatch();
  EXPECT_EQ(counters.cells_listed - listed, covered + distinct);
  EXPECT_EQ(counters.cells_visited - visited, covered + distinct);
  ds->NewScan().Columns({"age"}).ToBatch();
  EXPECT_EQ(counters.cells_listed - listed, covered + distinct);
  EXPECT_EQ(counters.cells_visited - visited, covered + 2 * distinct);
  EXPECT_EQ(std::memcmp(again->column(0)->values<int32_t>(), age, kRows * sizeof(int32_t)), 0);

  const uint64_t before_take = counters.cells_visited;
  auto taken = ds->Take(rows, {"age"});
  for (size_t k = 0; k < rows.size(); ++k) {
    const int o = int(rows[k]);
    EXPECT_EQ(taken->column(0)->values<int32_t>()[k], o % 1000 < 16 ? 1000000 + o % 1000 : o % 10 == 3 ? -o : 10 * o);
  }
  // A few galloping steps per offset and layer, far fewer than the layers' cells.
  EXPECT_LE(counters.cells_visited - before_take, 17 * 3 * rows.size());
  EXPECT_LT(counters.cells_visited - before_take, covered / 4);
  EXPECT_EQ(format::RoaringBitmap::RankCalls(), ranks);

  // The version opened again in the same process (a second query) opens its manifest and
  // no data or overlay file, and decodes no overlay column: the session kept them.
  const uint64_t opens = table::StateOf(ds).store->stats().opens, decoded = counters.values_decoded_whole;
  auto reopened = Dataset::Open(ds->uri());
  auto same = reopened->NewScan().Columns({"age"}).ToBatch();
  EXPECT_EQ(std::memcmp(same->column(0)->values<int32_t>(), age, kRows * sizeof(int32_t)), 0);
  EXPECT_EQ(table::StateOf(ds).store->stats().opens - opens, 1u);
  EXPECT_EQ(counters.values_decoded_whole - decoded, 0u);
}

// A scan without a limit reads an overlaid fixed-width column ahead, a chunk at a time,
// and hands out views of it: every batch size, with deletions, a filter, a limit (no
// read-ahead) and a second, merged read give the values the rules say.
TEST(OverlayReadAhead, ChunkedReadsGiveTheResolvedValues) {
  testing::TempDir dir;
  constexpr int kRows = 150000;
  auto ds = MakeDataset(dir.Join("ahead.lance"), kRows, "2.2", 100000);  // fragments of 100000 and 50000
  for (uint32_t k = 0; k < 5; ++k) {
    std::vector<uint32_t> cells;
    std::vector<std::optional<int32_t>> values;
    std::vector<std::optional<std::string>> names;
    for (uint32_t o = k; o < 50000; o += 7 + k)
      cells.push_back(o), values.push_back(o % 11 == 0 ? std::nullopt : std::optional<int32_t>(-int32_t(o) - int32_t(k))),
          names.push_back("k" + std::to_string(k));
    ds = OverlayWriter(ds).Set(0, "age", cells, Int32s(values)).Set(1, "age", cells, Int32s(values))
             .Set(1, "name", cells, Strings(names)).Commit();
  }
  ds = ds->Delete("id >= 100000 AND id % 997 = 5");  // fragment 1 only: fragment 0 reads ranges
  // The expected values, row by row through takes (which never read ahead).
  const auto all = ds->NewScan().Columns({"id"}).ToBatch();
  std::vector<uint64_t> offsets(size_t(all->num_rows()));
  for (size_t k = 0; k < offsets.size(); ++k) offsets[k] = k;
  const auto expected = ds->Take(offsets, {"id", "age", "name"});
  // Each scan on a version opened anew: a version read again merges its layers instead.
  for (int64_t batch : {int64_t{1000}, int64_t{8192}, int64_t{4096 * 3}, int64_t{200000}}) {
    auto got = Dataset::Open(ds->uri())->NewScan().Columns({"id", "age", "name"}).BatchSize(batch).ToBatch();
    EXPECT_TRUE(got->Equals(*expected)) << "batch size " << batch;
  }
  EXPECT_TRUE(ds->NewScan().Columns({"id", "age", "name"}).ToBatch()->Equals(*expected));  // merged
  auto limited = Dataset::Open(ds->uri())->NewScan().Columns({"id", "age"}).Limit(20000).ToBatch();
  EXPECT_EQ(limited->num_rows(), 20000);
  EXPECT_TRUE(ArraysEqual(*limited->column(1), *Slice(*expected->column(1), 0, 20000)));
  auto filtered = Dataset::Open(ds->uri())->NewScan().Columns({"id", "age"}).Filter("age < 0").ToBatch();
  int64_t negative = 0;
  for (int64_t i = 0; i < expected->num_rows(); ++i)
    negative += expected->column(1)->IsValid(i) && expected->column(1)->values<int32_t>()[i] < 0;
  EXPECT_EQ(filtered->num_rows(), negative);
  EXPECT_GT(negative, 10000);
  // Rows kept by a filter on another column: at least 1 in 16 of the rows they span are
  // taken from the resolved chunk, with no coverage lookup per row; sparser ones are
  // looked up. Both give the rows the takes gave.
  for (int every : {3, 16, 17, 50}) {
    Session::Default()->Clear();  // a version read again would merge its layers instead
    const uint64_t looked_up = overlay::Counters().offsets_looked_up;
    auto kept = Dataset::Open(ds->uri())
                    ->NewScan()
                    .Columns({"id", "age"})
                    .Filter(fmt::format("id % {} = 1", every))
                    .BatchSize(4096)
                    .ToBatch();
    std::vector<int64_t> rows;
    for (int64_t i = 0; i < expected->num_rows(); ++i)
      if (expected->column(0)->values<int32_t>()[i] % every == 1) rows.push_back(i);
    ASSERT_EQ(kept->num_rows(), int64_t(rows.size())) << "every " << every;
    EXPECT_TRUE(ArraysEqual(*kept->column(1), *Take(*expected->column(1), rows))) << "every " << every;
    if (every <= 16)  // FragmentReader::kDenseTakeSpan
      EXPECT_EQ(overlay::Counters().offsets_looked_up, looked_up) << "every " << every;
    else
      EXPECT_GT(overlay::Counters().offsets_looked_up, looked_up) << "every " << every;
  }
}

// A store that counts, per path, the times a file is opened and the bytes read from it.
class CountingStore : public io::ObjectStore {
 public:
  struct Use {
    uint64_t opens = 0, bytes = 0;
  };
  std::map<std::string, Use> uses;

  std::unique_ptr<io::ReadableFile> OpenRead(const std::string& path) const override { return Wrap(inner_->OpenRead(path)); }
  std::unique_ptr<io::ReadableFile> OpenRead(const std::string& path, uint64_t known_size) const override {
    return Wrap(inner_->OpenRead(path, known_size));
  }
  std::unique_ptr<io::WritableFile> OpenWrite(const std::string& path, bool no_overwrite) override {
    return inner_->OpenWrite(path, no_overwrite);
  }
  bool PutIfAbsent(const std::string& path, std::string_view bytes) override { return inner_->PutIfAbsent(path, bytes); }
  bool Exists(const std::string& path) const override { return inner_->Exists(path); }
  std::vector<std::string> List(const std::string& dir) const override { return inner_->List(dir); }
  void Delete(const std::string& path) override { inner_->Delete(path); }
  std::optional<ObjectInfo> Head(const std::string& path) const override { return inner_->Head(path); }
  void CreateDir(const std::string& dir) override { inner_->CreateDir(dir); }
  void Sync(const std::string& dir) override { inner_->Sync(dir); }
  std::unique_ptr<io::DirectoryLock> LockDirectory(const std::string& dir, LockMode mode) override {
    return inner_->LockDirectory(dir, mode);
  }

 private:
  class File : public io::ReadableFile {
   public:
    File(std::unique_ptr<io::ReadableFile> inner, Use& use) : inner_(std::move(inner)), use_(use) {}
    const std::string& path() const override { return inner_->path(); }
    uint64_t size() const override { return inner_->size(); }
    void ReadAt(uint64_t offset, uint64_t length, void* out) const override {
      use_.bytes += length;
      inner_->ReadAt(offset, length, out);
    }

   private:
    std::unique_ptr<io::ReadableFile> inner_;
    Use& use_;
  };
  std::unique_ptr<io::ReadableFile> Wrap(std::unique_ptr<io::ReadableFile> file) const {
    Use& use = const_cast<CountingStore*>(this)->uses[file->path()];
    ++use.opens;
    return std::make_unique<File>(std::move(file), use);
  }
  std::shared_ptr<io::ObjectStore> inner_ = io::MakeLocalStore();
};

// A scan of a column with K overlay files opens each overlay file once per process and
// reads no more of its bytes than it holds: queries after the first, on this version or
// on the next one, open and read none of them again.
TEST(OverlayCost, AScanOpensEachOverlayFileOncePerProcess) {
  const OneThread one_thread;
  testing::TempDir dir;
  constexpr int kRows = 100000, kLayers = 12;
  auto ds = MakeDataset(dir.Join("opens.lance"), kRows, "2.2");
  for (uint32_t k = 0; k < kLayers; ++k) {
    // Strided layers, one cell every 2000 rows; the last covers a tenth (a larger file).
    std::vector<uint32_t> cells;
    std::vector<std::optional<int32_t>> values;
    for (uint32_t o = k; o < kRows; o += k + 1 == kLayers ? 10 : 2000) cells.push_back(o), values.push_back(int32_t(o));
    ds = OverlayWriter(ds).Set(0, "age", cells, Int32s(values)).Commit();
  }
  const auto overlays = table::StateOf(ds).manifest.fragments(0).overlays();
  ASSERT_EQ(overlays.size(), kLayers);
  auto store = std::make_shared<CountingStore>();
  auto scan = [&] {
    auto state = table::LoadState(store, Session::Default()->caches(), ds->uri(), std::nullopt);
    return table::MakeDataset(state)->NewScan().Columns({"age"}).ToBatch();
  };
  auto first = scan();
  for (int round = 0; round < 3; ++round) EXPECT_TRUE(scan()->Equals(*first));
  // A commit, then a scan of the new version, which names the same files.
  table::MakeDataset(table::LoadState(store, Session::Default()->caches(), ds->uri(), std::nullopt))->UpdateConfig({{"k", "v"}});
  EXPECT_TRUE(scan()->Equals(*first));
  for (const auto& o : overlays) {
    const std::string path = ds->uri() + "/data/" + o.data_file().path();
    const CountingStore::Use use = store->uses[path];
    EXPECT_EQ(use.opens, 1u) << path;
    EXPECT_LE(use.bytes, o.data_file().file_size_bytes()) << path;
    EXPECT_GT(use.bytes, 0u) << path;
  }
}

TEST(OverlayLoad, CorruptOverlaysAreRefused) {
  auto message = [](const lance::table::DataFragment& fragment) {
    auto error = testing::ThrownError([&] { overlay::FragmentOverlays::Load(fragment, 2, "t"); });
    return error ? std::string(error->what()) : std::string("no error");
  };
  lance::table::DataFragment f;
  f.add_overlays()->mutable_data_file()->add_fields(1);
  f.mutable_overlays(0)->set_committed_version(2);
  EXPECT_EQ(message(f), "t, overlay 0 (committed_version 2): the overlay has no coverage");
  auto* o = f.mutable_overlays(0);
  o->mutable_data_file()->add_fields(2);
  o->mutable_field_coverage()->add_offset_bitmaps(format::RoaringBitmap::FromValues(std::vector<uint32_t>{1}).SerializePortable());
  try {
    overlay::FragmentOverlays::Load(f, 2, "t");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("1 bitmaps for 2 fields"), std::string::npos) << e.what();
  }
  lance::table::DataFragment g;
  g.add_overlays()->set_shared_offset_bitmap("x");
  g.mutable_overlays(0)->set_committed_version(2);
  EXPECT_EQ(message(g), "t, overlay 0 (committed_version 2): the overlay has no data_file");
}

// Precedence is the stored order, which every commit keeps (it stamps its own version and
// appends): a committed_version out of order, 0 (unstamped) or past the manifest's
// version is damage, and so is a field listed twice (it would take another's values) or
// none (a flipped tag can move the list to another field of DataFile).
TEST(OverlayLoad, VersionsOutOfOrderAndMissingOrRepeatedFieldsAreRefused) {
  auto message = [](const lance::table::DataFragment& fragment) {
    auto error = testing::ThrownError([&] { overlay::FragmentOverlays::Load(fragment, 4, "'d' fragment 0"); });
    return error ? std::string(error->what()) : std::string("no error");
  };
  lance::table::DataFragment f;
  for (uint64_t version : {2, 3, 3}) {
    auto* o = f.add_overlays();
    o->mutable_data_file()->add_fields(7);
    o->mutable_data_file()->add_fields(overlay::kTombstoneFieldId);
    o->mutable_data_file()->add_fields(overlay::kTombstoneFieldId);
    o->set_shared_offset_bitmap(format::RoaringBitmap::FromValues(std::vector<uint32_t>{1}).SerializePortable());
    o->set_committed_version(version);
  }
  EXPECT_EQ(message(f), "no error");
  f.mutable_overlays(1)->set_committed_version(1);
  EXPECT_EQ(message(f),
            "'d' fragment 0, overlay 1 (committed_version 1): overlay files must be stored newest-last, but "
            "committed_version 2 precedes 1");
  f.mutable_overlays(1)->set_committed_version(0);
  EXPECT_EQ(message(f), "'d' fragment 0, overlay 1 (committed_version 0): committed_version must lie in [1, 4], the "
                        "version of this manifest");
  f.mutable_overlays(1)->set_committed_version(3);
  f.mutable_overlays(2)->set_committed_version(5);
  EXPECT_EQ(message(f), "'d' fragment 0, overlay 2 (committed_version 5): committed_version must lie in [1, 4], the "
                        "version of this manifest");
  f.mutable_overlays(2)->set_committed_version(4);
  f.mutable_overlays(2)->mutable_data_file()->set_fields(2, 7);
  EXPECT_EQ(message(f), "'d' fragment 0, overlay 2 (committed_version 4): data_file.fields lists field 7 twice");
  f.mutable_overlays(2)->mutable_data_file()->clear_fields();
  EXPECT_EQ(message(f), "'d' fragment 0, overlay 2 (committed_version 4): data_file lists no fields");
}

// Coverage addresses physical rows: a cell at or past physical_rows is refused when the
// bitmap is first parsed, naming the overlay file, the field and the offset. Load itself
// parses no bitmap: a read pays for the fields it reads.
TEST(OverlayLoad, CoverageBeyondPhysicalRowsIsCorrupt) {
  lance::table::DataFragment f;
  f.set_physical_rows(10);
  auto* o = f.add_overlays();
  o->mutable_data_file()->set_path("ov.lance");
  o->mutable_data_file()->add_fields(7);
  o->set_committed_version(2);
  o->set_shared_offset_bitmap(format::RoaringBitmap::FromValues(std::vector<uint32_t>{3, 9}).SerializePortable());
  // 9 is the last row.
  EXPECT_EQ(overlay::FragmentOverlays::Load(f, 2, "t")->overlays()[0].CoverageOf(7)->Cardinality(), 2u);
  o->set_shared_offset_bitmap(format::RoaringBitmap::FromValues(std::vector<uint32_t>{3, 10}).SerializePortable());
  auto loaded = overlay::FragmentOverlays::Load(f, 2, "'d' fragment 0");
  auto error = testing::ThrownError([&] { loaded->overlays()[0].CoverageOf(7); });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind(), ErrorKind::kCorrupt);
  EXPECT_EQ(std::string(error->what()),
            "'d' fragment 0, overlay 0 (committed_version 2): overlay file 'ov.lance' covers offset 10 of field 7, "
            "beyond the fragment's 10 rows");
  // Asked again, it is refused again: a failed parse is not remembered as a success.
  EXPECT_TRUE(testing::ThrownError([&] { loaded->overlays()[0].Coverage(0); }).has_value());
  // A bitmap that does not parse is named by its overlay, and by its field under field_coverage.
  o->set_shared_offset_bitmap("garbage");
  loaded = overlay::FragmentOverlays::Load(f, 2, "'d' fragment 0");
  error = testing::ThrownError([&] { loaded->overlays()[0].CoverageOf(7); });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(std::string(error->what()),
            "'d' fragment 0, overlay 0 (committed_version 2) shared_offset_bitmap: 7 bytes are not a portable roaring "
            "bitmap (bad cookie or truncated)");
  o->mutable_data_file()->add_fields(8);
  o->mutable_field_coverage()->add_offset_bitmaps(format::RoaringBitmap::FromValues(std::vector<uint32_t>{1}).SerializePortable());
  o->mutable_field_coverage()->add_offset_bitmaps("garbage");
  loaded = overlay::FragmentOverlays::Load(f, 2, "'d' fragment 0");
  EXPECT_EQ(loaded->overlays()[0].CoverageOf(7)->Cardinality(), 1u);  // field 8's bad bitmap is not parsed
  error = testing::ThrownError([&] { loaded->overlays()[0].CoverageOf(8); });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind(), ErrorKind::kCorrupt);
  EXPECT_NE(std::string(error->what()).find("'d' fragment 0, overlay 0 (committed_version 2) coverage of field 8: 7 bytes"),
            std::string::npos)
      << error->what();
}

}  // namespace
}  // namespace lancelet
