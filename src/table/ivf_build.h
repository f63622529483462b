// Building one IVF_FLAT / IVF_PQ index segment over a dataset version (Dataset::CreateIndex
// with a vector IndexType): two passes over the column, the first drawing a seeded
// sample (reservoir sampling, so the row count need not be known) that trains the
// partition centroids and the PQ codebook, the second assigning and encoding every row
// into index::IvfWriter, which keeps memory bounded. NULL vectors are not indexed, as
// the reference does (lance 12.0.0 indexes a column with NULLs and skips them).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>

#include "format/lance_schema.h"
#include "lancelet/dataset.h"
#include "table.pb.h"
#include "table/attempt_files.h"
#include "table/dataset_state.h"

namespace lancelet::table {

bool IsVectorIndexType(IndexType type);

// The column `column` names, if a vector index can be built on it: a fixed_size_list of
// float32 (InvalidArgument in one line otherwise, or NotFound).
format::StructPath VectorIndexField(const DatasetState& s, const std::string& column);

// Writes the segment's files under _indices/<uuid>/ (recorded in `attempt`) and returns
// its IndexMetadata (VectorIndexDetails, files with sizes, fragment_bitmap, version).
lance::table::IndexMetadata BuildIvfSegment(const std::shared_ptr<const DatasetState>& state,
                                            const format::StructPath& path, IndexType type,
                                            const VectorIndexOptions& options, const std::string& name,
                                            const std::set<uint64_t>& fragments, AttemptFiles& attempt);

// A segment over `fragments` assigned and encoded with the model (centroids, PQ codebook)
// of the existing segment `model_of`, which must cover a live fragment: the delta segment
// the reference's optimize adds for appended fragments. Nullopt when that model cannot be
// read by lancelet (a 4-bit PQ index): the fragments then stay searched exactly.
std::optional<lance::table::IndexMetadata> BuildIvfDeltaSegment(const std::shared_ptr<const DatasetState>& state,
                                                                const format::StructPath& path,
                                                                const lance::table::IndexMetadata& model_of,
                                                                const std::set<uint64_t>& fragments,
                                                                AttemptFiles& attempt);

// Fills a vector index's type ("IVF_FLAT", "IVF_PQ") and parameters from its files.
void DescribeVectorIndex(const DatasetState& s, const lance::table::IndexMetadata& meta, IndexInfo& info);

}  // namespace lancelet::table
