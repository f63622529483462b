// The older (legacy) IVF_PQ layout (index/ivf_legacy.cc): one index.idx, no auxiliary.idx,
// each partition's row-major codes and row ids at a byte offset, then the Index message
// and the "LANC" footer. A file made here by hand is read into the shared layout (codes
// transposed per partition, row offsets) and scored exactly as the table says; structural
// damage and kinds lancelet does not read are one line naming the file.
#include <gtest/gtest.h>

#include <cstring>

#include "format/little_endian.h"
#include "index.pb.h"
#include "index/ivf_index.h"
#include "io/object_store.h"
#include "lancelet/error.h"
#include "support/test_env.h"

namespace lancelet::index {
namespace {

// dim 4, two sub-vectors of 2, two partitions: centroids (0,0,0,0) and (10,10,10,10);
// code c of sub-vector s is (c + s, 0) (a codebook of 256 x 4 floats); partition 0 holds
// rows 7 and 9, partition 1 holds row 4.
struct LegacyFile {
  std::vector<uint8_t> codes[2] = {{1, 2, 3, 4}, {5, 6}};  // row-major, m = 2
  std::vector<uint64_t> ids[2] = {{7, 9}, {4}};
  uint32_t metric = 0;  // l2
  bool transform = false;
  uint16_t minor = 1;

  lance::index::pb::Index Message(const std::vector<uint64_t>& offsets) const {
    lance::index::pb::Index index;
    index.set_name("vec_idx");
    index.add_columns("vec");
    auto* vector = index.mutable_vector_index();
    vector->set_spec_version(1);
    vector->set_dimension(4);
    vector->set_metric_type(lance::index::pb::VectorMetricType(metric));
    if (transform) vector->add_stages()->mutable_transform()->set_position(0);
    auto* ivf = vector->add_stages()->mutable_ivf();
    auto* tensor = ivf->mutable_centroids_tensor();
    tensor->set_data_type(lance::index::pb::Tensor::FLOAT32);
    tensor->add_shape(2);
    tensor->add_shape(4);
    const float centroids[8] = {0, 0, 0, 0, 10, 10, 10, 10};
    tensor->set_data(std::string(reinterpret_cast<const char*>(centroids), sizeof(centroids)));
    for (int p = 0; p < 2; ++p) {
      ivf->add_offsets(offsets[size_t(p)]);
      ivf->add_lengths(uint32_t(ids[p].size()));
    }
    auto* pq = vector->add_stages()->mutable_pq();
    pq->set_num_bits(8);
    pq->set_num_sub_vectors(2);
    pq->set_dimension(4);
    for (int s = 0; s < 2; ++s)
      for (int c = 0; c < 256; ++c) {
        pq->add_codebook(float(c + s));
        pq->add_codebook(0.f);
      }
    return index;
  }

  std::string Bytes() const {
    std::string out;
    std::vector<uint64_t> offsets;
    for (int p = 0; p < 2; ++p) {
      offsets.push_back(out.size());
      out.append(codes[p].begin(), codes[p].end());
      for (uint64_t id : ids[p]) format::AppendLE(out, id);
    }
    const uint64_t position = out.size();
    const std::string message = Message(offsets).SerializeAsString();
    format::AppendLE(out, uint32_t(message.size()));
    out += message;
    format::AppendLE(out, position);
    format::AppendLE(out, uint16_t(0));
    format::AppendLE(out, minor);
    return out + "LANC";
  }
};

class IvfLegacyTest : public ::testing::Test {
 protected:
  std::unique_ptr<IvfIndex> Open(const std::string& bytes) {
    auto& store = *io::DefaultLocalStore();
    store.CreateDir(dir_.path());
    auto file = store.OpenWrite(dir_.Join("index.idx"), /*no_overwrite=*/false);
    file->Write(bytes);
    file->Finish();
    return IvfIndex::Open(store, dir_.path(), IdBounds{true, 100, std::nullopt, {}});
  }
  std::string Refusal(const std::string& bytes) {
    return testing::ThrownMessage([&] { Open(bytes); });
  }
  testing::TempDir dir_;
};

TEST_F(IvfLegacyTest, ReadsTheOneFileLayoutIntoTransposedPartitions) {
  const auto index = Open(LegacyFile{}.Bytes());
  EXPECT_EQ(index->kind(), IvfKind::kPq);
  EXPECT_EQ(index->metric(), Metric::kL2);
  EXPECT_EQ(index->dim(), 4u);
  EXPECT_EQ(index->num_partitions(), 2u);
  EXPECT_EQ(index->partition_offset(1), 2u);
  EXPECT_EQ(index->partition_length(1), 1u);
  EXPECT_EQ(std::vector<uint64_t>(index->row_ids().begin(), index->row_ids().end()), (std::vector<uint64_t>{7, 9, 4}));
  EXPECT_EQ(index->num_sub_vectors(), 2u);
  EXPECT_EQ(index->nbits(), 8u);
  // Partition 0's rows (1, 2) and (3, 4) stored as [s][r]: 1 3 2 4; partition 1: 5 6.
  EXPECT_EQ(std::vector<uint8_t>(index->pq_codes(), index->pq_codes() + 6), (std::vector<uint8_t>{1, 3, 2, 4, 5, 6}));
  EXPECT_EQ(index->centroid(1)[3], 10.f);
  EXPECT_EQ(index->codebook()[(256 + 5) * 2], 6.f);  // sub-vector 1, code 5: (6, 0)

  // The query (1, 1, 0, 0): partition 0's row 9 has codes (3, 4), so it rebuilds as
  // (3, 0, 5, 0); its distance is 2^2 + 1 + 5^2 + 0 = 30.
  const IvfQuery q = index->Prepare(std::vector<float>{1, 1, 0, 0});
  std::vector<float> scores;
  index->ScorePartition(q, 0, scores);
  EXPECT_EQ(scores, (std::vector<float>{0 + 1 + 9 + 0, 4 + 1 + 25 + 0}));
  // Partition 1 holds residuals from (10, 10, 10, 10): row 4 rebuilds as (15, 10, 17, 10).
  index->ScorePartition(q, 1, scores);
  EXPECT_EQ(scores, (std::vector<float>{196 + 81 + 289 + 100}));
  EXPECT_EQ(index->NearestPartitions(q, 1), std::vector<uint32_t>{0});
}

TEST_F(IvfLegacyTest, DamageAndUnreadKindsAreOneLineNamingTheFile) {
  const std::string good = LegacyFile{}.Bytes();
  const std::string path = dir_.Join("index.idx");
  EXPECT_EQ(Refusal(good.substr(0, good.size() - 1)),
            path + ": no auxiliary.idx beside it, and no legacy vector index footer (\"LANC\") at its end");
  LegacyFile newer;
  newer.minor = 2;
  EXPECT_EQ(Refusal(newer.Bytes()), path + ": a legacy vector index file of version 0.2 (0.1 is read)");
  std::string far = good;
  format::StoreLE(far.data() + far.size() - 16, uint64_t(1) << 40);
  EXPECT_EQ(Refusal(far), fmt::format("{}: the index message's position 1099511627776 is past the footer at byte {}",
                                      path, good.size() - 16));
  // Partition 1's offset moved from byte 20 (after partition 0's 2 x (2 + 8) bytes) back
  // to 10, inside partition 0; the partitions' 29 bytes end where the message starts.
  const std::string message = LegacyFile{}.Message({0, 10}).SerializeAsString();
  std::string overlapping = good.substr(0, 29);
  format::AppendLE(overlapping, uint32_t(message.size()));
  overlapping += message;
  format::AppendLE(overlapping, uint64_t(29));
  format::AppendLE(overlapping, uint16_t(0));
  format::AppendLE(overlapping, uint16_t(1));
  overlapping += "LANC";
  EXPECT_EQ(Refusal(overlapping), path + ": partition 1 (1 rows at byte 10) overlaps the one before or runs past the "
                                         "index message at byte 29");
  LegacyFile cosine;
  cosine.metric = 1;
  EXPECT_EQ(Refusal(cosine.Bytes()), path + ": a legacy IVF_PQ index of metric 1 (lancelet reads legacy l2 "
                                            "indexes); search exactly instead (--exact)");
  LegacyFile opq;
  opq.transform = true;
  EXPECT_EQ(Refusal(opq.Bytes()), path + ": a legacy vector index with a transform stage (OPQ) is not supported");
  LegacyFile twice;
  twice.ids[1] = {7};
  EXPECT_EQ(Refusal(twice.Bytes()), path + ": row id 7 is indexed twice");
}

}  // namespace
}  // namespace lancelet::index
