// Exact vector search against the reference (lancedb's nearestTo(v) with the vector index
// bypassed): the same top-k ids in the same order and distances within 1e-4 relative,
// for l2, cosine and dot, with a prefilter and a postfilter, after deletions, on a
// dataset lancelet wrote and on one the reference wrote.
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "lancelet/builder.h"
#include "lancelet/ipc.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

constexpr int kDim = 16;
constexpr int64_t kRows = 300;

// Seeded pseudo-random floats in [-1, 1): near-ties between distances are far rarer
// than the rounding differences of two summation orders.
float Value(uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return float((state >> 40) & 0xffffff) / float(1 << 23) - 1.f;
}

std::string WriteArrowInput(const std::string& path) {
  uint64_t state = 42;
  FixedWidthBuilder<int64_t> id(DataType::Int64());
  const TypePtr type = DataType::FixedSizeList(DataType::Float32(), kDim);
  ListBuilder emb(type);
  auto& items = static_cast<FixedWidthBuilder<float>&>(emb.item_builder());
  for (int64_t i = 0; i < kRows; ++i) {
    id.Append(i);
    for (int d = 0; d < kDim; ++d) items.Append(Value(state));
    emb.Append();
  }
  Schema schema({Field::Make("id", DataType::Int64()), Field::Make("emb", type)});
  auto batch = RecordBatch::Make(std::make_shared<Schema>(schema), {id.Finish(), emb.Finish()});
  WriteStringToFile(path, WriteIpcFile(schema, {batch}));
  return path;
}

std::string QueryText(uint64_t seed) {
  std::string text = "[";
  for (int d = 0; d < kDim; ++d) text += (d ? ", " : "") + fmt::format("{}", Value(seed));
  return text + "]";
}

struct Hit {
  int64_t id;
  double distance;
};

std::vector<Hit> ParseHits(const std::string& jsonl) {
  std::vector<Hit> hits;
  for (const auto& line : SplitLines(jsonl)) {
    Hit h{};
    EXPECT_EQ(std::sscanf(line.c_str(), "{\"id\":%ld,\"_distance\":%lf}", &h.id, &h.distance), 2) << line;
    hits.push_back(h);
  }
  return hits;
}

void ExpectSameSearch(const std::string& ds, const std::vector<std::string>& extra_ours,
                      const std::vector<std::string>& extra_theirs) {
  for (const char* distance : {"l2", "cosine", "dot"}) {
    for (uint64_t seed : {7u, 8u, 9u}) {
      const std::string vector = QueryText(seed);
      SCOPED_TRACE(fmt::format("{} {}", distance, vector));
      std::vector<std::string> ours{"search", ds, "--column", "emb", "--vector", vector, "-k", "10", "--distance",
                                    distance, "--columns", "id", "--format", "jsonl"};
      ours.insert(ours.end(), extra_ours.begin(), extra_ours.end());
      std::vector<std::string> theirs{"search", ds, "--column", "emb", "--vector", vector, "--k", "10",
                                      "--distance", distance, "--columns", "id"};
      theirs.insert(theirs.end(), extra_theirs.begin(), extra_theirs.end());
      const auto mine = ParseHits(Lancelet(ours)), reference = ParseHits(Oracle(theirs));
      ASSERT_EQ(mine.size(), reference.size());
      EXPECT_GE(mine.size(), extra_ours.empty() ? 10u : 1u);  // never an empty agreement
      for (size_t i = 0; i < mine.size(); ++i) {
        EXPECT_EQ(mine[i].id, reference[i].id) << i;
        EXPECT_LE(std::fabs(mine[i].distance - reference[i].distance),
                  1e-4 * std::max(1e-3, std::fabs(reference[i].distance))) << i;
      }
    }
  }
}

void ExpectSameSearches(const std::string& ds) {
  ExpectSameSearch(ds, {}, {});
  ExpectSameSearch(ds, {"--where", "id >= 100"}, {"--where", "id >= 100"});
  ExpectSameSearch(ds, {"--where", "id % 2 = 0", "--postfilter"}, {"--where", "id % 2 = 0", "--postfilter"});
}

TEST(VectorSearchInterop, LanceletWrittenDatasetSearchesAsTheReference) {
  REQUIRE_ORACLE();
  TempDir tmp;
  const std::string input = WriteArrowInput(tmp.Join("in.arrow"));
  const std::string ds = tmp.Join("ours.lance");
  Lancelet({"create", ds, "--from", input, "--max-rows-per-file", "100"});
  Lancelet({"delete", ds, "--where", "id % 13 = 0"});
  ExpectSameSearches(ds);
}

TEST(VectorSearchInterop, ReferenceWrittenDatasetSearchesAsTheReference) {
  REQUIRE_ORACLE();
  TempDir tmp;
  const std::string input = WriteArrowInput(tmp.Join("in.arrow"));
  const std::string ds = tmp.Join("theirs.lance");
  Oracle({"create", ds, "--data", input, "--max-rows-per-file", "100"});
  Oracle({"delete", ds, "--where", "id % 13 = 0"});
  ExpectSameSearches(ds);
}

}  // namespace
}  // namespace lancelet::testing
