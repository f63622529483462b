#include "table/merge_commit.h"

#include <algorithm>
#include <set>

#include "format/roaring_bitmap.h"
#include "format/row_id_sequence.h"
#include "lancelet/error.h"
#include "table/cell_checks.h"
#include "table/commit.h"
#include "table/deletions.h"
#include "table/fragment_reader.h"
#include "table/fragment_writer.h"
#include "table/overlay_file.h"

namespace lancelet::table {

namespace {

const lance::table::DataFragment& FindFragment(const DatasetState& state, uint64_t id) {
  if (const auto* f = state.FindFragment(id)) return *f;
  ThrowInvalid("merge into '{}': fragment {} does not exist in version {}", state.uri, id, state.version());
}

// SQL MERGE reads every column of every target row (its ON and WHEN conditions and SET
// expressions may name any), and changes the rows it updates or deletes.
std::shared_ptr<const ReadSet> WholeTargetRead(const DatasetState& state, const MergeChanges& changes) {
  auto read = std::make_shared<ReadSet>();
  for (const auto& field : state.schema.fields())
    field.ForEach([&](const format::LanceField& node) { read->all_rows_fields.insert(node.id); });
  for (const auto& f : state.manifest.fragments()) read->fragments.insert(f.id());
  for (const auto& [fragment, columns] : changes.updates)
    for (const auto& c : columns) read->changed_rows[fragment].AddMany(c.offsets);
  for (const auto& [fragment, offsets] : changes.deletes) read->changed_rows[fragment].AddMany(offsets);
  return read;
}

// Fills `t` with the Update that applies `changes` to `state`, writing its deletion
// files, overlays and new fragments.
void BuildMerge(const DatasetState& state, const MergeChanges& changes, lance::table::Transaction& t,
                AttemptFiles& attempt) {
  auto* update = t.mutable_update();
  std::set<uint32_t> modified_fields;
  std::set<uint64_t> touched;
  for (const auto& [id, cells] : changes.updates) touched.insert(id);
  for (const auto& [id, offsets] : changes.deletes) touched.insert(id);
  for (uint64_t id : touched) {
    const auto& fragment = FindFragment(state, id);
    lance::table::DataFragment next = fragment;
    auto deletes = changes.deletes.find(id);
    if (deletes != changes.deletes.end()) {
      for (uint32_t o : deletes->second) {
        if (o >= fragment.physical_rows())
          ThrowInvalid("merge into '{}': delete of offset {} beyond fragment {}'s {} rows", state.uri, o, id,
                       fragment.physical_rows());
      }
      auto file = DeletionFileWith(state, fragment, deletes->second, attempt);
      if (!file) {
        // Every row is gone: the fragment leaves the manifest, overlays and all.
        update->add_removed_fragment_ids(id);
        continue;
      }
      *next.mutable_deletion_file() = std::move(*file);
    }
    auto cells = changes.updates.find(id);
    if (cells != changes.updates.end() && !cells->second.empty()) {
      CheckTakesOverlays(state, "merge into", fragment);
      std::vector<OverlayColumn> columns;
      std::set<size_t> seen;
      std::vector<uint32_t> covered;
      for (const auto& c : cells->second) {
        const size_t field = CheckCells(state, "merge into", id, fragment, c.column, c.offsets, c.values);
        if (!seen.insert(field).second)
          ThrowInvalid("merge into '{}' fragment {}: column '{}' is set twice", state.uri, id, c.column);
        columns.push_back({field, &c.offsets, c.values});
        state.schema.fields()[field].ForEach([&](const format::LanceField& f) { modified_fields.insert(f.id); });
        covered.insert(covered.end(), c.offsets.begin(), c.offsets.end());
      }
      // One overlay per fragment: sparse when the columns cover different offsets.
      *next.add_overlays() = WriteOverlay(state, columns, attempt);  // committed_version 0: stamped at commit
      std::sort(covered.begin(), covered.end());
      covered.erase(std::unique(covered.begin(), covered.end()), covered.end());
      (*update->mutable_updated_fragment_offset_bitmaps())[id] =
          format::RoaringBitmap::FromValues(covered).SerializePortable();
    }
    *update->add_updated_fragments() = std::move(next);
  }
  uint64_t moved = 0;
  for (const auto& [id, offsets] : changes.moved) {
    auto& bytes = (*update->mutable_updated_fragment_offset_bitmaps())[id];
    auto rows = bytes.empty() ? format::RoaringBitmap()
                              : format::RoaringBitmap::DeserializePortable(bytes, "the update's offsets");
    rows.AddMany(offsets);
    bytes = rows.SerializePortable();
    moved += offsets.size();
  }
  (*t.mutable_transaction_properties())[kMovedRowsProperty] = std::to_string(moved);
  // The first insert_row_ids.size() inserted rows keep those ids (fragments of their own,
  // with inline ids); the rest get new ids when the manifest is built.
  FragmentWriter kept(*state.store, attempt, state.uri, state.schema, state.WriteVersion(), 1024 * 1024);
  FragmentWriter fresh(*state.store, attempt, state.uri, state.schema, state.WriteVersion(), 1024 * 1024);
  int64_t with_ids = int64_t(changes.insert_row_ids.size());
  for (const auto& batch : changes.inserts) {
    const int64_t head = std::min(with_ids, batch->num_rows());
    if (head > 0) kept.Write(head == batch->num_rows() ? *batch : *batch->Slice(0, head));
    if (head < batch->num_rows()) fresh.Write(head == 0 ? *batch : *batch->Slice(head, batch->num_rows() - head));
    with_ids -= head;
  }
  if (with_ids > 0)
    ThrowInvalid("merge into '{}': {} row ids for fewer inserted rows", state.uri, changes.insert_row_ids.size());
  uint64_t first = 0;
  for (auto& f : kept.Finish()) {
    const uint64_t n = f.physical_rows();
    f.set_inline_row_ids(format::RowIdSequence::FromValues({changes.insert_row_ids.begin() + long(first),
                                                            changes.insert_row_ids.begin() + long(first + n)})
                             .Encode());
    first += n;
    *update->add_new_fragments() = std::move(f);
  }
  for (auto& f : fresh.Finish()) *update->add_new_fragments() = std::move(f);
  for (uint32_t f : modified_fields) update->add_fields_modified(f);
}

}  // namespace

DatasetPtr CommitMerge(const DatasetPtr& dataset, const MergeChanges& changes,
                       std::shared_ptr<const ReadSet> read_set) {
  if (changes.empty()) return dataset;
  CommitOptions options;
  options.read_set = read_set ? std::move(read_set) : WholeTargetRead(table::StateOf(dataset), changes);
  return table::MakeDataset(
      BuildAndCommit(table::StatePtrOf(dataset), options, [&](lance::table::Transaction& t, AttemptFiles& attempt) {
        BuildMerge(table::StateOf(dataset), changes, t, attempt);
        return true;
      }));
}

}  // namespace lancelet::table
