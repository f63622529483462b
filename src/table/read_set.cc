#include "table/read_set.h"

#include <fmt/format.h>

#include "table/deletions.h"

namespace lancelet::table {

using lance::table::DataFragment;

void ReadSet::AddFields(const format::LanceSchema& schema, const std::vector<std::string>& columns,
                        std::set<int32_t>& into) {
  for (const auto& name : columns)
    if (const auto* field = schema.FindByName(name))
      field->ForEach([&](const format::LanceField& node) { into.insert(node.id); });
}

std::shared_ptr<ReadSet> ReadSet::OfStatement(const DatasetState& state,
                                              const std::vector<std::string>& predicate_columns,
                                              const std::vector<std::string>& set_columns) {
  auto read = std::make_shared<ReadSet>();
  AddFields(state.schema, predicate_columns, read->all_rows_fields);
  AddFields(state.schema, set_columns, read->changed_rows_fields);
  for (const auto& f : state.manifest.fragments()) read->fragments.insert(f.id());
  return read;
}

namespace {

std::map<uint64_t, const DataFragment*> ById(const lance::table::Manifest& m) {
  std::map<uint64_t, const DataFragment*> out;
  for (const auto& f : m.fragments()) out[f.id()] = &f;
  return out;
}

std::string FieldName(const DatasetState& state, int32_t id) {
  std::string name = fmt::format("id {}", id);
  for (const auto& top : state.schema.fields())
    top.ForEach([&](const format::LanceField& node) {
      if (node.id == id) name = "'" + node.name + "'";
    });
  return name;
}

// Base data files and row count: what a row rewrite or column rewrite changes.
bool SameLayout(const DataFragment& a, const DataFragment& b) {
  if (a.physical_rows() != b.physical_rows() || a.files_size() != b.files_size()) return false;
  for (int i = 0; i < a.files_size(); ++i)
    if (a.files(i).SerializeAsString() != b.files(i).SerializeAsString()) return false;
  return true;
}

// A new overlay in `after` covering a read cell: returns the field it changed.
std::optional<int32_t> OverlayOverRead(const ReadSet& read, const DatasetState& after, const DataFragment& before,
                                       const DataFragment& now) {
  std::set<std::string> known;
  for (const auto& o : before.overlays()) known.insert(o.data_file().path());
  bool added = false;
  for (const auto& o : now.overlays()) added |= !known.count(o.data_file().path());
  if (!added) return std::nullopt;  // the common case decodes no coverage
  const format::RoaringBitmap* changed = nullptr;
  if (auto it = read.changed_rows.find(now.id()); it != read.changed_rows.end()) changed = &it->second;
  auto overlays = after.OverlaysOf(now);
  for (const auto& o : overlays->overlays()) {
    if (known.count(o.proto->data_file().path())) continue;
    for (size_t i = 0; i < o.field_ids.size(); ++i) {
      int32_t id = o.field_ids[i];
      if (o.Coverage(i)->IsEmpty()) continue;
      if (read.all_rows_fields.count(id)) return id;
      if (changed && read.changed_rows_fields.count(id) && o.Coverage(i)->Intersects(*changed)) return id;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> FindStaleRead(const ReadSet& read, const DatasetState& before, const DatasetState& after) {
  for (int32_t id : read.all_rows_fields)
    if (!after.schema.FindById(id)) return fmt::format("dropped field {}, which it read", FieldName(before, id));
  for (int32_t id : read.changed_rows_fields)
    if (!after.schema.FindById(id)) return fmt::format("dropped field {}, which it read", FieldName(before, id));

  auto was = ById(before.manifest), now = ById(after.manifest);
  for (uint64_t id : read.fragments) {
    auto b = was.find(id);
    if (b == was.end()) continue;  // already gone before: an earlier version reported it
    auto a = now.find(id);
    if (a == now.end()) return fmt::format("removed fragment {}, which it read", id);
    const DataFragment& old_fragment = *b->second;
    const DataFragment& new_fragment = *a->second;
    if (!SameLayout(old_fragment, new_fragment)) return fmt::format("rewrote fragment {}, which it read", id);
    if (auto field = OverlayOverRead(read, after, old_fragment, new_fragment))
      return fmt::format("changed field {} of fragment {} on rows it read", FieldName(after, *field), id);
    auto changed = read.changed_rows.find(id);
    if (changed == read.changed_rows.end()) continue;
    if (NewlyDeleted(before, old_fragment, after, new_fragment).Intersects(changed->second))
      return fmt::format("deleted rows of fragment {} that it changes", id);
  }
  // Rows appended since: the predicate ranges over every row, so they may match it. In
  // version order they came first, so they must be seen (no phantom).
  if (!read.fragments.empty() || !read.all_rows_fields.empty())  // (an empty target has no fragments)
    for (const auto& [id, fragment] : now)
      if (!was.count(id)) return fmt::format("appended fragment {}, whose rows its predicate ranges over", id);
  return std::nullopt;
}

}  // namespace lancelet::table
