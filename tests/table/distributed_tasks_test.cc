// lancelet/fragments.h: compaction and index builds as tasks (PlanCompactionTasks,
// ExecuteCompactionTask, CommitCompaction; PlanIndexTasks, BuildIndexSegment,
// CommitIndexSegments) give what Optimize and CreateIndex give in one process.

#include <gtest/gtest.h>

#include "lancelet/error.h"
#include "lancelet/builder.h"
#include "lancelet/fragments.h"
#include "lancelet/vector_search.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"

namespace lancelet {
namespace {

using testing::IdNameBatch;
using testing::IdRange;
using testing::ScanIds;
using testing::TempDir;

std::vector<std::string> Rows(const DatasetPtr& ds, const std::string& filter = "") {
  auto scan = ds->NewScan().Columns({"id", "name"});
  if (!filter.empty()) scan.Filter(filter);
  auto batch = scan.ToBatch();
  std::vector<std::string> out;
  for (int64_t i = 0; i < batch->num_rows(); ++i)
    out.push_back(std::to_string(batch->column(0)->values<int64_t>()[i]) + "=" +
                  (batch->column(1)->IsNull(i) ? "NULL" : std::string(batch->column(1)->GetView(i))));
  std::sort(out.begin(), out.end());
  return out;
}

size_t FilesUnder(const std::string& dir) { return testing::ObjectsUnder(dir).size(); }

class DistributedTasksTest : public ::testing::Test {
 protected:
  // 4 fragments of 10 rows: fragment 0 loses 3 rows (a rewrite), fragments 2 and 3 get
  // an overlay each (folds), fragment 1 stays.
  DatasetPtr Make(const std::string& uri) {
    WriteOptions o;
    o.max_rows_per_file = 10;
    auto ds = Dataset::Write(uri, {IdNameBatch(0, 40)}, o);
    ds = ds->Delete("id < 3");
    return ds->Update({{"name", "'u' || CAST(id AS VARCHAR)"}}, "id >= 25", nullptr, UpdateMode::kOverlay);
  }
  OptimizeOptions Options() const {
    OptimizeOptions o;
    o.target_rows_per_fragment = 10;  // 10-row fragments are not small
    o.optimize_indices = false;
    return o;
  }

  TempDir dir_;
  std::string uri_ = dir_.Uri("ds.lance");
};

TEST_F(DistributedTasksTest, CompactionTasksCommitWhatOptimizeCommits) {
  auto ds = Make(uri_);
  const auto tasks = PlanCompactionTasks(ds, Options());
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0].action, CompactionAction::kRewriteRows);
  EXPECT_EQ(tasks[0].fragment_ids, (std::vector<uint64_t>{0}));
  EXPECT_EQ(tasks[0].target_rows_per_fragment, 10u);
  EXPECT_EQ(tasks[1].action, CompactionAction::kFoldOverlays);
  EXPECT_EQ(tasks[1].fragment_ids, (std::vector<uint64_t>{2}));
  EXPECT_EQ(tasks[2].fragment_ids, (std::vector<uint64_t>{3}));
  EXPECT_EQ(tasks[1].ToJson(), R"({"read_version":3,"action":"fold","fragment_ids":[2],"target_rows_per_fragment":0})");
  EXPECT_EQ(CompactionTask::FromJson(tasks[0].ToJson()), tasks[0]);

  // Each task in its own "worker": a fresh open of the planned version.
  std::vector<std::string> parts;
  for (const auto& t : tasks) parts.push_back(ExecuteCompactionTask(Dataset::Open(uri_, t.read_version), t));
  EXPECT_EQ(Dataset::Open(uri_)->version(), 3u);  // nothing visible yet
  OptimizeStats stats;
  auto done = CommitCompaction(uri_, 3, parts, Options(), &stats);
  EXPECT_EQ(stats.versions, (std::vector<uint64_t>{4, 5}));
  EXPECT_EQ(stats.fragments_removed, 1u);
  EXPECT_EQ(stats.fragments_added, 1u);
  EXPECT_EQ(stats.rows_deleted_materialized, 3u);
  EXPECT_EQ(stats.fragments_folded, 2u);
  EXPECT_EQ(stats.overlays_removed, 2u);
  EXPECT_GT(stats.bytes_written, 0u);
  EXPECT_EQ(done->version(), 5u);

  // The same dataset optimized in one process reads the same, fragment by fragment.
  const std::string serial_uri = dir_.Uri("serial.lance");
  auto serial = Make(serial_uri)->Optimize(Options());
  EXPECT_EQ(Rows(done), Rows(serial));
  EXPECT_EQ(Rows(done, "name LIKE 'u%'").size(), 15u);
  EXPECT_EQ(ScanIds(done).size(), 37u);
  const auto& a = table::StateOf(done).manifest;
  const auto& b = table::StateOf(serial).manifest;
  ASSERT_EQ(a.fragments_size(), b.fragments_size());
  for (int i = 0; i < a.fragments_size(); ++i) {
    EXPECT_EQ(a.fragments(i).overlays_size(), 0) << i;
    EXPECT_EQ(a.fragments(i).physical_rows(), b.fragments(i).physical_rows()) << i;
    EXPECT_EQ(a.fragments(i).files_size(), b.fragments(i).files_size()) << i;
  }
  EXPECT_TRUE(PlanCompactionTasks(done, Options()).empty());
}

TEST_F(DistributedTasksTest, PartsAConcurrentCommitOutdatesAreRefusedAndTheirFilesRemoved) {
  auto ds = Make(uri_);
  const auto tasks = PlanCompactionTasks(ds, Options());
  const size_t data_files = FilesUnder(uri_ + "/data");
  std::vector<std::string> parts;
  for (const auto& t : tasks) parts.push_back(ExecuteCompactionTask(ds, t));
  EXPECT_GT(FilesUnder(uri_ + "/data"), data_files);
  // A concurrent update of fragment 2's overlaid rows: folding the plan's overlays would
  // lose it.
  ds->Update({{"name", "'late'"}}, "id = 27", nullptr, UpdateMode::kOverlay);
  const auto error = testing::ThrownError([&] { CommitCompaction(uri_, 3, parts, Options()); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind(), ErrorKind::kConflict) << error->what();
  EXPECT_TRUE(std::string(error->what()).find("the rewrite committed version 5") != std::string::npos)
      << error->what();
  auto latest = Dataset::Open(uri_);
  EXPECT_EQ(latest->version(), 5u);  // the update, then the rewrite (its fragments were untouched)
  EXPECT_EQ(Rows(latest, "id = 27"), (std::vector<std::string>{"27=late"}));
  // The folds' files went; the rewrite's new file and the update's overlay came.
  EXPECT_EQ(FilesUnder(uri_ + "/data"), data_files + 2);

  // A task run on another version than planned is refused before it writes.
  EXPECT_EQ(testing::ThrownMessage([&] { ExecuteCompactionTask(latest, tasks[1]); }),
            "the compaction task was planned at version 3 of '" + uri_ +
                "', but the dataset given is at version 5; open that version");
  EXPECT_THROW(CompactionTask::FromJson(R"({"read_version":3,"action":"squash","fragment_ids":[1],)"
                                        R"("target_rows_per_fragment":0})"),
               Error);
  EXPECT_THROW(CompactionTask::FromJson("{}"), Error);
}

TEST_F(DistributedTasksTest, IndexSegmentsBuiltPerTaskAreOneIndex) {
  WriteOptions o;
  o.max_rows_per_file = 10;
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 50)}, o);
  const auto tasks = PlanIndexTasks(ds, "id", IndexType::kBTree, 2);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].fragment_ids, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(tasks[1].fragment_ids, (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(tasks[1].ToJson(), R"({"read_version":1,"column":"id","index_type":"BTREE","name":"id_idx",)"
                               R"("fragment_ids":[3,4]})");
  EXPECT_EQ(IndexTask::FromJson(tasks[1].ToJson()), tasks[1]);
  std::vector<std::string> parts;
  for (const auto& t : tasks) parts.push_back(BuildIndexSegment(Dataset::Open(uri_, 1), t));
  EXPECT_TRUE(Dataset::Open(uri_)->ListIndices().empty());
  auto indexed = CommitIndexSegments(uri_, 1, parts);
  EXPECT_EQ(indexed->version(), 2u);
  const auto indexes = indexed->ListIndices();
  ASSERT_EQ(indexes.size(), 1u);
  EXPECT_EQ(indexes[0].name, "id_idx");
  EXPECT_EQ(indexes[0].segments, 2u);
  EXPECT_EQ(indexes[0].indexed_fragments, 5u);
  EXPECT_EQ(indexes[0].unindexed_fragments, 0u);
  EXPECT_EQ(Rows(indexed, "id IN (4, 33, 49)"), (std::vector<std::string>{"33=n33", "49=n49", "4=n4"}));
  EXPECT_NE(indexed->Explain("id = 33").find("id_idx"), std::string::npos) << indexed->Explain("id = 33");

  // The same name again needs replace; the refused build leaves no segment behind.
  const size_t index_dirs = FilesUnder(uri_ + "/_indices");
  std::vector<std::string> again;
  for (const auto& t : PlanIndexTasks(indexed, "id", IndexType::kBTree, 1))
    again.push_back(BuildIndexSegment(indexed, t));
  EXPECT_GT(FilesUnder(uri_ + "/_indices"), index_dirs);
  EXPECT_EQ(testing::ThrownMessage([&] { CommitIndexSegments(uri_, 2, again); }),
            "dataset '" + uri_ + "' already has an index named 'id_idx' (replace it, or choose another name)");
  EXPECT_EQ(FilesUnder(uri_ + "/_indices"), index_dirs);
  EXPECT_EQ(CommitIndexSegments(uri_, 2, again, true)->ListIndices()[0].segments, 1u);

  EXPECT_EQ(testing::ThrownKind([&] { PlanIndexTasks(ds, "nope", IndexType::kBTree, 2); }), ErrorKind::kNotFound);
  // Two segments over one fragment are not one index.
  EXPECT_THROW(CommitIndexSegments(uri_, 1, {parts[0], parts[0]}), Error);
}

TEST_F(DistributedTasksTest, SegmentsMergeIntoOneThatAnswersTheSame) {
  WriteOptions o;
  o.max_rows_per_file = 10;
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 50)}, o);
  ds = ds->Delete("id = 7");  // a deleted row stays out of the merged index too
  for (IndexType type : {IndexType::kBTree, IndexType::kBitmap}) {
    const std::string name = type == IndexType::kBTree ? "by_id" : "by_name";
    const std::string column = type == IndexType::kBTree ? "id" : "name";
    std::vector<std::string> parts;
    for (const auto& t : PlanIndexTasks(ds, column, type, 3, name)) parts.push_back(BuildIndexSegment(ds, t));
    ASSERT_EQ(parts.size(), 3u);
    const size_t before = FilesUnder(uri_ + "/_indices");
    const std::string merged = MergeIndexSegments(ds, parts);
    EXPECT_LT(FilesUnder(uri_ + "/_indices"), before);  // three segments' files became one segment's
    ds = CommitIndexSegments(uri_, ds->version(), {merged});
    EXPECT_EQ(testing::ThrownKind([&] { MergeIndexSegments(ds, parts); }), ErrorKind::kInvalidArgument);
  }
  const auto indexes = ds->ListIndices();
  ASSERT_EQ(indexes.size(), 2u);
  for (const auto& index : indexes) {
    EXPECT_EQ(index.segments, 1u) << index.name;
    EXPECT_EQ(index.indexed_fragments, 5u) << index.name;
  }
  EXPECT_EQ(Rows(ds, "id IN (3, 7, 44)"), (std::vector<std::string>{"3=NULL", "44=n44"}));  // i % 7 = 3: NULL
  EXPECT_EQ(Rows(ds, "name IN ('n21', 'n7', 'n49')"), (std::vector<std::string>{"21=n21", "49=n49"}));
  EXPECT_EQ(Rows(ds, "name IS NULL").size(), 7u);  // the Bitmap's NULL key survived the merge
  EXPECT_NE(ds->Explain("name = 'n21'").find("by_name"), std::string::npos) << ds->Explain("name = 'n21'");
  EXPECT_NE(ds->Explain("id = 21").find("by_id"), std::string::npos);
}

// 800 rows of 8-d vectors in 4 clusters (around 0, 10, 20, 30), 200 rows a fragment.
DatasetPtr WriteVectors(const std::string& uri) {
  FixedWidthBuilder<int64_t> id(DataType::Int64());
  const TypePtr type = DataType::FixedSizeList(DataType::Float32(), 8);
  ListBuilder emb(type);
  auto& items = static_cast<FixedWidthBuilder<float>&>(emb.item_builder());
  for (int64_t i = 0; i < 800; ++i) {
    id.Append(i);
    for (int d = 0; d < 8; ++d) items.Append(float((i % 4) * 10) + float((i * 7 + d * 3) % 11) / 10.0f);
    emb.Append();
  }
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("id", DataType::Int64()), Field::Make("emb", type)});
  WriteOptions o;
  o.max_rows_per_file = 200;
  return Dataset::Write(uri, {RecordBatch::Make(schema, {id.Finish(), emb.Finish()})}, o);
}

std::vector<int64_t> Nearest(const DatasetPtr& ds, bool exact) {
  VectorQuery q;
  q.column = "emb";
  q.vector = {20.3, 20.1, 20.5, 20.2, 20.0, 20.4, 20.6, 20.2};
  q.k = 6;
  q.exact = exact;
  q.nprobes = 4;
  q.refine_factor = 10;
  q.columns = std::vector<std::string>{"id"};
  std::vector<int64_t> ids;
  auto reader = ds->Search(q);
  while (auto batch = reader->Next())
    for (int64_t i = 0; i < batch->num_rows(); ++i) ids.push_back(batch->column(0)->values<int64_t>()[i]);
  return ids;
}

TEST_F(DistributedTasksTest, VectorSegmentsShareTheModelTheFirstTaskTrained) {
  auto ds = WriteVectors(uri_);
  VectorIndexOptions o;
  o.num_sub_vectors = 2;
  const auto tasks = PlanIndexTasks(ds, "emb", IndexType::kIvfPq, 2, "", o);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_TRUE(tasks[0].trains_model);
  EXPECT_FALSE(tasks[1].trains_model);
  EXPECT_EQ(tasks[0].vector.num_partitions, 28u);  // the square root of all 800 rows, not of a task's 400
  EXPECT_EQ(tasks[1].fragment_ids, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(IndexTask::FromJson(tasks[1].ToJson()), tasks[1]);
  EXPECT_NE(tasks[0].ToJson().find(R"("vector":{"num_partitions":28,"num_sub_vectors":2,"num_bits":8,)"),
            std::string::npos)
      << tasks[0].ToJson();

  const std::string model = BuildIndexSegment(Dataset::Open(uri_, 1), tasks[0]);
  EXPECT_EQ(testing::ThrownKind([&] { BuildIndexSegment(ds, tasks[1]); }), ErrorKind::kInvalidArgument);
  const std::string second = BuildIndexSegment(Dataset::Open(uri_, 1), tasks[1], model);
  auto indexed = CommitIndexSegments(uri_, 1, {model, second});
  const auto indexes = indexed->ListIndices();
  ASSERT_EQ(indexes.size(), 1u);
  EXPECT_EQ(indexes[0].name, "emb_idx");
  EXPECT_EQ(indexes[0].segments, 2u);
  EXPECT_EQ(indexes[0].partitions, 28u);
  EXPECT_EQ(indexes[0].indexed_fragments, 4u);
  const auto exact = Nearest(indexed, true);
  ASSERT_EQ(exact.size(), 6u);
  EXPECT_EQ(Nearest(indexed, false), exact);
  EXPECT_NE(indexed->ExplainSearch([] {
    VectorQuery q;
    q.column = "emb";
    q.vector = std::vector<double>(8, 20.0);
    return q;
  }()).find("emb_idx"), std::string::npos);

  o.num_bits = 4;
  EXPECT_EQ(testing::ThrownKind([&] { PlanIndexTasks(ds, "emb", IndexType::kIvfPq, 2, "", o); }),
            ErrorKind::kNotSupported);
  EXPECT_EQ(testing::ThrownKind([&] { PlanIndexTasks(ds, "id", IndexType::kIvfFlat, 2); }),
            ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace lancelet
