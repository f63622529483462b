// Dataset::CreateIndex, DropIndex and ListIndices: building index segments and
// committing them as the reference does, in a CreateIndex transaction.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "array/ascii_case.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "index/index_builder.h"
#include "table/attempt_files.h"
#include "table/commit.h"
#include "table/feature_flags.h"
#include "table/index_build.h"
#include "table/index_plan.h"
#include "table/index_section.h"
#include "table/index_staleness.h"
#include "index/ivf_index.h"
#include "table/ivf_build.h"
#include "table/manifest_store.h"
#include "table/scan_plan.h"

namespace lancelet {

const char* IndexTypeName(IndexType type) {
  switch (type) {
    case IndexType::kBTree: return "BTREE";
    case IndexType::kBitmap: return "BITMAP";
    case IndexType::kIvfFlat: return "IVF_FLAT";
    case IndexType::kIvfPq: return "IVF_PQ";
  }
  return "?";
}

std::optional<IndexType> IndexTypeNamed(std::string_view name) {
  for (IndexType t : {IndexType::kBTree, IndexType::kBitmap, IndexType::kIvfFlat, IndexType::kIvfPq})
    if (EqualsIgnoringAsciiCase(name, IndexTypeName(t))) return t;
  return std::nullopt;
}

namespace {

// Every IndexType by name (-Wswitch makes a new one a compile error here until it is
// mapped); a value outside the enum is refused rather than built as something else.
index::IndexKind KindOf(IndexType type) {
  switch (type) {
    case IndexType::kBTree: return index::IndexKind::kBTree;
    case IndexType::kBitmap: return index::IndexKind::kBitmap;
    case IndexType::kIvfFlat:
    case IndexType::kIvfPq: break;  // built by table/ivf_build.h
  }
  ThrowNotSupported("index type {} is not one lancelet builds (BTree, Bitmap)", int(type));
}

std::shared_ptr<const table::DatasetState> CommitIndexChange(const std::shared_ptr<const table::DatasetState>& state,
                                                             lance::table::Transaction t) {
  return table::Commit(state->store, state->uri, state, std::move(t), table::CommitOptions{});
}

// Writes one segment of index `name` on `field` over the live rows of `fragments` (every
// row's current value, with its address or stable row id) and returns its metadata. The
// segment's directory, and _indices/ when this makes it, are recorded in `attempt`.
lance::table::IndexMetadata BuildSegment(const std::shared_ptr<const table::DatasetState>& state,
                                         const format::StructPath& path, index::IndexKind kind,
                                         const std::string& name, const std::set<uint64_t>& fragments,
                                         table::AttemptFiles& attempt) {
  const table::DatasetState& s = *state;
  const format::LanceField& field = *path.field;
  const bool row_ids = s.manifest.reader_feature_flags() & table::kFlagStableRowIds;
  const char* id_column = row_ids ? table::kRowIdColumn : table::kRowAddrColumn;
  ScanSpec spec = table::RowsWhere(std::vector<std::string>{s.schema.fields()[path.top].name, id_column}, "");
  spec.fragments = fragments;
  table::ScanPlan plan(state, spec);
  const std::string uuid = table::NewUuid();
  lance::table::IndexMetadata meta;
  meta.mutable_uuid()->set_uuid(table::UuidBytes(uuid));
  meta.add_fields(field.id);
  meta.set_name(name);
  meta.set_dataset_version(s.version());  // the version the values were read from
  format::RoaringBitmap covered;
  for (uint64_t f : fragments) covered.Add(uint32_t(f));
  meta.set_fragment_bitmap(covered.SerializePortable(format::RoaringBitmap::RunContainers::kNone));
  meta.mutable_index_details()->set_type_url(index::TypeUrl(kind));
  meta.set_index_version(0);
  meta.set_created_at(uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count()));
  const std::string indices_dir = io::JoinPath(s.uri, table::kIndicesDir);
  const std::string dir = io::JoinPath(indices_dir, uuid);
  if (!s.store->Exists(indices_dir)) attempt.AddDirectory(indices_dir);
  s.store->CreateDir(indices_dir);
  attempt.AddOwnDirectory(dir);
  s.store->CreateDir(dir);
  // Streamed: the builder spills sorted runs past its memory budget.
  index::IndexBuilder builder(*s.store, dir, kind, s.WriteVersion(), field.type);
  plan.ForEachBatch([&](const table::FragmentBatch& b) {
    auto out = plan.Project(*b.batch);
    ArrayPtr values = out->column(0);
    for (int child : path.children) values = StructChild(*values, child);
    builder.Add(values, std::span(out->column(1)->values<uint64_t>(), size_t(out->num_rows())));
    return true;
  });
  for (const auto& file : builder.Finish()) {
    auto* f = meta.add_files();
    f->set_path(file.name);
    f->set_size_bytes(file.size);
  }
  return meta;
}

// The field `column` names: a top-level column, or a struct field as "a.b".
format::StructPath IndexableField(const table::DatasetState& s, const std::string& column, index::IndexKind kind) {
  auto path = s.schema.StructPathNamed(column);
  if (!path) ThrowNotFound("no column '{}' in dataset '{}' to index (columns: {}; a struct field is named as a.b)",
                           column, s.uri, s.arrow_schema->ToString());
  if (!index::CanIndex(*path->field->type))
    ThrowNotSupported("column '{}' is {}: a {} index holds numbers, strings, binary, booleans, dates and timestamps",
                      column, path->field->type->ToString(), index::KindName(kind));
  return std::move(*path);
}

// A name given for an index is an identifier, or dotted identifiers (as a default name
// on a struct field, "s.a_idx"): names travel through SQL, listings and other tools, and
// '/' or '..' in one reads like a path.
void CheckIndexName(const std::string& name) {
  constexpr size_t kMaxLength = 128;
  bool ok = !name.empty() && name.size() <= kMaxLength;
  bool part_start = true;
  for (char c : name) {
    const bool letter = std::isalpha(static_cast<unsigned char>(c)) || c == '_';
    const bool digit = std::isdigit(static_cast<unsigned char>(c));
    if (c == '.') {
      ok &= !part_start;
      part_start = true;
      continue;
    }
    ok &= letter || (digit && !part_start);
    part_start = false;
  }
  if (!ok || part_start)
    ThrowInvalid("index name '{}': expected an identifier (letters, digits and '_', not starting with a digit; "
                 "parts joined by '.'), at most {} characters",
                 EscapeForMessage(name), kMaxLength);
}

using StatePtr = std::shared_ptr<const table::DatasetState>;

StatePtr CreateIndexAt(const StatePtr& state, const std::string& column, IndexType type,
                       const VectorIndexOptions& options, const std::string& name_in, bool replace) {
  const table::DatasetState& s = *state;
  const bool vector = table::IsVectorIndexType(type);
  const format::StructPath field =
      vector ? table::VectorIndexField(s, column) : IndexableField(s, column, KindOf(type));
  const std::string name = name_in.empty() ? field.name + "_idx" : name_in;
  return table::BuildAndCommit(state, {}, [&](lance::table::Transaction& t, table::AttemptFiles& attempt) {
    auto* create = t.mutable_create_index();
    for (const auto& existing : s.indices.indices()) {
      if (existing.name() != name) continue;
      if (!replace) ThrowInvalid("dataset '{}' already has an index named '{}' (replace it, or choose another name)",
                                 s.uri, name);
      *create->add_removed_indices() = existing;
    }
    std::set<uint64_t> fragments;
    for (const auto& f : s.manifest.fragments()) fragments.insert(f.id());
    *create->add_new_indices() = vector
                                     ? table::BuildIvfSegment(state, field, type, options, name, fragments, attempt)
                                     : BuildSegment(state, field, KindOf(type), name, fragments, attempt);
    return true;
  });
}

// Adds to `t` a segment of each index over the live fragments none of its segments
// covers. False when every index covers every fragment.
bool AddMissingSegments(const StatePtr& state, lance::table::Transaction& t, table::AttemptFiles& attempt) {
  const table::DatasetState& s = *state;
  std::set<std::string> done;
  for (const auto& meta : s.indices.indices()) {
    auto kind = index::KindOfTypeUrl(meta.index_details().type_url());
    const bool vector = index::IsVectorIndexTypeUrl(meta.index_details().type_url());
    if ((!kind && !vector) || meta.fields_size() != 1 || !done.insert(meta.name()).second) continue;
    const auto field = s.schema.StructPathOf(meta.fields(0));
    if (!field) continue;
    // The live fragments no segment of this index covers.
    std::set<uint64_t> uncovered;
    for (const auto& f : s.manifest.fragments()) uncovered.insert(f.id());
    for (const auto& segment : s.indices.indices()) {
      if (segment.name() != meta.name()) continue;
      const auto covered = table::IndexFragments(segment);
      if (!covered) {
        uncovered.clear();  // no bitmap: it covers every fragment
        break;
      }
      for (auto it = uncovered.begin(); it != uncovered.end();)
        it = covered->Contains(uint32_t(*it)) ? uncovered.erase(it) : std::next(it);
    }
    if (uncovered.empty()) continue;
    // A vector index's new segment reuses the model (centroids, codebook) of a segment
    // still covering a live fragment, else of any of its segments: a compaction that
    // rewrote every fragment changed no vector, so the old model partitions the rewritten
    // rows as it did the originals, and the index keeps serving.
    const lance::table::IndexMetadata* model = nullptr;
    for (const auto& segment : s.indices.indices()) {
      if (!vector || segment.name() != meta.name()) continue;
      const auto covered = table::IndexFragments(segment);
      if (!model) model = &segment;
      if (covered && std::any_of(s.manifest.fragments().begin(), s.manifest.fragments().end(),
                                 [&](const auto& f) { return covered->Contains(uint32_t(f.id())); }))
        model = &segment;
    }
    // Segments left covering no live fragment (their fragments were rewritten or their
    // columns folded) go in the same commit, as the reference's optimize does.
    for (const auto& segment : s.indices.indices()) {
      if (segment.name() != meta.name()) continue;
      const auto covered = table::IndexFragments(segment);
      if (covered && std::none_of(s.manifest.fragments().begin(), s.manifest.fragments().end(),
                                  [&](const auto& f) { return covered->Contains(uint32_t(f.id())); }))
        *t.mutable_create_index()->add_removed_indices() = segment;
    }
    if (!vector) {
      *t.mutable_create_index()->add_new_indices() = BuildSegment(state, *field, *kind, meta.name(), uncovered, attempt);
      continue;
    }
    if (auto delta = table::BuildIvfDeltaSegment(state, *field, *model, uncovered, attempt))
      *t.mutable_create_index()->add_new_indices() = std::move(*delta);
  }
  return t.has_create_index();
}

// Null when every index covers every fragment.
StatePtr OptimizeIndicesAt(const StatePtr& state) {
  return table::BuildAndCommit(state, {}, [&](lance::table::Transaction& t, table::AttemptFiles& attempt) {
    return AddMissingSegments(state, t, attempt);
  });
}

}  // namespace

namespace table {
lance::table::IndexMetadata BuildScalarSegment(const StatePtr& state, const std::string& column, IndexType type,
                                      const std::string& name, const std::set<uint64_t>& fragments,
                                      AttemptFiles& attempt) {
  const index::IndexKind kind = KindOf(type);
  return BuildSegment(state, IndexableField(*state, column, kind), kind, name, fragments, attempt);
}
}  // namespace table

// Index changes are built from one version and recomputed from the latest when that one
// cannot be checked against what came after it (a concurrent cleanup removed versions).
DatasetPtr Dataset::CreateIndex(const std::string& column, IndexType type, const std::string& name_in,
                                bool replace) const {
  return CreateIndex(column, type, VectorIndexOptions{}, name_in, replace);
}

DatasetPtr Dataset::CreateIndex(const std::string& column, IndexType type, const VectorIndexOptions& options,
                                const std::string& name_in, bool replace) const {
  if (!name_in.empty()) CheckIndexName(name_in);
  StatePtr state = state_;
  return table::MakeDataset(table::UntilCommitted(state, "index create", [&](const StatePtr& s) {
    return CreateIndexAt(s, column, type, options, name_in, replace);
  }));
}

DatasetPtr Dataset::OptimizeIndices() const {
  StatePtr state = state_;
  auto committed = table::UntilCommitted(state, "index optimize", OptimizeIndicesAt);
  return committed ? table::MakeDataset(committed) : shared_from_this();
}

DatasetPtr Dataset::DropIndex(const std::string& name) const {
  StatePtr state = state_;
  return table::MakeDataset(table::UntilCommitted(state, "index drop", [&](const StatePtr& s) {
    lance::table::Transaction t;
    for (const auto& existing : s->indices.indices())
      if (existing.name() == name) *t.mutable_create_index()->add_removed_indices() = existing;
    if (!t.has_create_index()) ThrowNotFound("dataset '{}' has no index named '{}'", s->uri, name);
    return CommitIndexChange(s, std::move(t));
  }));
}

namespace {

// The rows of `fragment` overlays changed after the index was built.
uint64_t StaleRows(const table::DatasetState& s, const lance::table::DataFragment& fragment,
                   const lance::table::IndexMetadata& meta) {
  if (fragment.overlays_size() == 0) return 0;
  return table::IndexStaleness::Of(s.schema, meta).RowsOf(*s.OverlaysOf(fragment)).Cardinality();
}

}  // namespace

std::vector<IndexInfo> Dataset::ListIndices() const {
  const table::DatasetState& s = *state_;
  std::vector<IndexInfo> out;
  std::map<std::string, size_t> by_name;
  std::map<std::string, std::set<uint64_t>> covered;
  for (const auto& meta : s.indices.indices()) {
    if (meta.name().rfind("__", 0) == 0) continue;  // system indexes (__lance_frag_reuse, ...)
    auto [it, inserted] = by_name.emplace(meta.name(), out.size());
    if (inserted) {
      IndexInfo info;
      info.name = meta.name();
      auto kind = index::KindOfTypeUrl(meta.index_details().type_url());
      info.type = kind ? index::KindName(*kind) : meta.index_details().type_url();
      if (index::IsVectorIndexTypeUrl(meta.index_details().type_url())) table::DescribeVectorIndex(s, meta, info);
      for (int32_t id : meta.fields())
        if (const auto path = s.schema.StructPathOf(id)) info.columns.push_back(path->name);
      info.dataset_version = meta.dataset_version();
      out.push_back(std::move(info));
    }
    IndexInfo& info = out[it->second];
    ++info.segments;
    info.dataset_version = std::min(info.dataset_version, meta.dataset_version());
    const auto fragments = table::IndexFragments(meta);
    for (const auto& f : s.manifest.fragments()) {
      if (fragments && !fragments->Contains(uint32_t(f.id()))) continue;
      covered[meta.name()].insert(f.id());
      info.stale_rows += StaleRows(s, f, meta);
    }
  }
  for (auto& info : out) {
    info.indexed_fragments = covered[info.name].size();
    info.unindexed_fragments = uint64_t(s.manifest.fragments_size()) - info.indexed_fragments;
  }
  return out;
}

std::vector<IndexSegmentInfo> Dataset::IndexStats(const std::string& name) const {
  const table::DatasetState& s = *state_;
  std::vector<IndexSegmentInfo> out;
  for (const auto& meta : s.indices.indices()) {
    if (meta.name() != name) continue;
    IndexSegmentInfo info;
    info.uuid = table::UuidText(meta.uuid().uuid());
    info.dataset_version = meta.dataset_version();
    const auto fragments = table::IndexFragments(meta);
    info.covers_every_fragment = !fragments;
    if (fragments) fragments->ForEach([&](uint32_t f) { info.fragments.push_back(f); });
    for (const auto& file : meta.files()) info.bytes += file.size_bytes();
    if (auto kind = index::KindOfTypeUrl(meta.index_details().type_url()))
      info.rows = s.OpenIndex(meta, *kind)->num_rows();
    else if (index::IsVectorIndexTypeUrl(meta.index_details().type_url()) &&
             index::IsReadableVectorIndexType(index::VectorIndexTypeOf(*s.store, s.IndexDirectory(meta))))
      info.rows = s.OpenVectorIndex(meta)->num_rows();
    for (const auto& f : s.manifest.fragments())
      if (!fragments || fragments->Contains(uint32_t(f.id()))) info.stale_rows += StaleRows(s, f, meta);
    out.push_back(std::move(info));
  }
  if (out.empty()) ThrowNotFound("dataset '{}' has no index named '{}'", s.uri, name);
  return out;
}

std::string Dataset::Explain(const std::string& predicate) const {
  return Explain(predicate.empty() ? nullptr : ParseExpression(predicate));
}

std::string Dataset::Explain(const ExprPtr& filter) const {
  const table::DatasetState& s = *state_;
  // Planned as a scan plans it, so a filter a scan refuses is refused here in the same words.
  ScanSpec bound_only = table::RowsWhere(std::vector<std::string>{}, filter, 1);
  bound_only.use_index = false;
  if (filter) table::ScanPlanner::Plan(state_, bound_only);
  std::string out = fmt::format("filter: {}\n", filter ? ToString(*filter) : "none");
  std::optional<table::IndexedRows> indexed;
  if (filter) indexed = table::PlanIndexedRows(s, *filter, true);
  uint64_t candidates = 0;
  if (indexed) {
    for (const auto& use : indexed->uses)
      out += fmt::format("index {}: {}: {} hits in {} fragments; {} rows changed since it was built, {} of them "
                         "re-evaluated\n",
                         use.index, use.predicate, use.hits, use.fragments, use.stale, use.stale_matching);
    for (const auto& [fragment, rows] : indexed->candidates) candidates += rows.size();
  }
  const uint64_t narrowed = indexed ? indexed->candidates.size() : 0;
  out += fmt::format("read: {} candidate rows in {} fragments through indexes, {} fragments scanned whole\n",
                     candidates, narrowed, uint64_t(s.manifest.fragments_size()) - narrowed);
  return out;
}

}  // namespace lancelet
