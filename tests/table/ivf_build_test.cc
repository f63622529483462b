// Building IVF_FLAT and IVF_PQ indexes (Dataset::CreateIndex with a vector type): the
// files have the reference's structure (schema, metadata, global buffers, columns), the
// IndexMetadata its VectorIndexDetails, lancelet's reader opens them with every row once,
// search through them finds the exact top-k on well-separated data (8- and 4-bit PQ
// codes alike), dot PQ codes are the L2-nearest codes of the raw rows, NULL vectors
// are skipped, spilling changes no byte, and bad requests are refused leaving the dataset as
// it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "format/lance_file.h"
#include "index.pb.h"
#include "index/ivf_index.h"
#include "index/ivf_writer.h"
#include "interop/ivf_data.h"
#include "io/object_store.h"
#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "lancelet/vector_search.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/index_section.h"

namespace lancelet::testing {
namespace {

constexpr int kDim = 16;
constexpr int64_t kRows = 2000;

// Rows `first`.. of `data` (ids their row numbers, vectors wrapping around `data`); every
// 10th vector (from 3) NULL when `nulls`.
RecordBatchPtr ClusteredBatch(int64_t first, int64_t rows, bool nulls, const std::vector<float>& data) {
  FixedWidthBuilder<int64_t> id(DataType::Int64());
  const TypePtr type = DataType::FixedSizeList(DataType::Float32(), kDim);
  ListBuilder emb(type);
  auto& items = static_cast<FixedWidthBuilder<float>&>(emb.item_builder());
  for (int64_t i = first; i < first + rows; ++i) {
    id.Append(i);
    if (nulls && i % 10 == 3) {
      emb.AppendNull();
      continue;
    }
    const size_t at = size_t(i % kRows) * kDim;
    for (int d = 0; d < kDim; ++d) items.Append(data[at + d]);
    emb.Append();
  }
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("id", DataType::Int64()), Field::Make("emb", type)});
  return RecordBatch::Make(schema, {id.Finish(), emb.Finish()});
}

// ids 0.. and 8 well-separated clusters in fragments of 700 rows; every 10th vector
// (from 3) NULL when `nulls`.
DatasetPtr WriteClustered(const std::string& uri, const std::string& version, bool nulls,
                          const std::vector<float>& data) {
  WriteOptions options;
  options.file_version = version;
  options.max_rows_per_file = 700;
  return Dataset::Write(uri, std::vector<RecordBatchPtr>{ClusteredBatch(0, kRows, nulls, data)}, options);
}

// The squared error of each indexed row rebuilt from its partition's centroid plus its PQ
// codewords (codes read transposed, 4-bit ones two a byte), and of the centroid alone,
// summed over every row. Rows are fragment-major, 700 a fragment.
std::pair<double, double> PqErrors(const index::IvfIndex& index, const std::vector<float>& data, size_t sub_vectors) {
  const size_t codes = size_t(1) << index.nbits(), bytes = sub_vectors * index.nbits() / 8, width = kDim / sub_vectors;
  double pq = 0, coarse = 0;
  for (size_t p = 0; p < index.num_partitions(); ++p) {
    const size_t n = index.partition_length(p), offset = index.partition_offset(p);
    for (size_t r = 0; r < n; ++r) {
      const uint64_t row = index.row_ids()[offset + r];
      const float* x = data.data() + ((row >> 32) * 700 + (row & 0xffffffffu)) * kDim;
      for (size_t s = 0; s < sub_vectors; ++s) {
        const uint8_t byte = index.pq_codes()[offset * bytes + (index.nbits() == 4 ? s / 2 : s) * n + r];
        const uint8_t code = index.nbits() == 4 ? (s % 2 ? byte >> 4 : byte & 15) : byte;
        for (size_t j = 0; j < width; ++j) {
          const size_t d = s * width + j;
          const double rebuilt = index.centroid(p)[d] + index.codebook()[(s * codes + code) * width + j];
          pq += (x[d] - rebuilt) * (x[d] - rebuilt);
          coarse += double(x[d] - index.centroid(p)[d]) * (x[d] - index.centroid(p)[d]);
        }
      }
    }
  }
  return {pq, coarse};
}

class IvfBuildTest : public ::testing::Test {
 protected:
  void SetUp() override { data_ = ClusteredVectors(kRows, kDim, 8, 5); }

  static const lance::table::IndexMetadata& Meta(const DatasetPtr& ds, const std::string& name) {
    for (const auto& meta : table::StateOf(ds).indices.indices())
      if (meta.name() == name) return meta;
    throw std::runtime_error("no index " + name);
  }
  static std::unique_ptr<format::LanceFileReader> File(const DatasetPtr& ds, const lance::table::IndexMetadata& meta,
                                                       const char* file) {
    const auto& s = table::StateOf(ds);
    return format::LanceFileReader::OpenAlone(
        *s.store, s.uri + "/_indices/" + table::UuidText(meta.uuid().uuid()) + "/" + file);
  }
  static lance::index::pb::IVF Ivf(const format::LanceFileReader& file) {
    lance::index::pb::IVF ivf;
    EXPECT_TRUE(ivf.ParseFromString(file.ReadGlobalBuffer(1)));
    return ivf;
  }

  TempDir tmp_;
  std::vector<float> data_;
};

// index.idx as the reference writes it: no rows, `__flat_marker`, the three metadata
// keys, and in global buffer 1 the centroids with one zero offset and length per partition.
void ExpectCentroidFile(const format::LanceFileReader& file, const std::string& type, const std::string& distance,
                        size_t partitions) {
  EXPECT_EQ(file.num_rows(), 0u);
  ASSERT_EQ(file.schema().fields().size(), 1u);
  EXPECT_EQ(file.schema().fields()[0].name, "__flat_marker");
  EXPECT_EQ(file.schema().fields()[0].type->id(), TypeId::kUInt64);
  EXPECT_FALSE(file.schema().fields()[0].nullable);
  std::string flat = "[";
  for (size_t p = 0; p < partitions; ++p) flat += p ? ",\"\"" : "\"\"";
  const Metadata want{{"lance:index", "{\"type\":\"" + type + "\",\"distance_type\":\"" + distance + "\"}"},
                      {"lance:ivf", "1"},
                      {"lance:flat", flat + "]"}};
  EXPECT_EQ(file.schema().metadata(), want);
  ASSERT_EQ(file.num_global_buffers(), 2u);
  lance::index::pb::IVF ivf;
  ASSERT_TRUE(ivf.ParseFromString(file.ReadGlobalBuffer(1)));
  EXPECT_EQ(ivf.offsets_size(), int(partitions));
  EXPECT_EQ(ivf.lengths_size(), int(partitions));
  for (int p = 0; p < int(partitions); ++p) EXPECT_EQ(ivf.offsets(p) + ivf.lengths(p), 0u);
  EXPECT_EQ(ivf.centroids_tensor().data_type(), lance::index::pb::Tensor::FLOAT32);
  EXPECT_EQ(std::vector<uint32_t>(ivf.centroids_tensor().shape().begin(), ivf.centroids_tensor().shape().end()),
            (std::vector<uint32_t>{uint32_t(partitions), kDim}));
  EXPECT_TRUE(ivf.has_loss());
}

TEST_F(IvfBuildTest, IvfFlatFilesHaveTheReferencesLayout) {
  for (const std::string version : {"2.0", "2.2"}) {
    SCOPED_TRACE(version);
    auto ds = WriteClustered(tmp_.Uri("flat" + version), version, false, data_);
    VectorIndexOptions options;
    options.num_partitions = 4;
    options.distance = "cosine";
    auto indexed = ds->CreateIndex("emb", IndexType::kIvfFlat, options, "flat");
    EXPECT_EQ(indexed->version(), ds->version() + 1);
    const auto& meta = Meta(indexed, "flat");
    EXPECT_EQ(meta.index_details().type_url(), "/lance.index.pb.VectorIndexDetails");
    lance::index::pb::VectorIndexDetails details;
    ASSERT_TRUE(details.ParseFromString(meta.index_details().value()));
    EXPECT_EQ(details.metric_type(), lance::index::pb::Cosine);
    EXPECT_TRUE(details.has_flat());
    EXPECT_EQ(details.runtime_hints().at("lance.ivf.max_iters"), "50");
    EXPECT_EQ(details.runtime_hints().at("lance.ivf.sample_rate"), "256");
    EXPECT_EQ(details.runtime_hints().size(), 5u);
    EXPECT_EQ(meta.index_version(), 1);
    EXPECT_EQ(meta.dataset_version(), ds->version());
    EXPECT_EQ(std::vector<int32_t>(meta.fields().begin(), meta.fields().end()), std::vector<int32_t>{1});
    ASSERT_EQ(meta.files_size(), 2);
    EXPECT_EQ(meta.files(0).path(), "auxiliary.idx");
    EXPECT_EQ(meta.files(1).path(), "index.idx");
    EXPECT_EQ(table::IndexFragments(meta)->Cardinality(), 3u);

    auto centroids = File(indexed, meta, "index.idx");
    EXPECT_EQ(centroids->version().ToString(), version);
    ExpectCentroidFile(*centroids, "IVF_FLAT", "cosine", 4);
    auto storage = File(indexed, meta, "auxiliary.idx");
    EXPECT_EQ(storage->version().ToString(), version);
    EXPECT_EQ(storage->num_rows(), uint64_t(kRows));
    const Metadata want{{"lance:ivf", "1"}, {"distance_type", "cosine"}, {"storage_metadata", "[\"{\\\"dim\\\":16}\"]"}};
    EXPECT_EQ(storage->schema().metadata(), want);
    ASSERT_EQ(storage->schema().fields().size(), 2u);
    EXPECT_EQ(storage->schema().fields()[0].name, "_rowid");
    EXPECT_EQ(storage->schema().fields()[0].type->ToString(), "uint64");
    EXPECT_EQ(storage->schema().fields()[1].name, "flat");
    EXPECT_EQ(storage->schema().fields()[1].type->ToString(), "fixed_size_list<float32,16>");
    EXPECT_EQ(storage->num_global_buffers(), 2u);

    auto ivf = table::StateOf(indexed).OpenVectorIndex(meta);
    EXPECT_EQ(ivf->kind(), index::IvfKind::kFlat);
    ASSERT_EQ(ivf->num_rows(), uint64_t(kRows));
    for (uint64_t i = 0; i < ivf->num_rows(); ++i) {
      const uint64_t row = ivf->row_ids()[i];  // row addresses: fragment << 32 | offset
      const uint64_t id = (row >> 32) * 700 + (row & 0xffffffffu);
      double norm2 = 0;
      for (int d = 0; d < kDim; ++d) norm2 += double(data_[id * kDim + d]) * data_[id * kDim + d];
      for (int d = 0; d < kDim; ++d)
        ASSERT_NEAR(ivf->flat_vectors()[i * kDim + d], data_[id * kDim + d] / std::sqrt(norm2), 1e-6);
    }
  }
}

TEST_F(IvfBuildTest, IvfPqFilesHaveTheReferencesLayout) {
  auto ds = WriteClustered(tmp_.Uri("pq"), "2.2", false, data_);
  VectorIndexOptions options;
  options.num_partitions = 4;
  options.num_sub_vectors = 4;
  auto indexed = ds->CreateIndex("emb", IndexType::kIvfPq, options);
  const auto& meta = Meta(indexed, "emb_idx");
  lance::index::pb::VectorIndexDetails details;
  ASSERT_TRUE(details.ParseFromString(meta.index_details().value()));
  EXPECT_EQ(details.metric_type(), lance::index::pb::L2);
  EXPECT_EQ(details.pq().num_bits(), 8u);
  EXPECT_EQ(details.pq().num_sub_vectors(), 4u);
  EXPECT_EQ(details.runtime_hints().size(), 8u);
  ExpectCentroidFile(*File(indexed, meta, "index.idx"), "IVF_PQ", "l2", 4);
  auto storage = File(indexed, meta, "auxiliary.idx");
  EXPECT_EQ(storage->schema().metadata().at("storage_metadata"),
            "[\"{\\\"codebook_position\\\":2,\\\"nbits\\\":8,\\\"num_sub_vectors\\\":4,\\\"dimension\\\":16,"
            "\\\"codebook_tensor\\\":[],\\\"transposed\\\":true}\"]");
  EXPECT_EQ(storage->schema().fields()[1].name, "__pq_code");
  EXPECT_EQ(storage->schema().fields()[1].type->ToString(), "fixed_size_list<uint8,4>");
  ASSERT_EQ(storage->num_global_buffers(), 3u);
  lance::index::pb::Tensor codebook;
  ASSERT_TRUE(codebook.ParseFromString(storage->ReadGlobalBuffer(2)));
  EXPECT_EQ(std::vector<uint32_t>(codebook.shape().begin(), codebook.shape().end()),
            (std::vector<uint32_t>{256, kDim}));
  const auto ivf = Ivf(*storage);
  uint64_t next = 0;
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(ivf.offsets(p), next);
    next += ivf.lengths(p);
  }
  EXPECT_EQ(next, uint64_t(kRows));
  const auto& s = table::StateOf(indexed);
  for (const auto& f : meta.files())
    EXPECT_EQ(f.size_bytes(),
              s.store->Head(s.uri + "/_indices/" + table::UuidText(meta.uuid().uuid()) + "/" + f.path())->size);

  // The codes (read transposed) rebuild each row's residual far better than the centroid alone.
  auto index = table::StateOf(indexed).OpenVectorIndex(meta);
  const auto [pq, coarse] = PqErrors(*index, data_, 4);
  EXPECT_LT(pq, 0.1 * coarse) << pq << " vs " << coarse;
}

std::vector<int64_t> TopIds(const DatasetPtr& ds, const float* q, bool exact, int64_t nprobes, int64_t refine) {
  VectorQuery query;
  query.column = "emb";
  query.vector.assign(q, q + kDim);
  query.k = 10;
  query.exact = exact;
  query.nprobes = nprobes;
  if (refine) query.refine_factor = refine;
  query.columns = std::vector<std::string>{"id"};
  std::vector<int64_t> ids;
  auto reader = ds->Search(query);
  while (auto batch = reader->Next())
    for (int64_t i = 0; i < batch->num_rows(); ++i) ids.push_back(batch->column(0)->values<int64_t>()[i]);
  return ids;
}

// Rows appended to `ds`: copies of rows 0..n-1 of `data` shifted by 0.25 in every
// dimension, ids kRows...
DatasetPtr AppendShifted(const DatasetPtr& ds, const std::vector<float>& data, int64_t n) {
  FixedWidthBuilder<int64_t> id(DataType::Int64());
  const TypePtr type = DataType::FixedSizeList(DataType::Float32(), kDim);
  ListBuilder emb(type);
  for (int64_t i = 0; i < n; ++i) {
    id.Append(kRows + i);
    for (int d = 0; d < kDim; ++d)
      static_cast<FixedWidthBuilder<float>&>(emb.item_builder()).Append(data[size_t(i * kDim + d)] + 0.25f);
    emb.Append();
  }
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("id", DataType::Int64()), Field::Make("emb", type)});
  return ds->Append(std::vector<RecordBatchPtr>{RecordBatch::Make(schema, {id.Finish(), emb.Finish()})});
}

// num_bits = 4: 16 codes per sub-vector, two codes a byte, in the reference's layout;
// the codes rebuild the rows, the index serves searches and lists as 4-bit, and a delta
// segment keeps its codebook.
TEST_F(IvfBuildTest, FourBitPqFilesHaveTheReferencesLayoutAndServe) {
  auto ds = WriteClustered(tmp_.Uri("pq4"), "2.2", false, data_);
  VectorIndexOptions options;
  options.num_partitions = 4;
  options.num_sub_vectors = 8;
  options.num_bits = 4;
  auto indexed = ds->CreateIndex("emb", IndexType::kIvfPq, options);
  const auto& meta = Meta(indexed, "emb_idx");
  lance::index::pb::VectorIndexDetails details;
  ASSERT_TRUE(details.ParseFromString(meta.index_details().value()));
  EXPECT_EQ(details.pq().num_bits(), 4u);
  EXPECT_EQ(details.pq().num_sub_vectors(), 8u);
  auto storage = File(indexed, meta, "auxiliary.idx");
  EXPECT_EQ(storage->schema().metadata().at("storage_metadata"),
            "[\"{\\\"codebook_position\\\":2,\\\"nbits\\\":4,\\\"num_sub_vectors\\\":8,\\\"dimension\\\":16,"
            "\\\"codebook_tensor\\\":[],\\\"transposed\\\":true}\"]");
  EXPECT_EQ(storage->schema().fields()[1].type->ToString(), "fixed_size_list<uint8,4>");
  lance::index::pb::Tensor codebook;
  ASSERT_TRUE(codebook.ParseFromString(storage->ReadGlobalBuffer(2)));
  EXPECT_EQ(std::vector<uint32_t>(codebook.shape().begin(), codebook.shape().end()),
            (std::vector<uint32_t>{16, kDim}));

  auto index = table::StateOf(indexed).OpenVectorIndex(meta);
  ASSERT_EQ(index->nbits(), 4u);
  const auto [pq, coarse] = PqErrors(*index, data_, 8);
  EXPECT_LT(pq, 0.2 * coarse) << pq << " vs " << coarse;
  for (int64_t qi : {0, 17, 401, 1999})
    EXPECT_EQ(TopIds(indexed, data_.data() + qi * kDim, false, 4, 40), TopIds(indexed, data_.data() + qi * kDim, true, 0, 0))
        << qi;
  EXPECT_EQ(indexed->ListIndices().at(0).bits, 4u);

  auto optimized = AppendShifted(indexed, data_, 300)->OptimizeIndices();
  const auto& indices = table::StateOf(optimized).indices.indices();
  ASSERT_EQ(indices.size(), 2);
  auto delta = table::StateOf(optimized).OpenVectorIndex(indices[1]);
  EXPECT_EQ(delta->nbits(), 4u);
  EXPECT_EQ(std::vector<float>(delta->codebook(), delta->codebook() + 16 * kDim),
            std::vector<float>(index->codebook(), index->codebook() + 16 * kDim));
  EXPECT_EQ(TopIds(optimized, data_.data() + 42 * kDim, false, 4, 40)[0], 42);
}

TEST_F(IvfBuildTest, SearchThroughOurIndexFindsTheExactTopK) {
  auto ds = WriteClustered(tmp_.Uri("search"), "2.2", false, data_);
  VectorIndexOptions options;
  options.num_partitions = 8;
  options.num_sub_vectors = 8;
  auto flat = ds->CreateIndex("emb", IndexType::kIvfFlat, options, "flat");
  auto pq = ds->CreateIndex("emb", IndexType::kIvfPq, options, "pq");
  for (int64_t qi : {0, 17, 401, 1999}) {
    const float* q = data_.data() + qi * kDim;
    const auto exact = TopIds(ds, q, true, 0, 0);
    ASSERT_EQ(exact.size(), 10u);
    EXPECT_EQ(exact[0], qi);
    EXPECT_EQ(TopIds(flat, q, false, 8, 0), exact) << qi;
    EXPECT_EQ(TopIds(pq, q, false, 8, 40), exact) << qi;
  }
}

// A dot IVF_PQ index stores what the reference stores for dot: every code byte is the
// L2-nearest code of the raw row's sub-vector (no residual), at 8 and at 4 bits. Codes
// picked by largest inner product instead lost most of the order (recall@10 0.38, see
// pq_train.h); through these codes, with refine, search finds the exact dot top-k.
TEST_F(IvfBuildTest, DotPqCodesAreTheL2NearestCodesOfTheRawRows) {
  auto ds = WriteClustered(tmp_.Uri("dot"), "2.2", false, data_);
  for (uint32_t bits : {8u, 4u}) {
    SCOPED_TRACE(bits);
    VectorIndexOptions options;
    options.num_partitions = 8;
    options.num_sub_vectors = 8;
    options.num_bits = bits;
    options.distance = "dot";
    const std::string name = "dot" + std::to_string(bits);
    const auto indexed = ds->CreateIndex("emb", IndexType::kIvfPq, options, name);
    const auto ivf = table::StateOf(indexed).OpenVectorIndex(Meta(indexed, name));
    ASSERT_EQ(ivf->num_rows(), uint64_t(kRows));
    const size_t m = 8, sub = kDim / m, codes = size_t(1) << bits, width = ivf->code_bytes();
    size_t checked = 0;
    for (size_t p = 0; p < ivf->num_partitions(); ++p) {
      const size_t n = ivf->partition_length(p), offset = ivf->partition_offset(p);
      const uint8_t* column = ivf->pq_codes() + offset * width;
      for (size_t r = 0; r < n; ++r) {
        const uint64_t address = ivf->row_ids()[offset + r];
        const float* row = data_.data() + ((address >> 32) * 700 + (address & 0xffffffffu)) * kDim;
        for (size_t s = 0; s < m; ++s) {
          const uint8_t byte = column[(bits == 8 ? s : s / 2) * n + r];
          const size_t code = bits == 8 ? byte : s % 2 == 0 ? byte & 15 : byte >> 4;
          size_t nearest = 0;
          float best = INFINITY;
          for (size_t c = 0; c < codes; ++c) {
            const float* centre = ivf->codebook() + (s * codes + c) * sub;
            float d = 0;
            for (size_t j = 0; j < sub; ++j) d += (row[s * sub + j] - centre[j]) * (row[s * sub + j] - centre[j]);
            if (d < best) best = d, nearest = c;
          }
          EXPECT_EQ(code, nearest) << "row " << address << " sub-vector " << s;
          ++checked;
        }
      }
    }
    EXPECT_EQ(checked, size_t(kRows) * m);
    for (int64_t qi : {0, 17, 401, 1999}) {
      VectorQuery query;
      query.column = "emb";
      query.vector.assign(data_.data() + qi * kDim, data_.data() + (qi + 1) * kDim);
      query.distance = DistanceType::kDot;
      query.columns = std::vector<std::string>{"id"};
      auto ids = [&](const DatasetPtr& d) {
        std::vector<int64_t> out;
        auto reader = d->Search(query);
        while (auto batch = reader->Next())
          for (int64_t i = 0; i < batch->num_rows(); ++i) out.push_back(batch->column(0)->values<int64_t>()[i]);
        return out;
      };
      query.exact = true;
      const auto exact = ids(ds);
      ASSERT_EQ(exact.size(), 10u);
      query.exact = false;
      query.nprobes = 8;
      query.refine_factor = 5;
      EXPECT_EQ(ids(indexed), exact) << qi;
    }
  }
}

TEST_F(IvfBuildTest, NullVectorsAreNotIndexed) {
  auto ds = WriteClustered(tmp_.Uri("nulls"), "2.2", true, data_);
  VectorIndexOptions options;
  options.num_partitions = 4;
  auto indexed = ds->CreateIndex("emb", IndexType::kIvfFlat, options, "flat");
  const auto ivf = table::StateOf(indexed).OpenVectorIndex(Meta(indexed, "flat"));
  EXPECT_EQ(ivf->num_rows(), uint64_t(kRows - kRows / 10));
  for (uint64_t row : ivf->row_ids()) EXPECT_NE(((row >> 32) * 700 + (row & 0xffffffffu)) % 10, 3u);
}

TEST_F(IvfBuildTest, ListIndicesShowsTheTypeAndParameters) {
  auto ds = WriteClustered(tmp_.Uri("list"), "2.2", false, data_);
  VectorIndexOptions options;
  options.num_partitions = 4;
  options.num_sub_vectors = 2;
  options.distance = "dot";
  ds = ds->CreateIndex("emb", IndexType::kIvfPq, options, "pq");
  const auto list = ds->ListIndices();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].type, "IVF_PQ");
  EXPECT_EQ(list[0].partitions, 4u);
  EXPECT_EQ(list[0].sub_vectors, 2u);
  EXPECT_EQ(list[0].bits, 8u);
  EXPECT_EQ(list[0].distance, "dot");
  EXPECT_EQ(ds->IndexStats("pq")[0].rows, uint64_t(kRows));
}

// A vector index of a kind lancelet does not search (pylance 14.0.2 also builds IVF_SQ,
// IVF_RQ and IVF_HNSW_{FLAT,SQ,PQ}) is listed by its `lance:index` type, and a search on
// its column scores every row instead, saying why; before, listing and searching failed.
TEST_F(IvfBuildTest, AnIndexKindLanceletDoesNotSearchIsListedAndPassedOver) {
  auto built = WriteClustered(tmp_.Uri("hnsw"), "2.2", false, data_);
  VectorIndexOptions options;
  options.num_partitions = 4;
  built = built->CreateIndex("emb", IndexType::kIvfFlat, options, "hnsw");
  {  // its index.idx replaced by one that names IVF_HNSW_SQ
    const auto& s = table::StateOf(built);
    const std::string path = s.uri + "/_indices/" + table::UuidText(Meta(built, "hnsw").uuid().uuid()) + "/index.idx";
    s.store->Delete(path);
    const Metadata metadata{{"lance:index", R"({"type":"IVF_HNSW_SQ","distance_type":"l2"})"}, {"lance:ivf", "1"}};
    const Schema schema({Field::Make("__flat_marker", DataType::UInt64(), false)}, metadata);
    format::LanceFileWriter writer(*s.store, path, format::LanceSchema::FromArrow(schema), format::FileWriterOptions{});
    writer.AddGlobalBuffer(lance::index::pb::IVF().SerializeAsString());
    writer.Finish();
  }
  const auto ds = Dataset::Open(built->uri());
  const auto list = ds->ListIndices();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].type, "IVF_HNSW_SQ");
  EXPECT_EQ(list[0].partitions, 0u);
  EXPECT_EQ(list[0].distance, "");
  EXPECT_EQ(ds->IndexStats("hnsw")[0].rows, 0u);
  EXPECT_FALSE(ds->VectorIndexOn("emb").has_value());
  const float* q = data_.data() + 17 * kDim;
  EXPECT_EQ(TopIds(ds, q, false, 2, 0), TopIds(ds, q, true, 0, 0));
  VectorQuery query;
  query.column = "emb";
  query.vector.assign(q, q + kDim);
  const std::string explain = ds->ExplainSearch(query);
  EXPECT_NE(explain.find("exact: every live row scored (index 'hnsw' is not one lancelet searches: "),
            std::string::npos) << explain;
  EXPECT_NE(explain.find("vector index type 'IVF_HNSW_SQ' is not supported (IVF_FLAT and IVF_PQ are))"),
            std::string::npos) << explain;
}

TEST_F(IvfBuildTest, BadRequestsAreRefusedAndLeaveTheDatasetAsItWas) {
  auto ds = WriteClustered(tmp_.Uri("bad"), "2.2", false, data_);
  VectorIndexOptions too_many;
  too_many.num_partitions = 5000;
  VectorIndexOptions uneven;
  uneven.num_partitions = 2;
  uneven.num_sub_vectors = 5;
  VectorIndexOptions odd_at_four;
  odd_at_four.num_partitions = 2;
  odd_at_four.num_sub_vectors = 1;
  odd_at_four.num_bits = 4;
  VectorIndexOptions six_bits = odd_at_four;
  six_bits.num_bits = 6;
  struct Case {
    std::string column;
    IndexType type;
    VectorIndexOptions options;
    std::string message;
  } cases[] = {
      {"id", IndexType::kIvfFlat, {}, "column 'id' is int64: an IVF index holds vectors, a fixed_size_list<float32, dim>"},
      {"emb", IndexType::kIvfFlat, too_many,
       "index on 'emb': 5000 partitions but only 2000 vectors to index (use at most 2000 partitions)"},
      {"emb", IndexType::kIvfPq, uneven, "index on 'emb': 5 sub-vectors do not divide the dimension 16"},
      {"emb", IndexType::kIvfPq, odd_at_four,
       "index on 'emb': 4-bit PQ codes are stored two a byte, so the sub-vectors must be even, not 1"},
      {"emb", IndexType::kIvfPq, six_bits, "index on 'emb': PQ codes of 6 bits (bits must be 4 or 8)"},
  };
  for (const auto& c : cases) {
    try {
      ds->CreateIndex(c.column, c.type, c.options);
      ADD_FAILURE() << "accepted: " << c.message;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), c.message);
    }
  }
  auto now = Dataset::Open(ds->uri());
  EXPECT_EQ(now->version(), ds->version());
  EXPECT_TRUE(now->ListIndices().empty());
  const auto& s = table::StateOf(now);
  const std::string indices = s.uri + "/_indices";
  EXPECT_TRUE(!s.store->Exists(indices) || s.store->List(indices).empty());
}

// Rows appended after the index get a delta segment from OptimizeIndices, with the first
// segment's centroids and codebook, and are found through it.
TEST_F(IvfBuildTest, OptimizeAddsADeltaSegmentWithTheSameModel) {
  auto ds = WriteClustered(tmp_.Uri("delta"), "2.2", false, data_);
  VectorIndexOptions options;
  options.num_partitions = 4;
  options.num_sub_vectors = 4;
  ds = ds->CreateIndex("emb", IndexType::kIvfPq, options, "pq");
  // 300 more rows: copies of rows 0..299 shifted by 0.25 in every dimension.
  std::vector<float> more(data_.begin(), data_.begin() + 300 * kDim);
  for (float& v : more) v += 0.25f;
  FixedWidthBuilder<int64_t> id(DataType::Int64());
  const TypePtr type = DataType::FixedSizeList(DataType::Float32(), kDim);
  ListBuilder emb(type);
  for (int64_t i = 0; i < 300; ++i) {
    id.Append(kRows + i);
    for (int d = 0; d < kDim; ++d) static_cast<FixedWidthBuilder<float>&>(emb.item_builder()).Append(more[i * kDim + d]);
    emb.Append();
  }
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("id", DataType::Int64()), Field::Make("emb", type)});
  ds = ds->Append(std::vector<RecordBatchPtr>{RecordBatch::Make(schema, {id.Finish(), emb.Finish()})});
  auto optimized = ds->OptimizeIndices();
  ASSERT_EQ(optimized->version(), ds->version() + 1);
  const auto segments = optimized->IndexStats("pq");
  ASSERT_EQ(segments.size(), 2u);
  EXPECT_EQ(segments[0].rows, uint64_t(kRows));
  EXPECT_EQ(segments[1].rows, 300u);
  EXPECT_EQ(segments[1].fragments, std::vector<uint64_t>{3});
  const auto& indices = table::StateOf(optimized).indices.indices();
  auto first = table::StateOf(optimized).OpenVectorIndex(indices[0]);
  auto delta = table::StateOf(optimized).OpenVectorIndex(indices[1]);
  EXPECT_EQ(std::vector<float>(delta->centroid(0), delta->centroid(0) + 4 * kDim),
            std::vector<float>(first->centroid(0), first->centroid(0) + 4 * kDim));
  EXPECT_EQ(std::vector<float>(delta->codebook(), delta->codebook() + 256 * kDim),
            std::vector<float>(first->codebook(), first->codebook() + 256 * kDim));
  EXPECT_EQ(indices[1].index_details().value(), indices[0].index_details().value());
  const float* q = more.data() + 42 * kDim;
  EXPECT_EQ(TopIds(optimized, q, false, 4, 40), TopIds(optimized, q, true, 0, 0));
  EXPECT_EQ(TopIds(optimized, q, false, 4, 40)[0], kRows + 42);
  EXPECT_EQ(optimized->OptimizeIndices()->version(), optimized->version());
}

// The rows spilled in runs and read back partition by partition give the same bytes as
// rows kept in memory.
// A compaction that rewrites every indexed fragment: the index's segment covers no live
// fragment, and Optimize's index step gives it a segment over the rewritten rows with the
// same model, so searches stay indexed and exact as before.
TEST_F(IvfBuildTest, CompactionKeepsTheIndexServingWithItsModel) {
  auto ds = WriteClustered(tmp_.Uri("compacted"), "2.2", false, data_);
  VectorIndexOptions options;
  options.num_partitions = 8;
  ds = ds->CreateIndex("emb", IndexType::kIvfFlat, options, "flat")->Delete("id % 3 = 0");
  const auto before = table::StateOf(ds).OpenVectorIndex(Meta(ds, "flat"));
  OptimizeStats stats;
  ds = ds->Optimize({}, &stats);
  ASSERT_EQ(ds->CountFragments(), 1u);
  const auto list = ds->ListIndices();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].segments, 1u);
  EXPECT_EQ(list[0].indexed_fragments, 1u);
  EXPECT_EQ(list[0].unindexed_fragments, 0u);
  const auto after = table::StateOf(ds).OpenVectorIndex(Meta(ds, "flat"));
  EXPECT_EQ(after->num_rows(), uint64_t(kRows - (kRows + 2) / 3));
  ASSERT_EQ(after->num_partitions(), before->num_partitions());
  for (size_t p = 0; p < after->num_partitions(); ++p)
    EXPECT_EQ(std::vector<float>(after->centroid(p), after->centroid(p) + kDim),
              std::vector<float>(before->centroid(p), before->centroid(p) + kDim));
  for (int64_t qi : {1, 17, 401, 1999}) {
    const float* q = data_.data() + qi * kDim;
    EXPECT_EQ(TopIds(ds, q, false, 8, 0), TopIds(ds, q, true, 0, 0)) << qi;
  }
  VectorQuery query;
  query.column = "emb";
  query.vector.assign(data_.begin() + kDim, data_.begin() + 2 * kDim);
  query.nprobes = 8;
  EXPECT_NE(ds->ExplainSearch(query).find("searched flat: 0 fragments"), std::string::npos) << ds->ExplainSearch(query);
}

// (id, _distance) of each row a search returns, in order (the query's columns: id).
std::vector<std::pair<int64_t, float>> IdsAndDistances(const DatasetPtr& ds, const VectorQuery& query) {
  std::vector<std::pair<int64_t, float>> out;
  auto reader = ds->Search(query);
  while (auto batch = reader->Next())
    for (int64_t i = 0; i < batch->num_rows(); ++i)
      out.emplace_back(batch->column(0)->values<int64_t>()[i], batch->column(1)->values<float>()[i]);
  return out;
}

// Every row a search through the index finds (k = all rows): id and distance, nearest first.
std::vector<std::pair<int64_t, float>> Found(const DatasetPtr& ds, const float* q, int64_t nprobes,
                                             const std::string& where = "") {
  VectorQuery query;
  query.column = "emb";
  query.vector.assign(q, q + kDim);
  query.k = kRows;
  query.nprobes = nprobes;
  query.filter = where;
  query.columns = std::vector<std::string>{"id"};
  return IdsAndDistances(ds, query);
}

bool HasId(const std::vector<std::pair<int64_t, float>>& found, int64_t id) {
  return std::any_of(found.begin(), found.end(), [&](const auto& f) { return f.first == id; });
}

// A row overlaid after the index was built is re-scored in the partition its new vector
// falls in (the partition a query at that vector probes first), not in the one it left,
// with and without a prefilter; probing every partition finds it wherever it went.
TEST_F(IvfBuildTest, StaleRowsAreScoredWhereTheirNewVectorsLie) {
  auto ds = WriteClustered(tmp_.Uri("stale"), "2.2", false, data_);
  VectorIndexOptions options;
  options.num_partitions = 8;
  ds = ds->CreateIndex("emb", IndexType::kIvfFlat, options, "flat");
  const auto ivf = table::StateOf(ds).OpenVectorIndex(Meta(ds, "flat"));
  auto partition_of = [&](int64_t row) {
    return ivf->NearestPartitions(ivf->Prepare({data_.data() + row * kDim, size_t(kDim)}), 1).front();
  };
  int64_t far = 6;
  while (partition_of(far) == partition_of(5)) ++far;
  ds = ds->Update({{"emb", VectorText(data_.data() + far * kDim, kDim)}}, "id = 5", nullptr, UpdateMode::kOverlay);
  for (const std::string where : {"", "id >= 0"}) {
    const auto there = Found(ds, data_.data() + far * kDim, 1, where);
    ASSERT_GE(there.size(), 2u) << where;
    EXPECT_EQ(there[0], std::make_pair(int64_t(5), 0.f)) << where;
    EXPECT_EQ(there[1], std::make_pair(far, 0.f)) << where;
    EXPECT_FALSE(HasId(Found(ds, data_.data() + 5 * kDim, 1, where), 5)) << where;
    EXPECT_TRUE(HasId(Found(ds, data_.data() + 5 * kDim, 8, where), 5)) << where;
  }
  VectorQuery query;
  query.vector.assign(data_.begin(), data_.begin() + kDim);
  query.nprobes = 1;
  EXPECT_NE(ds->ExplainSearch(query).find("re-scored exactly: 1 stale row "), std::string::npos)
      << ds->ExplainSearch(query);
}

// The k nearest of a search: id and distance, nearest first.
std::vector<std::pair<int64_t, float>> Nearest(const DatasetPtr& ds, const float* q, int64_t k, bool exact,
                                               const std::string& where = "", int64_t refine = 0) {
  VectorQuery query;
  query.column = "emb";
  query.vector.assign(q, q + kDim);
  query.k = k;
  query.nprobes = 8;
  query.exact = exact;
  query.filter = where;
  if (!exact && refine) query.refine_factor = refine;
  query.columns = std::vector<std::string>{"id"};
  return IdsAndDistances(ds, query);
}

// A third of the rows overlaid (with their own vectors) after an IVF_FLAT build: far
// more stale rows in each probed partition than k. Without a filter a search keeps only
// the k nearest stale rows as it probes; with one (every row passes) it keeps them all
// for the filter's scan. Probing every partition, both give exact search's k nearest,
// ids and distances, at k 1, 10 and 50.
TEST_F(IvfBuildTest, ManyStaleRowsGiveExactSearchsNearest) {
  auto ds = WriteClustered(tmp_.Uri("many_stale"), "2.2", false, data_);
  VectorIndexOptions options;
  options.num_partitions = 8;
  ds = ds->CreateIndex("emb", IndexType::kIvfFlat, options, "flat");
  ds = ds->Update({{"emb", "emb"}}, "id % 3 = 1", nullptr, UpdateMode::kOverlay);
  VectorQuery explain;
  explain.vector.assign(data_.begin(), data_.begin() + kDim);
  EXPECT_NE(ds->ExplainSearch(explain).find("re-scored exactly: 667 stale rows "), std::string::npos)
      << ds->ExplainSearch(explain);
  for (int64_t qi : {1, 4, 700, 1998})
    for (int64_t k : {1, 10, 50}) {
      const float* q = data_.data() + qi * kDim;
      const auto want = Nearest(ds, q, k, true);
      ASSERT_EQ(want.size(), size_t(k));
      EXPECT_EQ(Nearest(ds, q, k, false), want) << qi << " " << k;
      EXPECT_EQ(Nearest(ds, q, k, false, "id >= 0"), want) << qi << " " << k;
    }
}

// IVF_PQ with a third of the rows stale: a probe scores the index's rows less the stale
// ones (a copy made once per version) and the stale rows exactly. Probing every
// partition, the candidates are the 1333 rows not stale, and with a refine factor that
// re-ranks every candidate the answer is exact search's, with and without a filter.
TEST_F(IvfBuildTest, PqProbesScoreTheRowsLessTheStaleOnes) {
  auto ds = WriteClustered(tmp_.Uri("pq_stale"), "2.2", false, data_);
  VectorIndexOptions options;
  options.num_partitions = 8;
  options.num_sub_vectors = 4;
  ds = ds->CreateIndex("emb", IndexType::kIvfPq, options, "pq");
  ds = ds->Update({{"emb", "emb"}}, "id % 3 = 1", nullptr, UpdateMode::kOverlay);
  VectorQuery explain;
  explain.vector.assign(data_.begin(), data_.begin() + kDim);
  explain.nprobes = 8;
  const std::string plan = ds->ExplainSearch(explain);
  EXPECT_NE(plan.find("rows in the probed partitions: 2000; candidates live, current and passing the prefilter: 1333"),
            std::string::npos) << plan;
  EXPECT_NE(plan.find("re-scored exactly: 667 stale rows "), std::string::npos) << plan;
  for (int64_t qi : {1, 5, 999}) {
    const float* q = data_.data() + qi * kDim;
    const auto want = Nearest(ds, q, 10, true);
    EXPECT_EQ(Nearest(ds, q, 10, false, "", 200), want) << qi;
    EXPECT_EQ(Nearest(ds, q, 10, false, "id >= 0", 200), want) << qi;
  }
}

// Candidates offered straight to the top-k (no prefilter, no deletions) and those kept
// for the prefilter's scan give the same answer: a filter every row passes changes none.
TEST_F(IvfBuildTest, AFilterEveryRowPassesChangesNoAnswer) {
  auto ds = WriteClustered(tmp_.Uri("direct"), "2.2", false, data_);
  VectorIndexOptions options;
  options.num_partitions = 8;
  options.num_sub_vectors = 4;
  ds = ds->CreateIndex("emb", IndexType::kIvfPq, options, "pq");
  for (int64_t qi : {0, 333, 1999})
    for (int64_t nprobes : {1, 3, 8}) {
      const auto direct = Found(ds, data_.data() + qi * kDim, nprobes);
      EXPECT_GT(direct.size(), 100u);
      EXPECT_EQ(direct, Found(ds, data_.data() + qi * kDim, nprobes, "id >= 0")) << qi << " " << nprobes;
    }
}

// Random overlay updates, deletions, appends, index optimizes and compactions after the
// index was built: with every partition probed, IVF_FLAT search through the index (stale
// rows re-scored, uncovered fragments searched flat) returns exactly what exact search does.
TEST_F(IvfBuildTest, ChangesAfterTheIndexNeverChangeWhatAFullProbeFinds) {
  auto ds = WriteClustered(tmp_.Uri("differential"), "2.2", false, data_);
  VectorIndexOptions options;
  options.num_partitions = 8;
  ds = ds->CreateIndex("emb", IndexType::kIvfFlat, options, "flat");
  std::mt19937_64 random(7);
  int64_t next_id = kRows;
  // Where moved rows went and came from: queries there find them if anywhere.
  std::vector<int64_t> watched;
  for (int step = 0; step < 16; ++step) {
    std::string did;
    switch (random() % 5) {
      case 0:
      case 1: {  // a vector moved onto another row's, through an overlay
        const int64_t row = int64_t(random() % uint64_t(next_id)), from = int64_t(random() % kRows);
        ds = ds->Update({{"emb", VectorText(data_.data() + from * kDim, kDim)}}, fmt::format("id = {}", row), nullptr,
                        UpdateMode::kOverlay);
        did = fmt::format("row {} moved onto row {}'s vector", row, from);
        watched.insert(watched.end(), {from, row % kRows});
        break;
      }
      case 2:
        ds = ds->Delete(fmt::format("id % 17 = {}", random() % 17));
        did = "a deletion";
        break;
      case 3:
        ds = ds->Append(std::vector<RecordBatchPtr>{ClusteredBatch(next_id, 150, false, data_)});
        next_id += 150;
        did = "an append";
        break;
      default:
        ds = random() % 2 ? ds->OptimizeIndices() : ds->Optimize();
        did = "an optimize";
    }
    std::vector<int64_t> queries(watched.end() - std::min<ptrdiff_t>(6, ptrdiff_t(watched.size())), watched.end());
    queries.push_back(int64_t(random() % kRows));
    for (int64_t qi : queries) {
      const float* q = data_.data() + qi * kDim;
      ASSERT_EQ(TopIds(ds, q, false, 8, 0), TopIds(ds, q, true, 0, 0)) << "step " << step << ", after " << did;
    }
  }
}

TEST_F(IvfBuildTest, SpillingRunsChangesNoByte) {
  index::KMeansParams params;
  params.k = 4;
  const auto model = index::TrainKMeans(data_.data(), size_t(kRows), kDim, params);
  index::PqParams pq_params;
  pq_params.num_sub_vectors = 4;
  const auto pq = index::TrainPq(data_.data(), size_t(kRows), kDim, &model, pq_params);
  std::vector<uint64_t> ids(kRows);
  std::iota(ids.begin(), ids.end(), 100);
  auto [store, root] = io::OpenStore(tmp_.RootUri());
  std::string bytes[2];
  for (int spill = 0; spill < 2; ++spill) {
    const std::string dir = root + fmt::format("/w{}", spill);
    store->CreateDir(dir);
    index::IvfWriter writer(*store, dir, format::FileVersion{2, 2}, index::IvfKind::kPq, model, pq,
                            spill ? 1024 : index::IvfWriter::kDefaultMemoryBudget);
    for (int64_t at = 0; at < kRows; at += 300) {
      const size_t n = size_t(std::min<int64_t>(300, kRows - at));
      writer.Add(data_.data() + at * kDim, n, ids.data() + at);
    }
    const auto files = writer.Finish();
    EXPECT_EQ(writer.rows(), uint64_t(kRows));
    bytes[spill] = store->OpenRead(dir + "/auxiliary.idx")->ReadAll();
    EXPECT_EQ(files[0].size, bytes[spill].size());
    EXPECT_EQ(store->List(dir).size(), 2u) << "runs left behind";
  }
  EXPECT_EQ(bytes[0], bytes[1]);
}

}  // namespace
}  // namespace lancelet::testing
