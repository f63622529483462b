// ScanSpec: a scan described as data, run by Dataset::Scan: a filter handed in as an
// expression (no text), a fragment restriction, an empty projection, limit and offset.
#include <gtest/gtest.h>

#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "support/sample_batches.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

std::vector<int64_t> Ids(RecordBatchReader& reader) {
  std::vector<int64_t> ids;
  while (auto batch = reader.Next())
    for (int64_t r = 0; r < batch->num_rows(); ++r) ids.push_back(GetScalar(*batch->column(0), r).as_int());
  return ids;
}

TEST(ScanSpecTest, ASpecWithAnExpressionFilterFragmentsLimitAndOffsetReadsExactlyItsRows) {
  TempDir tmp;
  WriteOptions options;
  options.max_rows_per_file = 10;  // fragments 0, 1, 2: ids 0-9, 10-19, 20-29
  auto ds = Dataset::Write(tmp.Uri("t.lance"), {IdNameBatch(0, 30)}, options);

  ScanSpec spec;
  spec.columns = std::vector<std::string>{"id"};
  spec.filter = Expr::Binary(BinaryOp::kGe, Expr::Column("id"), Expr::Literal(Scalar{DataType::Int64(), int64_t{5}}));
  spec.fragments = std::set<uint64_t>{0, 2};
  spec.offset = 2;
  spec.limit = 6;
  spec.batch_size = 4;
  auto reader = ds->Scan(spec);
  EXPECT_EQ(Ids(*reader), (std::vector<int64_t>{7, 8, 9, 20, 21, 22}));

  // The same filter as text through the builder gives the same rows.
  EXPECT_EQ(Ids(*ds->NewScan().Columns({"id"}).Filter("id >= 5").Offset(2).Limit(3).Open()),
            (std::vector<int64_t>{7, 8, 9}));
  EXPECT_EQ(ds->NewScan().Filter(spec.filter).spec().filter, spec.filter);

  ScanSpec no_columns;
  no_columns.columns = std::vector<std::string>{};
  auto counted = ds->Scan(no_columns);
  int64_t rows = 0;
  while (auto batch = counted->Next()) {
    EXPECT_EQ(batch->num_columns(), 0);
    rows += batch->num_rows();
  }
  EXPECT_EQ(rows, 30);
}

TEST(ScanSpecTest, CandidateRowsAreTheOnlyRowsReadAndTheFilterStillApplies) {
  TempDir tmp;
  WriteOptions options;
  options.max_rows_per_file = 10;
  auto ds = Dataset::Write(tmp.Uri("t.lance"), {IdNameBatch(0, 30)}, options)->Delete("id = 3");
  ds = ds->CreateIndex("id", IndexType::kBTree);  // not consulted: the caller's rows decide
  ScanSpec spec;
  spec.columns = std::vector<std::string>{"id"};
  spec.rows = std::make_shared<const std::map<uint64_t, std::vector<uint64_t>>>(
      std::map<uint64_t, std::vector<uint64_t>>{{0, {1, 3, 7}}, {2, {0, 9}}, {5, {0}}});
  EXPECT_EQ(Ids(*ds->Scan(spec)), (std::vector<int64_t>{1, 7, 20, 29}));  // row 3 deleted; no fragment 5
  spec.filter = ParseExpression("id > 5");
  EXPECT_EQ(Ids(*ds->Scan(spec)), (std::vector<int64_t>{7, 20, 29}));
  spec.fragments = std::set<uint64_t>{2};
  EXPECT_EQ(Ids(*ds->Scan(spec)), (std::vector<int64_t>{20, 29}));

  spec.rows = std::make_shared<const std::map<uint64_t, std::vector<uint64_t>>>(
      std::map<uint64_t, std::vector<uint64_t>>{{2, {4, 2}}});
  try {
    ds->Scan(spec);
    FAIL() << "unsorted rows were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "scan of dataset '" + ds->uri() +
                                         "': the rows given for fragment 2 must be ascending, distinct offsets below "
                                         "its 10 rows");
  }
}

TEST(ScanSpecTest, ABadSpecIsRefusedInOneLine) {
  TempDir tmp;
  auto ds = Dataset::Write(tmp.Uri("t.lance"), {IdNameBatch(0, 3)});
  ScanSpec spec;
  spec.limit = -2;
  EXPECT_THROW(ds->Scan(spec), Error);
  spec = ScanSpec();
  spec.batch_size = 0;
  try {
    ds->Scan(spec);
    FAIL() << "a zero batch size was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "batch size must be positive, got 0");
  }
  spec = ScanSpec();
  spec.filter = Expr::Column("nope");
  EXPECT_THROW(ds->Scan(spec), Error);
}

}  // namespace
}  // namespace lancelet::testing
