// Nearest-neighbour search over a vector column (fixed_size_list<float16 | float32 |
// float64> or, for hamming, fixed_size_list<uint8>): through the column's IVF_FLAT or
// IVF_PQ index when it has one (float32 vectors, the index's metric) and the query does
// not ask for `exact`; otherwise exact (flat), every live row scored. An indexed search
// probes the `nprobes` partitions nearest the query; rows of fragments the index does
// not cover are scored exactly and merged, and so are rows whose vectors overlays
// changed after the index was built when their current vectors lie in a probed
// partition (the one nearest each, as a build now would place it). Metrics as the
// reference defines them: L2 is the squared Euclidean distance, cosine 1 - cos, dot 1 -
// the inner product (lance-linalg's dot_distance, which ranks as the negative inner
// product), hamming the bit count of a ^ b.
//
//   lancelet::VectorQuery q;
//   q.column = "emb"; q.vector = {0.1, 0.2, ...}; q.k = 10; q.filter = "category = 'a'";
//   auto reader = ds->Search(q);  // the other columns, then "_distance", nearest first
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lancelet/dataset.h"
#include "lancelet/expr.h"

namespace lancelet {

enum class DistanceType { kL2, kCosine, kDot, kHamming };
const char* DistanceTypeName(DistanceType type);  // "l2", "cosine", "dot", "hamming"
// "l2" (or "euclidean"), "cosine", "dot", "hamming", any case; InvalidArgument otherwise.
DistanceType ParseDistanceType(const std::string& text);

struct VectorQuery {
  std::string column;  // the vector column; empty: the schema's only vector column
  std::vector<double> vector;  // the query, one value per dimension (0..255 for hamming)
  int64_t k = 10;  // rows returned (fewer when fewer qualify)
  // nullopt: l2 on float columns, hamming on uint8 ones.
  std::optional<DistanceType> distance = std::nullopt;
  // Rows where it is not TRUE are dropped. A prefilter unless `postfilter`: the top k of
  // the rows it keeps (served by a scalar index through the scan when one applies).
  std::string filter;
  ExprPtr filter_expr = nullptr;  // the same, bound; wins over `filter` when set
  // The filter applied to the k nearest rows, so fewer than k may come back (as the
  // reference does).
  bool postfilter = false;
  // Columns to return, in order; nullopt: every field but the vector column. "_distance"
  // is always appended (or kept at its place when listed).
  std::optional<std::vector<std::string>> columns = std::nullopt;
  // Score every row even when the column has a vector index.
  bool exact = false;
  // Indexed search: how many partitions to probe (nullopt: 20, as the reference's
  // default minimum; at most the index's partitions), and refine_factor: re-rank the
  // k * refine_factor nearest by the index with the rows' own vectors (nullopt: no
  // re-rank; IVF_PQ distances are then the codes' estimates, as the reference returns).
  std::optional<int64_t> nprobes = std::nullopt;
  std::optional<int64_t> refine_factor = std::nullopt;
  // Batch size of the returned reader.
  int64_t batch_size = 8192;
};

// The one vector column of `schema` (fixed_size_list of a float type or uint8), its name;
// InvalidArgument naming the candidates when there are none or several.
std::string DefaultVectorColumn(const Schema& schema);

}  // namespace lancelet
