// Compaction: planning, folding and merging overlays, rewriting fragments, and the
// Dataset methods that commit them (Optimize, PlanOptimize, MergeOverlays).
#include "table/compaction.h"

#include <malloc.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "format/lance_file.h"
#include "format/row_id_sequence.h"
#include "format/value_bytes.h"
#include "lancelet/error.h"
#include "overlay/patch.h"
#include "table/commit.h"
#include "table/feature_flags.h"
#include "table/fragment_reader.h"
#include "table/fragment_writer.h"
#include "table/index_section.h"
#include "table/index_staleness.h"
#include "table/manifest_store.h"
#include "table/overlay_file.h"

// jemalloc's control entry point; null unless the program links jemalloc.
extern "C" int mallctl(const char* name, void* old_value, size_t* old_size, void* new_value, size_t new_size)
    __attribute__((weak));

namespace lancelet::table {

namespace {

using lance::table::DataFragment;

// Rows per batch so that a batch of `fields` stays near 16 MiB (a 768-d float vector
// column reads ~5k rows at a time, an int column 64k).
uint64_t BatchRows(const DatasetState& state, const std::vector<size_t>& fields) {
  uint64_t row_bytes = 0;
  for (size_t f : fields) row_bytes += format::EstimatedValueBytes(*state.schema.fields()[f].type);
  return std::clamp<uint64_t>((16u << 20) / std::max<uint64_t>(row_bytes, 1), 1024, 65536);
}

// Top-level fields (indices into the schema) some overlay of the fragment covers.
std::vector<size_t> OverlaidFields(const DatasetState& state, const overlay::FragmentOverlays& overlays) {
  std::vector<size_t> out;
  const auto& fields = state.schema.fields();
  for (size_t i = 0; i < fields.size(); ++i)
    if (overlays.Covers(fields[i].id)) out.push_back(i);
  return out;
}

// The cells of `field_id` the overlays cover.
format::RoaringBitmap Coverage(const overlay::FragmentOverlays& overlays, int32_t field_id) {
  format::RoaringBitmap out;
  for (const auto& o : overlays.overlays())
    if (const auto* c = o.CoverageOf(field_id)) out |= *c;
  return out;
}

// The per-row versions of a lineage sequence, or nullopt when the fragment has none inline.
std::optional<std::vector<uint64_t>> InlineVersions(const DataFragment& f, bool last_updated) {
  const std::string* bytes = nullptr;
  if (last_updated && f.has_inline_last_updated_at_versions()) bytes = &f.inline_last_updated_at_versions();
  else if (f.has_inline_created_at_versions()) bytes = &f.inline_created_at_versions();
  if (!bytes) return std::nullopt;
  auto versions = format::VersionSequence::Decode(*bytes, fmt::format("lineage of fragment {}", f.id()));
  if (versions.size() != f.physical_rows())
    ThrowCorrupt("lineage of fragment {}: the sequence has {} rows but the fragment has {}", f.id(),
                 versions.size(), f.physical_rows());
  return versions.ToVector();
}

constexpr double kReadCostPerLayer = 0.0275;

// Returns the heap's free pages to the system. A compaction allocates and frees batch
// buffers of several MiB per column; glibc serves them from the heap once its mmap
// threshold has adapted upwards, and the freed space stays resident: rewriting 20
// fragments of 1M 128-d rows peaked at 355 MB without this after each batch, 86 MB with.
// jemalloc (linked into the release executables) keeps freed pages for seconds instead:
// its arenas are purged when the program carries it.
void ReleaseFreedMemory() {
  if (mallctl) {
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);  // 4096: MALLCTL_ARENAS_ALL
    return;
  }
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace

std::vector<FragmentOptimization> PlanCompaction(const DatasetState& state, const OptimizeOptions& options) {
  std::vector<FragmentOptimization> plan;
  std::vector<bool> candidate, must_rewrite;
  std::vector<std::set<std::string>> index_sets;
  bool can_rewrite = options.rewrite_rows;
  for (const auto& f : state.schema.fields()) can_rewrite &= !f.IsBlob();
  for (const auto& f : state.manifest.fragments()) {
    FragmentOptimization p;
    p.fragment_id = f.id();
    p.physical_rows = f.physical_rows();
    FragmentReader reader(state, f);
    p.deleted_rows = reader.num_deleted();
    const auto& overlays = reader.overlays();
    p.overlays = overlays.overlays().size();
    const auto overlaid = OverlaidFields(state, overlays);
    for (size_t field : overlaid) p.covered_cells += Coverage(overlays, state.schema.fields()[field].id).Cardinality();
    uint64_t oldest = UINT64_MAX;
    for (const auto& o : overlays.overlays()) {
      p.overlay_bytes += o.proto->data_file().file_size_bytes();
      oldest = std::min(oldest, o.committed_version);
    }
    if (oldest != UINT64_MAX) p.versions_since_oldest_overlay = state.version() - oldest;
    std::set<std::string> covering;
    for (const auto& index : state.indices.indices()) {
      auto bitmap = IndexFragments(index);
      if (bitmap && !bitmap->Contains(uint32_t(f.id()))) continue;
      covering.insert(index.name());
      p.stale_index_rows += IndexStaleness::Of(state.schema, index).RowsOf(overlays).Cardinality();
    }
    // Reading an overlaid column costs its base read plus, per layer, reading, resolving
    // and patching in its cells (measured: 16 strided 1% layers on an int32 column scan
    // at 1.44x the compacted column, bench/compaction_compare.sh: about 2.75% a layer).
    if (!overlaid.empty()) p.read_amplification = 1 + kReadCostPerLayer * double(p.overlays);
    const double deleted = p.physical_rows ? double(p.deleted_rows) / double(p.physical_rows) : 0;
    bool materialize = options.materialize_deletions && options.materialize_deletions_threshold < 1.0 &&
                       p.deleted_rows > 0 && deleted > options.materialize_deletions_threshold;
    bool small = p.physical_rows < options.target_rows_per_fragment;
    bool rewritable = can_rewrite && std::none_of(f.files().begin(), f.files().end(), IsLegacyDataFile);
    candidate.push_back(rewritable && (small || materialize));
    must_rewrite.push_back(rewritable && materialize);
    if (rewritable && materialize)
      p.reason = fmt::format("{} of {} rows deleted ({:.1f}% > {:.1f}%)", p.deleted_rows, p.physical_rows,
                             100 * deleted, 100 * options.materialize_deletions_threshold);
    else if (rewritable && small)
      p.reason = fmt::format("{} rows < target {}", p.physical_rows, options.target_rows_per_fragment);
    index_sets.push_back(std::move(covering));
    plan.push_back(std::move(p));
  }

  // Bins: runs of consecutive candidates covered by the same indexes (so that no index
  // covers part of a group), up to the target rows. A bin of one fragment is worth it
  // only to drop deleted rows.
  int groups = 0;
  for (size_t i = 0; i < plan.size();) {
    if (!candidate[i]) {
      ++i;
      continue;
    }
    size_t j = i;
    uint64_t rows = 0;
    while (j < plan.size() && candidate[j] && index_sets[j] == index_sets[i] &&
           (j == i || rows + plan[j].physical_rows - plan[j].deleted_rows <= options.target_rows_per_fragment)) {
      rows += plan[j].physical_rows - plan[j].deleted_rows;
      ++j;
    }
    if (j - i > 1 || must_rewrite[i]) {
      for (size_t k = i; k < j; ++k) {
        plan[k].action = CompactionAction::kRewriteRows;
        plan[k].rewrite_group = groups;
        plan[k].reason += fmt::format("; rewritten with {} fragment(s) into {} live rows", j - i, rows);
      }
      ++groups;
    }
    i = j;
  }
  for (auto& p : plan) {
    if (p.action == CompactionAction::kRewriteRows) {
      if (p.overlays > 0) p.reason += fmt::format("; its {} overlay(s) are materialized", p.overlays);
      continue;
    }
    std::string why = p.reason.empty() ? "" : p.reason + ", but alone: rows stay; ";
    if (p.overlays == 0) {
      p.reason = why + "no overlays";
    } else if (options.merge_overlays_instead_of_fold) {
      p.action = p.overlays > 1 ? CompactionAction::kMergeOverlays : CompactionAction::kNone;
      p.reason = why + (p.overlays > 1 ? fmt::format("{} overlays merge into one", p.overlays) : "one overlay: nothing to merge");
    } else {
      p.action = CompactionAction::kFoldOverlays;
      p.reason = why + fmt::format("{} overlay(s) fold into base columns", p.overlays);
    }
  }
  return plan;
}

FoldedFragment FoldOverlays(const DatasetState& state, const DataFragment& fragment, AttemptFiles& attempt,
                            const std::vector<OverlayColumn>& new_values) {
  FragmentReader reader(state, fragment);
  std::vector<size_t> fields = OverlaidFields(state, reader.overlays());
  for (const auto& c : new_values) fields.push_back(c.field);
  std::sort(fields.begin(), fields.end());
  fields.erase(std::unique(fields.begin(), fields.end()), fields.end());
  FoldedFragment out;
  out.fragment = fragment;
  out.overlays_removed = uint64_t(fragment.overlays_size());
  out.fragment.clear_overlays();
  if (fields.empty()) return out;  // only tombstoned overlays: nothing to fold

  std::vector<format::LanceField> lance_fields;
  for (size_t f : fields) lance_fields.push_back(state.schema.fields()[f]);
  format::LanceSchema schema(lance_fields, {});
  SchemaPtr arrow = schema.ToArrow();
  std::string dir = io::JoinPath(state.uri, kDataDir);
  state.store->CreateDir(dir);
  std::string name = NewDataFileName();
  std::string path = io::JoinPath(dir, name);
  attempt.Add(path);
  format::LanceFileWriter writer(*state.store, path, schema, format::FileWriterOptions{state.WriteVersion()});
  const uint64_t rows = fragment.physical_rows(), step = BatchRows(state, fields);
  for (uint64_t start = 0; start < rows; start += step) {
    uint64_t n = std::min(step, rows - start);
    std::vector<ArrayPtr> columns = reader.ReadRange(fields, start, n);
    for (const auto& c : new_values) {
      // This batch's share of the new values: offsets in [start, start + n).
      const auto& offsets = *c.offsets;
      auto first = std::lower_bound(offsets.begin(), offsets.end(), uint32_t(start));
      auto last = std::lower_bound(first, offsets.end(), uint64_t(start + n),
                                   [](uint32_t o, uint64_t end) { return o < end; });
      if (first == last) continue;
      size_t at = size_t(std::find(fields.begin(), fields.end(), c.field) - fields.begin());
      overlay::Replacement replacement{std::span<const uint32_t>(&*first, size_t(last - first)), c.values,
                                       int64_t(first - offsets.begin()), uint32_t(start)};
      columns[at] = overlay::ApplyReplacements(std::move(columns[at]), {replacement});
    }
    writer.Write(RecordBatch(arrow, std::move(columns), int64_t(n)));
    ReleaseFreedMemory();
  }
  out.bytes_written = writer.Finish();
  lance::table::DataFile file = DescribeDataFile(name, writer, state.WriteVersion(), out.bytes_written);
  out.field_ids.assign(file.fields().begin(), file.fields().end());

  // The old copies of the folded fields are tombstoned; a file left with no live field
  // is dropped from the fragment (cleanup removes it with the versions that use it).
  std::set<int32_t> folded(out.field_ids.begin(), out.field_ids.end());
  out.fragment.clear_files();
  for (lance::table::DataFile old : fragment.files()) {
    bool live = false;
    for (auto& id : *old.mutable_fields()) {
      if (folded.count(id)) id = overlay::kTombstoneFieldId;
      live |= id >= 0;
    }
    if (live) *out.fragment.add_files() = std::move(old);
  }
  *out.fragment.add_files() = std::move(file);
  return out;
}

MergedOverlays MergeOverlayRun(const DatasetState& state, const DataFragment& fragment,
                               const std::set<uint64_t>& versions, AttemptFiles& attempt) {
  std::set<uint64_t> present;
  for (const auto& o : fragment.overlays()) present.insert(o.committed_version());
  for (uint64_t v : versions)
    if (!present.count(v))
      ThrowInvalid("merge overlays of '{}' fragment {}: no overlay was committed at version {} (overlays: {})",
                   state.uri, fragment.id(), v, fmt::join(present, ", "));
  auto picked = [&](const lance::table::DataOverlayFile& o) {
    return versions.empty() || versions.count(o.committed_version()) > 0;
  };
  uint64_t lo = UINT64_MAX, hi = 0;
  int count = 0;
  for (const auto& o : fragment.overlays())
    if (picked(o)) {
      lo = std::min(lo, o.committed_version());
      hi = std::max(hi, o.committed_version());
      ++count;
    }
  for (const auto& o : fragment.overlays())
    if (!picked(o) && o.committed_version() >= lo && o.committed_version() <= hi)
      ThrowInvalid("merge overlays of '{}' fragment {}: the overlays of versions {}..{} are not contiguous: the "
                   "overlay committed at version {} lies between them, and the merged overlay (stamped {}) would "
                   "place older values above it",
                   state.uri, fragment.id(), lo, hi, o.committed_version(), hi);
  MergedOverlays out;
  out.fragment = fragment;
  if (count < 2) return out;

  // Read the post-image through a snapshot whose fragment has only the picked overlays:
  // at the cells they cover, its values are theirs, newest first.
  std::shared_ptr<const DatasetState> only_picked;
  const DatasetState* source = &state;
  const DataFragment* source_fragment = &fragment;
  if (count != fragment.overlays_size()) {
    lance::table::Manifest manifest = state.manifest;
    for (auto& f : *manifest.mutable_fragments()) {
      if (f.id() != fragment.id()) continue;
      google::protobuf::RepeatedPtrField<lance::table::DataOverlayFile> kept;
      for (const auto& o : f.overlays())
        if (picked(o)) *kept.Add() = o;
      *f.mutable_overlays() = std::move(kept);
    }
    only_picked = MakeState(state.store, state.session, state.uri, state.manifest_path, std::move(manifest), state.indices);
    source = only_picked.get();
    source_fragment = only_picked->FindFragment(fragment.id());
  }
  FragmentReader reader(*source, *source_fragment);
  std::vector<std::vector<uint32_t>> offsets;
  std::vector<size_t> fields = OverlaidFields(*source, reader.overlays());
  offsets.reserve(fields.size());
  std::vector<OverlayColumn> columns;
  for (size_t field : fields) {
    auto& offs = offsets.emplace_back(Coverage(reader.overlays(), source->schema.fields()[field].id).ToVector());
    std::vector<uint64_t> wide(offs.begin(), offs.end());
    columns.push_back({field, &offs, reader.Take({field}, wide)[0]});
  }
  std::optional<lance::table::DataOverlayFile> merged;
  if (!columns.empty()) {
    merged = WriteOverlay(state, columns, attempt);
    merged->set_committed_version(hi);
    out.bytes_written = merged->data_file().file_size_bytes();
  }
  out.fragment.clear_overlays();
  bool placed = false;
  for (const auto& o : fragment.overlays()) {
    if (!picked(o)) {
      *out.fragment.add_overlays() = o;
    } else if (!placed) {
      placed = true;
      if (merged) *out.fragment.add_overlays() = *merged;
    }
  }
  out.overlays_removed = uint64_t(count) - (merged ? 1 : 0);
  return out;
}

FoldCommit::FoldCommit(lance::table::Transaction& t) : update_(t.mutable_update()) {
  update_->set_update_mode(lance::table::Transaction::REWRITE_COLUMNS);
}

void FoldCommit::AddFolded(FoldedFragment folded) {
  modified_.insert(folded.field_ids.begin(), folded.field_ids.end());
  *update_->add_updated_fragments() = std::move(folded.fragment);
}

void FoldCommit::AddMerged(DataFragment fragment) { *update_->add_updated_fragments() = std::move(fragment); }

bool FoldCommit::Finish() {
  for (int32_t id : modified_) update_->add_fields_modified(uint32_t(id));
  return update_->updated_fragments_size() > 0;
}

RewrittenGroup RewriteFragments(const DatasetState& state, const std::vector<const DataFragment*>& fragments,
                                uint64_t target_rows, AttemptFiles& attempt) {
  const bool stable = (state.manifest.reader_feature_flags() & kFlagStableRowIds) != 0;
  std::vector<size_t> fields(state.schema.fields().size());
  for (size_t i = 0; i < fields.size(); ++i) fields[i] = i;
  const uint64_t step = BatchRows(state, fields);
  FragmentWriter writer(*state.store, attempt, state.uri, state.schema, state.WriteVersion(), int64_t(target_rows));
  RewrittenGroup out;
  std::vector<uint64_t> row_ids, created, updated;
  bool lineage = stable;
  for (const DataFragment* f : fragments) {
    *out.group.add_old_fragments() = *f;
    FragmentReader reader(state, *f);
    const auto& deleted = reader.deletions();
    out.deleted_rows += deleted.Cardinality();
    std::optional<format::RowIdSequence> ids;
    std::optional<std::vector<uint64_t>> created_at, updated_at;
    if (stable) {
      if (!f->has_inline_row_ids())
        ThrowNotSupported("rewriting fragment {} of '{}': its row ids are stored in an external file", f->id(),
                          state.uri);
      ids = format::RowIdSequence::Decode(f->inline_row_ids(), fmt::format("row ids of fragment {}", f->id()));
      created_at = InlineVersions(*f, false);
      updated_at = InlineVersions(*f, true);
      lineage &= created_at.has_value();
    }
    for (uint64_t start = 0; start < f->physical_rows(); start += step) {
      const uint64_t n = std::min(step, f->physical_rows() - start);
      std::vector<uint64_t> live;
      for (uint64_t o = start; o < start + n; ++o)
        if (!deleted.Contains(uint32_t(o))) live.push_back(o);
      if (live.empty()) continue;
      // A batch without deleted rows is a range: read it as a scan does.
      auto columns = live.size() == n ? reader.ReadRange(fields, start, n) : reader.ReadRows(fields, live);
      writer.Write(RecordBatch(state.arrow_schema, std::move(columns), int64_t(live.size())));
      ReleaseFreedMemory();
      if (!stable) continue;
      for (uint64_t o : live) {
        row_ids.push_back(ids->Get(o));
        if (created_at) created.push_back((*created_at)[o]);
        if (updated_at) updated.push_back((*updated_at)[o]);
      }
    }
  }
  std::vector<DataFragment> made = writer.Finish();
  uint64_t first = 0;
  for (auto& f : made) {
    out.bytes_written += f.files(0).file_size_bytes();
    if (stable) {
      uint64_t n = f.physical_rows();
      f.set_inline_row_ids(
          format::RowIdSequence::FromValues({row_ids.begin() + long(first), row_ids.begin() + long(first + n)}).Encode());
      if (lineage) {
        f.set_inline_created_at_versions(
            format::VersionSequence::FromVersions(std::span(created).subspan(first, n)).Encode());
        f.set_inline_last_updated_at_versions(
            format::VersionSequence::FromVersions(std::span(updated).subspan(first, n)).Encode());
      }
      first += n;
    }
    *out.group.add_new_fragments() = std::move(f);
  }
  return out;
}

}  // namespace lancelet::table

namespace lancelet {

namespace {

using table::DatasetState;

}  // namespace

std::string FormatOptimizePlan(const std::vector<FragmentOptimization>& plan) {
  std::string out;
  size_t acting = 0;
  for (const auto& p : plan) {
    const char* action = "keep";
    switch (p.action) {
      case CompactionAction::kNone: break;
      case CompactionAction::kMergeOverlays: action = "merge overlays"; break;
      case CompactionAction::kFoldOverlays: action = "fold overlays"; break;
      case CompactionAction::kRewriteRows: action = "rewrite rows"; break;
    }
    acting += p.action != CompactionAction::kNone;
    out += fmt::format("fragment {}: {}", p.fragment_id, action);
    if (p.rewrite_group >= 0) out += fmt::format(" (group {})", p.rewrite_group);
    out += fmt::format(": {}. {} rows, {} deleted", p.reason, p.physical_rows, p.deleted_rows);
    if (p.overlays > 0)
      out += fmt::format(", {} overlay layers covering {} cells in {} bytes, oldest {} versions ago, {} stale index "
                         "rows, read amplification {:.2f}",
                         p.overlays, p.covered_cells, p.overlay_bytes, p.versions_since_oldest_overlay,
                         p.stale_index_rows, p.read_amplification);
    out += "\n";
  }
  out += fmt::format("{} of {} fragments would change\n", acting, plan.size());
  return out;
}

std::string FormatOptimizeStats(const OptimizeStats& s, const std::string& dataset, uint64_t version) {
  if (s.versions.empty()) return fmt::format("nothing to compact; {} unchanged at version {}\n", dataset, version);
  std::string out;
  if (s.fragments_removed > 0)
    out += fmt::format("rewrote {} fragments into {} ({} deleted rows dropped)\n", s.fragments_removed,
                       s.fragments_added, s.rows_deleted_materialized);
  if (s.fragments_folded > 0) out += fmt::format("folded the overlays of {} fragments into base columns\n", s.fragments_folded);
  if (s.fragments_merged > 0) out += fmt::format("merged the overlays of {} fragments\n", s.fragments_merged);
  if (s.indexes_optimized) out += "indexed the fragments that indexes did not cover\n";
  out += fmt::format("removed {} overlays, wrote {} bytes; {} now at version {}\n", s.overlays_removed,
                     s.bytes_written, dataset, version);
  return out;
}

std::string FirstOverlayNotice(const Dataset& before, const Dataset& after, const std::string& name) {
  auto has = [](const Dataset& d) { return (table::StateOf(d).manifest.reader_feature_flags() & table::kFlagDataOverlays) != 0; };
  if (has(before) || !has(after)) return "";
  return fmt::format("note: {} now has data overlay files (reader feature flag 64); LanceDB and lance read it only "
                     "with LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1 until `lancelet optimize` (SQL: OPTIMIZE) "
                     "folds them into base columns",
                     name);
}

namespace {
// One rule for Optimize and PlanOptimize (a plan must not promise what the run refuses).
void CheckOptimizeOptions(const OptimizeOptions& options) {
  if (options.target_rows_per_fragment == 0 || options.target_rows_per_fragment > kMaxRowsPerFile)
    ThrowInvalid("optimize: target_rows_per_fragment {}: expected 1 to {}", options.target_rows_per_fragment,
                 kMaxRowsPerFile);
  const double t = options.materialize_deletions_threshold;
  if (!(t >= 0.0 && t <= 1.0))
    ThrowInvalid("optimize: materialize_deletions_threshold {}: expected a fraction from 0 to 1", t);
}
}  // namespace

std::string LayerMergeNote(const WriteOutcome& outcome) {
  if (outcome.layer_merge_version != 0)
    return fmt::format(" (version {} holds the change; version {} merged the overlays of fragments past {})",
                       outcome.change_version, outcome.layer_merge_version, table::kMaxOverlaysPerFragmentKey);
  if (!outcome.layer_merge_error.empty())
    return fmt::format(" (merging the overlays of fragments past {} failed, the change stays committed: {}; "
                       "`lancelet optimize` merges them)",
                       table::kMaxOverlaysPerFragmentKey, outcome.layer_merge_error);
  return "";
}

std::vector<FragmentOptimization> Dataset::PlanOptimize(const OptimizeOptions& options) const {
  CheckOptimizeOptions(options);
  return table::PlanCompaction(*state_, options);
}

namespace {
// Optimize's steps are commits of their own. When one fails after others landed, its
// error says what they committed and what the indexes cover now (the rest is scanned
// flat: answers stay right, only slower), so nobody takes the failure for "nothing
// happened".
template <typename Step>
auto AfterCommits(const OptimizeStats& done, std::shared_ptr<const DatasetState> state, const char* what,
                  Step&& step) {
  try {
    return step();
  } catch (const Error& e) {
    if (done.versions.empty()) throw;
    std::string committed;
    if (done.fragments_removed > 0)
      committed = fmt::format("rewrote {} fragments into {}", done.fragments_removed, done.fragments_added);
    if (done.fragments_folded + done.fragments_merged > 0)
      committed += fmt::format("{}compacted the overlays of {} fragments", committed.empty() ? "" : " and ",
                               done.fragments_folded + done.fragments_merged);
    std::string versions;
    for (uint64_t v : done.versions) versions += (versions.empty() ? "" : ", ") + std::to_string(v);
    std::string coverage;
    for (const auto& index : table::MakeDataset(state)->ListIndices())
      coverage += fmt::format("; index {} now covers {} of {} fragments", index.name, index.indexed_fragments,
                              index.indexed_fragments + index.unindexed_fragments);
    throw Error(e.kind(), fmt::format("optimize of '{}' {} (version {}), then {} failed: {}{}; run `lancelet "
                                      "optimize` again to finish",
                                      state->uri, committed, versions, what, e.what(), coverage));
  }
}
}  // namespace

DatasetPtr Dataset::Optimize(const OptimizeOptions& options, OptimizeStats* stats) const {
  CheckOptimizeOptions(options);
  OptimizeStats local;
  OptimizeStats& out = stats ? *stats : local;
  out = OptimizeStats{};
  std::shared_ptr<const DatasetState> current = state_;

  // 1. Rows: groups of small fragments, or fragments with many deletions, become new ones.
  auto rewritten = table::UntilCommitted(current, "optimize (rewrite)", [&](const std::shared_ptr<const DatasetState>& s)
                                      -> std::shared_ptr<const DatasetState> {
    auto plan = table::PlanCompaction(*s, options);
    std::map<int, std::vector<const lance::table::DataFragment*>> groups;
    for (size_t i = 0; i < plan.size(); ++i)
      if (plan[i].action == CompactionAction::kRewriteRows)
        groups[plan[i].rewrite_group].push_back(&s->manifest.fragments(int(i)));
    OptimizeStats step;
    auto next = table::BuildAndCommit(s, {}, [&](lance::table::Transaction& t, table::AttemptFiles& attempt) {
      for (const auto& [id, fragments] : groups) {
        auto g = table::RewriteFragments(*s, fragments, options.target_rows_per_fragment, attempt);
        step.fragments_removed += uint64_t(g.group.old_fragments_size());
        step.fragments_added += uint64_t(g.group.new_fragments_size());
        step.rows_deleted_materialized += g.deleted_rows;
        step.bytes_written += g.bytes_written;
        for (const auto& f : g.group.old_fragments()) step.overlays_removed += uint64_t(f.overlays_size());
        *t.mutable_rewrite()->add_groups() = std::move(g.group);
      }
      return !groups.empty();
    });
    if (next) out = step;  // the attempt that committed
    return next;
  });
  if (rewritten) {
    current = rewritten;
    out.versions.push_back(current->version());
  }

  // 2. Overlays of the fragments whose rows stay: folded into base columns, or merged.
  OptimizeOptions overlays_only = options;
  overlays_only.rewrite_rows = false;
  auto compact_overlays = [&](const std::shared_ptr<const DatasetState>& s) -> std::shared_ptr<const DatasetState> {
    auto plan = table::PlanCompaction(*s, overlays_only);
    uint64_t folded = 0, merged = 0, removed = 0, bytes = 0;
    auto next = table::BuildAndCommit(s, {}, [&](lance::table::Transaction& t, table::AttemptFiles& attempt) {
      table::FoldCommit fold(t);
      for (size_t i = 0; i < plan.size(); ++i) {
        const auto& fragment = s->manifest.fragments(int(i));
        if (plan[i].action == CompactionAction::kFoldOverlays) {
          auto f = table::FoldOverlays(*s, fragment, attempt);
          removed += f.overlays_removed;
          bytes += f.bytes_written;
          ++folded;
          fold.AddFolded(std::move(f));
        } else if (plan[i].action == CompactionAction::kMergeOverlays) {
          auto m = table::MergeOverlayRun(*s, fragment, {}, attempt);
          removed += m.overlays_removed;
          bytes += m.bytes_written;
          ++merged;
          fold.AddMerged(std::move(m.fragment));
        }
      }
      return fold.Finish();
    });
    if (next) {
      out.fragments_folded = folded;
      out.fragments_merged = merged;
      out.overlays_removed += removed;
      out.bytes_written += bytes;
    }
    return next;
  };
  auto compacted = AfterCommits(out, current, "compacting overlays",
                                [&] { return table::UntilCommitted(current, "optimize (overlays)", compact_overlays); });
  if (compacted) {
    current = compacted;
    out.versions.push_back(current->version());
  }

  // 3. Indexes: as the reference's optimize(), index the fragments no segment covers
  // (folded, rewritten or appended ones).
  DatasetPtr result = current == state_ ? shared_from_this() : table::MakeDataset(current);
  if (options.optimize_indices)
    result = AfterCommits(out, current, "indexing", [&] { return table::IndexUncovered(result, out); });
  return result;
}

namespace {

// One commit merging, per listed fragment, the overlays of the listed versions (empty:
// all). Returns null when no fragment had two overlays to merge. A listed fragment gone
// from the version committed on (a concurrent compaction rewrote it) is an error unless
// `gone_ok`.
std::shared_ptr<const DatasetState> CommitOverlayMerges(std::shared_ptr<const DatasetState> state,
                                                        const std::map<uint64_t, std::set<uint64_t>>& picks,
                                                        bool gone_ok) {
  return table::UntilCommitted(state, "merge overlays", [&](const std::shared_ptr<const DatasetState>& s)
                            -> std::shared_ptr<const DatasetState> {
    return table::BuildAndCommit(s, {}, [&](lance::table::Transaction& t, table::AttemptFiles& attempt) {
      table::FoldCommit fold(t);
      for (const auto& [id, versions] : picks) {
        const auto* fragment = s->FindFragment(id);
        if (!fragment && gone_ok) continue;
        if (!fragment)
          ThrowInvalid("merge overlays of '{}': fragment {} does not exist in version {}", s->uri, id, s->version());
        auto merged = table::MergeOverlayRun(*s, *fragment, versions, attempt);
        if (merged.overlays_removed > 0) fold.AddMerged(std::move(merged.fragment));
      }
      return fold.Finish();
    });
  });
}

}  // namespace

DatasetPtr Dataset::MergeOverlays(uint64_t fragment_id, const std::vector<uint64_t>& committed_versions) const {
  auto next =
      CommitOverlayMerges(state_, {{fragment_id, {committed_versions.begin(), committed_versions.end()}}}, false);
  return next ? table::MakeDataset(next) : shared_from_this();
}

namespace table {

std::optional<uint64_t> MaxOverlaysPerFragment(const lance::table::Manifest& manifest) {
  auto it = manifest.config().find(std::string(kMaxOverlaysPerFragmentKey));
  if (it == manifest.config().end()) return kDefaultMaxOverlaysPerFragment;
  if (it->second == "none") return std::nullopt;
  size_t used = 0;
  unsigned long long n = 0;
  try {
    n = std::stoull(it->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != it->second.size() || it->second[0] == '-' || n == 0)
    ThrowInvalid("table config {} is '{}': expected a positive number of overlays or 'none'",
                 kMaxOverlaysPerFragmentKey, it->second);
  return n;
}

DatasetPtr IndexUncovered(const DatasetPtr& dataset, OptimizeStats& stats) {
  DatasetPtr indexed = dataset->OptimizeIndices();
  if (indexed->version() != dataset->version()) {
    stats.versions.push_back(indexed->version());
    stats.indexes_optimized = true;
  }
  return indexed;
}

DatasetPtr BoundOverlayLayers(const DatasetPtr& dataset, WriteOutcome* outcome) {
  const auto& state = table::StatePtrOf(dataset);
  if (outcome) *outcome = WriteOutcome{state->version(), 0, ""};
  auto bound = MaxOverlaysPerFragment(state->manifest);
  if (!bound) return dataset;
  std::map<uint64_t, std::set<uint64_t>> picks;
  for (const auto& f : state->manifest.fragments())
    if (uint64_t(f.overlays_size()) > *bound) picks[f.id()] = {};
  if (picks.empty()) return dataset;
  try {
    auto next = CommitOverlayMerges(state, picks, true);
    if (!next) return dataset;
    if (outcome) outcome->layer_merge_version = next->version();
    return table::MakeDataset(next);
  } catch (const Error& e) {
    if (outcome) outcome->layer_merge_error = e.what();
    return dataset;
  }
}

}  // namespace table

}  // namespace lancelet
