#include "overlay/fragment_overlays.h"

#include <algorithm>

#include <fmt/format.h>

#include "lancelet/error.h"

namespace lancelet::overlay {

const format::RoaringBitmap* Overlay::CoverageOf(int32_t field_id) const {
  int i = FieldIndex(field_id);
  return i < 0 ? nullptr : coverage[size_t(i)].get();
}

format::RoaringBitmap Overlay::CoverageWhere(const std::function<bool(int32_t)>& pick) const {
  format::RoaringBitmap out;
  for (size_t k = 0; k < field_ids.size(); ++k)
    if (field_ids[k] != kTombstoneFieldId && pick(field_ids[k])) out |= *coverage[k];
  return out;
}

int Overlay::FieldIndex(int32_t field_id) const {
  if (field_id == kTombstoneFieldId) return -1;
  for (size_t i = 0; i < field_ids.size(); ++i)
    if (field_ids[i] == field_id) return int(i);
  return -1;
}

namespace {

// `bytes` parsed; a parse failure names where() and the bitmap (`field`, or the shared
// bitmap when negative). Both are formatted only then: a fresh process loads every
// overlay it reads.
template <typename Where>
format::RoaringBitmap DeserializeCoverage(const std::string& bytes, const Where& where, int64_t field) {
  try {
    return format::RoaringBitmap::DeserializePortable(bytes, "");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kCorrupt) throw;
    if (field < 0) ThrowCorrupt("{} shared_offset_bitmap{}", where(), e.what());
    ThrowCorrupt("{} coverage of field {}{}", where(), field, e.what());
  }
}

}  // namespace

std::shared_ptr<const FragmentOverlays> FragmentOverlays::Load(const lance::table::DataFragment& fragment,
                                                               const std::string& context) {
  auto out = std::make_shared<FragmentOverlays>();
  for (int p = 0; p < fragment.overlays_size(); ++p) {
    const auto& proto = fragment.overlays(p);
    auto where = [&] { return fmt::format("{}, overlay {} (committed_version {})", context, p, proto.committed_version()); };
    if (!proto.has_data_file()) ThrowCorrupt("{}: the overlay has no data_file", where());
    Overlay o;
    o.proto = &proto;
    o.committed_version = proto.committed_version();
    o.position = p;
    o.field_ids.assign(proto.data_file().fields().begin(), proto.data_file().fields().end());
    switch (proto.coverage_case()) {
      case lance::table::DataOverlayFile::kSharedOffsetBitmap: {
        o.dense = true;
        auto shared = std::make_shared<const format::RoaringBitmap>(
            DeserializeCoverage(proto.shared_offset_bitmap(), where, -1));
        o.coverage.assign(o.field_ids.size(), shared);
        break;
      }
      case lance::table::DataOverlayFile::kFieldCoverage: {
        const auto& bitmaps = proto.field_coverage().offset_bitmaps();
        if (size_t(bitmaps.size()) != o.field_ids.size())
          ThrowCorrupt("{}: field_coverage has {} bitmaps for {} fields", where(), bitmaps.size(), o.field_ids.size());
        for (int f = 0; f < bitmaps.size(); ++f)
          o.coverage.push_back(std::make_shared<const format::RoaringBitmap>(
              DeserializeCoverage(bitmaps[f], where, o.field_ids[size_t(f)])));
        break;
      }
      default:
        ThrowCorrupt("{}: the overlay has no coverage", where());
    }
    // Coverage addresses the fragment's physical rows: an offset past them is corrupt
    // (resolution would otherwise index past the base column).
    for (size_t f = 0; f < o.coverage.size(); ++f)
      if (!o.coverage[f]->IsEmpty() && o.coverage[f]->Max() >= fragment.physical_rows())
        ThrowCorrupt("{}: overlay file '{}' covers offset {} of field {}, beyond the fragment's {} rows", where(),
                     proto.data_file().path(), o.coverage[f]->Max(), o.field_ids[f], fragment.physical_rows());
    out->overlays_.push_back(std::move(o));
  }
  std::stable_sort(out->overlays_.begin(), out->overlays_.end(),
                   [](const Overlay& a, const Overlay& b) { return a.committed_version < b.committed_version; });
  return out;
}

uint64_t FragmentOverlays::MemoryBytes() const {
  uint64_t bytes = sizeof(*this);
  for (const auto& o : overlays_) {
    bytes += sizeof(o);
    // A shared bitmap is counted once per reference: an over-estimate is fine.
    for (const auto& b : o.coverage) bytes += b->PortableSizeInBytes();
  }
  return bytes;
}

bool FragmentOverlays::Covers(int32_t field_id) const {
  for (const auto& o : overlays_)
    if (o.CoverageOf(field_id)) return true;
  return false;
}

void CheckNewestLast(const google::protobuf::RepeatedPtrField<lance::table::DataOverlayFile>& overlays) {
  for (int i = 1; i < overlays.size(); ++i)
    if (overlays[i].committed_version() < overlays[i - 1].committed_version())
      ThrowInvalid("overlay files must be stored newest-last, but committed_version {} precedes {}",
                   overlays[i - 1].committed_version(), overlays[i].committed_version());
}

}  // namespace lancelet::overlay
