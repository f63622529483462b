#include "table/index_section.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "format/lance_schema.h"
#include "format/little_endian.h"
#include "format/roaring_bitmap.h"
#include "lancelet/error.h"
#include "table/feature_flags.h"
#include "table/index_staleness.h"
#include "table/manifest_builder.h"

namespace lancelet::table {

namespace {

// Indexes the reference keeps for itself, whatever the schema.
bool IsSystemIndex(const lance::table::IndexMetadata& index) {
  return index.name() == "__lance_frag_reuse" || index.name() == "__lance_mem_wal";
}

// Whether a segment covers any fragment of `fragments`; a segment without a bitmap (no
// bytes: an empty bitmap still has its 8-byte header) has unknown coverage, which counts
// as covering.
bool CoversAny(const lance::table::IndexMetadata& index, const std::set<uint64_t>& fragments) {
  auto bitmap = IndexFragments(index);
  if (!bitmap) return true;
  for (uint64_t id : fragments)
    if (id <= UINT32_MAX && bitmap->Contains(uint32_t(id))) return true;
  return false;
}

// The reference's retain rule: see index_section.h.
lance::table::IndexSection RetainRelevant(const lance::table::IndexSection& before,
                                          const lance::table::Manifest& next) {
  std::set<int32_t> field_ids;
  for (const auto& f : next.fields()) field_ids.insert(f.id());
  std::set<uint64_t> fragments;
  for (const auto& f : next.fragments()) fragments.insert(f.id());

  std::map<std::string, std::vector<int>> by_name;  // segments whose fields all remain
  for (int i = 0; i < before.indices_size(); ++i) {
    const auto& index = before.indices(i);
    bool fields_remain = std::all_of(index.fields().begin(), index.fields().end(),
                                     [&](int32_t id) { return field_ids.count(id) > 0; });
    if (fields_remain || IsSystemIndex(index)) by_name[index.name()].push_back(i);
  }
  std::set<int> kept;
  for (const auto& [name, segments] : by_name) {
    std::vector<int> covering;
    for (int i : segments)
      if (segments.size() == 1 || IsSystemIndex(before.indices(i)) || CoversAny(before.indices(i), fragments))
        covering.push_back(i);
    if (covering.empty())  // every segment is empty: the oldest stays, so the index keeps its name
      covering.push_back(*std::min_element(segments.begin(), segments.end(), [&](int a, int b) {
        return before.indices(a).dataset_version() < before.indices(b).dataset_version();
      }));
    kept.insert(covering.begin(), covering.end());
  }
  lance::table::IndexSection out;
  for (int i : kept) *out.add_indices() = before.indices(i);  // in their original order
  return out;
}

// Lets `edit` change each (non-system) index's fragment bitmap, and stores the bitmaps
// it reports changed. A segment without a bitmap covers every fragment: `edit` gets the
// base's fragments listed, so that it can remove some.
lance::table::IndexSection EditCoverage(
    lance::table::IndexSection section, const lance::table::Manifest& base,
    const std::function<bool(const lance::table::IndexMetadata&, format::RoaringBitmap&)>& edit) {
  for (auto& index : *section.mutable_indices()) {
    if (IsSystemIndex(index)) continue;
    auto bitmap = IndexFragments(index);
    if (!bitmap) {
      bitmap.emplace();
      for (const auto& f : base.fragments()) bitmap->Add(uint32_t(f.id()));
    }
    if (edit(index, *bitmap))
      index.set_fragment_bitmap(bitmap->SerializePortable(format::RoaringBitmap::RunContainers::kNone));
  }
  return section;
}

// Removes `ids` from `bitmap`; true when it held any of them.
bool RemoveAll(format::RoaringBitmap& bitmap, const std::set<uint64_t>& ids) {
  bool removed = false;
  for (uint64_t id : ids)
    if (bitmap.Contains(uint32_t(id))) {
      bitmap.Remove(uint32_t(id));
      removed = true;
    }
  return removed;
}

// For a Rewrite group: the newest committed_version of an overlay on each field id in
// the group's old fragments (tombstones skipped).
std::map<int32_t, uint64_t> OverlayVersions(const lance::table::Manifest& base, const std::set<uint64_t>& old_ids) {
  std::map<int32_t, uint64_t> out;
  for (const auto& f : base.fragments()) {
    if (!old_ids.count(f.id())) continue;
    for (const auto& o : f.overlays())
      for (int32_t id : o.data_file().fields())
        if (id >= 0) out[id] = std::max(out[id], o.committed_version());
  }
  return out;
}

}  // namespace

namespace {

// The section of a manifest file of `size` bytes, whose ranges read(offset, length) gives.
template <typename Read>
lance::table::IndexSection DecodeIndexSection(const std::string& manifest_path, const lance::table::Manifest& manifest,
                                              uint64_t size, const Read& read) {
  lance::table::IndexSection section;
  if (!manifest.has_index_section()) return section;
  const uint64_t offset = manifest.index_section();
  if (offset > size || size - offset < 4)
    ThrowCorrupt("manifest '{}': index section offset {} is outside the file ({} bytes)", manifest_path, offset, size);
  const uint32_t length = format::LoadLE<uint32_t>(std::string(read(offset, 4)).data());
  if (length > size - offset - 4)
    ThrowCorrupt("manifest '{}': the index section at offset {} claims {} bytes but the file has {} after it",
                 manifest_path, offset, length, size - offset - 4);
  if (!section.ParseFromString(std::string(read(offset + 4, length))))
    ThrowCorrupt("manifest '{}': the index section at offset {} does not parse", manifest_path, offset);
  return section;
}

}  // namespace

lance::table::IndexSection ReadIndexSection(const io::ObjectStore& store, const std::string& manifest_path,
                                            const lance::table::Manifest& manifest) {
  if (!manifest.has_index_section()) return {};
  auto file = store.OpenRead(manifest_path);
  return DecodeIndexSection(manifest_path, manifest, file->size(),
                            [&](uint64_t offset, uint64_t length) { return file->Read(offset, length); });
}

lance::table::IndexSection ParseIndexSection(const std::string& manifest_path, std::string_view file,
                                             const lance::table::Manifest& manifest) {
  return DecodeIndexSection(manifest_path, manifest, file.size(),
                            [&](uint64_t offset, uint64_t length) { return file.substr(offset, length); });
}

lance::table::IndexSection CarryIndexes(const lance::table::IndexSection& before, const lance::table::Manifest* base,
                                        const lance::table::Manifest& next,
                                        const lance::table::Transaction& transaction) {
  using T = lance::table::Transaction;
  switch (transaction.operation_case()) {
    case T::kOverwrite:
      return {};
    case T::kAppend:
    case T::kDataOverlay:
      return before;
    case T::kCreateIndex: {
      // Removed segments go (by uuid), new ones join, replacing a segment of the same uuid.
      std::set<std::string> gone;
      for (const auto& index : transaction.create_index().removed_indices()) gone.insert(index.uuid().uuid());
      for (const auto& index : transaction.create_index().new_indices()) gone.insert(index.uuid().uuid());
      lance::table::IndexSection out;
      for (const auto& index : before.indices())
        if (!gone.count(index.uuid().uuid())) *out.add_indices() = index;
      for (const auto& index : transaction.create_index().new_indices()) *out.add_indices() = index;
      return out;
    }
    case T::kUpdate: {
      // A column rewritten in place (REWRITE_COLUMNS: lancelet's overlay fold) leaves no
      // overlay to mark its new values stale: the updated fragments leave every index on
      // a modified field (the reference's prune_updated_fields_from_indices). lancelet's
      // overlay-carrying Update (merge_commit.h) is a REWRITE_ROWS and prunes nothing.
      const auto& u = transaction.update();
      if (u.update_mode() != T::REWRITE_COLUMNS || u.fields_modified().empty() || !base)
        return RetainRelevant(before, next);
      const auto schema = format::LanceSchema::FromProto(base->fields(), {});
      std::set<uint64_t> updated;
      for (const auto& f : u.updated_fragments()) updated.insert(f.id());
      auto pruned = EditCoverage(before, *base, [&](const lance::table::IndexMetadata& index, auto& bitmap) {
        const auto staleness = IndexStaleness::Of(schema, index);
        bool on_modified = std::any_of(u.fields_modified().begin(), u.fields_modified().end(),
                                       [&](int32_t id) { return staleness.Affects(int32_t(id)); });
        return on_modified && RemoveAll(bitmap, updated);
      });
      return RetainRelevant(pruned, next);
    }
    case T::kRewrite: {
      // The old fragments leave every index. Row addresses changed, so without stable row
      // ids an index cannot find the moved rows: the new fragments are scanned flat until
      // the index is optimized. With stable row ids the index's ids still name the rows,
      // and an index that covered the whole group covers its new fragments, unless an
      // overlay on one of its fields is newer than the index: the rewrite folded it and
      // with it the signal that marked those rows stale (the reference's
      // prune_overlay_stale_fields_from_indices). New ids follow BuildManifest: from
      // max_fragment_id + 1, group by group.
      if (!base) return RetainRelevant(before, next);
      const bool stable = (next.reader_feature_flags() & kFlagStableRowIds) != 0;
      const auto schema = format::LanceSchema::FromProto(base->fields(), {});
      lance::table::IndexSection out = before;
      uint64_t next_id = NextFragmentId(*base);
      for (const auto& group : transaction.rewrite().groups()) {
        std::set<uint64_t> old_ids;
        for (const auto& f : group.old_fragments()) old_ids.insert(f.id());
        std::vector<uint64_t> new_ids;
        for (int i = 0; i < group.new_fragments_size(); ++i) new_ids.push_back(next_id++);
        auto overlay_versions = OverlayVersions(*base, old_ids);
        out = EditCoverage(out, *base, [&](const lance::table::IndexMetadata& index, auto& bitmap) {
          const bool whole_group = std::all_of(old_ids.begin(), old_ids.end(),
                                               [&](uint64_t id) { return bitmap.Contains(uint32_t(id)); });
          const auto staleness = IndexStaleness::Of(schema, index);
          const bool stale = std::any_of(overlay_versions.begin(), overlay_versions.end(),
                                         [&](const auto& fv) { return staleness.Stales(fv.first, fv.second); });
          bool changed = RemoveAll(bitmap, old_ids);
          if (stable && whole_group && !stale && !new_ids.empty()) {
            for (uint64_t id : new_ids) bitmap.Add(uint32_t(id));
            changed = true;
          }
          return changed;
        });
      }
      return RetainRelevant(out, next);
    }
    default:
      return RetainRelevant(before, next);
  }
}

std::optional<format::RoaringBitmap> IndexFragments(const lance::table::IndexMetadata& index) {
  if (index.fragment_bitmap().empty()) return std::nullopt;
  return format::RoaringBitmap::DeserializePortable(index.fragment_bitmap(),
                                                    "fragment_bitmap of index '" + index.name() + "'");
}

std::string UuidText(const std::string& bytes) {
  std::string hex;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) hex += '-';
    hex += fmt::format("{:02x}", uint8_t(bytes[i]));
  }
  return hex;
}

std::string UuidBytes(const std::string& text) {
  std::string out;
  auto digit = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    ThrowInvalid("'{}' is not a UUID (8-4-4-4-12 hex digits)", text);
  };
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '-' && (i == 8 || i == 13 || i == 18 || i == 23)) continue;
    if (i + 1 >= text.size()) ThrowInvalid("'{}' is not a UUID (8-4-4-4-12 hex digits)", text);
    out += char(digit(text[i]) * 16 + digit(text[i + 1]));
    ++i;
  }
  if (out.size() != 16) ThrowInvalid("'{}' is not a UUID (8-4-4-4-12 hex digits)", text);
  return out;
}

}  // namespace lancelet::table
