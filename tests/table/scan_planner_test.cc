// ScanPlanner and the executor: a scan is planned (its tasks, with index candidates or
// scored candidates, an order and a limit) before any row is read, then run; scored
// candidates come out by score across fragments, filtered after, stopping at the limit.
#include <gtest/gtest.h>

#include <cmath>

#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/scan_plan.h"

namespace lancelet::testing {
namespace {

using Scored = ScanSpec::ScoredRow;

// 30 rows in fragments 0, 1, 2 (ids 0-9, 10-19, 20-29); name "n<id>", NULL when id % 7 == 3.
DatasetPtr ThreeFragments(const TempDir& dir) {
  WriteOptions options;
  options.max_rows_per_file = 10;
  return Dataset::Write(dir.Uri("t.lance"), {IdNameBatch(0, 30)}, options);
}

RecordBatchPtr ReadAll(const DatasetPtr& ds, const ScanSpec& spec) {
  auto reader = ds->Scan(spec);
  std::vector<RecordBatchPtr> batches;
  while (auto b = reader->Next()) batches.push_back(b);
  return RecordBatch::Concatenate(reader->schema(), batches);
}

std::vector<int64_t> Column64(const RecordBatch& batch, const std::string& name) {
  std::vector<int64_t> out;
  const auto& column = *batch.column(size_t(batch.schema()->FieldIndex(name)));
  for (int64_t r = 0; r < batch.num_rows(); ++r) out.push_back(GetScalar(column, r).as_int());
  return out;
}

std::vector<float> Scores(const RecordBatch& batch, const std::string& name) {
  std::vector<float> out;
  const auto& column = *batch.column(size_t(batch.schema()->FieldIndex(name)));
  for (int64_t r = 0; r < batch.num_rows(); ++r) out.push_back(float(GetScalar(column, r).as_double()));
  return out;
}

std::vector<std::string> Names(const RecordBatch& batch) {
  std::vector<std::string> out;
  const auto& column = *batch.column(size_t(batch.schema()->FieldIndex("name")));
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    Scalar v = GetScalar(column, r);
    out.push_back(v.is_null() ? "NULL" : v.as_string());
  }
  return out;
}

TEST(ScanPlannerTest, TheTasksWithTheirIndexCandidatesArePlannedBeforeTheExecutorReadsThem) {
  TempDir tmp;
  auto ds = ThreeFragments(tmp)->CreateIndex("id", IndexType::kBTree);
  ScanSpec spec;
  spec.columns = std::vector<std::string>{"id"};
  spec.filter = ParseExpression("id IN (2, 3, 25)");
  spec.limit = 2;
  auto planned = table::ScanPlanner::Plan(table::StatePtrOf(ds), spec);

  ASSERT_EQ(planned->tasks.size(), 3u);
  std::vector<std::vector<uint64_t>> candidates;
  for (const auto& task : planned->tasks) {
    EXPECT_TRUE(task.from_index);
    EXPECT_EQ(task.scores, nullptr);
    candidates.push_back(*task.candidates);
  }
  EXPECT_EQ(candidates, (std::vector<std::vector<uint64_t>>{{2, 3}, {}, {5}}));
  EXPECT_EQ(planned->tasks[2].fragment->id(), 2u);
  EXPECT_EQ(planned->order, table::ScanOrder::kDataset);
  EXPECT_EQ(planned->limit, 2);
  EXPECT_FALSE(planned->read_ahead);  // a limited scan reads no further than it must
  ASSERT_TRUE(planned->indexed.has_value());
  EXPECT_EQ(planned->indexed->uses.size(), 1u);
  EXPECT_EQ(planned->output_schema->ToString(), "id:int64");

  // The executor runs exactly these tasks, and stops at the plan's limit.
  table::ScanPlan plan(planned);
  EXPECT_EQ(&plan.tasks(), &planned->tasks);
  std::vector<int64_t> ids;
  plan.ForEachBatch([&](const table::FragmentBatch& b) {
    auto out = Column64(*plan.Project(*b.batch), "id");
    ids.insert(ids.end(), out.begin(), out.end());
    return true;
  });
  EXPECT_EQ(ids, (std::vector<int64_t>{2, 3}));
  spec.limit = -1;
  EXPECT_EQ(Column64(*ReadAll(ds, spec), "id"), (std::vector<int64_t>{2, 3, 25}));
}

TEST(ScanPlannerTest, ScoredCandidatesArePlannedPerFragmentAndRankedByScoreThenRowAddress) {
  TempDir tmp;
  auto ds = ThreeFragments(tmp);
  ScanSpec spec;
  spec.scored_rows = std::make_shared<const std::vector<Scored>>(std::vector<Scored>{
      {2, 5, 0.5f}, {0, 7, 0.3f}, {1, 4, 0.3f}, {0, 1, 0.1f}, {7, 0, 0.0f} /* no such fragment */});
  auto planned = table::ScanPlanner::Plan(table::StatePtrOf(ds), spec);
  EXPECT_EQ(planned->order, table::ScanOrder::kScoreAscending);
  ASSERT_EQ(planned->tasks.size(), 3u);
  EXPECT_EQ(*planned->tasks[0].candidates, (std::vector<uint64_t>{1, 7}));
  EXPECT_EQ(*planned->tasks[0].scores, (std::vector<float>{0.1f, 0.3f}));
  EXPECT_EQ(*planned->tasks[1].candidates, (std::vector<uint64_t>{4}));
  EXPECT_EQ(*planned->tasks[2].candidates, (std::vector<uint64_t>{5}));
  EXPECT_FALSE(planned->tasks[0].from_index);
  std::vector<std::pair<uint32_t, uint32_t>> ranked;
  for (const auto& r : planned->ranked) ranked.emplace_back(r.task, r.candidate);
  // 0.1 (fragment 0), then the 0.3 tie by row address: fragment 0 offset 7 before fragment 1.
  EXPECT_EQ(ranked, (std::vector<std::pair<uint32_t, uint32_t>>{{0, 0}, {0, 1}, {1, 0}, {2, 0}}));
}

// Ids 11, 1, 7, 14, 25, 29 with scores 0.05, 0.1, 0.3, 0.3, 0.5, 0.9 (given out of order).
std::shared_ptr<const std::vector<Scored>> SixCandidates() {
  return std::make_shared<const std::vector<Scored>>(std::vector<Scored>{
      {2, 9, 0.9f}, {1, 4, 0.3f}, {0, 1, 0.1f}, {2, 5, 0.5f}, {0, 7, 0.3f}, {1, 1, 0.05f}});
}

TEST(ScanPlannerTest, ScoredRowsComeOutByScoreAcrossFragmentsWithTheScoreColumnAndCurrentValues) {
  TempDir tmp;
  auto ds = ThreeFragments(tmp)->Delete("id = 1");
  ds = ds->Update({{"name", "'near'"}}, "id IN (7, 25)", nullptr, UpdateMode::kOverlay);
  ScanSpec spec;
  spec.columns = std::vector<std::string>{"id", "name"};
  spec.scored_rows = SixCandidates();
  spec.score_column = "_distance";
  spec.batch_size = 2;
  auto all = ReadAll(ds, spec);
  EXPECT_EQ(all->schema()->ToString(), "id:int64, name:utf8, _distance:float32 not null");
  // id 1 is deleted; 7 before 14 (a tie at 0.3, by row address); names from the overlay.
  EXPECT_EQ(Column64(*all, "id"), (std::vector<int64_t>{11, 7, 14, 25, 29}));
  EXPECT_EQ(Names(*all), (std::vector<std::string>{"n11", "near", "n14", "near", "n29"}));
  EXPECT_EQ(Scores(*all, "_distance"), (std::vector<float>{0.05f, 0.3f, 0.3f, 0.5f, 0.9f}));

  // The score column where the caller lists it, under the caller's name.
  spec.columns = std::vector<std::string>{"score", "id"};
  spec.score_column = "score";
  auto listed = ReadAll(ds, spec);
  EXPECT_EQ(listed->schema()->ToString(), "score:float32 not null, id:int64");
  EXPECT_EQ(Scores(*listed, "score"), (std::vector<float>{0.05f, 0.3f, 0.3f, 0.5f, 0.9f}));

  // No score column unless asked for; the fragments restriction applies.
  spec.columns = std::vector<std::string>{"id"};
  spec.score_column = "";
  spec.fragments = std::set<uint64_t>{0, 2};
  auto restricted = ReadAll(ds, spec);
  EXPECT_EQ(restricted->schema()->ToString(), "id:int64");
  EXPECT_EQ(Column64(*restricted, "id"), (std::vector<int64_t>{7, 25, 29}));
}

TEST(ScanPlannerTest, TheFilterIsAPostfilterAndTheLimitCountsOnlyPassingRowsThenStopsReading) {
  TempDir tmp;
  auto ds = ThreeFragments(tmp)->Delete("id = 1");
  ds = ds->Update({{"name", "'near'"}}, "id IN (7, 25)", nullptr, UpdateMode::kOverlay);
  ScanSpec spec;
  spec.columns = std::vector<std::string>{"id"};
  spec.scored_rows = SixCandidates();
  spec.score_column = "_distance";
  spec.filter = ParseExpression("id > 11");
  spec.limit = 2;
  auto two = ReadAll(ds, spec);
  EXPECT_EQ(Column64(*two, "id"), (std::vector<int64_t>{14, 25}));
  EXPECT_EQ(Scores(*two, "_distance"), (std::vector<float>{0.3f, 0.5f}));

  // Windows of as many candidates as rows still wanted: 11 and 1 (fails, deleted), 7 and
  // 14 (one passes), 25 (passes): 29 is never read.
  table::ScanPlan plan(table::StatePtrOf(ds), spec);
  table::ScanPlan::Cursor cursor(plan);
  table::FragmentBatch b;
  std::vector<int64_t> ids;
  while (cursor.Next(b)) {
    auto out = Column64(*plan.Project(*b.batch), "id");
    ids.insert(ids.end(), out.begin(), out.end());
  }
  EXPECT_EQ(ids, (std::vector<int64_t>{14, 25}));
  EXPECT_EQ(cursor.candidates_read(), 5u);

  // A filter on an overlaid value; offset and limit apply to the passing rows in order.
  spec.filter = ParseExpression("name = 'near'");
  spec.limit = 1;
  EXPECT_EQ(Column64(*ReadAll(ds, spec), "id"), (std::vector<int64_t>{7}));
  spec.offset = 1;
  EXPECT_EQ(Column64(*ReadAll(ds, spec), "id"), (std::vector<int64_t>{25}));
  spec.offset = 0;
  spec.limit = -1;
  spec.filter = ParseExpression("name IS NULL");  // id 24 is not a candidate; 11 % 7 != 3
  EXPECT_EQ(ReadAll(ds, spec)->num_rows(), 0);
}

void ExpectRefused(const DatasetPtr& ds, const ScanSpec& spec, const std::string& message) {
  try {
    ds->Scan(spec);
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(ScanPlannerTest, BadScoredRowsAreRefusedBeforeAnyRead) {
  TempDir tmp;
  auto ds = ThreeFragments(tmp);
  const std::string prefix = "scan of dataset '" + ds->uri() + "': ";
  ScanSpec spec;
  spec.scored_rows = std::make_shared<const std::vector<Scored>>(std::vector<Scored>{{1, 3, 0.5f}, {1, 3, 0.25f}});
  ExpectRefused(ds, spec, prefix + "the scored rows given for fragment 1 must be distinct offsets below its 10 rows");
  spec.scored_rows = std::make_shared<const std::vector<Scored>>(std::vector<Scored>{{1, 10, 0.5f}});
  ExpectRefused(ds, spec, prefix + "the scored rows given for fragment 1 must be distinct offsets below its 10 rows");
  spec.scored_rows = std::make_shared<const std::vector<Scored>>(std::vector<Scored>{{1, 2, std::nanf("")}});
  ExpectRefused(ds, spec, prefix + "the score of fragment 1 offset 2 is NaN");
  spec.scored_rows = std::make_shared<const std::vector<Scored>>(std::vector<Scored>{{1, 2, 0.5f}});
  spec.score_column = "name";
  ExpectRefused(ds, spec, prefix + "the score column 'name' would hide a column of that name");
  spec.score_column = "_distance";
  spec.rows = std::make_shared<const std::map<uint64_t, std::vector<uint64_t>>>();
  ExpectRefused(ds, spec, prefix + "give candidate rows or scored rows, not both");
  spec.rows = nullptr;
  spec.scored_rows = nullptr;
  ExpectRefused(ds, spec, prefix + "a score column ('_distance') needs scored rows");
}

}  // namespace
}  // namespace lancelet::testing
