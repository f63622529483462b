// lancelet/fragments.h: fragments written without a commit, and the one commit that
// publishes them.
#include "lancelet/fragments.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "io/object_store.h"
#include "lancelet/error.h"
#include "lancelet/session.h"
#include "format/roaring_bitmap.h"
#include "lancelet/expr.h"
#include "table/attempt_files.h"
#include "table/cell_checks.h"
#include "table/commit.h"
#include "table/dataset_state.h"
#include "table/deletions.h"
#include "table/feature_flags.h"
#include "table/fragment_reader.h"
#include "table/fragment_writer.h"
#include "table/manifest_store.h"
#include "table/overlay_file.h"
#include "table/read_set.h"
#include "table/scan_plan.h"
#include "table/scan_planner.h"
#include "table/session.h"
#include "table/update_modes.h"
#include "text/base64.h"

namespace lancelet {

namespace {

using Json = nlohmann::ordered_json;

// The keys of pylance's fragment JSON that only a committed fragment fills in: a
// fragment read back must have them null (or, for overlays, empty).
constexpr const char* kCommittedOnlyKeys[] = {"row_id_meta", "created_at_version_meta",
                                              "last_updated_at_version_meta"};

const Json& Key(const Json& object, const char* key, const char* where) {
  auto it = object.find(key);
  if (it == object.end()) ThrowInvalid("fragment JSON: {} has no \"{}\"", where, key);
  return *it;
}

template <typename T>
T Number(const Json& object, const char* key, const char* where) {
  const Json& v = Key(object, key, where);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
    ThrowInvalid("fragment JSON: \"{}\" of {} is {}, expected a non-negative integer", key, where, v.dump());
  const uint64_t n = v.get<uint64_t>();
  if (n > uint64_t(std::numeric_limits<T>::max()))
    ThrowInvalid("fragment JSON: \"{}\" of {} is {}, which does not fit", key, where, n);
  return T(n);
}

std::vector<int32_t> Ids(const Json& object, const char* key, const char* where) {
  const Json& v = Key(object, key, where);
  if (!v.is_array()) ThrowInvalid("fragment JSON: \"{}\" of {} is {}, expected a list of integers", key, where, v.dump());
  std::vector<int32_t> out;
  for (const Json& id : v) {
    if (!id.is_number_integer() || id.get<int64_t>() < INT32_MIN || id.get<int64_t>() > INT32_MAX)
      ThrowInvalid("fragment JSON: \"{}\" of {} holds {}, expected 32-bit integers", key, where, id.dump());
    out.push_back(id.get<int32_t>());
  }
  return out;
}

lance::table::DataFile DataFileProto(const DataFileMetadata& file) {
  lance::table::DataFile p;
  p.set_path(file.path);
  for (int32_t id : file.fields) p.add_fields(id);
  for (int32_t c : file.column_indices) p.add_column_indices(c);
  p.set_file_major_version(file.file_major_version);
  p.set_file_minor_version(file.file_minor_version);
  p.set_file_size_bytes(file.file_size_bytes);
  if (file.base_id) p.set_base_id(*file.base_id);
  return p;
}

DataFileMetadata DataFileOf(const lance::table::DataFile& p) {
  DataFileMetadata file;
  file.path = p.path();
  file.fields.assign(p.fields().begin(), p.fields().end());
  file.column_indices.assign(p.column_indices().begin(), p.column_indices().end());
  file.file_major_version = p.file_major_version();
  file.file_minor_version = p.file_minor_version();
  file.file_size_bytes = p.file_size_bytes();
  if (p.has_base_id()) file.base_id = p.base_id();
  return file;
}

lance::table::DeletionFile DeletionFileProto(const DeletionFileMetadata& d) {
  lance::table::DeletionFile p;
  p.set_file_type(d.file_type == "bitmap" ? lance::table::DeletionFile::BITMAP
                                          : lance::table::DeletionFile::ARROW_ARRAY);
  p.set_read_version(d.read_version);
  p.set_id(d.id);
  p.set_num_deleted_rows(d.num_deleted_rows);
  if (d.base_id) p.set_base_id(*d.base_id);
  return p;
}

lance::table::DataFragment ToProto(const FragmentMetadata& f) {
  lance::table::DataFragment out;
  out.set_id(f.id);
  out.set_physical_rows(f.physical_rows);
  for (const DataFileMetadata& file : f.files) *out.add_files() = DataFileProto(file);
  if (f.deletion_file) *out.mutable_deletion_file() = DeletionFileProto(*f.deletion_file);
  return out;
}

// An overlay's offset sets: one (dense) or one per field (sparse).
std::vector<std::vector<uint32_t>> OffsetSets(const lance::table::DataOverlayFile& file, const std::string& where) {
  std::vector<std::vector<uint32_t>> out;
  if (file.has_field_coverage())
    for (const std::string& bitmap : file.field_coverage().offset_bitmaps())
      out.push_back(format::RoaringBitmap::DeserializePortable(bitmap, where).ToVector());
  else
    out.push_back(format::RoaringBitmap::DeserializePortable(file.shared_offset_bitmap(), where).ToVector());
  return out;
}

FragmentMetadata FromProto(const lance::table::DataFragment& f) {
  FragmentMetadata out;
  out.id = f.id();
  out.physical_rows = f.physical_rows();
  for (const auto& p : f.files()) out.files.push_back(DataFileOf(p));
  for (const auto& o : f.overlays())
    out.overlays.push_back({DataFileOf(o.data_file()), OffsetSets(o, fmt::format("an overlay of fragment {}", f.id())),
                            o.committed_version()});
  if (f.has_deletion_file()) {
    const auto& d = f.deletion_file();
    out.deletion_file = DeletionFileMetadata{d.file_type() == lance::table::DeletionFile::BITMAP ? "bitmap" : "array",
                                             d.read_version(), d.id(), d.num_deleted_rows(), std::nullopt};
    if (d.has_base_id()) out.deletion_file->base_id = d.base_id();
  }
  return out;
}

Json DataFileJson(const DataFileMetadata& f) {
  return {{"fields", f.fields},
          {"column_indices", f.column_indices},
          {"file_major_version", f.file_major_version},
          {"file_minor_version", f.file_minor_version},
          {"file_size_bytes", f.file_size_bytes},
          {"base_id", f.base_id ? Json(*f.base_id) : Json(nullptr)},
          {"path", f.path}};
}

DataFileMetadata ParseDataFile(const Json& f) {
  if (!f.is_object()) ThrowInvalid("fragment JSON: a data file is {}, expected an object", f.dump());
  DataFileMetadata file;
  const Json& path = Key(f, "path", "a data file");
  if (!path.is_string()) ThrowInvalid("fragment JSON: \"path\" of a data file is {}, expected a string", path.dump());
  file.path = path.get<std::string>();
  file.fields = Ids(f, "fields", "a data file");
  file.column_indices = Ids(f, "column_indices", "a data file");
  file.file_major_version = Number<uint32_t>(f, "file_major_version", "a data file");
  file.file_minor_version = Number<uint32_t>(f, "file_minor_version", "a data file");
  file.file_size_bytes = Number<uint64_t>(f, "file_size_bytes", "a data file");
  if (auto it = f.find("base_id"); it != f.end() && !it->is_null())
    file.base_id = Number<uint32_t>(f, "base_id", "a data file");
  return file;
}

// One set of offsets: a list of row offsets, or (the compact form overlay groups write) the
// base64 of the portable Roaring bitmap holding them, the bytes the manifest stores.
std::vector<uint32_t> ParseOffsets(const Json& set) {
  if (set.is_string()) {
    const std::string& text = set.get_ref<const std::string&>();
    auto bytes = text::Base64Decode(text);
    if (!bytes) ThrowInvalid("fragment JSON: overlay offsets \"{:.40}\" are not base64", text);
    return format::RoaringBitmap::DeserializePortable(*bytes, "fragment JSON: overlay offsets").ToVector();
  }
  if (!set.is_array()) ThrowInvalid("fragment JSON: \"offsets\" of an overlay holds {:.80}, expected a list", set.dump());
  std::vector<uint32_t> values;
  values.reserve(set.size());
  for (const Json& v : set) {
    if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX)
      ThrowInvalid("fragment JSON: an overlay offset is {}, expected a 32-bit row offset", v.dump());
    values.push_back(v.get<uint32_t>());
  }
  return values;
}

// {"data_file", "offsets"}: offsets one set (dense, pylance's shape) or a list of sets (one
// per field), each set as ParseOffsets reads it.
OverlayFileMetadata ParseOverlay(const Json& o) {
  if (!o.is_object()) ThrowInvalid("fragment JSON: an overlay is {}, expected an object", o.dump());
  OverlayFileMetadata file;
  file.data_file = ParseDataFile(Key(o, "data_file", "an overlay"));
  const Json& offsets = Key(o, "offsets", "an overlay");
  if (!offsets.is_array() && !offsets.is_string())
    ThrowInvalid("fragment JSON: \"offsets\" of an overlay is {:.80}, expected a list", offsets.dump());
  if (offsets.is_string() || (!offsets.empty() && offsets[0].is_number())) {
    file.offsets.push_back(ParseOffsets(offsets));
    return file;
  }
  for (const Json& set : offsets) file.offsets.push_back(ParseOffsets(set));
  return file;
}

// A set of offsets in the compact form ParseOffsets reads.
Json CompactOffsets(const std::vector<uint32_t>& set) {
  return text::Base64Encode(format::RoaringBitmap::FromValues(set).SerializePortable());
}

Json ParseJson(std::string_view text, const char* what) {
  try {
    Json j = Json::parse(text);
    if (!j.is_object()) ThrowInvalid("{} JSON is {}, expected an object", what, j.type_name());
    return j;
  } catch (const Json::exception& e) {
    ThrowInvalid("{} JSON does not parse: {}", what, e.what());
  }
}

// The field ids of `schema`, at every depth.
std::set<int32_t> FieldIds(const format::LanceSchema& schema) {
  std::set<int32_t> ids;
  for (const auto& top : schema.fields()) top.ForEach([&](const format::LanceField& f) { ids.insert(f.id); });
  return ids;
}

// Refuses a data file the schema it joins cannot read: a path outside data/, a field the
// schema lacks (`ids`), or lists of fields and columns of different lengths. `whose`
// names what lists the file ("fragment 2 of the operation").
void CheckDataFile(const DataFileMetadata& file, const std::set<int32_t>& ids, const std::string& uri,
                   const std::string& whose) {
  if (file.path.empty() || file.path.find('/') != std::string::npos)
    ThrowInvalid("'{}': {} names the data file '{}', expected a file name under data/", uri, whose, file.path);
  if (file.column_indices.size() != file.fields.size())
    ThrowInvalid("'{}': data file '{}' lists {} fields but {} column indices", uri, file.path, file.fields.size(),
                 file.column_indices.size());
  for (int32_t id : file.fields)
    if (!ids.contains(id))
      ThrowInvalid("'{}': data file '{}' holds field id {}, which the dataset's schema does not have", uri, file.path,
                   id);
}

// Refuses fragments the schema they join cannot read (CheckDataFile), with no files, or
// with deletions (fragments written by WriteFragments have none).
void CheckFragments(const std::vector<FragmentMetadata>& fragments, const format::LanceSchema& schema,
                    const std::string& uri) {
  const std::set<int32_t> ids = FieldIds(schema);
  for (size_t k = 0; k < fragments.size(); ++k) {
    if (fragments[k].files.empty()) ThrowInvalid("'{}': fragment {} of the operation has no data files", uri, k);
    if (fragments[k].deletion_file || !fragments[k].overlays.empty())
      ThrowInvalid("'{}': fragment {} of the operation has {}; only fragments written and not yet committed "
                   "(write_fragments) are appended", uri, k,
                   fragments[k].deletion_file ? "a deletion file" : "overlays");
    for (const DataFileMetadata& file : fragments[k].files)
      CheckDataFile(file, ids, uri, fmt::format("fragment {} of the operation", k));
  }
}

const lance::table::DataFragment& FragmentOf(const table::DatasetState& base, uint64_t id, const char* what) {
  const auto* f = base.FindFragment(id);
  if (!f) ThrowInvalid("'{}': {} for fragment {}, which version {} does not have", base.uri, what, id, base.version());
  return *f;
}

// The read set of an UPDATE given as text: its predicate's columns on every row, its SET
// expressions' on the rows it changed (filled in by the caller), every fragment of `base`.
std::shared_ptr<table::ReadSet> UpdateReadSet(const table::DatasetState& base,
                                              const std::vector<Dataset::SetClause>& set,
                                              const std::string& predicate) {
  std::vector<std::string> needed;
  for (const auto& c : set)
    for (auto& name : ReferencedColumns(*ParseExpression(c.expression))) needed.push_back(name);
  return table::ReadSet::OfStatement(
      base, predicate.empty() ? std::vector<std::string>{} : ReferencedColumns(*ParseExpression(predicate)), needed);
}

// The DataOverlay transaction of `operation` on `base`, and for an UPDATE's overlays the
// read set that makes a concurrent change to what it read a retryable conflict.
void AddOverlayGroups(const table::DatasetState& base, const Operation& operation, lance::table::Transaction& t,
                      table::CommitOptions& commit) {
  std::map<uint64_t, std::vector<uint32_t>> changed;
  const std::set<int32_t> ids = FieldIds(base.schema);
  for (const OverlayGroupMetadata& g : operation.overlay_groups) {
    const lance::table::DataFragment& fragment = FragmentOf(base, g.fragment_id, "overlays");
    table::CheckTakesOverlays(base, "overlay on", fragment);
    auto* group = t.mutable_data_overlay()->add_groups();
    group->set_fragment_id(g.fragment_id);
    for (const OverlayFileMetadata& o : g.overlays) {
      CheckDataFile(o.data_file, ids, base.uri, fmt::format("the overlay of fragment {}", g.fragment_id));
      const size_t entries = o.data_file.fields.size();
      if (o.offsets.size() != 1 && o.offsets.size() != entries)
        ThrowInvalid("'{}': overlay '{}' lists {} offset sets for {} fields (expected 1 or {})", base.uri,
                     o.data_file.path, o.offsets.size(), entries, entries);
      for (const auto& set : o.offsets)
        for (uint32_t offset : set)
          if (offset >= fragment.physical_rows())
            ThrowInvalid("'{}': overlay '{}' covers offset {} of fragment {}, which has {} rows", base.uri,
                         o.data_file.path, offset, g.fragment_id, fragment.physical_rows());
      auto* file = group->add_overlays();
      *file->mutable_data_file() = DataFileProto(o.data_file);
      if (o.offsets.size() == 1) {
        file->set_shared_offset_bitmap(format::RoaringBitmap::FromValues(o.offsets[0]).SerializePortable());
      } else {
        for (const auto& set : o.offsets)
          file->mutable_field_coverage()->add_offset_bitmaps(format::RoaringBitmap::FromValues(set).SerializePortable());
      }
      auto& rows = changed[g.fragment_id];
      for (const auto& set : o.offsets) rows.insert(rows.end(), set.begin(), set.end());
    }
  }
  if (!operation.update) return;
  auto read_set = UpdateReadSet(base, operation.update->first, operation.update->second);
  for (auto& [fragment, rows] : changed) {
    if (!std::is_sorted(rows.begin(), rows.end())) std::sort(rows.begin(), rows.end());  // one set is sorted
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    read_set->changed_rows[fragment] = format::RoaringBitmap::FromValues(rows);
  }
  commit.read_set = std::move(read_set);
}

// Each fragment of `updated` as `base` has it, with its new deletion file, into `out`; the
// rows each newly deletes into `read_set`.changed_rows. A fragment with no deletion file
// where `base` has none changes nothing (pylance's answer when no row matched).
void AddDeletionFiles(const table::DatasetState& base, const std::vector<FragmentMetadata>& updated,
                      google::protobuf::RepeatedPtrField<lance::table::DataFragment>& out, table::ReadSet& read_set) {
  for (const FragmentMetadata& m : updated) {
    const auto& fragment = FragmentOf(base, m.id, "deletions");
    if (!m.deletion_file) {
      if (!fragment.has_deletion_file()) continue;
      ThrowInvalid("'{}': fragment {} of the operation has no deletion file, but version {} has one (a fragment "
                   "whose rows all go is listed as deleted or removed)", base.uri, m.id, base.version());
    }
    lance::table::DataFragment* next = out.Add();
    *next = fragment;
    *next->mutable_deletion_file() = DeletionFileProto(*m.deletion_file);
    // The rows this commit removes: the new file's, less those already gone.
    const format::RoaringBitmap deleted = table::ReadDeletionFile(
        *base.store, base.DeletionFilePath(m.id, next->deletion_file()), m.id, fragment.physical_rows(),
        next->deletion_file());
    const format::RoaringBitmap before = table::FragmentReader(base, fragment).deletions();
    before.ForEach([&](uint64_t o) {
      if (!deleted.Contains(uint32_t(o)))
        ThrowInvalid("'{}': the new deletion file of fragment {} restores row {}, which version {} deleted",
                     base.uri, m.id, o, base.version());
    });
    std::vector<uint32_t> removed;
    deleted.ForEach([&](uint64_t o) {
      if (!before.Contains(uint32_t(o))) removed.push_back(uint32_t(o));
    });
    read_set.changed_rows[m.id] = format::RoaringBitmap::FromValues(removed);
  }
}

// Every row of the fragments `ids` of `base` changed (they leave the manifest).
void AllRowsChanged(const table::DatasetState& base, const std::vector<uint64_t>& ids, table::ReadSet& read_set) {
  for (uint64_t id : ids) {
    std::vector<uint32_t> all(FragmentOf(base, id, "removal").physical_rows());
    for (uint32_t o = 0; o < all.size(); ++o) all[o] = o;
    read_set.changed_rows[id] = format::RoaringBitmap::FromValues(all);
  }
}

// The Delete transaction of `operation` on `base`, and the read set that makes a
// concurrent change to what the predicate read, or to the rows it deletes, a retryable
// conflict.
void AddDeletions(const table::DatasetState& base, const Operation& operation, lance::table::Transaction& t,
                  table::CommitOptions& commit) {
  auto* d = t.mutable_delete_();
  d->set_predicate(operation.predicate);
  auto read_set = UpdateReadSet(base, {}, operation.predicate);
  AddDeletionFiles(base, operation.fragments, *d->mutable_updated_fragments(), *read_set);
  AllRowsChanged(base, operation.deleted_fragment_ids, *read_set);
  for (uint64_t id : operation.deleted_fragment_ids) d->add_deleted_fragment_ids(id);
  commit.read_set = std::move(read_set);
}

// The REWRITE_ROWS Update of `operation` on `base`: rows deleted where they were, their
// new values in fresh fragments.
void AddMovedRows(const table::DatasetState& base, const Operation& operation, lance::table::Transaction& t,
                  table::CommitOptions& commit) {
  if (base.manifest.reader_feature_flags() & table::kFlagStableRowIds)
    ThrowNotSupported("'{}' has stable row ids, which an Update of moved rows would renumber; update in one process "
                      "(Dataset::Update)", base.uri);
  CheckFragments(operation.new_fragments, base.schema, base.uri);
  auto* u = t.mutable_update();
  u->set_update_mode(lance::table::Transaction::REWRITE_ROWS);
  const std::vector<Dataset::SetClause> none;
  auto read_set = operation.update ? UpdateReadSet(base, operation.update->first, operation.update->second)
                                   : UpdateReadSet(base, none, "");
  AddDeletionFiles(base, operation.fragments, *u->mutable_updated_fragments(), *read_set);
  AllRowsChanged(base, operation.deleted_fragment_ids, *read_set);
  for (uint64_t id : operation.deleted_fragment_ids) u->add_removed_fragment_ids(id);
  for (const auto& f : operation.new_fragments) *u->add_new_fragments() = ToProto(f);
  if (operation.update) commit.read_set = std::move(read_set);
}

}  // namespace

std::string FragmentMetadata::ToJson() const {
  Json files_json = Json::array();
  for (const DataFileMetadata& f : files) files_json.push_back(DataFileJson(f));
  Json overlays_json = Json::array();
  for (const OverlayFileMetadata& o : overlays)
    overlays_json.push_back({{"data_file", DataFileJson(o.data_file)},
                             {"offsets", o.offsets.size() == 1 ? Json(o.offsets[0]) : Json(o.offsets)},
                             {"committed_version", o.committed_version ? Json(o.committed_version) : Json(nullptr)}});
  Json out = {{"id", id}, {"files", files_json}, {"overlays", overlays_json}, {"physical_rows", physical_rows}};
  out["deletion_file"] = nullptr;
  if (deletion_file)
    out["deletion_file"] = {{"read_version", deletion_file->read_version},
                            {"id", deletion_file->id},
                            {"file_type", deletion_file->file_type},
                            {"num_deleted_rows", deletion_file->num_deleted_rows},
                            {"base_id", deletion_file->base_id ? Json(*deletion_file->base_id) : Json(nullptr)}};
  for (const char* key : kCommittedOnlyKeys) out[key] = nullptr;
  return out.dump();
}

FragmentMetadata FragmentMetadata::FromJson(std::string_view text) {
  const Json j = ParseJson(text, "fragment");
  FragmentMetadata out;
  out.id = Number<uint64_t>(j, "id", "the fragment");
  out.physical_rows = Number<uint64_t>(j, "physical_rows", "the fragment");
  for (const char* key : kCommittedOnlyKeys)
    if (auto it = j.find(key); it != j.end() && !it->is_null())
      ThrowNotSupported("fragment JSON: fragment {} has a \"{}\"; only fragments written and not yet committed "
                        "(write_fragments) can be committed", out.id, key);
  const Json& files = Key(j, "files", "the fragment");
  if (!files.is_array()) ThrowInvalid("fragment JSON: \"files\" is {}, expected a list", files.dump());
  for (const Json& f : files) out.files.push_back(ParseDataFile(f));
  if (auto it = j.find("overlays"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) ThrowInvalid("fragment JSON: \"overlays\" is {}, expected a list", it->dump());
    for (const Json& o : *it) {
      OverlayFileMetadata file = ParseOverlay(o);
      if (auto v = o.find("committed_version"); v != o.end() && !v->is_null())
        file.committed_version = Number<uint64_t>(o, "committed_version", "an overlay");
      out.overlays.push_back(std::move(file));
    }
  }
  if (auto it = j.find("deletion_file"); it != j.end() && !it->is_null()) {
    const Json& d = *it;
    if (!d.is_object()) ThrowInvalid("fragment JSON: \"deletion_file\" is {}, expected an object", d.dump());
    DeletionFileMetadata file;
    const Json& type = Key(d, "file_type", "the deletion file");
    if (type != "array" && type != "bitmap")
      ThrowInvalid("fragment JSON: \"file_type\" of the deletion file is {}, expected \"array\" or \"bitmap\"",
                   type.dump());
    file.file_type = type.get<std::string>();
    file.read_version = Number<uint64_t>(d, "read_version", "the deletion file");
    file.id = Number<uint64_t>(d, "id", "the deletion file");
    file.num_deleted_rows = Number<uint64_t>(d, "num_deleted_rows", "the deletion file");
    if (auto b = d.find("base_id"); b != d.end() && !b->is_null())
      file.base_id = Number<uint32_t>(d, "base_id", "the deletion file");
    out.deletion_file = std::move(file);
  }
  return out;
}

std::string OverlayGroupMetadata::ToJson(OffsetForm form) const {
  const bool lists = form == OffsetForm::kLists;
  Json overlays_json = Json::array();
  for (const OverlayFileMetadata& o : overlays) {
    Json offsets = Json::array();
    for (const auto& set : o.offsets) offsets.push_back(lists ? Json(set) : CompactOffsets(set));
    overlays_json.push_back({{"data_file", DataFileJson(o.data_file)}, {"offsets", std::move(offsets)}});
  }
  return Json{{"fragment_id", fragment_id}, {"overlays", overlays_json}}.dump();
}

OverlayGroupMetadata OverlayGroupMetadata::FromJson(std::string_view text) {
  const Json j = ParseJson(text, "overlay group");
  OverlayGroupMetadata out;
  out.fragment_id = Number<uint64_t>(j, "fragment_id", "the overlay group");
  const Json& overlays = Key(j, "overlays", "the overlay group");
  if (!overlays.is_array()) ThrowInvalid("fragment JSON: \"overlays\" is {}, expected a list", overlays.dump());
  for (const Json& o : overlays) out.overlays.push_back(ParseOverlay(o));
  return out;
}

std::vector<FragmentMetadata> WriteFragments(const std::string& raw_uri, RecordBatchReader& data,
                                             const WriteOptions& options) {
  auto [store, uri] = io::OpenStore(raw_uri, options.storage_options);
  const std::shared_ptr<Session> session = options.session ? options.session : Session::Default();
  auto latest = table::LatestManifest(*store, uri);
  std::optional<format::LanceSchema> schema;
  format::FileVersion version = format::FileVersion::Parse(options.file_version);
  if (latest && options.mode != WriteMode::kOverwrite) {
    auto state = table::LoadState(store, session->caches(), uri, latest->version);
    schema = state->schema;
    version = state->WriteVersion();
  } else {
    schema = format::LanceSchema::FromArrow(*data.schema());
  }
  table::AttemptFiles attempt(*store);
  for (const std::string& dir : {uri, io::JoinPath(uri, table::kDataDir)})
    if (!store->Exists(dir)) attempt.AddDirectory(dir);
  table::FragmentWriter writer(*store, attempt, uri, std::move(*schema), version, options.max_rows_per_file);
  while (auto batch = data.Next()) writer.Write(*batch);
  std::vector<FragmentMetadata> out;
  for (const auto& f : writer.Finish()) out.push_back(FromProto(f));
  attempt.Published();  // the files stay for the commit (or cleanup) to come
  return out;
}

std::vector<OverlayGroupMetadata> WriteUpdateOverlays(const DatasetPtr& dataset,
                                                      const std::vector<uint64_t>& fragment_ids,
                                                      const std::vector<Dataset::SetClause>& set,
                                                      const std::string& predicate) {
  const auto state = table::StatePtrOf(dataset);
  const std::set<uint64_t> wanted(fragment_ids.begin(), fragment_ids.end());
  for (const auto& f : state->manifest.fragments())
    if (wanted.contains(f.id())) table::CheckTakesOverlays(*state, "overlay on", f);
  std::vector<Dataset::SetExpression> typed;
  for (const auto& c : set) typed.push_back({c.column, ParseExpression(c.expression)});
  const table::UpdateValues found =
      table::EvaluateUpdate(state, typed, predicate.empty() ? nullptr : ParseExpression(predicate), wanted);
  table::AttemptFiles attempt(*state->store);
  std::vector<OverlayGroupMetadata> out;
  for (const auto& [fragment_id, offsets] : found.offsets) {
    std::vector<table::OverlayColumn> columns;
    for (size_t i = 0; i < set.size(); ++i)
      columns.push_back({found.set_fields[i], &offsets, found.values.at(fragment_id)[i]});
    const lance::table::DataOverlayFile file = table::WriteOverlay(*state, columns, attempt);
    OverlayFileMetadata overlay;
    overlay.data_file = DataFileOf(file.data_file());
    overlay.offsets = file.has_field_coverage()
                          ? OffsetSets(file, fmt::format("the overlay of fragment {}", fragment_id))
                          : std::vector<std::vector<uint32_t>>{offsets};
    out.push_back({fragment_id, {std::move(overlay)}});
  }
  attempt.Published();  // the files stay for the commit (or cleanup) to come
  return out;
}

FragmentMetadata FragmentMetadataOf(const DatasetPtr& dataset, uint64_t id) {
  const auto state = table::StatePtrOf(dataset);
  const auto* f = state->FindFragment(id);
  if (!f) ThrowNotFound("'{}': no fragment {} in version {}", state->uri, id, state->version());
  if (f->row_id_sequence_case() || f->last_updated_at_version_sequence_case() || f->created_at_version_sequence_case())
    ThrowNotSupported("'{}': fragment {} has row ids or row versions, which its metadata does not carry", state->uri,
                      id);
  return FromProto(*f);
}

Deletions WriteDeletions(const DatasetPtr& dataset, const std::vector<uint64_t>& fragment_ids,
                         const std::string& predicate) {
  if (predicate.empty()) ThrowInvalid("delete needs a predicate (use 'true' to delete every row)");
  const auto state = table::StatePtrOf(dataset);
  if (state->manifest.reader_feature_flags() & table::kFlagStableRowIds)
    ThrowNotSupported("'{}' has stable row ids, which a fragment's metadata does not carry; delete in one process "
                      "(Dataset::Delete)", state->uri);
  for (uint64_t id : fragment_ids)
    if (!state->FindFragment(id))
      ThrowNotFound("'{}': no fragment {} in version {} to delete from", state->uri, id, state->version());
  const auto matched = table::OffsetsWhere(state, ParseExpression(predicate),
                                           std::set<uint64_t>(fragment_ids.begin(), fragment_ids.end()));
  table::AttemptFiles attempt(*state->store);
  Deletions out;
  for (const auto& fragment : state->manifest.fragments()) {
    auto it = matched.find(fragment.id());
    if (it == matched.end() || it->second.empty()) continue;
    out.rows_deleted += it->second.size();
    auto file = table::DeletionFileWith(*state, fragment, it->second, attempt);
    if (!file) {
      out.deleted_fragment_ids.push_back(fragment.id());
      continue;
    }
    lance::table::DataFragment updated = fragment;
    *updated.mutable_deletion_file() = std::move(*file);
    out.updated_fragments.push_back(FromProto(updated));
  }
  attempt.Wait();
  attempt.Published();  // the files stay for the commit (or cleanup) to come
  return out;
}

Operation Operation::Delete(std::vector<FragmentMetadata> updated, std::vector<uint64_t> deleted_fragment_ids,
                            std::string predicate) {
  Operation op;
  op.kind = Kind::kDelete;
  op.fragments = std::move(updated);
  op.deleted_fragment_ids = std::move(deleted_fragment_ids);
  op.predicate = std::move(predicate);
  return op;
}

Operation Operation::Append(std::vector<FragmentMetadata> fragments) {
  Operation op;
  op.fragments = std::move(fragments);
  return op;
}

Operation Operation::Overwrite(SchemaPtr schema, std::vector<FragmentMetadata> fragments) {
  if (!schema) ThrowInvalid("an Overwrite operation needs the new schema");
  Operation op;
  op.kind = Kind::kOverwrite;
  op.fragments = std::move(fragments);
  op.schema = std::move(schema);
  return op;
}

Operation Operation::Update(std::vector<uint64_t> removed_fragment_ids, std::vector<FragmentMetadata> updated,
                            std::vector<FragmentMetadata> new_fragments,
                            std::optional<std::pair<std::vector<Dataset::SetClause>, std::string>> update) {
  Operation op;
  op.kind = Kind::kUpdate;
  op.deleted_fragment_ids = std::move(removed_fragment_ids);
  op.fragments = std::move(updated);
  op.new_fragments = std::move(new_fragments);
  op.update = std::move(update);
  return op;
}

Operation Operation::DataOverlay(std::vector<OverlayGroupMetadata> groups) {
  Operation op;
  op.kind = Kind::kDataOverlay;
  op.overlay_groups = std::move(groups);
  return op;
}

Operation Operation::UpdateOverlays(std::vector<OverlayGroupMetadata> groups, std::vector<Dataset::SetClause> set,
                                    std::string predicate) {
  Operation op = DataOverlay(std::move(groups));
  op.update.emplace(std::move(set), std::move(predicate));
  return op;
}

DatasetPtr CommitOperation(const std::string& raw_uri, const Operation& operation,
                           std::optional<uint64_t> read_version, const WriteOptions& options) {
  auto [store, uri] = io::OpenStore(raw_uri, options.storage_options);
  const std::shared_ptr<Session> session = options.session ? options.session : Session::Default();
  auto latest = table::LatestManifest(*store, uri);
  if (read_version && !latest)
    ThrowNotFound("cannot commit on version {} of '{}': the dataset does not exist", *read_version, uri);
  std::shared_ptr<const table::DatasetState> base;
  if (latest) base = table::LoadState(store, session->caches(), uri, read_version ? *read_version : latest->version);
  lance::table::Transaction t;
  table::CommitOptions commit;
  commit.max_retries = options.max_commit_retries;
  commit.session = session->caches();
  if (operation.kind == Operation::Kind::kDataOverlay) {
    if (!base) ThrowNotFound("cannot add overlays: dataset '{}' does not exist", uri);
    AddOverlayGroups(*base, operation, t, commit);
  } else if (operation.kind == Operation::Kind::kUpdate) {
    if (!base) ThrowNotFound("cannot update: dataset '{}' does not exist", uri);
    AddMovedRows(*base, operation, t, commit);
  } else if (operation.kind == Operation::Kind::kDelete) {
    if (!base) ThrowNotFound("cannot delete: dataset '{}' does not exist", uri);
    AddDeletions(*base, operation, t, commit);
  } else if (operation.kind == Operation::Kind::kAppend) {
    if (!base) ThrowNotFound("cannot append: dataset '{}' does not exist (commit an Overwrite to create it)", uri);
    CheckFragments(operation.fragments, base->schema, uri);
    for (const auto& f : operation.fragments) *t.mutable_append()->add_fragments() = ToProto(f);
  } else {
    const format::LanceSchema schema = format::LanceSchema::FromArrow(*operation.schema);
    CheckFragments(operation.fragments, schema, uri);
    auto* overwrite = t.mutable_overwrite();
    schema.ToProto(overwrite->mutable_schema());
    for (const auto& [k, v] : schema.metadata()) (*overwrite->mutable_schema_metadata())[k] = v;
    for (const auto& f : operation.fragments) *overwrite->add_fragments() = ToProto(f);
    // A dataset lancelet makes permits overlays; one it overwrites keeps its owner's choice.
    if (!base) (*overwrite->mutable_config_upsert_values())[table::kOverlaysEnabledKey] = "true";
    commit.enable_stable_row_ids = options.enable_stable_row_ids;
    commit.file_version = options.file_version;  // the files' own, when they say
    if (!operation.fragments.empty() && !operation.fragments[0].files.empty()) {
      const DataFileMetadata& file = operation.fragments[0].files[0];
      if (auto v = format::FileVersion::FromDisk(file.file_major_version, file.file_minor_version))
        commit.file_version = v->ToString();
    }
  }
  return table::MakeDataset(table::Commit(store, uri, base, std::move(t), commit));
}

}  // namespace lancelet
