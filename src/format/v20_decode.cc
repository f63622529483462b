// The 2.0 reader: decodes the ArrayEncoding trees the reference's 2.0 writer produces.
//
// Reads are by row range and touch only the pages (and, for Flat buffers without
// compression, only the bytes) that hold the rows. Take groups nearby rows into ranges.
// Supported: Nullable, Flat (optionally zstd/lz4 compressed), Bitpacked and
// BitpackedForNonNeg (v20_bitpacked.cc), FixedSizeList, Binary, Dictionary (of strings),
// List, SimpleStruct, PackedStruct (incl. legacy blobs), Fsst (v21_fsst.cc). Other
// encodings fail with NotSupported naming the file, column and page.
//
// A compressed buffer can only be decompressed whole, so each column keeps the
// decompressed buffers of the page it is reading: a scan that reads a page in several
// batches decompresses it once. A read that reaches the page's last row lets them go, so
// an open file (data files stay open in a dataset-wide cache) holds none after a scan.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <numeric>
#include <optional>

#include "file2.pb.h"
#include "format/plain_rows.h"
#include "format/v20_internal.h"
#include "format/value_bytes.h"
#include "format/v21_value_codecs.h"
#include "lancelet/builder.h"
#include "lancelet/error.h"

namespace lancelet::format::v20 {
namespace {

namespace pb = lance::encodings;
using PageMeta = lance::file::v2::ColumnMetadata::Page;

std::string EncodingName(const pb::ArrayEncoding& enc) {
  const auto* field = pb::ArrayEncoding::descriptor()->FindFieldByNumber(enc.array_encoding_case());
  return field ? field->name() : "(none)";
}

// Sets used[i] for every page buffer i that `message` (an encoding or a part of one)
// names; `beyond` to the first index past them.
void MarkPageBuffers(const google::protobuf::Message& message, std::vector<bool>& used,
                     std::optional<uint32_t>& beyond) {
  if (message.GetDescriptor() == pb::Buffer::descriptor()) {
    const auto& buffer = static_cast<const pb::Buffer&>(message);
    if (buffer.buffer_type() != pb::Buffer::page) return;
    if (buffer.buffer_index() < used.size()) used[buffer.buffer_index()] = true;
    else if (!beyond) beyond = buffer.buffer_index();
    return;
  }
  const google::protobuf::Reflection* reflection = message.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const auto* field : fields) {
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (!field->is_repeated()) MarkPageBuffers(reflection->GetMessage(message, field), used, beyond);
    else
      for (int i = 0; i < reflection->FieldSize(message, field); ++i)
        MarkPageBuffers(reflection->GetRepeatedMessage(message, field, i), used, beyond);
  }
}

// What is wrong with the page buffers `encoding` names, or empty. The reference's pages
// hold just the buffers their encoding names. One flipped bit can turn a tag into a field
// the message lacks (a Flat without its buffer reads buffer 0) or a case into one that
// needs no buffer (Nullable.no_nulls into all_nulls): the buffer no longer named gives it
// away.
std::string PageBufferFault(const pb::ArrayEncoding& encoding, int num_buffers) {
  std::vector<bool> used(size_t(num_buffers), false);
  std::optional<uint32_t> beyond;
  MarkPageBuffers(encoding, used, beyond);
  if (beyond) return fmt::format("encoding refers to buffer {} but the page has {} buffers", *beyond, num_buffers);
  for (int b = 0; b < num_buffers; ++b)
    if (!used[size_t(b)])
      return fmt::format("page buffer {} of {} is not used by the page's encoding ({})", b, num_buffers,
                         EncodingName(encoding));
  return "";
}

struct Page {
  uint32_t index = 0;
  uint64_t first_row = 0;
  uint64_t num_rows = 0;
  const PageMeta* meta = nullptr;
  pb::ArrayEncoding encoding;
  std::string buffer_fault;  // PageBufferFault, found when the column is opened and raised when the page is read
};

// The decompressed buffers of one page of a column: the page being read. Entries are
// shared, so a reader keeps its bytes while another thread moves the cache on to
// another page or releases it.
class DecompressedPage {
 public:
  using Bytes = std::shared_ptr<const std::string>;

  // The decompressed `buffer` of `page` (compressed with `scheme`), made by `decompress`
  // unless the cache holds it.
  template <typename F>
  Bytes Get(uint32_t page, uint32_t buffer, const std::string& scheme, F&& decompress) {
    std::lock_guard lock(mutex_);
    if (page != page_) {
      entries_.clear();
      page_ = page;
    }
    for (const auto& e : entries_) {
      if (e.buffer == buffer && e.scheme == scheme) return e.bytes;
    }
    // Decompressing under the lock makes a second reader of the page wait for this one
    // instead of decompressing it again.
    Bytes bytes = std::make_shared<const std::string>(decompress());
    entries_.push_back({buffer, scheme, bytes});
    return bytes;
  }

  // Drops the buffers if they are `page`'s.
  void Release(uint32_t page) {
    std::lock_guard lock(mutex_);
    if (page != page_) return;
    entries_.clear();
    page_ = UINT32_MAX;
  }

 private:
  struct Entry {
    uint32_t buffer;
    std::string scheme;
    Bytes bytes;
  };
  std::mutex mutex_;
  uint32_t page_ = UINT32_MAX;
  std::vector<Entry> entries_;
};

// One column of the file with its parsed page encodings.
class Column {
 public:
  Column(const ColumnRef& ref, const ByteSource& source) : index_(ref.index), source_(source) {
    uint64_t row = 0;
    for (int i = 0; i < ref.metadata->pages_size(); ++i) {
      const PageMeta& meta = ref.metadata->pages(i);
      Page page;
      page.index = uint32_t(i);
      page.first_row = row;
      page.num_rows = meta.length();
      page.meta = &meta;
      if (meta.buffer_offsets_size() != meta.buffer_sizes_size()) {
        ThrowCorrupt("{}: {} buffer offsets but {} buffer sizes", Where(page), meta.buffer_offsets_size(),
                     meta.buffer_sizes_size());
      }
      if (!meta.encoding().has_direct()) {
        ThrowNotSupported("{}: page encoding is not stored inline (indirect encodings are not supported)",
                          Where(page));
      }
      if (!UnwrapAny(meta.encoding().direct().encoding(), "lance.encodings.ArrayEncoding", &page.encoding)) {
        ThrowCorrupt("{}: page encoding is not a lance.encodings.ArrayEncoding", Where(page));
      }
      page.buffer_fault = PageBufferFault(page.encoding, meta.buffer_offsets_size());
      row += page.num_rows;
      pages_.push_back(std::move(page));
    }
    num_rows_ = row;
  }

  uint64_t num_rows() const { return num_rows_; }
  const std::vector<Page>& pages() const { return pages_; }
  const ByteSource& source() const { return source_; }
  std::string Where(const Page& page) const {
    return fmt::format("{}: column {} page {}", source_.path(), index_, page.index);
  }
  DecompressedPage& decompressed() const { return decompressed_; }
  // Called after rows [lo, lo + n) of `page` were decoded: a sequential reader is done
  // with the page once it has read its last row.
  void DoneWith(const Page& page, uint64_t lo, uint64_t n) const {
    if (lo + n == page.num_rows) decompressed_.Release(page.index);
  }

  // Calls f(page, first row within the page, row count) for the pages holding [start, start+count).
  template <typename F>
  void ForRange(uint64_t start, uint64_t count, F&& f) const {
    if (count == 0) return;
    auto it = std::upper_bound(pages_.begin(), pages_.end(), start,
                               [](uint64_t row, const Page& p) { return row < p.first_row; });
    size_t i = it == pages_.begin() ? 0 : size_t(it - pages_.begin() - 1);
    uint64_t end = start + count;
    for (; i < pages_.size() && pages_[i].first_row < end; ++i) {
      const Page& p = pages_[i];
      uint64_t lo = std::max(start, p.first_row), hi = std::min(end, p.first_row + p.num_rows);
      if (hi > lo) f(p, lo - p.first_row, hi - lo);
    }
  }

 private:
  uint32_t index_;
  const ByteSource& source_;
  std::vector<Page> pages_;
  uint64_t num_rows_ = 0;
  mutable DecompressedPage decompressed_;
};

// Access to one page's buffers.
class PageCtx {
 public:
  PageCtx(const Column& column, const Page& page, bool keyed_dictionary = false)
      : column_(column), page_(page), keyed_dictionary_(keyed_dictionary) {
    if (!page.buffer_fault.empty()) ThrowCorrupt("{}: {}", Where(), page.buffer_fault);
  }
  std::string Where() const { return column_.Where(page_); }
  // The column is a dictionary field ("dict:..."): its Dictionary pages hold the Arrow
  // dictionary's keys, from 0, rather than the string dictionary's 1-based indices.
  bool keyed_dictionary() const { return keyed_dictionary_; }
  const ByteSource& source() const { return column_.source(); }

  uint64_t BufferSize(const pb::Buffer& buffer) const { return Meta(buffer).second; }

  // Bytes [offset, offset+length) of a page buffer.
  std::string Read(const pb::Buffer& buffer, uint64_t offset, uint64_t length) const {
    auto [position, size] = Meta(buffer);
    if (offset + length > size) {
      ThrowCorrupt("{}: reading bytes [{}, {}) of buffer {}, which holds only {} bytes", Where(), offset,
                   offset + length, buffer.buffer_index(), size);
    }
    if (length == 0) return {};
    return column_.source().Read(position + offset, length);
  }
  // The same bytes, read straight into `out`.
  void ReadInto(const pb::Buffer& buffer, uint64_t offset, uint64_t length, void* out) const {
    auto [position, size] = Meta(buffer);
    if (offset + length > size) {
      ThrowCorrupt("{}: reading bytes [{}, {}) of buffer {}, which holds only {} bytes", Where(), offset,
                   offset + length, buffer.buffer_index(), size);
    }
    column_.source().ReadInto(position + offset, length, out);
  }
  // The whole buffer of a compressed Flat, decompressed (once per page and buffer while
  // the column stays on this page).
  DecompressedPage::Bytes Decompressed(const pb::Flat& flat) const {
    const std::string& scheme = flat.compression().scheme();
    return column_.decompressed().Get(page_.index, flat.buffer().buffer_index(), scheme, [&] {
      return Decompress(scheme, Read(flat.buffer(), 0, BufferSize(flat.buffer())), Where());
    });
  }

 private:
  std::pair<uint64_t, uint64_t> Meta(const pb::Buffer& buffer) const {
    if (buffer.buffer_type() != pb::Buffer::page) {
      ThrowNotSupported("{}: encoding refers to a {} buffer; only page buffers are supported", Where(),
                        pb::Buffer::BufferType_Name(buffer.buffer_type()));
    }
    const uint32_t i = buffer.buffer_index();
    if (int(i) >= page_.meta->buffer_offsets_size()) {
      ThrowCorrupt("{}: encoding refers to buffer {} but the page has {} buffers", Where(), i,
                   page_.meta->buffer_offsets_size());
    }
    return {page_.meta->buffer_offsets(int(i)), page_.meta->buffer_sizes(int(i))};
  }

  const Column& column_;
  const Page& page_;
  bool keyed_dictionary_;
};

[[noreturn]] void Unsupported(const PageCtx& ctx, const pb::ArrayEncoding& enc, const DataType& type) {
  ThrowNotSupported("{}: 2.0 encoding '{}' for {} values is not supported", ctx.Where(), EncodingName(enc),
                    type.ToString());
}

uint64_t FlatBits(const DataType& type) {
  if (type.id() == TypeId::kFixedSizeBinary) return uint64_t(type.fixed_size()) * 8;
  return uint64_t(type.bit_width());
}

ArrayPtr MakeFixed(const TypePtr& type, uint64_t length, BufferPtr values) {
  auto a = std::make_shared<ArrayData>();
  a->type = type;
  a->length = int64_t(length);
  a->buffers = {nullptr, std::move(values)};
  return a;
}

// Bits [start, start+count) of a bitmap whose bytes begin at bit 0 of `bytes`, realigned.
BufferPtr ShiftBits(const uint8_t* bytes, uint64_t bit_offset, uint64_t count) {
  auto out = Buffer::Allocate((count + 7) / 8);
  uint8_t* dst = out->mutable_data();
  if (bit_offset == 0) {
    std::memcpy(dst, bytes, (count + 7) / 8);
    if (count % 8) dst[count / 8] &= uint8_t((1u << (count % 8)) - 1);
    return out;
  }
  for (uint64_t i = 0; i < count; ++i) {
    if (GetBit(bytes, int64_t(bit_offset + i))) SetBit(dst, int64_t(i));
  }
  return out;
}

// The raw bytes of values [start, start+count) of a Flat buffer of `bits`-wide values
// (bits == 1: a bitmap realigned to bit 0).
BufferPtr ReadFlat(const pb::Flat& flat, const PageCtx& ctx, uint64_t start, uint64_t count) {
  const uint64_t bits = flat.bits_per_value();
  if (bits != 1 && bits % 8 != 0) {
    ThrowNotSupported("{}: Flat values of {} bits are not supported", ctx.Where(), bits);
  }
  // Row counts and offsets come from the file: bound them before any arithmetic or
  // allocation, so a corrupt page is a Corrupt error rather than an overflow or a huge
  // allocation (found by fuzz/v20_page_fuzz.cc).
  if (start > (uint64_t(1) << 48) || count > (uint64_t(1) << 48) || bits > 4096) {
    ThrowCorrupt("{}: {} values of {} bits at value {} cannot fit in a page", ctx.Where(), count, bits, start);
  }
  const uint64_t first_byte = bits == 1 ? start / 8 : start * bits / 8;
  const uint64_t end_byte = bits == 1 ? (start + count + 7) / 8 : (start + count) * bits / 8;
  if (!flat.has_compression() && end_byte > ctx.BufferSize(flat.buffer())) {
    ThrowCorrupt("{}: values [{}, {}) need bytes up to {}, but their buffer holds {}", ctx.Where(), start,
                 start + count, end_byte, ctx.BufferSize(flat.buffer()));
  }
  if (bits != 1 && !flat.has_compression()) {  // the stored bytes are the values: read them in place
    auto values = Buffer::AllocateUninitialized(end_byte - first_byte);
    ctx.ReadInto(flat.buffer(), first_byte, end_byte - first_byte, values->mutable_data());
    return values;
  }
  if (flat.has_compression()) {
    DecompressedPage::Bytes whole = ctx.Decompressed(flat);
    if (end_byte > whole->size()) {
      ThrowCorrupt("{}: decompressed buffer holds {} bytes, values need {}", ctx.Where(), whole->size(), end_byte);
    }
    const auto* bytes = reinterpret_cast<const uint8_t*>(whole->data()) + first_byte;
    if (bits == 1) return ShiftBits(bytes, start % 8, count);
    return Buffer::Copy(bytes, end_byte - first_byte);
  }
  const std::string bytes = ctx.Read(flat.buffer(), first_byte, end_byte - first_byte);
  return ShiftBits(reinterpret_cast<const uint8_t*>(bytes.data()), start % 8, count);
}

// Values [start, start + count) of a Bitpacked buffer, unpacked to their full width.
BufferPtr ReadBitpacked(const pb::Bitpacked& packed, const PageCtx& ctx, uint64_t start, uint64_t count) {
  const uint64_t width = packed.compressed_bits_per_value(), word_bits = packed.uncompressed_bits_per_value();
  CheckBitpackedRead(width, word_bits, start, count, ctx.Where());
  const ByteRange range = BitpackedBytes(start, count, width);
  if (range.end > ctx.BufferSize(packed.buffer())) {
    ThrowCorrupt("{}: {}-bit packed values [{}, {}) need bytes up to {}, but their buffer holds {}", ctx.Where(),
                 width, start, start + count, range.end, ctx.BufferSize(packed.buffer()));
  }
  const std::string bytes = ctx.Read(packed.buffer(), range.begin, range.end - range.begin);
  return UnpackBits(bytes, uint32_t(start * width % 8), count, uint32_t(width), uint32_t(word_bits), packed.signed_());
}

// Values [start, start + count) of a BitpackedForNonNeg buffer (whole chunks are read).
BufferPtr ReadBitpackedForNonNeg(const pb::BitpackedForNonNeg& packed, const PageCtx& ctx, uint64_t start,
                                 uint64_t count) {
  const uint64_t width = packed.compressed_bits_per_value(), word_bits = packed.uncompressed_bits_per_value();
  CheckBitpackedRead(width, word_bits, start, count, ctx.Where());
  const ByteRange range = FastLanesChunkBytes(start, count, width);
  if (range.end > ctx.BufferSize(packed.buffer())) {
    ThrowCorrupt("{}: {}-bit packed chunks of values [{}, {}) need bytes up to {}, but their buffer holds {}",
                 ctx.Where(), width, start, start + count, range.end, ctx.BufferSize(packed.buffer()));
  }
  const std::string chunks = ctx.Read(packed.buffer(), range.begin, range.end - range.begin);
  return UnpackFastLanesChunks(chunks, start, count, uint32_t(width), uint32_t(word_bits));
}

// The Flat buffer of a page that stores `type` as plain fixed-width rows (PlainRowBytes):
// an uncompressed, byte-aligned Flat of the type's width, possibly under Nullable(no_nulls)
// and a FixedSizeList without validity. Null for any other encoding.
const pb::Flat* PlainFlat(const pb::ArrayEncoding& enc, const DataType& type) {
  switch (enc.array_encoding_case()) {
    case pb::ArrayEncoding::kNullable:
      return enc.nullable().has_no_nulls() ? PlainFlat(enc.nullable().no_nulls().values(), type) : nullptr;
    case pb::ArrayEncoding::kFixedSizeList: {
      const auto& fsl = enc.fixed_size_list();
      if (type.id() != TypeId::kFixedSizeList || fsl.has_validity() || fsl.dimension() != uint64_t(type.fixed_size()))
        return nullptr;
      return PlainFlat(fsl.items(), *type.child(0)->type);
    }
    case pb::ArrayEncoding::kFlat: {
      const pb::Flat& flat = enc.flat();
      const uint64_t bits = FlatBits(type);
      if (flat.has_compression() || type.id() == TypeId::kBool || bits == 0 || bits % 8 != 0 ||
          flat.bits_per_value() != bits)
        return nullptr;
      return &flat;
    }
    default:
      return nullptr;
  }
}

// Walks Nullable/NoNull wrappers down to a Flat (used where the reference nests a Flat
// inside a plain wrapper: binary indices, dictionary indices, packed struct children).
const pb::Flat* InnerFlat(const pb::ArrayEncoding& enc) {
  if (enc.has_flat()) return &enc.flat();
  if (enc.has_nullable() && enc.nullable().has_no_nulls()) return InnerFlat(enc.nullable().no_nulls().values());
  return nullptr;
}

ArrayPtr Decode(const pb::ArrayEncoding& enc, const TypePtr& type, const PageCtx& ctx, uint64_t start,
                uint64_t count);

// Unsigned integers of the width the encoding stores (Flat, or either bit-packing, under
// any Nullable(no_nulls) wrappers), widened to u64.
std::vector<uint64_t> DecodeUnsigned(const pb::ArrayEncoding& enc, const PageCtx& ctx, uint64_t start,
                                     uint64_t count, const char* what) {
  if (enc.has_nullable() && enc.nullable().has_no_nulls()) {
    return DecodeUnsigned(enc.nullable().no_nulls().values(), ctx, start, count, what);
  }
  uint64_t bits = 0;
  BufferPtr raw;
  if (enc.has_flat()) {
    bits = enc.flat().bits_per_value();
    if (bits != 8 && bits != 16 && bits != 32 && bits != 64) {
      ThrowNotSupported("{}: {} of {} bits are not supported", ctx.Where(), what, bits);
    }
    raw = ReadFlat(enc.flat(), ctx, start, count);
  } else if (enc.has_bitpacked()) {
    bits = enc.bitpacked().uncompressed_bits_per_value();
    raw = ReadBitpacked(enc.bitpacked(), ctx, start, count);
  } else if (enc.has_bitpacked_for_non_neg()) {
    bits = enc.bitpacked_for_non_neg().uncompressed_bits_per_value();
    raw = ReadBitpackedForNonNeg(enc.bitpacked_for_non_neg(), ctx, start, count);
  } else {
    ThrowNotSupported("{}: {} stored as '{}' are not supported", ctx.Where(), what, EncodingName(enc));
  }
  std::vector<uint64_t> out(count);
  for (uint64_t i = 0; i < count; ++i) {
    switch (bits) {
      case 8: out[i] = raw->data()[i]; break;
      case 16: out[i] = raw->as<uint16_t>()[i]; break;
      case 32: out[i] = raw->as<uint32_t>()[i]; break;
      default: out[i] = raw->as<uint64_t>()[i]; break;
    }
  }
  return out;
}

// Builds a binary-like array from lengths, validity and the concatenated bytes.
ArrayPtr MakeBinary(const TypePtr& type, const std::vector<uint64_t>& ends, const std::vector<bool>& valid,
                    BufferPtr bytes, const PageCtx& ctx) {
  const uint64_t count = ends.size();
  const bool large = type->has_large_offsets();
  if (!large && bytes->size() > uint64_t(INT32_MAX)) {
    ThrowNotSupported("{}: {} bytes of values do not fit {} offsets", ctx.Where(), bytes->size(), type->ToString());
  }
  auto offsets = Buffer::AllocateUninitialized((count + 1) * (large ? 8 : 4));  // every offset is written
  for (uint64_t i = 0; i <= count; ++i) {
    uint64_t v = i == 0 ? 0 : ends[i - 1];
    if (large) offsets->mutable_as<int64_t>()[i] = int64_t(v);
    else offsets->mutable_as<int32_t>()[i] = int32_t(v);
  }
  auto a = std::make_shared<ArrayData>();
  a->type = type;
  a->length = int64_t(count);
  BufferPtr validity;
  int64_t nulls = 0;
  for (bool v : valid) nulls += !v;
  if (nulls > 0) {
    validity = Buffer::Allocate((count + 7) / 8);
    for (uint64_t i = 0; i < count; ++i) {
      if (valid[i]) SetBit(validity->mutable_data(), int64_t(i));
    }
  }
  a->null_count = nulls;
  a->buffers = {validity, offsets, std::move(bytes)};
  return a;
}

ArrayPtr DecodeBinary(const pb::Binary& bin, const pb::ArrayEncoding& enc, const TypePtr& type,
                      const PageCtx& ctx, uint64_t start, uint64_t count) {
  if (!type->is_variable_binary()) Unsupported(ctx, enc, *type);
  // The end of the value before `start` is needed too (the start of the first value).
  const uint64_t extra = start > 0 ? 1 : 0;
  std::vector<uint64_t> raw = DecodeUnsigned(bin.indices(), ctx, start - extra, count + extra, "binary offsets");
  const uint64_t adjustment = bin.null_adjustment();
  auto normalize = [&](uint64_t v) { return (adjustment != 0 && v >= adjustment) ? v - adjustment : v; };
  const uint64_t first = extra ? normalize(raw[0]) : 0;
  std::vector<uint64_t> ends(count);
  std::vector<bool> valid(count);
  uint64_t prev = first;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t v = raw[i + extra];
    valid[i] = adjustment == 0 || v < adjustment;
    uint64_t end = normalize(v);
    if (end < prev) ThrowCorrupt("{}: binary offsets decrease ({} after {}) at row {}", ctx.Where(), end, prev, start + i);
    ends[i] = end - first;
    prev = end;
  }
  const pb::ArrayEncoding& bytes_enc = bin.bytes();
  if (!bytes_enc.has_flat() || bytes_enc.flat().bits_per_value() != 8) {
    ThrowNotSupported("{}: binary bytes stored as '{}' are not supported", ctx.Where(), EncodingName(bytes_enc));
  }
  return MakeBinary(type, ends, valid, ReadFlat(bytes_enc.flat(), ctx, first, prev - first), ctx);
}

// Dictionary of strings: index 0 is null, index k is item k-1. In a dictionary field the
// indices are the keys (item k), and a NULL row's key names a NULL item.
ArrayPtr DecodeDictionary(const pb::Dictionary& dict, const pb::ArrayEncoding& enc, const TypePtr& type,
                          const PageCtx& ctx, uint64_t start, uint64_t count) {
  if (ctx.keyed_dictionary()) {
    ArrayPtr items = Decode(dict.items(), type, ctx, 0, dict.num_dictionary_items());
    std::vector<uint64_t> keys = DecodeUnsigned(dict.indices(), ctx, start, count, "dictionary keys");
    std::vector<int64_t> rows(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] >= uint64_t(items->length))
        ThrowCorrupt("{}: dictionary key {} at row {} exceeds the {} items", ctx.Where(), keys[i], start + i,
                     items->length);
      rows[i] = int64_t(keys[i]);
    }
    return Take(*items, rows);
  }
  if (!type->is_variable_binary()) Unsupported(ctx, enc, *type);
  ArrayPtr items = Decode(dict.items(), type, ctx, 0, dict.num_dictionary_items());
  std::vector<uint64_t> indices = DecodeUnsigned(dict.indices(), ctx, start, count, "dictionary indices");
  BinaryBuilder builder(type);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t k = indices[i];
    if (k == 0) {
      builder.AppendNull();
      continue;
    }
    if (k > uint64_t(items->length)) {
      ThrowCorrupt("{}: dictionary index {} at row {} exceeds the {} items", ctx.Where(), k, start + i, items->length);
    }
    if (items->IsNull(int64_t(k - 1))) builder.AppendNull();
    else builder.Append(items->GetView(int64_t(k - 1)));
  }
  return builder.Finish();
}

// Children interleaved row by row; as a legacy blob, (position, size) of bytes elsewhere.
ArrayPtr DecodePacked(const pb::PackedStruct& packed, const pb::ArrayEncoding& enc, const TypePtr& type,
                      const PageCtx& ctx, uint64_t start, uint64_t count) {
  std::vector<uint64_t> widths;
  for (const auto& inner : packed.inner()) {
    const pb::Flat* flat = InnerFlat(inner);
    if (!flat || flat->bits_per_value() % 8 != 0) {
      ThrowNotSupported("{}: packed struct child stored as '{}' is not supported", ctx.Where(), EncodingName(inner));
    }
    widths.push_back(flat->bits_per_value() / 8);
  }
  const uint64_t row_bytes = std::accumulate(widths.begin(), widths.end(), uint64_t{0});
  std::string rows = ctx.Read(packed.buffer(), start * row_bytes, count * row_bytes);

  if (type->is_variable_binary()) {  // legacy blob: (u64 position, u64 size); null = (1, 0)
    if (widths != std::vector<uint64_t>{8, 8}) Unsupported(ctx, enc, *type);
    std::vector<uint64_t> ends(count);
    std::vector<bool> valid(count);
    std::string bytes;
    for (uint64_t r = 0; r < count; ++r) {
      uint64_t position, size;
      std::memcpy(&position, rows.data() + r * 16, 8);
      std::memcpy(&size, rows.data() + r * 16 + 8, 8);
      valid[r] = !(size == 0 && position == 1);
      if (size > 0) bytes += ctx.source().Read(position, size);
      ends[r] = bytes.size();
    }
    return MakeBinary(type, ends, valid, Buffer::Copy(bytes.data(), bytes.size()), ctx);
  }

  if (type->id() != TypeId::kStruct || type->children().size() != widths.size()) Unsupported(ctx, enc, *type);
  auto out = std::make_shared<ArrayData>();
  out->type = type;
  out->length = int64_t(count);
  out->buffers = {nullptr};
  uint64_t col = 0;
  for (size_t c = 0; c < widths.size(); ++c) {
    const TypePtr& child_type = type->child(c)->type;
    if (FlatBits(*child_type) != widths[c] * 8 || child_type->id() == TypeId::kBool) {
      ThrowCorrupt("{}: packed struct child {} is {} bits wide but has type {}", ctx.Where(), c, widths[c] * 8,
                   child_type->ToString());
    }
    auto values = Buffer::Allocate(widths[c] * count);
    for (uint64_t r = 0; r < count; ++r) {
      std::memcpy(values->mutable_data() + r * widths[c], rows.data() + r * row_bytes + col, widths[c]);
    }
    out->children.push_back(MakeFixed(child_type, count, values));
    col += widths[c];
  }
  return out;
}

ArrayPtr Decode(const pb::ArrayEncoding& enc, const TypePtr& type, const PageCtx& ctx, uint64_t start,
                uint64_t count) {
  switch (enc.array_encoding_case()) {
    case pb::ArrayEncoding::kNullable: {
      const auto& nullable = enc.nullable();
      if (nullable.has_no_nulls()) return Decode(nullable.no_nulls().values(), type, ctx, start, count);
      if (nullable.has_all_nulls()) return MakeNullArray(type, int64_t(count));
      if (!nullable.has_some_nulls()) ThrowCorrupt("{}: Nullable encoding without a case", ctx.Where());
      const auto& some = nullable.some_nulls();
      if (!some.validity().has_flat() || some.validity().flat().bits_per_value() != 1) {
        ThrowNotSupported("{}: validity stored as '{}' is not supported", ctx.Where(), EncodingName(some.validity()));
      }
      BufferPtr validity = ReadFlat(some.validity().flat(), ctx, start, count);
      ArrayPtr values = Decode(some.values(), type, ctx, start, count);
      if (values->buffers.empty()) values->buffers.resize(1);
      if (values->buffers[0]) {  // the values carry their own nulls too: keep both
        for (size_t i = 0; i < validity->size(); ++i) validity->mutable_data()[i] &= values->buffers[0]->data()[i];
      }
      values->buffers[0] = validity;
      values->null_count = CountNulls(validity->data(), int64_t(count));
      return values;
    }
    case pb::ArrayEncoding::kFlat: {
      const uint64_t bits = enc.flat().bits_per_value();
      if (!type->is_fixed_width() && type->id() != TypeId::kFixedSizeBinary) Unsupported(ctx, enc, *type);
      if (bits != FlatBits(*type)) {
        ThrowCorrupt("{}: Flat values are {} bits wide but the field's type {} needs {}", ctx.Where(), bits,
                     type->ToString(), FlatBits(*type));
      }
      return MakeFixed(type, count, ReadFlat(enc.flat(), ctx, start, count));
    }
    case pb::ArrayEncoding::kBitpacked:
    case pb::ArrayEncoding::kBitpackedForNonNeg: {
      const bool plain = enc.has_bitpacked();
      const uint64_t word_bits = plain ? enc.bitpacked().uncompressed_bits_per_value()
                                       : enc.bitpacked_for_non_neg().uncompressed_bits_per_value();
      if (!type->is_fixed_width() || type->id() == TypeId::kBool) Unsupported(ctx, enc, *type);
      if (word_bits != FlatBits(*type)) {
        ThrowCorrupt("{}: bit-packed values unpack to {} bits but the field's type {} needs {}", ctx.Where(),
                     word_bits, type->ToString(), FlatBits(*type));
      }
      return MakeFixed(type, count,
                       plain ? ReadBitpacked(enc.bitpacked(), ctx, start, count)
                             : ReadBitpackedForNonNeg(enc.bitpacked_for_non_neg(), ctx, start, count));
    }
    case pb::ArrayEncoding::kFixedSizeList: {
      const auto& fsl = enc.fixed_size_list();
      if (type->id() != TypeId::kFixedSizeList || uint32_t(type->fixed_size()) != fsl.dimension()) {
        ThrowCorrupt("{}: FixedSizeList of dimension {} cannot hold {}", ctx.Where(), fsl.dimension(), type->ToString());
      }
      if (fsl.has_validity()) Unsupported(ctx, enc, *type);
      const uint64_t dim = fsl.dimension();
      auto a = std::make_shared<ArrayData>();
      a->type = type;
      a->length = int64_t(count);
      a->buffers = {nullptr};
      a->children = {Decode(fsl.items(), type->child(0)->type, ctx, start * dim, count * dim)};
      return a;
    }
    case pb::ArrayEncoding::kBinary:
      return DecodeBinary(enc.binary(), enc, type, ctx, start, count);
    case pb::ArrayEncoding::kDictionary:
      return DecodeDictionary(enc.dictionary(), enc, type, ctx, start, count);
    case pb::ArrayEncoding::kPackedStruct:
      return DecodePacked(enc.packed_struct(), enc, type, ctx, start, count);
    case pb::ArrayEncoding::kFsst: {  // opt-in "lance-encoding:compression" = "fsst"
      if (!type->is_variable_binary()) Unsupported(ctx, enc, *type);
      ArrayPtr compressed = Decode(enc.fsst().binary(), type, ctx, start, count);
      return v21::ExpandFsstArray(*compressed, enc.fsst().symbol_table(), ctx.Where());
    }
    default:
      Unsupported(ctx, enc, *type);
  }
}

ArrayPtr ConcatPieces(std::vector<ArrayPtr> pieces, const TypePtr& type) {
  if (pieces.empty()) return MakeEmptyArray(type);
  if (pieces.size() == 1) return std::move(pieces[0]);
  return Concatenate(pieces);
}

// --- node decoders -------------------------------------------------------------------

class NodeDecoder {
 public:
  virtual ~NodeDecoder() = default;
  virtual uint64_t num_rows() const = 0;
  virtual ArrayPtr Read(uint64_t start, uint64_t count) const = 0;
};

std::unique_ptr<NodeDecoder> MakeNodeDecoder(const LanceField& field, const std::vector<ColumnRef>& columns,
                                             size_t& next, const ByteSource& source);

const ColumnRef& TakeColumn(const LanceField& field, const std::vector<ColumnRef>& columns, size_t& next,
                            const ByteSource& source) {
  if (next >= columns.size()) {
    ThrowCorrupt("{}: field '{}' needs more columns than the {} given to it", source.path(), field.name,
                 columns.size());
  }
  return columns[next++];
}

class LeafDecoder final : public NodeDecoder {
 public:
  LeafDecoder(const LanceField& field, const ColumnRef& ref, const ByteSource& source)
      : type_(field.type), keyed_dictionary_(field.dictionary_index != nullptr), column_(ref, source) {}
  uint64_t num_rows() const override { return column_.num_rows(); }
  ArrayPtr Read(uint64_t start, uint64_t count) const override {
    if (ArrayPtr plain = ReadPlain(start, count)) return plain;
    std::vector<ArrayPtr> pieces;
    column_.ForRange(start, count, [&](const Page& page, uint64_t lo, uint64_t n) {
      PageCtx ctx(column_, page, keyed_dictionary_);
      ArrayPtr a = Decode(page.encoding, type_, ctx, lo, n);
      if (uint64_t(a->length) != n) ThrowCorrupt("{}: decoded {} rows, expected {}", ctx.Where(), a->length, n);
      column_.DoneWith(page, lo, n);
      pieces.push_back(std::move(a));
    });
    return ConcatPieces(std::move(pieces), type_);
  }

 private:
  // When every page in the range stores plain fixed-width rows (PlainFlat), reads their
  // bytes straight into one buffer: the array Read would build, without per-page arrays
  // and their concatenation. Null when some page needs the general decoder.
  ArrayPtr ReadPlain(uint64_t start, uint64_t count) const {
    const uint64_t row_bytes = PlainRowBytes(*type_);
    if (row_bytes == 0 || count == 0) return nullptr;
    bool plain = true;
    column_.ForRange(start, count, [&](const Page& page, uint64_t, uint64_t) {
      plain = plain && PlainFlat(page.encoding, *type_) != nullptr;
    });
    if (!plain) return nullptr;
    auto values = Buffer::AllocateUninitialized(count * row_bytes);
    uint64_t rows = 0;
    column_.ForRange(start, count, [&](const Page& page, uint64_t lo, uint64_t n) {
      PageCtx ctx(column_, page);
      const pb::Flat& flat = *PlainFlat(page.encoding, *type_);
      ctx.ReadInto(flat.buffer(), lo * row_bytes, n * row_bytes, values->mutable_data() + rows * row_bytes);
      rows += n;
    });
    if (rows != count) ThrowCorrupt("{}: column holds {} of the rows [{}, {})", column_.source().path(), rows, start, start + count);
    return MakePlainArray(type_, int64_t(count), std::move(values));
  }

  TypePtr type_;
  bool keyed_dictionary_;
  Column column_;
};

class ListDecoder final : public NodeDecoder {
 public:
  ListDecoder(const LanceField& field, const std::vector<ColumnRef>& columns, size_t& next, const ByteSource& source)
      : type_(field.type), offsets_(TakeColumn(field, columns, next, source), source) {
    uint64_t base = 0;
    for (const auto& page : offsets_.pages()) {
      if (!page.encoding.has_list()) {
        ThrowNotSupported("{}: list offsets stored as '{}' are not supported", offsets_.Where(page),
                          EncodingName(page.encoding));
      }
      items_base_.push_back(base);
      base += page.encoding.list().num_items();
    }
    items_ = MakeNodeDecoder(field.children.at(0), columns, next, source);
  }

  uint64_t num_rows() const override { return offsets_.num_rows(); }

  ArrayPtr Read(uint64_t start, uint64_t count) const override {
    const bool large = type_->has_large_offsets();
    std::vector<int64_t> out_offsets{0};
    out_offsets.reserve(count + 1);
    std::vector<bool> valid;
    valid.reserve(count);
    std::vector<ArrayPtr> item_pieces;
    offsets_.ForRange(start, count, [&](const Page& page, uint64_t lo, uint64_t n) {
      PageCtx ctx(offsets_, page);
      const auto& list = page.encoding.list();
      const uint64_t adjustment = list.null_offset_adjustment();
      if (adjustment == 0) ThrowCorrupt("{}: list page with rows has null_offset_adjustment 0", ctx.Where());
      const uint64_t extra = lo > 0 ? 1 : 0;
      std::vector<uint64_t> raw = DecodeUnsigned(list.offsets(), ctx, lo - extra, n + extra, "list offsets");
      offsets_.DoneWith(page, lo, n);
      const uint64_t first = extra ? raw[0] % adjustment : 0;
      uint64_t prev = first;
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t v = raw[i + extra];
        uint64_t end = v % adjustment;
        if (end < prev) ThrowCorrupt("{}: list offsets decrease ({} after {})", ctx.Where(), end, prev);
        valid.push_back(v < adjustment);
        out_offsets.push_back(out_offsets.back() + int64_t(end - prev));
        prev = end;
      }
      if (prev > list.num_items()) {
        ThrowCorrupt("{}: list offsets reach item {} of a page with {} items", ctx.Where(), prev, list.num_items());
      }
      if (prev > first) item_pieces.push_back(items_->Read(items_base_[page.index] + first, prev - first));
    });
    const int64_t total = out_offsets.back();
    if (!large && total > INT32_MAX) {
      ThrowNotSupported("{}: {} list items do not fit {} offsets", offsets_.source().path(), total, type_->ToString());
    }
    auto offsets = Buffer::Allocate((count + 1) * (large ? 8 : 4));
    for (uint64_t i = 0; i <= count; ++i) {
      if (large) offsets->mutable_as<int64_t>()[i] = out_offsets[i];
      else offsets->mutable_as<int32_t>()[i] = int32_t(out_offsets[i]);
    }
    auto a = std::make_shared<ArrayData>();
    a->type = type_;
    a->length = int64_t(count);
    int64_t nulls = int64_t(std::count(valid.begin(), valid.end(), false));
    BufferPtr validity;
    if (nulls > 0) {
      validity = Buffer::Allocate((count + 7) / 8);
      for (uint64_t i = 0; i < count; ++i) {
        if (valid[i]) SetBit(validity->mutable_data(), int64_t(i));
      }
    }
    a->null_count = nulls;
    a->buffers = {validity, offsets};
    a->children = {ConcatPieces(std::move(item_pieces), type_->child(0)->type)};
    return a;
  }

 private:
  TypePtr type_;
  Column offsets_;
  std::vector<uint64_t> items_base_;  // first item (within the items column) of each offsets page
  std::unique_ptr<NodeDecoder> items_;
};

// A string or binary node that lance 0.13 and earlier wrote as a list of u8 (two
// columns, BytesStoredAsList): read as that list, whose offsets and items are the
// strings' offsets and bytes.
class BytesAsListDecoder final : public NodeDecoder {
 public:
  BytesAsListDecoder(const LanceField& field, const std::vector<ColumnRef>& columns, size_t& next,
                     const ByteSource& source)
      : type_(field.type), list_(ListOfBytes(field), columns, next, source) {}

  uint64_t num_rows() const override { return list_.num_rows(); }

  ArrayPtr Read(uint64_t start, uint64_t count) const override {
    ArrayPtr list = list_.Read(start, count);
    const ArrayData& items = *list->children[0];
    BufferPtr bytes = items.buffers.size() > 1 ? items.buffers[1] : nullptr;
    if (!bytes) bytes = Buffer::Allocate(0);
    auto a = std::make_shared<ArrayData>();
    a->type = type_;
    a->length = list->length;
    a->null_count = list->null_count;
    a->buffers = {list->buffers[0], list->buffers[1], std::move(bytes)};
    return a;
  }

 private:
  static LanceField ListOfBytes(const LanceField& field) {
    LanceField item;
    item.name = "item";
    item.type = DataType::UInt8();
    item.nullable = false;
    LanceField list;
    list.name = field.name;
    list.type = field.type->has_large_offsets() ? DataType::LargeList(item.type) : DataType::List(item.type);
    list.nullable = field.nullable;
    list.children = {std::move(item)};
    return list;
  }

  TypePtr type_;
  ListDecoder list_;
};

class StructDecoder final : public NodeDecoder {
 public:
  StructDecoder(const LanceField& field, const std::vector<ColumnRef>& columns, size_t& next, const ByteSource& source)
      : type_(field.type), header_(TakeColumn(field, columns, next, source), source) {
    for (const auto& page : header_.pages()) {
      if (!page.encoding.has_struct_()) {
        ThrowCorrupt("{}: struct header page has encoding '{}', expected 'struct'", header_.Where(page),
                     EncodingName(page.encoding));
      }
    }
    for (const auto& child : field.children) children_.push_back(MakeNodeDecoder(child, columns, next, source));
  }

  uint64_t num_rows() const override { return header_.num_rows(); }

  ArrayPtr Read(uint64_t start, uint64_t count) const override {
    auto a = std::make_shared<ArrayData>();
    a->type = type_;
    a->length = int64_t(count);
    a->buffers = {nullptr};
    for (const auto& child : children_) {
      if (start + count > child->num_rows()) {
        ThrowCorrupt("{}: struct child column holds {} rows, fewer than the {} rows read", header_.source().path(),
                     child->num_rows(), start + count);
      }
      a->children.push_back(child->Read(start, count));
    }
    return a;
  }

 private:
  TypePtr type_;
  Column header_;
  std::vector<std::unique_ptr<NodeDecoder>> children_;
};

std::unique_ptr<NodeDecoder> MakeNodeDecoder(const LanceField& field, const std::vector<ColumnRef>& columns,
                                             size_t& next, const ByteSource& source) {
  if (field.type->is_list()) return std::make_unique<ListDecoder>(field, columns, next, source);
  if (field.type->id() == TypeId::kStruct && !IsPackedStruct(field)) {
    return std::make_unique<StructDecoder>(field, columns, next, source);
  }
  if (next < columns.size() && BytesStoredAsList(field, *columns[next].metadata)) {
    return std::make_unique<BytesAsListDecoder>(field, columns, next, source);
  }
  return std::make_unique<LeafDecoder>(field, TakeColumn(field, columns, next, source), source);
}

// Take reads rows closer than a gap as one range: decoding a few extra rows is cheaper
// than another read. The gap covers about 32 KiB of values, and at least 64 rows.
uint64_t TakeGap(const DataType& type) {
  return std::max<uint64_t>(64, (32 << 10) / std::max<uint64_t>(1, EstimatedValueBytes(type)));
}

class V20FieldDecoder final : public FieldDecoder {
 public:
  V20FieldDecoder(const LanceField& field, std::vector<ColumnRef> columns, const ByteSource& source)
      : name_(field.name), source_(source), take_gap_(TakeGap(*field.type)) {
    size_t next = 0;
    root_ = MakeNodeDecoder(field, columns, next, source);
    if (next != columns.size()) {
      ThrowCorrupt("{}: field '{}' uses {} columns but {} were given", source.path(), field.name, next, columns.size());
    }
  }

  uint64_t num_rows() const override { return root_->num_rows(); }

  ArrayPtr Read(uint64_t start, uint64_t count) const override {
    CheckRange(start, count);
    return root_->Read(start, count);
  }

  ArrayPtr Take(std::span<const uint64_t> rows) const override {
    const bool ascending = std::is_sorted(rows.begin(), rows.end());
    const std::vector<uint64_t> sorted = SortedUniqueRows(rows, ascending);
    if (!sorted.empty()) CheckRange(sorted.back(), 1);
    // Read runs of nearby rows; `position` maps a row to its index in the concatenation.
    std::vector<ArrayPtr> pieces;
    std::vector<std::pair<uint64_t, uint64_t>> runs;  // (first row, offset in the concatenation)
    uint64_t offset = 0;
    for (size_t i = 0; i < sorted.size();) {
      size_t j = i;
      while (j + 1 < sorted.size() && sorted[j + 1] - sorted[j] <= take_gap_) ++j;
      uint64_t first = sorted[i], count = sorted[j] - sorted[i] + 1;
      pieces.push_back(root_->Read(first, count));
      runs.emplace_back(first, offset);
      offset += count;
      i = j + 1;
    }
    if (pieces.empty()) return root_->Read(0, 0);
    ArrayPtr all = pieces.size() == 1 ? pieces[0] : Concatenate(pieces);
    std::vector<int64_t> positions(rows.size());
    size_t run = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (ascending) {  // the runs ascend too: walk them
        while (run + 1 < runs.size() && runs[run + 1].first <= rows[i]) ++run;
      } else {
        run = size_t(std::upper_bound(runs.begin(), runs.end(), rows[i],
                                      [](uint64_t r, const auto& run) { return r < run.first; }) -
                     runs.begin() - 1);
      }
      positions[i] = int64_t(runs[run].second + (rows[i] - runs[run].first));
    }
    return lancelet::Take(*all, positions);
  }

 private:
  void CheckRange(uint64_t start, uint64_t count) const {
    uint64_t n = num_rows();
    if (start > n || count > n - start) {
      ThrowInvalid("{}: rows [{}, {}) of field '{}' requested but it holds {} rows", source_.path(), start,
                   start + count, name_, n);
    }
  }

  std::string name_;
  const ByteSource& source_;
  uint64_t take_gap_;
  std::unique_ptr<NodeDecoder> root_;
};

}  // namespace

std::unique_ptr<FieldDecoder> MakeFieldDecoderImpl(const LanceField& field, std::vector<ColumnRef> columns,
                                                   const ByteSource& source) {
  return std::make_unique<V20FieldDecoder>(field, std::move(columns), source);
}

}  // namespace lancelet::format::v20
