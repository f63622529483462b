// A differential test of index queries: random rows, random overlays (UPDATE), deletes
// and appends, indexes built at random points, and random predicates. Every query
// answered through the indexes must return exactly the rows of the flat scan of the
// same version, with and without stable row ids.
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

class IndexDifferentialTest : public ::testing::TestWithParam<bool> {
 protected:
  // id int64, v int64 (0..49, 5% NULL), s utf8 ("s0".."s7", 5% NULL).
  RecordBatchPtr Rows(int64_t first, int64_t n) {
    FixedWidthBuilder<int64_t> id(DataType::Int64()), v(DataType::Int64());
    BinaryBuilder s(DataType::Utf8());
    for (int64_t i = first; i < first + n; ++i) {
      id.Append(i);
      if (rng_() % 20 == 0) v.AppendNull();
      else v.Append(int64_t(rng_() % 50));
      if (rng_() % 20 == 0) s.AppendNull();
      else s.Append(fmt::format("s{}", rng_() % 8));
    }
    auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
        Field::Make("id", DataType::Int64()), Field::Make("v", DataType::Int64()), Field::Make("s", DataType::Utf8())});
    return std::make_shared<RecordBatch>(schema, std::vector<ArrayPtr>{id.Finish(), v.Finish(), s.Finish()}, n);
  }

  std::string Literal() { return std::to_string(int64_t(rng_() % 56) - 3); }
  std::string Text() { return fmt::format("'s{}'", rng_() % 9); }

  // A random predicate over v and s (and sometimes id, which has no index).
  std::string Predicate(int depth = 0) {
    const int pick = int(rng_() % (depth >= 2 ? 9 : 12));
    switch (pick) {
      case 0: return "v = " + Literal();
      case 1: return "v < " + Literal();
      case 2: return "v >= " + Literal();
      case 3: return "v BETWEEN " + Literal() + " AND " + Literal();
      case 4: return "v IN (" + Literal() + ", " + Literal() + ", NULL)";
      case 5: return rng_() % 2 ? "v IS NULL" : "s IS NOT NULL";
      case 6: return "s = " + Text();
      case 7: return "s IN (" + Text() + ", " + Text() + ")";
      case 8: return "id % 7 = " + std::to_string(rng_() % 7);
      case 9: return "(" + Predicate(depth + 1) + ") AND (" + Predicate(depth + 1) + ")";
      case 10: return "(" + Predicate(depth + 1) + ") OR (" + Predicate(depth + 1) + ")";
      default: return "NOT (" + Predicate(depth + 1) + ")";
    }
  }

  static std::vector<int64_t> Ids(const Dataset& ds, const std::string& where, bool use_index) {
    auto batch = ds.NewScan().Columns({"id"}).Filter(where).UseIndex(use_index).ToBatch();
    std::vector<int64_t> out(batch->column(0)->values<int64_t>(),
                             batch->column(0)->values<int64_t>() + batch->num_rows());
    std::sort(out.begin(), out.end());
    return out;
  }

  std::mt19937_64 rng_{GetParam() ? 11u : 7u};
};

TEST_P(IndexDifferentialTest, IndexedQueriesEqualFlatScans) {
  TempDir dir;
  WriteOptions options;
  options.max_rows_per_file = 700;
  options.enable_stable_row_ids = GetParam();
  DatasetPtr ds = Dataset::Write(dir.Uri("t.lance"), {Rows(0, 2000)}, options);
  int64_t next_id = 2000;
  int queries = 0, narrowed = 0;
  for (int step = 0; step < 14; ++step) {
    switch (step % 7) {
      case 0: ds = ds->CreateIndex("v", IndexType::kBTree, "v_idx", true); break;
      case 1: ds = ds->Update({{"v", fmt::format("v + {}", rng_() % 5)}}, Predicate()); break;
      case 2: ds = ds->CreateIndex("s", IndexType::kBitmap, "s_idx", true); break;
      case 3: ds = ds->Update({{"s", Text()}, {"v", "NULL"}}, Predicate()); break;
      case 4: ds = ds->Delete(Predicate()); break;
      case 5: ds = ds->Append({Rows(next_id, 300)}); next_id += 300; break;
      case 6: ds = ds->Update({{"v", Literal()}}, "id % 11 = " + std::to_string(rng_() % 11)); break;
    }
    for (int q = 0; q < 25; ++q) {
      const std::string where = Predicate();
      SCOPED_TRACE(fmt::format("version {}, WHERE {}", ds->version(), where));
      ASSERT_EQ(Ids(*ds, where, true), Ids(*ds, where, false));
      ASSERT_EQ(ds->CountRows(where), Ids(*ds, where, false).size());
      ++queries;
      narrowed += ds->Explain(where).find("index ") != std::string::npos;
    }
  }
  // The test means something only if the indexes served many of the queries.
  EXPECT_GT(narrowed, queries / 3) << narrowed << " of " << queries;
}

INSTANTIATE_TEST_SUITE_P(RowIds, IndexDifferentialTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "StableRowIds" : "RowAddresses"; });

}  // namespace
}  // namespace lancelet::testing
