// Small pieces shared by the 2.1 page layouts: Any wrapping, level buffers, the
// compressive encodings this build understands, reading page buffers.
#include <cctype>
#include <google/protobuf/any.pb.h>

#include "array/ascii_case.h"
#include "format/v21_compression.h"
#include "format/v21_internal.h"
#include "format/v21_value_codecs.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

std::string WrapAny(const std::string& type_url, const google::protobuf::MessageLite& message) {
  google::protobuf::Any any;
  any.set_type_url(type_url);
  any.set_value(message.SerializeAsString());
  return any.SerializeAsString();
}

int BitWidth(uint64_t max_value) {
  int bits = 0;
  while (max_value) {
    ++bits;
    max_value >>= 1;
  }
  return bits;
}

bool MetadataIs(const LanceField& field, const char* key, const std::string& value) {
  auto it = field.metadata.find(key);
  return it != field.metadata.end() && EqualsIgnoringAsciiCase(it->second, value);
}

std::string LevelBytes(const std::vector<uint16_t>& levels, size_t begin, size_t end) {
  std::string out((end - begin) * 2, '\0');
  for (size_t k = begin; k < end; ++k) {
    out[(k - begin) * 2] = char(levels[k] & 0xFF);
    out[(k - begin) * 2 + 1] = char(levels[k] >> 8);
  }
  return out;
}

std::vector<uint16_t> ParseLevels(const std::string& bytes, size_t count, const std::string& where) {
  if (bytes.size() < count * 2) ThrowCorrupt("{}: {} bytes of levels, expected {}", where, bytes.size(), count * 2);
  std::vector<uint16_t> out(count);
  for (size_t k = 0; k < count; ++k)
    out[k] = uint16_t(uint8_t(bytes[2 * k]) | (uint16_t(uint8_t(bytes[2 * k + 1])) << 8));
  return out;
}

const char* CompressionName(const pb::CompressiveEncoding& e) {
  switch (e.compression_case()) {
    case pb::CompressiveEncoding::kFlat: return "Flat";
    case pb::CompressiveEncoding::kVariable: return "Variable";
    case pb::CompressiveEncoding::kConstant: return "Constant";
    case pb::CompressiveEncoding::kOutOfLineBitpacking: return "OutOfLineBitpacking";
    case pb::CompressiveEncoding::kInlineBitpacking: return "InlineBitpacking";
    case pb::CompressiveEncoding::kFsst: return "Fsst";
    case pb::CompressiveEncoding::kDictionary: return "Dictionary";
    case pb::CompressiveEncoding::kRle: return "Rle";
    case pb::CompressiveEncoding::kByteStreamSplit: return "ByteStreamSplit";
    case pb::CompressiveEncoding::kGeneral: return "General";
    case pb::CompressiveEncoding::kFixedSizeList: return "FixedSizeList";
    case pb::CompressiveEncoding::kPackedStruct: return "PackedStruct";
    case pb::CompressiveEncoding::kVariablePackedStruct: return "VariablePackedStruct";
    case pb::CompressiveEncoding::kRange: return "Range";
    case pb::CompressiveEncoding::kDelta: return "Delta";
    default: return "(unset)";
  }
}

void ThrowUnsupportedCompression(const pb::CompressiveEncoding& e, std::string_view what, const std::string& where) {
  ThrowNotSupported("{}: {} compression {} is not supported yet", where, what, CompressionName(e));
}

ValueCodec ParseValueCodec(const pb::CompressiveEncoding& e, const std::string& where) {
  ValueCodec codec;
  switch (e.compression_case()) {
    case pb::CompressiveEncoding::kFlat:
      if (e.flat().has_data()) ThrowNotSupported("{}: buffer-compressed Flat values are not supported yet", where);
      if (e.flat().bits_per_value() == 0) ThrowCorrupt("{}: Flat with 0 bits per value", where);
      codec.bits = codec.item_bits = e.flat().bits_per_value();
      return codec;
    case pb::CompressiveEncoding::kVariable: {
      const auto& v = e.variable();
      if (v.has_values()) ThrowNotSupported("{}: buffer-compressed Variable values are not supported yet", where);
      if (v.offsets().compression_case() != pb::CompressiveEncoding::kFlat) ThrowUnsupportedCompression(v.offsets(), "offsets", where);
      const uint64_t bits = v.offsets().flat().bits_per_value();
      if (bits != 32 && bits != 64) ThrowCorrupt("{}: Variable offsets of {} bits", where, bits);
      codec.variable = true;
      codec.offset_bits = uint32_t(bits);
      return codec;
    }
    case pb::CompressiveEncoding::kFixedSizeList: {
      const auto& f = e.fixed_size_list();
      if (f.values().compression_case() != pb::CompressiveEncoding::kFlat || f.values().flat().has_data())
        ThrowUnsupportedCompression(f.values(), "fixed_size_list item", where);
      if (f.items_per_value() == 0 || f.items_per_value() > (1u << 24))
        ThrowCorrupt("{}: fixed_size_list of {} items", where, f.items_per_value());
      codec.dim = uint32_t(f.items_per_value());
      codec.item_bits = f.values().flat().bits_per_value();
      codec.has_item_validity = f.has_validity();
      codec.bits = codec.item_bits * codec.dim + (f.has_validity() ? (codec.dim + 7) / 8 * 8 : 0);
      return codec;
    }
    case pb::CompressiveEncoding::kFsst: {
      codec = ParseValueCodec(e.fsst().values(), where);
      if (!codec.variable || codec.fsst) ThrowCorrupt("{}: Fsst must wrap plain variable-width values", where);
      codec.fsst = std::make_shared<const FsstTable>(FsstTable::Parse(e.fsst().symbol_table(), where));
      return codec;
    }
    case pb::CompressiveEncoding::kPackedStruct:
      return ParsePackedCodec(e, where);
    case pb::CompressiveEncoding::kVariablePackedStruct:
      codec = ParsePackedCodec(e, where);
      codec.variable_packed = std::make_shared<const pb::VariablePackedStruct>(e.variable_packed_struct());
      return codec;
    case pb::CompressiveEncoding::kInlineBitpacking:
    case pb::CompressiveEncoding::kRle:
    case pb::CompressiveEncoding::kByteStreamSplit:
    case pb::CompressiveEncoding::kGeneral:
      return ParseCompressedCodec(e, where);
    default:
      ThrowUnsupportedCompression(e, "value", where);
  }
}

void FinishValues(const ValueCodec& codec, ValueBlock& values, const std::string& where) {
  if (codec.fsst) codec.fsst->ExpandBlock(values, where);
  if (codec.variable_packed) NormalizeVariablePackedRows(*codec.variable_packed, values, where);
}

void CheckLevelCodec(const pb::CompressiveEncoding& e, const std::string& what, const std::string& where) {
  CheckLevelEncoding(e, what, where);
}

std::string PageSource::ReadBuffer(size_t index) const {
  if (index >= buffers.size()) ThrowCorrupt("{}: page has {} buffers, buffer {} is missing", where, buffers.size(), index);
  std::string out(buffers[index].second, '\0');
  ReadExactInto(index, 0, out.size(), out.data());
  return out;
}

std::string PageSource::ReadRange(size_t index, uint64_t offset, uint64_t length) const {
  std::string out(length, '\0');
  ReadRangeInto(index, offset, length, out.data());
  return out;
}

namespace {
void CheckRange(const PageSource& page, size_t index, uint64_t offset, uint64_t length) {
  if (index >= page.buffers.size())
    ThrowCorrupt("{}: page has {} buffers, buffer {} is missing", page.where, page.buffers.size(), index);
  if (offset + length > page.buffers[index].second)
    ThrowCorrupt("{}: range {}+{} is outside page buffer {} of {} bytes", page.where, offset, length, index,
                 page.buffers[index].second);
}
}  // namespace

void PageSource::ReadRangeInto(size_t index, uint64_t offset, uint64_t length, void* out) const {
  CheckRange(*this, index, offset, length);
  source->ReadInto(buffers[index].first + offset, length, out);
}

namespace {
// Ranges within buffer `index`, checked and moved to file offsets.
std::vector<io::ByteRange> InFile(const PageSource& page, size_t index, std::vector<io::ByteRange> ranges) {
  for (auto& r : ranges) {
    CheckRange(page, index, r.offset, r.length);
    r.offset += page.buffers[index].first;
  }
  return ranges;
}
}  // namespace

void PageSource::ReadRangesInto(size_t index, std::vector<io::ByteRange> ranges) const {
  source->ReadRangesInto(InFile(*this, index, std::move(ranges)));
}

void PageSource::ReadExactInto(size_t index, uint64_t offset, uint64_t length, void* out) const {
  ReadRangesInto(index, {io::ByteRange{offset, length, out}});
}

void PageSource::PrefetchWhole(uint64_t max_span) const {
  uint64_t start = UINT64_MAX, end = 0;
  size_t stored = 0;
  for (const auto& [offset, size] : buffers)
    if (size > 0) {
      start = std::min(start, offset);
      end = std::max(end, offset + size);
      ++stored;
    }
  if (stored < 2 || end - start > max_span) return;  // one buffer is one read anyway
  source->Prefetch(std::vector<io::ByteRange>{{start, end - start, nullptr}});
}

bool PageSource::Prefetch(size_t index, std::vector<io::ByteRange> ranges) const {
  return source->Prefetch(InFile(*this, index, std::move(ranges)));
}

const uint8_t* PageSource::ResidentRange(size_t index, uint64_t offset, uint64_t length) const {
  CheckRange(*this, index, offset, length);
  return source->Resident(buffers[index].first + offset, length);
}

void PageReader::ReadPlainRows(uint64_t, uint64_t, uint8_t*) const {
  ThrowInvalid("this page does not hold plain fixed-width rows");
}

void PageReader::TakePlainRows(std::span<const uint64_t> rows, uint64_t first_row, uint8_t* out) const {
  const uint64_t row_bytes = PlainRowBytes();
  for (size_t k = 0; k < rows.size();) {
    size_t j = k + 1;
    while (j < rows.size() && rows[j] == rows[j - 1] + 1) ++j;
    ReadPlainRows(rows[k] - first_row, j - k, out + k * row_bytes);
    k = j;
  }
}

pb::CompressiveEncoding* DescribeGeneral(const std::optional<GeneralCompression>& compression,
                                         pb::CompressiveEncoding* encoding) {
  if (!compression) return encoding;
  auto* general = encoding->mutable_general();
  compression->Describe(general->mutable_compression());
  return general->mutable_values();
}

pb::CompressiveEncoding* DescribeFsst(const EncodeOptions& options, pb::CompressiveEncoding* encoding) {
  if (options.fsst_table.empty()) return encoding;
  auto* fsst = encoding->mutable_fsst();
  fsst->set_symbol_table(options.fsst_table);
  return fsst->mutable_values();
}

}  // namespace lancelet::format::v21
