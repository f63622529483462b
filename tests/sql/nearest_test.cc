// SQL's nearest-neighbour queries (ORDER BY a distance LIMIT n): a query the vector index
// serves returns what the same statement returns computed exactly on a copy of the table
// without the index, when the index is exact (IVF_FLAT with every partition probed).
#include <gtest/gtest.h>

#include <random>

#include <fmt/format.h>

#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/scalar.h"
#include "lancelet/sql.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

constexpr int kDim = 8;
constexpr int64_t kRows = 600;

// ids 0..599 in fragments of 250 rows, a group 0..2, random vectors (seeded), row 7's NULL.
RecordBatchPtr Rows() {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  FixedWidthBuilder<int64_t> id(DataType::Int64()), group(DataType::Int64());
  const TypePtr type = DataType::FixedSizeList(DataType::Float32(), kDim);
  ListBuilder emb(type);
  for (int64_t i = 0; i < kRows; ++i) {
    id.Append(i);
    group.Append(i % 3);
    if (i == 7) {
      emb.AppendNull();
      continue;
    }
    for (int d = 0; d < kDim; ++d) static_cast<FixedWidthBuilder<float>&>(emb.item_builder()).Append(uniform(rng));
    emb.Append();
  }
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("id", DataType::Int64()), Field::Make("grp", DataType::Int64()), Field::Make("emb", type)});
  return RecordBatch::Make(schema, {id.Finish(), group.Finish(), emb.Finish()});
}

std::string Cell(const Scalar& s) {
  if (s.is_null()) return "NULL";
  if (s.type->is_integer()) return std::to_string(s.as_int());
  if (s.type->id() != TypeId::kFixedSizeList) return fmt::format("{}", s.as_double());
  std::string out = "[";
  for (const Scalar& item : s.as_list()) out += Cell(item) + ",";
  return out + "]";
}

// Every cell, a row per line; floats in their shortest exact text.
std::string Printed(const RecordBatch& rows) {
  std::string out;
  for (int64_t r = 0; r < rows.num_rows(); ++r) {
    for (size_t c = 0; c < rows.num_columns(); ++c) out += Cell(GetScalar(*rows.column(int(c)), r)) + " ";
    out += "\n";
  }
  return out;
}

TEST(SqlNearestTest, AServedQueryReturnsWhatTheExactQueryReturns) {
  TempDir dir;
  WriteOptions options;
  options.max_rows_per_file = 250;
  for (const char* table : {"plain", "by_l2", "by_dot"})
    Dataset::Write(dir.Uri(std::string(table) + ".lance"), std::vector<RecordBatchPtr>{Rows()}, options);
  SqlSession session(dir.RootUri());
  session.Execute("CREATE INDEX l2 ON by_l2 (emb) USING IVF_FLAT WITH (partitions = 8)");
  session.Execute("CREATE INDEX dot ON by_dot (emb) USING IVF_FLAT WITH (partitions = 8, distance = 'dot')");
  const std::string q = "[0.5, -0.25, 0.125, 0.75, -0.5, 0.25, 0, -0.125]";
  const std::vector<std::pair<std::string, std::string>> queries = {
      {"by_l2", "SELECT id, l2_distance(emb, " + q + ") AS d FROM {} ORDER BY d LIMIT 10"},
      {"by_l2", "SELECT id, grp, array_distance(" + q + ", emb) FROM {} WHERE grp = 1 ORDER BY 3 LIMIT 5 OFFSET 2"},
      {"by_l2", "SELECT * FROM {} t WHERE t.id < 300 ORDER BY l2_distance(t.emb, " + q + ") LIMIT 4"},
      {"by_dot", "SELECT id, inner_product(emb, " + q + ") AS ip FROM {} ORDER BY ip DESC NULLS LAST LIMIT 7"},
      {"by_dot", "SELECT id FROM {} WHERE grp <> 2 ORDER BY array_negative_inner_product(emb, " + q + ") LIMIT 6"},
  };
  for (const auto& [table, text] : queries) {
    SCOPED_TRACE(text);
    const std::string served = fmt::format(fmt::runtime(text), table), exact = fmt::format(fmt::runtime(text), "plain");
    EXPECT_EQ(session.Execute("EXPLAIN " + served).message.rfind("VectorSearch: column emb", 0), 0u);
    EXPECT_EQ(session.Execute("EXPLAIN " + exact).message.rfind("filter: ", 0), 0u);
    const RecordBatchPtr got = session.Execute(served).rows, expected = session.Execute(exact).rows;
    EXPECT_GT(expected->num_rows(), 3);
    EXPECT_EQ(Printed(*got), Printed(*expected));
  }
}

}  // namespace
}  // namespace lancelet::testing
