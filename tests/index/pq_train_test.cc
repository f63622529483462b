// Product quantization training and encoding (index/pq_train.h): a codebook of known
// points found exactly in the reference's [sub-vector][code][sub-dimension] layout,
// residuals for L2 and cosine and raw vectors for dot (trained and encoded by L2 for
// every metric), 4-bit codes packed two a byte,
// the transposed code layout of a partition, determinism, refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "index/pq_train.h"
#include "lancelet/error.h"
#include "support/test_env.h"

namespace lancelet::index {
namespace {

KMeansModel OneCentroid(std::vector<float> centroid, Metric metric = Metric::kL2) {
  KMeansModel ivf;
  ivf.k = 1;
  ivf.dim = centroid.size();
  ivf.metric = metric;
  ivf.centroids = std::move(centroid);
  return ivf;
}

// 64 rows of dim 4 (two sub-vectors of 2); each sub-vector takes each of the 16 points of
// a 4 x 4 grid (spacing 10) four times, in a different order per sub-vector; every row
// is shifted by (1, 1, 1, 1), which the IVF centroid takes away again as the residual.
std::vector<float> GridRows() {
  std::vector<float> data;
  for (size_t r = 0; r < 64; ++r) {
    const size_t a = r % 16, b = (r * 5 + 3) % 16;
    data.insert(data.end(), {1 + 10.f * float(a % 4), 1 + 10.f * float(a / 4), 1 + 10.f * float(b % 4),
                             1 + 10.f * float(b / 4)});
  }
  return data;
}

TEST(PqTrain, FindsACodebookOfKnownPointsExactly) {
  const std::vector<float> data = GridRows();
  const KMeansModel ivf = OneCentroid({1, 1, 1, 1});
  PqParams params;
  params.num_sub_vectors = 2;
  params.nbits = 4;
  params.init = KMeansInit::kPlusPlus;  // never draws a point twice, so each code is a grid point
  const PqCodebook pq = TrainPq(data.data(), 64, 4, &ivf, params);
  ASSERT_EQ(pq.codebook.size(), 2u * 16 * 2);
  std::vector<std::vector<float>> grid;
  for (int i = 0; i < 16; ++i) grid.push_back({10.f * float(i % 4), 10.f * float(i / 4)});
  std::sort(grid.begin(), grid.end());
  for (size_t s = 0; s < 2; ++s) {
    std::vector<std::vector<float>> codes;
    for (size_t c = 0; c < 16; ++c) codes.push_back({pq.code(s, c)[0], pq.code(s, c)[1]});
    // Sub-vector s's 16 codes lie at floats [s * 32, s * 32 + 32) of the codebook.
    EXPECT_EQ(pq.code(s, 0), pq.codebook.data() + s * 32);
    std::sort(codes.begin(), codes.end());
    EXPECT_EQ(codes, grid) << s;
  }
  // Every row's residual is decoded exactly.
  std::vector<float> inputs(64 * 4);
  for (size_t r = 0; r < 64; ++r) ASSERT_TRUE(PqInput(pq, &ivf, data.data() + r * 4, 0, inputs.data() + r * 4));
  std::vector<uint8_t> codes(64 * 2);
  EncodePq(pq, inputs.data(), 64, codes.data());
  EXPECT_EQ(ReconstructionError(pq, inputs.data(), codes.data(), 64), 0.0);
  for (size_t r = 0; r < 64; ++r) {
    EXPECT_EQ(pq.code(0, codes[r * 2])[0], inputs[r * 4]);
    EXPECT_EQ(pq.code(1, codes[r * 2 + 1])[1], inputs[r * 4 + 3]);
  }
}

// A codebook made by hand: dim 2, two sub-vectors of one float, 16 codes each; code c of
// sub-vector 0 is 10c, of sub-vector 1 it is 10c + 1.
PqCodebook HandCodebook(Metric metric) {
  PqCodebook pq;
  pq.dim = 2;
  pq.num_sub_vectors = 2;
  pq.nbits = 4;
  pq.metric = metric;
  for (int s = 0; s < 2; ++s)
    for (int c = 0; c < 16; ++c) pq.codebook.push_back(10.f * float(c) + float(s));
  return pq;
}

TEST(PqTrain, EncodesAndTransposesAsTheReferenceStoresCodes) {
  const PqCodebook pq = HandCodebook(Metric::kL2);
  const float inputs[6] = {19, 52, 0, 149, 73, 33};
  uint8_t codes[6];
  EncodePq(pq, inputs, 3, codes);
  EXPECT_EQ(std::vector<uint8_t>(codes, codes + 6), (std::vector<uint8_t>{2, 5, 0, 15, 7, 3}));
  // Byte s * n + r is row r's byte s.
  EXPECT_EQ(TransposeCodes(codes, 3, 2), (std::vector<uint8_t>{2, 0, 7, 5, 15, 3}));
  // 4-bit codes are stored two a byte: sub-vector 2j in byte j's low nibble, 2j+1 in its
  // high one.
  EXPECT_EQ(pq.code_bytes(), 1u);
  EXPECT_EQ(PackCodes(pq, codes, 3), (std::vector<uint8_t>{0x52, 0xF0, 0x37}));
  // One partition's raw rows: the residual from that partition's centroid is encoded,
  // packed and transposed.
  KMeansModel ivf;
  ivf.k = 2;
  ivf.dim = 2;
  ivf.centroids = {500, 500, 1, 2};
  const float rows[6] = {20, 54, 1, 151, 74, 35};
  EXPECT_EQ(EncodePartition(pq, &ivf, rows, 3, 1), (std::vector<uint8_t>{0x52, 0xF0, 0x37}));
}

// Four sub-vectors at 4 bits: two bytes a row, transposed per byte; at 8 bits the codes
// are kept as they are.
TEST(PqTrain, PacksFourBitCodesTwoAByte) {
  PqCodebook pq;
  pq.dim = 4;
  pq.num_sub_vectors = 4;
  pq.nbits = 4;
  const uint8_t codes[8] = {1, 2, 3, 4, 15, 0, 9, 10};
  const std::vector<uint8_t> packed = PackCodes(pq, codes, 2);
  EXPECT_EQ(packed, (std::vector<uint8_t>{0x21, 0x43, 0x0F, 0xA9}));
  EXPECT_EQ(TransposeCodes(packed.data(), 2, pq.code_bytes()), (std::vector<uint8_t>{0x21, 0x0F, 0x43, 0xA9}));
  pq.nbits = 8;
  EXPECT_EQ(pq.code_bytes(), 4u);
  EXPECT_EQ(PackCodes(pq, codes, 2), std::vector<uint8_t>(codes, codes + 8));
}

// Dot quantizes the raw rows, and like the reference it trains and encodes them by L2:
// the codes are the grid points themselves (raw, shift included), every row is decoded
// exactly, and a row takes its L2-nearest code, not the code of largest inner product
// (which for positive values is always the largest code).
TEST(PqTrain, DotTrainsAndEncodesRawRowsByL2) {
  const std::vector<float> data = GridRows();
  PqParams params;
  params.num_sub_vectors = 2;
  params.nbits = 4;
  params.metric = Metric::kDot;
  params.init = KMeansInit::kPlusPlus;
  const PqCodebook pq = TrainPq(data.data(), 64, 4, nullptr, params);
  std::vector<std::vector<float>> grid;
  for (int i = 0; i < 16; ++i) grid.push_back({1 + 10.f * float(i % 4), 1 + 10.f * float(i / 4)});
  std::sort(grid.begin(), grid.end());
  for (size_t s = 0; s < 2; ++s) {
    std::vector<std::vector<float>> codes;
    for (size_t c = 0; c < 16; ++c) codes.push_back({pq.code(s, c)[0], pq.code(s, c)[1]});
    std::sort(codes.begin(), codes.end());
    EXPECT_EQ(codes, grid) << s;
  }
  std::vector<uint8_t> codes(64 * 2);
  EncodePq(pq, data.data(), 64, codes.data());
  EXPECT_EQ(ReconstructionError(pq, data.data(), codes.data(), 64), 0.0);

  const PqCodebook hand = HandCodebook(Metric::kDot);
  const float inputs[6] = {19, 52, 0, 149, 73, 33};
  uint8_t hand_codes[6];
  EncodePq(hand, inputs, 3, hand_codes);
  EXPECT_EQ(std::vector<uint8_t>(hand_codes, hand_codes + 6), (std::vector<uint8_t>{2, 5, 0, 15, 7, 3}));
  // A partition's raw rows (dot has no residual, so the partition and model are unused).
  EXPECT_EQ(EncodePartition(hand, nullptr, inputs, 3, 1), (std::vector<uint8_t>{0x52, 0xF0, 0x37}));
}

TEST(PqTrain, DotQuantizesRawVectorsCosineUnitResiduals) {
  const PqCodebook dot = HandCodebook(Metric::kDot);
  float out[2];
  const float row[2] = {3, 4};
  ASSERT_TRUE(PqInput(dot, nullptr, row, 0, out));
  EXPECT_EQ(out[0], 3.f);
  EXPECT_EQ(out[1], 4.f);
  const PqCodebook cosine = HandCodebook(Metric::kCosine);
  const KMeansModel ivf = OneCentroid({0.5f, 0.25f}, Metric::kCosine);
  ASSERT_TRUE(PqInput(cosine, &ivf, row, 0, out));
  EXPECT_EQ(out[0], float(3 / 5.0) - 0.5f);
  EXPECT_EQ(out[1], float(4 / 5.0) - 0.25f);
  const float zero[2] = {0, 0};
  EXPECT_FALSE(PqInput(cosine, &ivf, zero, 0, out));
}

TEST(PqTrain, SameSeedSameCodebook) {
  std::vector<float> data(2000 * 8);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float((i * 2654435761u) % 1000) / 100.f;
  PqParams params;
  params.num_sub_vectors = 4;
  params.metric = Metric::kDot;
  params.seed = 3;
  params.max_iterations = 8;
  params.threads = 1;
  const PqCodebook a = TrainPq(data.data(), 2000, 8, nullptr, params);
  params.threads = 2;
  const PqCodebook b = TrainPq(data.data(), 2000, 8, nullptr, params);
  EXPECT_EQ(a.codebook, b.codebook);
  EXPECT_EQ(a.codebook.size(), 4u * 256 * 2);
}

TEST(PqTrain, RefusesBadParametersInOneLine) {
  std::vector<float> data(300 * 10, 1.f);
  PqParams params;
  params.num_sub_vectors = 4;
  params.metric = Metric::kDot;
  EXPECT_EQ(testing::ThrownMessage([&] { TrainPq(data.data(), 300, 10, nullptr, params); }),
            "PQ: dimension 10 is not divisible by num_sub_vectors 4");
  params.num_sub_vectors = 5;
  params.nbits = 6;
  EXPECT_EQ(testing::ThrownMessage([&] { TrainPq(data.data(), 300, 10, nullptr, params); }), "PQ: nbits must be 4 or 8, got 6");
  params.nbits = 4;
  EXPECT_EQ(testing::ThrownMessage([&] { TrainPq(data.data(), 300, 10, nullptr, params); }),
            "PQ: 4-bit codes are stored two a byte, so num_sub_vectors must be even, got 5");
  params.nbits = 8;
  EXPECT_EQ(testing::ThrownMessage([&] { TrainPq(data.data(), 100, 10, nullptr, params); }),
            "PQ: 256 codes need at least 256 vectors, got 100");
  params.metric = Metric::kL2;
  EXPECT_EQ(testing::ThrownMessage([&] { TrainPq(data.data(), 300, 10, nullptr, params); }),
            "PQ: l2 and cosine quantize residuals, so they need the IVF centroids");
  const KMeansModel ivf = OneCentroid({0, 0});
  EXPECT_EQ(testing::ThrownMessage([&] { TrainPq(data.data(), 300, 10, &ivf, params); }),
            "PQ: the IVF centroids have dimension 2, the vectors 10");
}

}  // namespace
}  // namespace lancelet::index
