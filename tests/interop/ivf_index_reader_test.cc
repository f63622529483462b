// lancelet's reader of the reference's IVF_FLAT and IVF_PQ index files (index.idx and
// auxiliary.idx), for l2, cosine and dot, in datasets of file versions 2.0 and 2.2: the
// partitions cover every row once, IVF_FLAT holds each row's own vector (normalised for
// cosine), and IVF_PQ codes (8-bit, and 4-bit two a byte), read transposed per partition,
// rebuild the vectors (their residuals for l2 and cosine) far better than the centroids
// alone do, and score each row as the distance to the vector its code rebuilds.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <set>

#include <gtest/gtest.h>

#include "index/ivf_index.h"
#include "interop/ivf_data.h"
#include "lancelet/dataset.h"
#include "table/dataset_state.h"

namespace lancelet::testing {
namespace {

constexpr int kDim = 16;
constexpr int64_t kRows = 1000;
constexpr int kPartitions = 4;
constexpr int kSubVectors = 4;
const char* const kVersions[] = {"2.0", "2.2"};
const char* const kMetrics[] = {"l2", "cosine", "dot"};

class IvfIndexReaderTest : public ::testing::Test {
 protected:
  // Under ctest each test runs in its own process: each builds only the indexes it reads.
  static void SetUpTestSuite() {
    if (!OracleAvailable()) return;
    tmp_ = new TempDir(TempDir::Use::kLocalScratch);
    data_ = new std::vector<float>(ClusteredVectors(kRows, kDim, 8, 11));
    built_ = new std::set<std::string>();
    WriteVectorsIpc(tmp_->Join("in.arrow"), *data_, kDim);
    for (const char* version : kVersions)
      Oracle({"create", Dataset(version), "--data", tmp_->Join("in.arrow"), "--file-version", version});
  }
  static std::string Dataset(const std::string& version) { return tmp_->Join(fmt::format("v{}.lance", version)); }
  // The reference builds index `type`_`metric` ("flat_l2", "pq_dot", ...) on the dataset
  // of `version`.
  // "pq4" is IVF_PQ with 4-bit codes.
  static void Build(const std::string& version, const std::string& type, const std::string& metric) {
    if (!built_->insert(version + type + metric).second) return;
    const std::string kind = type == "flat" ? "ivf_flat" : "ivf_pq";
    std::vector<std::string> args{"create-index", Dataset(version), "emb", "--type", kind, "--partitions",
                                  "4", "--distance", metric, "--name", type + "_" + metric};
    if (type != "flat") args.insert(args.end(), {"--sub-vectors", "4"});
    if (type == "pq4") args.insert(args.end(), {"--bits", "4"});
    Oracle(args);
  }
  static void TearDownTestSuite() {
    delete tmp_;
    delete data_;
    delete built_;
  }

  static std::shared_ptr<const index::IvfIndex> Open(const DatasetPtr& ds, const std::string& name) {
    const auto& state = table::StateOf(*ds);
    for (const auto& meta : state.indices.indices())
      if (meta.name() == name) {
        EXPECT_TRUE(index::IsVectorIndexTypeUrl(meta.index_details().type_url())) << meta.index_details().type_url();
        return state.OpenVectorIndex(meta);
      }
    ADD_FAILURE() << "no index " << name;
    return nullptr;
  }

  static const float* Row(uint64_t id) { return data_->data() + id * kDim; }

  // Every row once, grouped into kPartitions partitions laid end to end.
  static void ExpectPartitionsCoverEveryRow(const index::IvfIndex& ivf) {
    ASSERT_EQ(ivf.num_partitions(), size_t(kPartitions));
    ASSERT_EQ(ivf.num_rows(), uint64_t(kRows));
    EXPECT_EQ(ivf.dim(), size_t(kDim));
    uint64_t next = 0;
    for (size_t p = 0; p < ivf.num_partitions(); ++p) {
      EXPECT_EQ(ivf.partition_offset(p), next);
      next += ivf.partition_length(p);
    }
    EXPECT_EQ(next, uint64_t(kRows));
    std::vector<uint64_t> ids(ivf.row_ids().begin(), ivf.row_ids().end());
    std::sort(ids.begin(), ids.end());
    std::vector<uint64_t> expected(kRows);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(ids, expected);
  }

  static inline TempDir* tmp_ = nullptr;
  static inline std::vector<float>* data_ = nullptr;
  static inline std::set<std::string>* built_ = nullptr;
};

std::vector<float> AsIndexed(const float* v, const std::string& metric) {
  std::vector<float> out(v, v + kDim);
  if (metric != "cosine") return out;
  double norm2 = 0;
  for (float x : out) norm2 += double(x) * x;
  for (float& x : out) x = float(x / std::sqrt(norm2));
  return out;
}

TEST_F(IvfIndexReaderTest, IvfFlatHoldsEachRowsVector) {
  REQUIRE_ORACLE();
  for (const char* version : kVersions) {
    for (const std::string metric : kMetrics) {
      SCOPED_TRACE(fmt::format("{} {}", version, metric));
      Build(version, "flat", metric);
      auto ivf = Open(lancelet::Dataset::Open(Dataset(version)), "flat_" + metric);
      ASSERT_TRUE(ivf);
      EXPECT_EQ(ivf->kind(), index::IvfKind::kFlat);
      EXPECT_EQ(ivf->metric(), metric == "l2" ? index::Metric::kL2 : metric == "cosine" ? index::Metric::kCosine
                                                                                       : index::Metric::kDot);
      ExpectPartitionsCoverEveryRow(*ivf);
      double worst = 0;
      for (uint64_t i = 0; i < ivf->num_rows(); ++i) {
        const std::vector<float> want = AsIndexed(Row(ivf->row_ids()[i]), metric);
        for (int d = 0; d < kDim; ++d)
          worst = std::max(worst, double(std::fabs(ivf->flat_vectors()[i * kDim + d] - want[size_t(d)])));
      }
      EXPECT_LE(worst, metric == "cosine" ? 1e-6 : 0.0);
    }
  }
}

// Row r of partition p's code for sub-vector s: byte s (8 bits), or the low (s even) or
// high (s odd) nibble of byte s / 2 (4 bits); `swap` reads the other nibble.
uint8_t CodeOf(const index::IvfIndex& ivf, size_t p, size_t r, size_t s, bool swap = false) {
  const size_t n = ivf.partition_length(p), width = ivf.code_bytes();
  const uint8_t* codes = ivf.pq_codes() + ivf.partition_offset(p) * width;
  if (ivf.nbits() == 8) return codes[s * n + r];
  const uint8_t byte = codes[(s / 2) * n + r];
  return (s % 2 == 1) != swap ? uint8_t(byte >> 4) : uint8_t(byte & 15);
}

// Row r of partition p as its code rebuilds it: the centroid (not for dot) plus the code
// of each sub-vector.
std::vector<float> Rebuilt(const index::IvfIndex& ivf, size_t p, size_t r, const std::string& metric,
                           bool swap = false) {
  const size_t m = ivf.num_sub_vectors(), sub = kDim / m, codes = size_t(1) << ivf.nbits();
  std::vector<float> out(kDim);
  for (size_t s = 0; s < m; ++s) {
    const size_t code = CodeOf(ivf, p, r, s, swap);
    for (size_t j = 0; j < sub; ++j) {
      const size_t d = s * sub + j;
      out[d] = (metric == "dot" ? 0.f : ivf.centroid(p)[d]) + ivf.codebook()[(s * codes + code) * sub + j];
    }
  }
  return out;
}

// Mean squared error of the vectors the PQ codes rebuild (centroid + codes for l2 and
// cosine, codes alone for dot), and of the centroids alone (the zero vector for dot).
std::pair<double, double> PqErrors(const index::IvfIndex& ivf, const std::vector<float>& data,
                                   const std::string& metric, bool swap = false) {
  double pq = 0, coarse = 0;
  for (size_t p = 0; p < ivf.num_partitions(); ++p) {
    const size_t n = ivf.partition_length(p), offset = ivf.partition_offset(p);
    for (size_t r = 0; r < n; ++r) {
      const std::vector<float> x = AsIndexed(data.data() + ivf.row_ids()[offset + r] * kDim, metric);
      const std::vector<float> rebuilt = Rebuilt(ivf, p, r, metric, swap);
      for (size_t d = 0; d < size_t(kDim); ++d) {
        const float base = metric == "dot" ? 0.f : ivf.centroid(p)[d];
        pq += double(x[d] - rebuilt[d]) * (x[d] - rebuilt[d]);
        coarse += double(x[d] - base) * (x[d] - base);
      }
    }
  }
  return {pq / double(ivf.num_rows()), coarse / double(ivf.num_rows())};
}

TEST_F(IvfIndexReaderTest, IvfPqCodesRebuildTheVectors) {
  REQUIRE_ORACLE();
  for (const char* version : kVersions) {
    for (const std::string metric : kMetrics) {
      SCOPED_TRACE(fmt::format("{} {}", version, metric));
      Build(version, "pq", metric);
      auto ivf = Open(lancelet::Dataset::Open(Dataset(version)), "pq_" + metric);
      ASSERT_TRUE(ivf);
      EXPECT_EQ(ivf->kind(), index::IvfKind::kPq);
      EXPECT_EQ(ivf->num_sub_vectors(), size_t(kSubVectors));
      EXPECT_EQ(ivf->nbits(), 8u);
      EXPECT_EQ(ivf->code_bytes(), size_t(kSubVectors));
      ExpectPartitionsCoverEveryRow(*ivf);
      const auto [pq, coarse] = PqErrors(*ivf, *data_, metric);
      EXPECT_LT(pq, 0.25 * coarse) << "pq " << pq << " coarse " << coarse;
    }
  }
}

// 4-bit codes: two a byte (sub-vector 2j in byte j's low nibble), 16 per sub-vector. Read
// that way they rebuild the vectors; the nibbles read the other way round do not.
TEST_F(IvfIndexReaderTest, FourBitPqCodesRebuildTheVectors) {
  REQUIRE_ORACLE();
  for (const char* version : kVersions) {
    for (const std::string metric : kMetrics) {
      SCOPED_TRACE(fmt::format("{} {}", version, metric));
      Build(version, "pq4", metric);
      auto ivf = Open(lancelet::Dataset::Open(Dataset(version)), "pq4_" + metric);
      ASSERT_TRUE(ivf);
      EXPECT_EQ(ivf->kind(), index::IvfKind::kPq);
      EXPECT_EQ(ivf->num_sub_vectors(), size_t(kSubVectors));
      EXPECT_EQ(ivf->nbits(), 4u);
      EXPECT_EQ(ivf->code_bytes(), size_t(kSubVectors / 2));
      ExpectPartitionsCoverEveryRow(*ivf);
      const auto [pq, coarse] = PqErrors(*ivf, *data_, metric);
      const auto [swapped, unused] = PqErrors(*ivf, *data_, metric, /*swap=*/true);
      std::printf("[figures] 4-bit PQ %s %s: mean squared error %.4f, centroids alone %.4f, nibbles swapped %.4f\n",
                  version, metric.c_str(), pq, coarse, swapped);
      EXPECT_LT(pq, 0.5 * coarse) << "pq " << pq << " coarse " << coarse;
      EXPECT_LT(2 * pq, swapped) << "pq " << pq << " swapped " << swapped;
    }
  }
}

// ScorePartition's PQ estimate of every row is the distance between the query (as the
// index scores it) and the row its code rebuilds, at 8 and 4 bits.
TEST_F(IvfIndexReaderTest, PqEstimatesAreDistancesToTheRebuiltRows) {
  REQUIRE_ORACLE();
  for (const char* type : {"pq", "pq4"}) {
    for (const std::string metric : {"l2", "dot"}) {
      SCOPED_TRACE(fmt::format("{} {}", type, metric));
      Build("2.2", type, metric);
      auto ivf = Open(lancelet::Dataset::Open(Dataset("2.2")), std::string(type) + "_" + metric);
      ASSERT_TRUE(ivf);
      const index::IvfQuery q = ivf->Prepare(std::span<const float>(Row(11), kDim));
      std::vector<float> scores;
      double worst = 0;
      for (size_t p = 0; p < ivf->num_partitions(); ++p) {
        ivf->ScorePartition(q, p, scores);
        ASSERT_EQ(scores.size(), ivf->partition_length(p));
        for (size_t r = 0; r < scores.size(); ++r) {
          const std::vector<float> x = Rebuilt(*ivf, p, r, metric);
          double want = metric == "dot" ? 1 : 0;
          for (int d = 0; d < kDim; ++d)
            want += metric == "dot" ? -double(Row(11)[d]) * x[size_t(d)]
                                    : (double(Row(11)[d]) - x[size_t(d)]) * (double(Row(11)[d]) - x[size_t(d)]);
          worst = std::max(worst, std::fabs(scores[r] - want) / std::max(1.0, std::fabs(want)));
        }
      }
      EXPECT_LT(worst, 1e-5);
    }
  }
}

TEST_F(IvfIndexReaderTest, NearestPartitionsAreOrderedByCentroidDistance) {
  REQUIRE_ORACLE();
  Build("2.2", "flat", "l2");
  auto ivf = Open(lancelet::Dataset::Open(Dataset("2.2")), "flat_l2");
  ASSERT_TRUE(ivf);
  const index::IvfQuery q = ivf->Prepare(std::span<const float>(Row(7), kDim));
  const auto all = ivf->NearestPartitions(q, 100);
  ASSERT_EQ(all.size(), size_t(kPartitions));
  auto distance = [&](uint32_t p) {
    double sum = 0;
    for (int d = 0; d < kDim; ++d) sum += double(Row(7)[d] - ivf->centroid(p)[d]) * (Row(7)[d] - ivf->centroid(p)[d]);
    return sum;
  };
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LE(distance(all[i - 1]), distance(all[i]));
  EXPECT_EQ(ivf->NearestPartitions(q, 1), std::vector<uint32_t>{all[0]});
  // Row 7's own partition scores it at distance 0 (IVF_FLAT keeps l2 vectors as they are).
  bool found = false;
  std::vector<float> scores;
  for (uint32_t p : all) {
    ivf->ScorePartition(q, p, scores);
    for (size_t i = 0; i < scores.size(); ++i)
      if (ivf->row_ids()[ivf->partition_offset(p) + i] == 7) {
        EXPECT_EQ(scores[i], 0.f);
        found = true;
      }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace lancelet::testing
