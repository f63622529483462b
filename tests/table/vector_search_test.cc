// Exact vector search (Dataset::Search) against a brute force written here, for every
// metric and element type, with prefilters and postfilters, deletions, NULL vectors,
// several fragments and an overlay-updated vector; and the refusals of bad queries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "lancelet/float16.h"
#include "lancelet/vector_search.h"
#include "support/sample_batches.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

constexpr int kDim = 8;
constexpr int64_t kRows = 100;

// Component d of row i's vector: a small integer (every sum the kernels form is exact in
// float32, so any summation order gives the brute force's value); bytes for uint8.
int Component(int64_t i, int d, bool bytes) {
  const uint32_t h = uint32_t(i * 2654435761u) ^ uint32_t(d * 40503u + 7);
  return bytes ? int((h >> 5) & 0xff) : int((h >> 7) % 9) - 4;
}
bool IsNullVector(int64_t i) { return i % 7 == 3; }

TypePtr ElementType(TypeId id) {
  switch (id) {
    case TypeId::kFloat16: return DataType::Float16();
    case TypeId::kFloat64: return DataType::Float64();
    case TypeId::kUInt8: return DataType::UInt8();
    default: return DataType::Float32();
  }
}

// ids 0..99 in fragments of 40 rows, every 7th vector (from 3) NULL, a label column.
DatasetPtr WriteVectors(const std::string& uri, TypeId element) {
  const bool bytes = element == TypeId::kUInt8;
  FixedWidthBuilder<int64_t> id(DataType::Int64());
  const TypePtr type = DataType::FixedSizeList(ElementType(element), kDim);
  ListBuilder emb(type);
  BinaryBuilder label(DataType::Utf8());
  for (int64_t i = 0; i < kRows; ++i) {
    id.Append(i);
    label.Append("row" + std::to_string(i));
    if (IsNullVector(i)) {
      emb.AppendNull();
      continue;
    }
    for (int d = 0; d < kDim; ++d) {
      const int v = Component(i, d, bytes);
      switch (element) {
        case TypeId::kFloat16: static_cast<Float16Builder&>(emb.item_builder()).Append(FloatToHalf(float(v))); break;
        case TypeId::kFloat64: static_cast<FixedWidthBuilder<double>&>(emb.item_builder()).Append(double(v)); break;
        case TypeId::kUInt8: static_cast<FixedWidthBuilder<uint8_t>&>(emb.item_builder()).Append(uint8_t(v)); break;
        default: static_cast<FixedWidthBuilder<float>&>(emb.item_builder()).Append(float(v));
      }
    }
    emb.Append();
  }
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("id", DataType::Int64()), Field::Make("emb", type), Field::Make("label", DataType::Utf8())});
  WriteOptions options;
  options.max_rows_per_file = 40;
  std::vector<ArrayPtr> columns{id.Finish(), emb.Finish(), label.Finish()};
  return Dataset::Write(uri, std::vector<RecordBatchPtr>{RecordBatch::Make(schema, columns)}, options);
}

std::vector<double> Query(bool bytes) {
  std::vector<double> q;
  for (int d = 0; d < kDim; ++d) q.push_back(bytes ? double(Component(1000, d, true)) : double((d * 5) % 7 - 3));
  return q;
}

// The reference's definitions, in double, rounded to float32 once.
float BruteDistance(DistanceType type, const std::vector<double>& q, int64_t i) {
  double sum = 0, qq = 0, vv = 0;
  for (int d = 0; d < kDim; ++d) {
    const double v = Component(i, d, type == DistanceType::kHamming);
    switch (type) {
      case DistanceType::kL2: sum += (q[d] - v) * (q[d] - v); break;
      case DistanceType::kHamming: sum += std::popcount(uint8_t(int(q[d]) ^ int(v))); break;
      default: sum += q[d] * v; qq += q[d] * q[d]; vv += v * v;
    }
  }
  if (type == DistanceType::kDot) return float(1.0 - sum);
  if (type == DistanceType::kCosine) return float(1.0 - sum / std::sqrt(qq * vv));
  return float(sum);
}

using Hit = std::pair<int64_t, float>;  // id, distance

// The k nearest of the live rows `keep` accepts, ties by id (ids ascend with row address).
std::vector<Hit> BruteForce(DistanceType type, const std::vector<double>& q, size_t k,
                            const std::function<bool(int64_t)>& keep) {
  std::vector<std::pair<float, int64_t>> all;
  for (int64_t i = 0; i < kRows; ++i) {
    if (IsNullVector(i) || !keep(i)) continue;
    const float d = BruteDistance(type, q, i);
    if (!std::isnan(d)) all.emplace_back(d, i);
  }
  std::sort(all.begin(), all.end());
  std::vector<Hit> out;
  for (size_t j = 0; j < std::min(k, all.size()); ++j) out.emplace_back(all[j].second, all[j].first);
  return out;
}

std::vector<Hit> Hits(RecordBatchReader& reader) {
  std::vector<Hit> hits;
  while (auto batch = reader.Next())
    for (int64_t r = 0; r < batch->num_rows(); ++r)
      hits.emplace_back(batch->column("id")->values<int64_t>()[r], batch->column("_distance")->values<float>()[r]);
  return hits;
}

struct Case {
  TypeId element;
  DistanceType distance;
};

class VectorSearchTest : public ::testing::TestWithParam<Case> {};

TEST_P(VectorSearchTest, EqualsBruteForceWithDeletionsNullsFiltersAndFragments) {
  TempDir tmp;
  const Case c = GetParam();
  const bool bytes = c.element == TypeId::kUInt8;
  auto ds = WriteVectors(tmp.Uri("v.lance"), c.element)->Delete("id % 11 = 0");
  ASSERT_EQ(ds->CountFragments(), 3u);
  auto deleted = [](int64_t i) { return i % 11 == 0; };
  VectorQuery q;
  q.column = "emb";
  q.vector = Query(bytes);
  q.k = 10;
  q.distance = c.distance;
  EXPECT_EQ(Hits(*ds->Search(q)), BruteForce(c.distance, q.vector, 10, [&](int64_t i) { return !deleted(i); }));

  q.filter = "id >= 30 AND id < 90";  // prefilter: the 10 nearest of the rows it keeps
  EXPECT_EQ(Hits(*ds->Search(q)),
            BruteForce(c.distance, q.vector, 10, [&](int64_t i) { return !deleted(i) && i >= 30 && i < 90; }));

  q.postfilter = true;  // postfilter: the 10 nearest, then the filter
  std::vector<Hit> expected;
  for (const Hit& h : BruteForce(c.distance, q.vector, 10, [&](int64_t i) { return !deleted(i); }))
    if (h.first >= 30 && h.first < 90) expected.push_back(h);
  EXPECT_EQ(Hits(*ds->Search(q)), expected);

  q.k = 1000;  // more than there are: every live non-NULL row, nearest first
  q.postfilter = false;
  q.filter.clear();
  EXPECT_EQ(Hits(*ds->Search(q)), BruteForce(c.distance, q.vector, 1000, [&](int64_t i) { return !deleted(i); }));
}

INSTANTIATE_TEST_SUITE_P(
    Metrics, VectorSearchTest,
    ::testing::Values(Case{TypeId::kFloat32, DistanceType::kL2}, Case{TypeId::kFloat32, DistanceType::kCosine},
                      Case{TypeId::kFloat32, DistanceType::kDot}, Case{TypeId::kFloat16, DistanceType::kL2},
                      Case{TypeId::kFloat16, DistanceType::kCosine}, Case{TypeId::kFloat16, DistanceType::kDot},
                      Case{TypeId::kFloat64, DistanceType::kL2}, Case{TypeId::kFloat64, DistanceType::kCosine},
                      Case{TypeId::kFloat64, DistanceType::kDot}, Case{TypeId::kUInt8, DistanceType::kHamming}));

TEST(VectorSearch, OutputColumnsAreAllButTheVectorThenDistanceOrAsRequested) {
  TempDir tmp;
  auto ds = WriteVectors(tmp.Uri("v.lance"), TypeId::kFloat32);
  VectorQuery q;
  q.vector = Query(false);  // column left empty: the only vector column
  q.k = 3;
  auto reader = ds->Search(q);
  EXPECT_EQ(reader->schema()->ToString(), "id:int64, label:utf8, _distance:float32 not null");
  q.columns = std::vector<std::string>{"_distance", "label"};
  EXPECT_EQ(ds->Search(q)->schema()->ToString(), "_distance:float32 not null, label:utf8");
}

TEST(VectorSearch, AnOverlayUpdatedVectorIsFoundAtDistanceZero) {
  TempDir tmp;
  auto ds = WriteVectors(tmp.Uri("v.lance"), TypeId::kFloat32);
  VectorQuery q;
  q.vector = {9, 9, 9, 9, 9, 9, 9, 9};  // farther than any written vector's components reach
  q.k = 2;
  ds = ds->Update({{"emb", "[9, 9, 9, 9, 9, 9, 9, 9]"}}, "id = 57", nullptr, UpdateMode::kOverlay);
  const auto hits = Hits(*ds->Search(q));
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0], Hit(57, 0.f));
  EXPECT_EQ(hits[1], BruteForce(DistanceType::kL2, q.vector, 1, [](int64_t i) { return i != 57; })[0]);
}

TEST(VectorSearch, ExplainSaysWhyEveryRowIsScored) {
  TempDir tmp;
  auto ds = WriteVectors(tmp.Uri("v.lance"), TypeId::kFloat32);
  VectorQuery q;
  q.vector = Query(false);
  q.k = 4;
  q.filter = "id < 50";
  EXPECT_EQ(ds->ExplainSearch(q),
            "VectorSearch: column emb, k 4, metric l2, version 1\n"
            "  prefilter: id < 50\n"
            "  exact: every live row scored (column 'emb' has no vector index)\n"
            "  nearest before the output: 4 rows\n");
  q.exact = true;
  q.postfilter = true;
  q.distance = DistanceType::kCosine;
  EXPECT_EQ(ds->ExplainSearch(q),
            "VectorSearch: column emb, k 4, metric cosine, version 1\n"
            "  postfilter (on the k nearest): id < 50\n"
            "  exact: every live row scored (the query asks for exact search)\n"
            "  nearest before the postfilter: 4 rows\n");
}

TEST(VectorSearch, AScalarIndexServesThePrefilterWithTheSameRows) {
  TempDir tmp;
  auto ds = WriteVectors(tmp.Uri("v.lance"), TypeId::kFloat32)->Delete("id = 40");
  ds = ds->CreateIndex("id", IndexType::kBTree);
  VectorQuery q;
  q.vector = Query(false);
  q.k = 5;
  q.filter = "id BETWEEN 35 AND 60";
  EXPECT_EQ(Hits(*ds->Search(q)),
            BruteForce(DistanceType::kL2, q.vector, 5, [](int64_t i) { return i >= 35 && i <= 60 && i != 40; }));
}

std::string ErrorOf(const Dataset& ds, const VectorQuery& q) {
  try {
    ds.Search(q);
  } catch (const Error& e) {
    return std::string(ErrorKindName(e.kind())) + ": " + e.what();
  }
  return "no error";
}

TEST(VectorSearch, BadQueriesAreRefusedInOneLine) {
  TempDir tmp;
  auto ds = WriteVectors(tmp.Uri("v.lance"), TypeId::kFloat32);
  auto bytes = WriteVectors(tmp.Uri("b.lance"), TypeId::kUInt8);
  VectorQuery q;
  q.vector = {1, 2, 3};
  EXPECT_EQ(ErrorOf(*ds, q),
            "invalid argument: the query vector has 3 values but column 'emb' (fixed_size_list<float32,8>) holds 8-dimensional vectors");
  q.vector = Query(false);
  q.vector[2] = std::nan("");
  EXPECT_EQ(ErrorOf(*ds, q),
            "invalid argument: the query vector's value 2 is NaN");
  q.vector[2] = INFINITY;
  EXPECT_EQ(ErrorOf(*ds, q),
            "invalid argument: the query vector's value 2 is infinite");
  q.vector = Query(false);
  q.k = 0;
  EXPECT_EQ(ErrorOf(*ds, q),
            "invalid argument: k must be at least 1, not 0");
  q.k = 10;
  q.distance = DistanceType::kCosine;
  q.vector.assign(kDim, 0.0);
  EXPECT_EQ(ErrorOf(*ds, q),
            "invalid argument: the query vector is all zeros, whose cosine distance to any vector is undefined");
  q.distance = std::nullopt;
  q.vector = Query(false);
  q.column = "label";
  EXPECT_EQ(ErrorOf(*ds, q),
            "invalid argument: column 'label' is not a vector column: its type is utf8 (a vector column is a fixed_size_list of "
            "float16, float32 or float64, or of uint8 for hamming)");
  q.column = "nope";
  EXPECT_EQ(ErrorOf(*ds, q),
            "invalid argument: no column 'nope' in the schema (id:int64, emb:fixed_size_list<float32,8>, label:utf8)");
  q.column = "emb";
  q.distance = DistanceType::kHamming;
  EXPECT_EQ(ErrorOf(*ds, q),
            "invalid argument: distance hamming needs a column of uint8 vectors; column 'emb' is fixed_size_list<float32,8>");
  q.distance = DistanceType::kL2;
  q.vector = Query(true);
  EXPECT_EQ(ErrorOf(*bytes, q),
            "invalid argument: distance l2 needs a column of float vectors; column 'emb' is fixed_size_list<uint8,8> (use hamming)");
  q.distance = std::nullopt;
  q.vector[0] = 256;
  EXPECT_EQ(ErrorOf(*bytes, q),
            "invalid argument: the query vector's value 0 is 256, not a byte (0 to 255) as column 'emb' (fixed_size_list<uint8,8>) holds");
  EXPECT_THROW(ParseDistanceType("manhattan"), Error);
  EXPECT_EQ(ParseDistanceType("Cosine"), DistanceType::kCosine);
}

}  // namespace
}  // namespace lancelet::testing
