// lancelet/fragments.h: fragments written without a commit (WriteFragments), their JSON
// in the reference's shape, and the one commit that publishes them (CommitOperation).

#include "lancelet/fragments.h"

#include <gtest/gtest.h>

#include "lancelet/error.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"

namespace lancelet {
namespace {

using testing::IdNameBatch;
using testing::IdRange;
using testing::ScanIds;
using testing::TempDir;

std::vector<FragmentMetadata> Write(const std::string& uri, int64_t first, int64_t count, int64_t per_file) {
  WriteOptions o;
  o.max_rows_per_file = per_file;
  std::vector<RecordBatchPtr> batches = {IdNameBatch(first, count)};
  BatchListReader reader(batches);
  return WriteFragments(uri, reader, o);
}

class FragmentsTest : public ::testing::Test {
 protected:
  TempDir dir_;
  std::string uri_ = dir_.Uri("ds.lance");
};

TEST_F(FragmentsTest, WrittenFragmentsAreInvisibleUntilOneCommitPublishesThemAll) {
  // Two "workers" write; nothing is visible until the overwrite that creates the dataset.
  auto a = Write(uri_, 0, 25, 10), b = Write(uri_, 25, 5, 10);
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(a[0].physical_rows, 10u);
  EXPECT_EQ(a[2].physical_rows, 5u);
  EXPECT_EQ(a[0].files[0].fields, (std::vector<int32_t>{0, 1}));
  EXPECT_THROW(Dataset::Open(uri_), Error);
  std::vector<FragmentMetadata> all = a;
  all.insert(all.end(), b.begin(), b.end());
  auto ds = CommitOperation(uri_, Operation::Overwrite(IdNameBatch(0, 1)->schema(), all));
  EXPECT_EQ(ds->version(), 1u);
  EXPECT_EQ(ScanIds(ds), IdRange(0, 30));
  EXPECT_EQ(ds->CountFragments(), 4u);

  // Appends planned against version 1 land after a concurrent append: the commit rebases.
  auto c = Write(uri_, 100, 3, 10);
  auto d = Write(uri_, 200, 2, 10);
  EXPECT_EQ(CommitOperation(uri_, Operation::Append(c), 1)->version(), 2u);
  auto latest = CommitOperation(uri_, Operation::Append(d), 1);
  EXPECT_EQ(latest->version(), 3u);
  std::vector<int64_t> want = IdRange(0, 30);
  for (int64_t id : {100, 101, 102, 200, 201}) want.push_back(id);
  EXPECT_EQ(ScanIds(latest), want);
  std::vector<uint64_t> ids;
  for (const auto& f : table::StateOf(latest).manifest.fragments()) ids.push_back(f.id());
  EXPECT_EQ(ids, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5}));
}

TEST_F(FragmentsTest, JsonHasTheReferencesShapeAndReadsBack) {
  FragmentMetadata f;
  f.physical_rows = 7;
  f.files.push_back({"abc.lance", {0, 1}, {0, 1}, 2, 2, 634, std::nullopt});
  EXPECT_EQ(f.ToJson(),
            R"({"id":0,"files":[{"fields":[0,1],"column_indices":[0,1],"file_major_version":2,"file_minor_version":2,)"
            R"("file_size_bytes":634,"base_id":null,"path":"abc.lance"}],"overlays":[],"physical_rows":7,)"
            R"("deletion_file":null,"row_id_meta":null,"created_at_version_meta":null,"last_updated_at_version_meta":null})");
  EXPECT_EQ(FragmentMetadata::FromJson(f.ToJson()), f);
  f.files[0].base_id = 3;
  EXPECT_EQ(FragmentMetadata::FromJson(f.ToJson()), f);
}

std::string JsonError(const std::string& json) {
  try {
    FragmentMetadata::FromJson(json);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST_F(FragmentsTest, JsonThatIsNotAFreshFragmentIsRefusedByKey) {
  const std::string file = R"({"path":"a.lance","fields":[0],"column_indices":[0],"file_major_version":2,)"
                           R"("file_minor_version":2,"file_size_bytes":9})";
  EXPECT_EQ(JsonError("{"), "fragment JSON does not parse: [json.exception.parse_error.101] parse error at line 1, "
                            "column 2: syntax error while parsing object key - unexpected end of input; expected "
                            "string literal");
  EXPECT_EQ(JsonError(R"({"id":0,"files":[]})"), "fragment JSON: the fragment has no \"physical_rows\"");
  EXPECT_EQ(JsonError(R"({"id":-1,"physical_rows":1,"files":[]})"),
            "fragment JSON: \"id\" of the fragment is -1, expected a non-negative integer");
  EXPECT_EQ(JsonError(R"({"id":4,"physical_rows":1,"files":[],"row_id_meta":{"inline":[]}})"),
            "fragment JSON: fragment 4 has a \"row_id_meta\"; only fragments written and not yet committed "
            "(write_fragments) can be committed");
  EXPECT_EQ(JsonError(R"({"id":4,"physical_rows":1,"files":[],"deletion_file":{"id":1}})"),
            "fragment JSON: the deletion file has no \"file_type\"");
  EXPECT_EQ(JsonError(R"({"id":4,"physical_rows":1,"files":[],"deletion_file":{"file_type":"rle"}})"),
            "fragment JSON: \"file_type\" of the deletion file is \"rle\", expected \"array\" or \"bitmap\"");
  EXPECT_EQ(JsonError(R"({"id":4,"physical_rows":1,"files":[],"overlays":[{}]})"),
            "fragment JSON: an overlay has no \"data_file\"");
  EXPECT_EQ(JsonError(R"({"id":0,"physical_rows":1,"files":[{"path":"a.lance"}]})"),
            "fragment JSON: a data file has no \"fields\"");
  EXPECT_EQ(JsonError(R"({"id":0,"physical_rows":1,"files":[)" + file + "]}"), "<no error>");
}

// A group's offsets cross processes as the base64 of their portable Roaring bitmap (a 10%
// update of 500k rows: 90 KB instead of 340 KB of numbers); lists are read too, one for a
// dense overlay (pylance's shape) or one per field.
TEST_F(FragmentsTest, AnOverlayGroupsOffsetsAreCompactInJsonAndListsAreReadToo) {
  const std::string file = R"({"fields":[1],"column_indices":[0],"file_major_version":2,"file_minor_version":1,)"
                           R"("file_size_bytes":9,"base_id":null,"path":"o.lance"})";
  OverlayGroupMetadata group;
  group.fragment_id = 3;
  group.overlays.push_back({});
  group.overlays[0].data_file = DataFileMetadata{"o.lance", {1}, {0}, 2, 1, 9, std::nullopt};
  group.overlays[0].offsets = {{4}};
  // cookie 12346, one container (key 0, cardinality 1), its offset 16, the value 4
  const std::string compact = "OjAAAAEAAAAAAAAAEAAAAAQA";
  EXPECT_EQ(group.ToJson(), R"({"fragment_id":3,"overlays":[{"data_file":)" + file + R"(,"offsets":[")" + compact + R"("]}]})");
  EXPECT_EQ(group.ToJson(OverlayGroupMetadata::OffsetForm::kLists),
            R"({"fragment_id":3,"overlays":[{"data_file":)" + file + R"(,"offsets":[[4]]}]})");
  auto parse = [&](const std::string& offsets) {
    return OverlayGroupMetadata::FromJson(R"({"fragment_id":3,"overlays":[{"data_file":)" + file + R"(,"offsets":)" +
                                          offsets + "}]}");
  };
  EXPECT_EQ(parse(R"(")" + compact + R"(")"), group);
  EXPECT_EQ(parse("[4]"), group);
  EXPECT_EQ(parse(R"([")" + compact + R"(", [4, 9]])").overlays[0].offsets,
            (std::vector<std::vector<uint32_t>>{{4}, {4, 9}}));
  auto error = [&](const std::string& offsets) -> std::string {
    try {
      parse(offsets);
    } catch (const Error& e) {
      return e.what();
    }
    return "<no error>";
  };
  EXPECT_EQ(error(R"("not base64!")"), "fragment JSON: overlay offsets \"not base64!\" are not base64");
  EXPECT_EQ(error(R"("OjAAAAEAAAAAAAAAEAAAAA==")"),  // the value cut off
            "fragment JSON: overlay offsets: 16 bytes are not a portable roaring bitmap (bad cookie or truncated)");
  EXPECT_EQ(error("[-1]"), "fragment JSON: an overlay offset is -1, expected a 32-bit row offset");
  EXPECT_EQ(error("{}"), "fragment JSON: \"offsets\" of an overlay is {}, expected a list");
}

TEST_F(FragmentsTest, ACommitThatCannotApplyChangesNothing) {
  auto a = Write(uri_, 0, 5, 10);
  EXPECT_EQ(JsonError(a[0].ToJson()), "<no error>");
  try {
    CommitOperation(uri_, Operation::Append(a));
    FAIL() << "appended to no dataset";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with("cannot append: dataset '") &&
                message.ends_with("ds.lance' does not exist (commit an Overwrite to create it)"))
        << message;
  }
  auto ds = CommitOperation(uri_, Operation::Overwrite(IdNameBatch(0, 1)->schema(), a));
  FragmentMetadata stray = a[0];
  stray.files[0].fields = {0, 7};
  stray.files[0].column_indices = {0, 1};
  EXPECT_THROW(CommitOperation(uri_, Operation::Append({stray})), Error);
  stray.files[0].fields = {0};
  EXPECT_THROW(CommitOperation(uri_, Operation::Append({stray})), Error);  // 1 field, 2 columns
  stray.files[0].path = "../elsewhere.lance";
  stray.files[0].column_indices = {0};
  EXPECT_THROW(CommitOperation(uri_, Operation::Append({stray})), Error);
  EXPECT_EQ(Dataset::Open(uri_)->version(), 1u);
  EXPECT_EQ(ScanIds(Dataset::Open(uri_)), IdRange(0, 5));
}

std::vector<std::string> Strings(const ArrayData& column) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < column.length; ++i) out.push_back(column.IsNull(i) ? "NULL" : std::string(column.GetView(i)));
  return out;
}

// An UPDATE spread over workers: each writes the overlays of its fragments, one commit
// publishes them; a concurrent change to a cell the update read refuses that commit
// (Conflict), while the same overlays as blind writes land over it.
TEST_F(FragmentsTest, AnUpdatesOverlaysWrittenPerFragmentAreOneCommitThatChecksWhatTheyRead) {
  WriteOptions o;
  o.max_rows_per_file = 10;
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 30)}, o);
  const std::vector<Dataset::SetClause> set = {{"name", "'x' || CAST(id AS VARCHAR)"}};
  std::vector<OverlayGroupMetadata> groups;
  for (uint64_t fragment : {0, 1, 2})
    for (auto& g : WriteUpdateOverlays(ds, {fragment}, set, "id % 10 = 4")) groups.push_back(std::move(g));
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[1].fragment_id, 1u);
  EXPECT_EQ(groups[1].overlays[0].offsets, (std::vector<std::vector<uint32_t>>{{4}}));
  EXPECT_EQ(OverlayGroupMetadata::FromJson(groups[1].ToJson()), groups[1]);
  EXPECT_EQ(OverlayGroupMetadata::FromJson(groups[1].ToJson(OverlayGroupMetadata::OffsetForm::kLists)), groups[1]);
  EXPECT_TRUE(WriteUpdateOverlays(ds, {0}, set, "id = 99").empty());  // no row: no group, no file

  auto updated = CommitOperation(uri_, Operation::UpdateOverlays(groups, set, "id % 10 = 4"), 1);
  EXPECT_EQ(updated->version(), 2u);
  auto names = updated->NewScan().Columns({"name"}).Filter("id % 10 = 4").ToBatch();
  EXPECT_EQ(Strings(*names->column(0)), (std::vector<std::string>{"x4", "x14", "x24"}));
  EXPECT_EQ(table::StateOf(updated).manifest.fragments(1).overlays_size(), 1);
  EXPECT_EQ(updated->CountFragments(), 3u);  // no row moved, no fragment added

  // Overlays computed from version 2 for id 15, then a concurrent change to that cell.
  const std::vector<Dataset::SetClause> again = {{"name", "name || '!'"}};
  auto late = WriteUpdateOverlays(updated, {1}, again, "id = 15");
  updated->Update({{"name", "'other'"}}, "id = 15", nullptr, UpdateMode::kOverlay);
  try {
    CommitOperation(uri_, Operation::UpdateOverlays(late, again, "id = 15"), 2);
    FAIL() << "the update read a cell version 3 changed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConflict) << e.what();
  }
  EXPECT_EQ(Dataset::Open(uri_)->version(), 3u);
  auto blind = CommitOperation(uri_, Operation::DataOverlay(late), 2);  // lands: newest wins
  EXPECT_EQ(blind->version(), 4u);
  EXPECT_EQ(Strings(*blind->NewScan().Columns({"name"}).Filter("id = 15").ToBatch()->column(0)),
            (std::vector<std::string>{"n15!"}));

  OverlayGroupMetadata bad = groups[0];
  bad.overlays[0].offsets = {{10}};
  EXPECT_THROW(CommitOperation(uri_, Operation::DataOverlay({bad})), Error);  // fragment 0 has 10 rows
  bad.fragment_id = 9;
  EXPECT_THROW(CommitOperation(uri_, Operation::DataOverlay({bad})), Error);
  EXPECT_EQ(Dataset::Open(uri_)->version(), 4u);
}

// A DELETE spread over workers: each writes the deletion files of its fragments, one
// Delete commit publishes them; a fragment whose rows all go is dropped; a concurrent
// change to a column the predicate reads refuses the commit (Conflict).
TEST_F(FragmentsTest, ADeletesFilesWrittenPerFragmentAreOneCommitThatChecksWhatItRead) {
  WriteOptions o;
  o.max_rows_per_file = 10;
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 30)}, o);
  const std::string predicate = "id % 10 = 3 OR id >= 20";
  Deletions all;
  for (uint64_t fragment : {0, 1, 2}) {
    Deletions d = WriteDeletions(ds, {fragment}, predicate);
    all.rows_deleted += d.rows_deleted;
    all.updated_fragments.insert(all.updated_fragments.end(), d.updated_fragments.begin(), d.updated_fragments.end());
    all.deleted_fragment_ids.insert(all.deleted_fragment_ids.end(), d.deleted_fragment_ids.begin(),
                                    d.deleted_fragment_ids.end());
  }
  EXPECT_EQ(all.rows_deleted, 12u);
  ASSERT_EQ(all.updated_fragments.size(), 2u);
  EXPECT_EQ(all.deleted_fragment_ids, (std::vector<uint64_t>{2}));
  const FragmentMetadata& one = all.updated_fragments[1];
  ASSERT_TRUE(one.deletion_file);
  EXPECT_EQ(one.id, 1u);
  EXPECT_EQ(one.deletion_file->file_type, "array");
  EXPECT_EQ(one.deletion_file->num_deleted_rows, 1u);
  EXPECT_EQ(one.deletion_file->read_version, 1u);
  EXPECT_EQ(FragmentMetadata::FromJson(one.ToJson()), one);
  EXPECT_NE(one.ToJson().find(R"("deletion_file":{"read_version":1,"id":)"), std::string::npos) << one.ToJson();
  EXPECT_EQ(Dataset::Open(uri_)->version(), 1u);  // nothing visible yet
  EXPECT_THROW(CommitOperation(uri_, Operation::Append({one})), Error);  // not a fresh fragment

  auto done = CommitOperation(uri_, Operation::Delete(all.updated_fragments, all.deleted_fragment_ids, predicate), 1);
  EXPECT_EQ(done->version(), 2u);
  std::vector<int64_t> want;
  for (int64_t i = 0; i < 20; ++i)
    if (i % 10 != 3) want.push_back(i);
  EXPECT_EQ(ScanIds(done), want);
  EXPECT_EQ(done->CountFragments(), 2u);

  // Deletions planned at version 2, then a concurrent update of the column they read.
  Deletions late = WriteDeletions(done, {0}, "name = 'n5'");
  done->Update({{"name", "'moved'"}}, "id = 5", nullptr, UpdateMode::kOverlay);
  EXPECT_EQ(testing::ThrownKind([&] {
              CommitOperation(uri_, Operation::Delete(late.updated_fragments, {}, "name = 'n5'"), 2);
            }),
            ErrorKind::kConflict);
  EXPECT_EQ(ScanIds(Dataset::Open(uri_)), want);
  // A fragment with an overlay keeps it in its metadata, in pylance's shape (dense: one list).
  auto overlaid = Dataset::Open(uri_);  // version 3: the update's overlay on fragment 0
  Deletions with_overlay = WriteDeletions(overlaid, {0}, "id = 9");
  ASSERT_EQ(with_overlay.updated_fragments.size(), 1u);
  const FragmentMetadata& f = with_overlay.updated_fragments[0];
  ASSERT_EQ(f.overlays.size(), 1u);
  EXPECT_EQ(f.overlays[0].offsets, (std::vector<std::vector<uint32_t>>{{5}}));
  EXPECT_EQ(f.overlays[0].committed_version, 3u);
  EXPECT_NE(f.ToJson().find(R"("offsets":[5],"committed_version":3)"), std::string::npos) << f.ToJson();
  EXPECT_EQ(FragmentMetadata::FromJson(f.ToJson()), f);
  EXPECT_THROW(CommitOperation(uri_, Operation::Append({f})), Error);  // overlays: not a fresh fragment
  auto after = CommitOperation(uri_, Operation::Delete({f}, {}, "id = 9"), 3);
  EXPECT_EQ(table::StateOf(after).manifest.fragments(0).overlays_size(), 1);
  EXPECT_EQ(Strings(*after->NewScan().Columns({"name"}).Filter("id = 5").ToBatch()->column(0)),
            (std::vector<std::string>{"moved"}));
  EXPECT_THROW(WriteDeletions(done, {7}, "true"), Error);
  EXPECT_THROW(WriteDeletions(done, {0}, ""), Error);
}

// An UPDATE that moves its rows, spread over workers: each writes its fragments' new rows
// (WriteFragments) and deletes the old ones (WriteDeletions); one REWRITE_ROWS Update
// publishes both. Given the update, a concurrent change to what it read refuses it.
TEST_F(FragmentsTest, AnUpdateThatMovesRowsIsDeletionsAndNewFragmentsInOneCommit) {
  WriteOptions o;
  o.max_rows_per_file = 10;
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 30)}, o);
  const std::vector<Dataset::SetClause> set = {{"name", "'x' || CAST(id AS VARCHAR)"}};
  const std::string predicate = "id % 10 = 4";
  // What one worker does for `fragment`: the row with id fragment * 10 + `last` gets the
  // name prefix + id in a new fragment, and leaves its old place.
  auto moved = [&](const DatasetPtr& at, uint64_t fragment, int64_t last, const std::string& prefix) {
    const int64_t id = int64_t(fragment) * 10 + last;
    auto batch = RecordBatch::Make(IdNameBatch(0, 1)->schema(),
                                   {testing::Int64s({id}), testing::Strings({prefix + std::to_string(id)})});
    std::vector<RecordBatchPtr> batches = {batch};
    BatchListReader reader(batches);
    auto written = WriteFragments(uri_, reader);
    Deletions old = WriteDeletions(at, {fragment}, "id = " + std::to_string(id));
    EXPECT_EQ(old.updated_fragments.size(), 1u);
    return std::make_pair(std::move(written), std::move(old.updated_fragments));
  };
  std::vector<FragmentMetadata> fresh, updated;
  for (uint64_t fragment : {0, 1, 2}) {
    auto [w, u] = moved(ds, fragment, 4, "x");
    fresh.insert(fresh.end(), w.begin(), w.end());
    updated.insert(updated.end(), u.begin(), u.end());
  }
  auto done = CommitOperation(uri_, Operation::Update({}, updated, fresh, std::make_pair(set, predicate)), 1);
  EXPECT_EQ(done->version(), 2u);
  EXPECT_EQ(done->CountFragments(), 6u);  // three with deletions, three of moved rows
  EXPECT_EQ(Strings(*done->NewScan().Columns({"name"}).Filter(predicate).ToBatch()->column(0)),
            (std::vector<std::string>{"x4", "x14", "x24"}));
  EXPECT_EQ(done->CountRows(), 30u);

  // id 15 moved as planned at version 2; meanwhile a commit changes its name, which the
  // update reads.
  auto [w, u] = moved(done, 1, 5, "y");
  const std::vector<Dataset::SetClause> again = {{"name", "'y' || name"}};
  done->Update({{"name", "'other'"}}, "id = 15", nullptr, UpdateMode::kOverlay);
  EXPECT_EQ(testing::ThrownKind([&] {
              CommitOperation(uri_, Operation::Update({}, u, w, std::make_pair(again, "id = 15")), 2);
            }),
            ErrorKind::kConflict);
  EXPECT_EQ(Strings(*Dataset::Open(uri_)->NewScan().Columns({"name"}).Filter("id = 15").ToBatch()->column(0)),
            (std::vector<std::string>{"other"}));
  // Without the update too: moved rows are never a blind write over a concurrent change
  // to their fragment.
  EXPECT_EQ(testing::ThrownKind([&] { CommitOperation(uri_, Operation::Update({}, u, w), 2); }), ErrorKind::kConflict);
  // A change elsewhere that the predicate reads (id, on every row) refuses it only with the
  // update given.
  auto [w2, u2] = moved(Dataset::Open(uri_), 2, 6, "z");
  Dataset::Open(uri_)->Update({{"name", "'n0'"}}, "id = 0", nullptr, UpdateMode::kOverlay);  // version 4
  EXPECT_EQ(testing::ThrownKind([&] {
              CommitOperation(uri_, Operation::Update({}, u2, w2, std::make_pair(again, "name = 'n26'")), 3);
            }),
            ErrorKind::kConflict);
  auto blind = CommitOperation(uri_, Operation::Update({}, u2, w2), 3);
  EXPECT_EQ(blind->version(), 5u);
  EXPECT_EQ(Strings(*blind->NewScan().Columns({"name"}).Filter("id = 26").ToBatch()->column(0)),
            (std::vector<std::string>{"z26"}));
}

}  // namespace
}  // namespace lancelet
