#include "overlay/fragment_overlays.h"

#include <algorithm>

#include <fmt/format.h>

#include "lancelet/error.h"

namespace lancelet::overlay {

const format::RoaringBitmap* Overlay::CoverageOf(int32_t field_id) const {
  int i = FieldIndex(field_id);
  return i < 0 ? nullptr : Coverage(size_t(i)).get();
}

format::RoaringBitmap Overlay::CoverageWhere(const std::function<bool(int32_t)>& pick) const {
  format::RoaringBitmap out;
  for (size_t k = 0; k < field_ids.size(); ++k)
    if (field_ids[k] != kTombstoneFieldId && pick(field_ids[k])) out |= *Coverage(k);
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

const std::shared_ptr<const format::RoaringBitmap>& Overlay::Coverage(size_t i) const {
  Slot& slot = slots_[dense ? 0 : i];
  if (slot.parsed.load(std::memory_order_acquire)) return slot.bitmap;
  std::lock_guard lock(*parse_mutex_);
  if (!slot.parsed.load(std::memory_order_relaxed)) {
    auto where = [&] { return fmt::format("{}, overlay {} (committed_version {})", *context_, position, committed_version); };
    const std::string& bytes = dense ? proto->shared_offset_bitmap() : proto->field_coverage().offset_bitmaps(int(i));
    auto bitmap = std::make_shared<const format::RoaringBitmap>(
        DeserializeCoverage(bytes, where, dense ? -1 : int64_t(field_ids[i])));
    // Coverage addresses the fragment's physical rows: an offset past them is corrupt
    // (resolution would otherwise index past the base column).
    if (!bitmap->IsEmpty() && bitmap->Max() >= physical_rows_)
      ThrowCorrupt("{}: overlay file '{}' covers offset {} of field {}, beyond the fragment's {} rows", where(),
                   proto->data_file().path(), bitmap->Max(), field_ids[dense ? 0 : i], physical_rows_);
    slot.bitmap = std::move(bitmap);
    slot.parsed.store(true, std::memory_order_release);
  }
  return slot.bitmap;
}

std::shared_ptr<const FragmentOverlays> FragmentOverlays::Load(const lance::table::DataFragment& fragment,
                                                               uint64_t version, const std::string& context) {
  auto out = std::make_shared<FragmentOverlays>();
  out->context_ = context;
  for (int p = 0; p < fragment.overlays_size(); ++p) {
    const auto& proto = fragment.overlays(p);
    auto where = [&] { return fmt::format("{}, overlay {} (committed_version {})", context, p, proto.committed_version()); };
    if (!proto.has_data_file()) ThrowCorrupt("{}: the overlay has no data_file", where());
    // A commit stamps its own version, and appends: precedence is the stored order.
    if (proto.committed_version() == 0 || proto.committed_version() > version)
      ThrowCorrupt("{}: committed_version must lie in [1, {}], the version of this manifest", where(), version);
    if (p > 0 && proto.committed_version() < fragment.overlays(p - 1).committed_version())
      ThrowCorrupt("{}: overlay files must be stored newest-last, but committed_version {} precedes {}", where(),
                   fragment.overlays(p - 1).committed_version(), proto.committed_version());
    Overlay o;
    o.proto = &proto;
    o.committed_version = proto.committed_version();
    o.position = p;
    o.field_ids.assign(proto.data_file().fields().begin(), proto.data_file().fields().end());
    // No writer makes an overlay of no field; a flipped tag that moves the list to another
    // field of DataFile does.
    if (o.field_ids.empty()) ThrowCorrupt("{}: data_file lists no fields", where());
    // One value column per field: a field listed twice would take the other's values.
    if (o.field_ids.size() > 1) {
      std::vector<int32_t> ids = o.field_ids;
      std::sort(ids.begin(), ids.end());
      for (size_t i = 1; i < ids.size(); ++i)
        if (ids[i] == ids[i - 1] && ids[i] != kTombstoneFieldId)
          ThrowCorrupt("{}: data_file.fields lists field {} twice", where(), ids[i]);
    }
    switch (proto.coverage_case()) {
      case lance::table::DataOverlayFile::kSharedOffsetBitmap:
        o.dense = true;
        break;
      case lance::table::DataOverlayFile::kFieldCoverage: {
        const auto& bitmaps = proto.field_coverage().offset_bitmaps();
        if (size_t(bitmaps.size()) != o.field_ids.size())
          ThrowCorrupt("{}: field_coverage has {} bitmaps for {} fields", where(), bitmaps.size(), o.field_ids.size());
        break;
      }
      default:
        ThrowCorrupt("{}: the overlay has no coverage", where());
    }
    o.slots_ = std::make_unique<Overlay::Slot[]>(o.dense ? 1 : std::max<size_t>(o.field_ids.size(), 1));
    o.context_ = &out->context_;
    o.parse_mutex_ = &out->parse_mutex_;
    o.physical_rows_ = fragment.physical_rows();
    out->overlays_.push_back(std::move(o));
  }
  return out;
}

uint64_t FragmentOverlays::MemoryBytes() const {
  uint64_t bytes = sizeof(*this);
  for (const auto& o : overlays_) {
    bytes += sizeof(o);
    if (o.dense) bytes += o.proto->shared_offset_bitmap().size();
    else
      for (const auto& b : o.proto->field_coverage().offset_bitmaps()) bytes += b.size();
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
