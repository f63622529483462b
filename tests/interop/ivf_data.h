// Seeded clustered vectors for the IVF interop tests: `clusters` centres spread over
// [-4, 4) per dimension, each row a centre plus noise in [-1, 1): partitions then have a
// structure k-means finds, as real embeddings do, and near-ties between distances are
// rare.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "lancelet/builder.h"
#include "lancelet/ipc.h"
#include "support/test_env.h"

namespace lancelet::testing {

inline float IvfNoise(uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return float((state >> 40) & 0xffffff) / float(1 << 23) - 1.f;
}

// rows x dim values, row-major.
inline std::vector<float> ClusteredVectors(int64_t rows, int dim, int clusters, uint64_t seed) {
  uint64_t state = seed;
  std::vector<float> centres(size_t(clusters) * dim);
  for (float& c : centres) c = 4.f * IvfNoise(state);
  std::vector<float> out(size_t(rows) * dim);
  for (int64_t r = 0; r < rows; ++r) {
    const int cluster = int((state >> 33) % uint64_t(clusters));
    for (int d = 0; d < dim; ++d) out[size_t(r) * dim + d] = centres[size_t(cluster) * dim + d] + IvfNoise(state);
  }
  return out;
}

// An Arrow IPC file of columns id (int64, first_id...) and emb (fixed_size_list<float32, dim>).
inline void WriteVectorsIpc(const std::string& path, const std::vector<float>& values, int dim, int64_t first_id = 0) {
  FixedWidthBuilder<int64_t> id(DataType::Int64());
  const TypePtr type = DataType::FixedSizeList(DataType::Float32(), dim);
  ListBuilder emb(type);
  auto& items = static_cast<FixedWidthBuilder<float>&>(emb.item_builder());
  const int64_t rows = int64_t(values.size()) / dim;
  for (int64_t i = 0; i < rows; ++i) {
    id.Append(first_id + i);
    for (int d = 0; d < dim; ++d) items.Append(values[size_t(i) * dim + d]);
    emb.Append();
  }
  Schema schema({Field::Make("id", DataType::Int64()), Field::Make("emb", type)});
  auto batch = RecordBatch::Make(std::make_shared<Schema>(schema), {id.Finish(), emb.Finish()});
  WriteStringToFile(path, WriteIpcFile(schema, {batch}));
}

inline std::string VectorText(const float* v, int dim) {
  std::string text = "[";
  for (int d = 0; d < dim; ++d) text += (d ? ", " : "") + fmt::format("{}", v[d]);
  return text + "]";
}

}  // namespace lancelet::testing
