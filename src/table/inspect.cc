// Dataset::Inspect: a readable dump of one version's manifest (`lancelet inspect`).
#include <fmt/format.h>

#include <sstream>

#include "lancelet/dataset.h"

#include "format/lance_schema.h"
#include "format/roaring_bitmap.h"
#include "table/dataset_state.h"
#include "table/feature_flags.h"
#include "table/index_section.h"

namespace lancelet {

namespace {

std::string FlagNames(uint64_t flags) {
  static const std::pair<uint64_t, const char*> kNames[] = {
      {table::kFlagDeletionFiles, "deletion_files"},     {table::kFlagStableRowIds, "stable_row_ids"},
      {table::kFlagUseV2FormatDeprecated, "v2_format"},  {table::kFlagTableConfig, "table_config"},
      {table::kFlagBasePaths, "base_paths"},             {table::kFlagDisableTransactionFile, "no_transaction_file"},
      {table::kFlagDataOverlays, "data_overlays"},
  };
  std::string out = std::to_string(flags);
  std::string names;
  for (const auto& [bit, name] : kNames)
    if (flags & bit) names += (names.empty() ? "" : ", ") + std::string(name);
  return names.empty() ? out : out + " (" + names + ")";
}

void PrintField(const format::LanceField& f, int depth, std::ostream& out) {
  const std::string type = f.dictionary_index
                               ? fmt::format("dictionary<{},{}> (read as {})", f.dictionary_index->ToString(),
                                             f.type->ToString(), f.type->ToString())
                               : f.type->ToString();
  out << fmt::format("  {:{}}{} [id {}]: {}{}\n", "", depth * 2, f.name, f.id, type, f.nullable ? "" : " not null");
  if (f.type->id() == TypeId::kStruct)
    for (const auto& c : f.children) PrintField(c, depth + 1, out);
}

// One line per overlay, then one per covered field: name, id and covered cells.
void PrintOverlay(const table::DatasetState& s, const lance::table::DataOverlayFile& o, int index, std::ostream& out) {
  const auto& file = o.data_file();
  bool dense = o.has_shared_offset_bitmap();
  out << fmt::format("    overlay {}: committed_version {}, {}, data file {} ({} bytes)\n", index,
                     o.committed_version(), dense ? "dense" : "sparse", file.path(), file.file_size_bytes());
  for (int f = 0; f < file.fields_size(); ++f) {
    int32_t id = file.fields(f);
    const format::LanceField* field = nullptr;
    for (const auto& top : s.schema.fields())
      if (top.id == id) field = &top;
    if (!field) continue;  // nested ids and tombstones are listed under their top-level field
    const std::string& bytes = dense ? o.shared_offset_bitmap() : o.field_coverage().offset_bitmaps(f);
    uint64_t cells = format::RoaringBitmap::DeserializePortable(bytes, file.path()).Cardinality();
    out << fmt::format("      field {} [id {}]: {} cells\n", field->name, id, cells);
  }
}

}  // namespace

std::string Dataset::Inspect() const {
  std::ostringstream out;
  const table::DatasetState& s = *state_;
  const auto& m = s.manifest;
  out << fmt::format("dataset: {}\n", s.uri);
  out << fmt::format("version: {}\n", m.version());
  const std::string storage = s.storage_version ? s.storage_version->ToString() : "legacy";
  if (m.has_data_format())
    out << fmt::format("data storage: {} {}{}\n", m.data_format().file_format(), m.data_format().version(),
                       m.data_format().version() == storage ? "" : " (" + storage + ")");
  else
    out << fmt::format("data storage: lance {} (inferred; the manifest records none)\n", storage);
  out << fmt::format("writer: {} {}\n", m.writer_version().library(), m.writer_version().version());
  out << fmt::format("reader feature flags: {}\n", FlagNames(m.reader_feature_flags()));
  out << fmt::format("writer feature flags: {}\n", FlagNames(m.writer_feature_flags()));
  if (m.reader_feature_flags() & table::kFlagStableRowIds) out << fmt::format("next row id: {}\n", m.next_row_id());
  out << "schema:\n";
  for (const auto& f : s.schema.fields()) PrintField(f, 0, out);
  out << fmt::format("fragments: {}\n", m.fragments_size());
  for (const auto& frag : m.fragments()) {
    uint64_t deleted = frag.has_deletion_file() ? frag.deletion_file().num_deleted_rows() : 0;
    out << fmt::format("  fragment {}: {} physical rows, {} deleted, {} live\n", frag.id(), frag.physical_rows(),
                       deleted, frag.physical_rows() - deleted);
    for (const auto& file : frag.files()) {
      std::string ids;
      for (int32_t id : file.fields()) ids += (ids.empty() ? "" : ",") + std::to_string(id);
      out << fmt::format("    data file {} (format {}.{}, {} bytes, fields [{}])\n", file.path(),
                         file.file_major_version(), file.file_minor_version(), file.file_size_bytes(), ids);
    }
    if (frag.has_deletion_file()) {
      const auto& d = frag.deletion_file();
      out << fmt::format("    deletion file {}-{}-{}.{} ({} rows)\n", frag.id(), d.read_version(), d.id(),
                         d.file_type() == lance::table::DeletionFile::BITMAP ? "bin" : "arrow",
                         d.num_deleted_rows());
    }
    if (frag.overlays_size() == 0) out << "    overlays: none\n";
    for (int i = 0; i < frag.overlays_size(); ++i) PrintOverlay(s, frag.overlays(i), i, out);
  }
  out << fmt::format("indexes: {}\n", s.indices.indices_size());
  for (const auto& index : s.indices.indices()) {
    std::string fields, fragments = "all (no fragment bitmap)";
    for (int32_t id : index.fields()) fields += (fields.empty() ? "" : ",") + std::to_string(id);
    if (auto covered = table::IndexFragments(index)) {
      fragments.clear();
      covered->ForEach([&](uint32_t id) { fragments += (fragments.empty() ? "" : ",") + std::to_string(id); });
      fragments = "[" + fragments + "]";
    }
    out << fmt::format("  index {}: {}, fields [{}], built from version {}, fragments {}\n", index.name(),
                       index.index_details().type_url(), fields, index.dataset_version(), fragments);
  }
  return out.str();
}

}  // namespace lancelet
