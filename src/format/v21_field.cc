// FieldEncoder / FieldDecoder of the 2.1 and 2.2 structural encodings.
//
// Writing: rows are buffered per top-level field until about a page's worth of bytes is
// waiting; then every leaf column of the field gets one page over those rows. The layout
// of each page follows the reference's choice for its default output:
//   - no valid value at all                       -> all-null (2.1) / constant (2.2) page
//   - fixed_size_list leaves                      -> full-zip, FixedSizeList(Flat)
//   - values of 256 bytes or more                 -> full-zip, Flat / Variable
//   - everything else                             -> mini-block, Flat / Variable
// The field metadata key "lance-encoding:structural-encoding" ("miniblock" / "fullzip")
// forces a layout, as it does for the reference.
//
// Reading: each leaf column decodes the requested rows page by page into levels and values,
// which are unravelled into validity / offsets per path node and merged into one array.
#include <google/protobuf/any.pb.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>

#include "array/ascii_case.h"
#include "encodings_v2_0.pb.h"
#include "file2.pb.h"
#include "format/dictionary_keys.h"
#include "format/plain_rows.h"
#include "format/v21_internal.h"
#include "format/v21_value_codecs.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

namespace {

constexpr const char* kStructuralEncodingKey = "lance-encoding:structural-encoding";
constexpr const char* kCompressionKey = "lance-encoding:compression";
constexpr const char* kCompressionLevelKey = "lance-encoding:compression-level";
constexpr const char* kDictionaryCompressionKey = "lance-encoding:dict-values-compression";
constexpr const char* kDictionaryCompressionLevelKey = "lance-encoding:dict-values-compression-level";

std::string LowerMetadata(const LanceField& field, const char* key) {
  auto it = field.metadata.find(key);
  if (it == field.metadata.end()) return {};
  return AsciiLower(it->second);
}

std::string ForcedLayout(const LanceField& root, const LanceField& leaf) {
  for (const LanceField* f : {&leaf, &root})
    if (f->metadata.count(kStructuralEncodingKey)) return LowerMetadata(*f, kStructuralEncodingKey);
  return {};
}

// The general compression field metadata `key` asks for (with its level under
// `level_key`): nullopt for none; `fallback` when the key is absent. Throws Invalid for a
// scheme or level the reference would refuse.
std::optional<GeneralCompression> GeneralCompressionOf(const LanceField& field, const char* key, const char* level_key,
                                                       std::optional<GeneralCompression> fallback) {
  const std::string scheme = LowerMetadata(field, key);
  GeneralCompression out;
  if (scheme.empty()) {
    if (!fallback) return std::nullopt;
    out = *fallback;
  } else if (scheme == "none" || scheme == "fsst") {
    return std::nullopt;
  } else if (scheme == "zstd") {
    out.scheme = pb::COMPRESSION_ALGORITHM_ZSTD;
  } else if (scheme == "lz4") {
    out.scheme = pb::COMPRESSION_ALGORITHM_LZ4;
  } else {
    ThrowInvalid("field '{}': {} '{}' is not a compression scheme (expected zstd, lz4, fsst or none)", field.name, key,
                 field.metadata.at(key));
  }
  auto level = field.metadata.find(level_key);
  if (level != field.metadata.end()) {
    int32_t parsed = 0;
    auto [end, error] = std::from_chars(level->second.data(), level->second.data() + level->second.size(), parsed);
    if (error != std::errc() || end != level->second.data() + level->second.size())
      ThrowInvalid("field '{}': {} '{}' is not an integer", field.name, level_key, level->second);
    out.level = parsed;
  }
  return out;
}

constexpr uint64_t kFullZipMinValueBytes = 256;

bool IsPackedStruct(const LanceField& field) { return IsPackedStructField(field) || IsBlobV2Field(field); }

// The longest of a variable-width block's values.
uint64_t LongestValue(const ValueBlock& values) {
  uint64_t longest = 0;
  for (uint64_t k = 0; k < values.count; ++k) longest = std::max(longest, values.offsets[k + 1] - values.offsets[k]);
  return longest;
}

// A variable-width block's bytes with their `offset_bytes`-wide offsets: the plain form's
// size, as the reference's data size counts it.
uint64_t PlainBytesWithOffsets(const ValueBlock& values, uint64_t offset_bytes) {
  return values.offsets[values.count] - values.offsets[0] + (values.count + 1) * offset_bytes;
}

// The keys of the visible items into `dictionary`, the distinct values of the valid ones
// (a NULL item takes key 0: its def level says it is NULL), from `keyer`. Null when more
// than `max_items` values are distinct.
std::optional<ValueBlock> DictionaryKeys(DictionaryKeyer keyer, const ShreddedLeaf& leaf, const ValueBlock& values,
                                         ValueBlock& dictionary, uint64_t max_items = UINT64_MAX) {
  const uint64_t width = values.bits / 8;
  std::vector<uint64_t> keys(values.count, 0);
  for (uint64_t k = 0; k < values.count; ++k) {
    if (!leaf.slot_valid[k]) continue;
    const std::string_view value =
        values.variable ? std::string_view(values.data).substr(values.offsets[k], values.offsets[k + 1] - values.offsets[k])
                        : std::string_view(values.data).substr(k * width, width);
    keys[k] = keyer.KeyOf(value, int64_t(k));
    if (keyer.item_sources().size() > max_items) return std::nullopt;
  }
  dictionary = ValueBlock{};
  dictionary.variable = values.variable;
  dictionary.bits = values.bits;
  for (int64_t k : keyer.item_sources()) dictionary.AppendFrom(values, uint64_t(k), 1);
  ValueBlock out;
  out.count = values.count;
  out.bits = uint64_t(keyer.key_bits());
  out.data = keyer.KeyBytes(keys);
  return out;
}

// A page the reference would dictionary-encode: at least 100 values, and the estimated
// dictionary form under 0.8 of the value bytes. Strings and binaries count their bytes
// with their offsets (as the reference's data size does), each distinct value at that
// average size plus an offset, and an offset-sized key per value; at 2.2,
// numbers of 64 bits or more count each distinct value at its width and a 32-bit key per
// value (so narrower numbers never pay). Returns the keys (and fills `dictionary`), or
// null when the page stays plain; hashing stops once the distinct values are too many
// for the estimate to pass.
std::optional<ValueBlock> AutomaticDictionaryKeys(const ShreddedLeaf& leaf, const ValueBlock& values,
                                                  const EncodeOptions& options, ValueBlock& dictionary) {
  constexpr uint64_t kMinValues = 100;
  constexpr double kMaxSizeRatio = 0.8;
  if (values.count < kMinValues || values.dim > 0 || values.has_item_validity) return std::nullopt;
  double per_item = 0, per_key = 0, data_bytes = 0;
  if (values.variable) {
    // The plain form's bytes count its offsets too, and so does the average value size.
    const uint64_t offset_bytes = leaf.leaf && leaf.leaf->type->has_large_offsets() ? 8 : 4;
    const uint64_t bytes = PlainBytesWithOffsets(values, offset_bytes);
    per_item = double(bytes / values.count + offset_bytes);
    per_key = double(offset_bytes);
    data_bytes = double(bytes);
  } else {
    const DataType* type = leaf.leaf ? leaf.leaf->type.get() : nullptr;
    if (!options.large_chunks || !type || !(type->is_numeric() || type->is_temporal() || type->is_decimal()) ||
        values.bits % 8)
      return std::nullopt;
    per_item = double(values.bits / 8);
    per_key = 4;
    data_bytes = double(values.count * values.bits / 8);
  }
  // distinct * per_item + count * per_key < ratio * data_bytes
  const double budget = kMaxSizeRatio * data_bytes - double(values.count) * per_key;
  if (budget <= 0) return std::nullopt;
  const uint64_t max_items = uint64_t(std::ceil(budget / per_item)) - 1;
  return DictionaryKeys(DictionaryKeyer(*DataType::Int32(), "a page"), leaf, values, dictionary, max_items);
}

// FSST-compresses a page's strings in place (setting options.fsst_table) when the
// reference would: the field asks for "fsst", or asks for no other compression and the
// values reach FSST's minimums (a value of 5 bytes or more, 32 KiB in all counting their
// offsets, as the reference's data size does). Binary values are left alone, as the
// reference leaves them.
void CompressWithFsst(const LanceField& field, ValueBlock& values, EncodeOptions& options) {
  constexpr uint64_t kMinLongest = 5, kMinBytes = 32 * 1024;
  if (!values.variable || !options.compress_values || values.count == 0 || !field.type->is_string()) return;
  const bool asked = MetadataIs(field, kCompressionKey, "fsst");
  if (!asked) {
    if (options.general) return;
    const uint64_t offset_bytes = field.type->has_large_offsets() ? 8 : 4;
    if (LongestValue(values) < kMinLongest || PlainBytesWithOffsets(values, offset_bytes) < kMinBytes) return;
  }
  const FsstEncoder encoder = FsstEncoder::Train(values);
  ValueBlock compressed = encoder.CompressBlock(values);
  std::string table = encoder.SymbolTable();
  // Values a table does not shrink (random bytes, or an unlucky sample) stay plain unless
  // the field asked for FSST.
  if (!asked && compressed.data.size() + table.size() >= values.data.size()) return;
  options.fsst_table = std::move(table);
  values = std::move(compressed);
}

// Whether a full-zip page's variable-width values are compressed one by one (ZSTD, level
// 0), as the reference decides: a value passes 32 KiB or the field asks for general
// compression, and the page holds at least 32 KiB of them.
bool CompressesEachValue(const ValueBlock& values, const EncodeOptions& options) {
  constexpr uint64_t kPerValueMinBytes = 32 * 1024;
  if (!values.variable || !options.compress_values || values.count == 0) return false;
  const uint64_t bytes = values.offsets[values.count] - values.offsets[0];
  return (LongestValue(values) > kPerValueMinBytes || options.general) && bytes >= kPerValueMinBytes;
}

// One page of `rows` for the leaf at `path`; nullopt when the rows need several pages (a
// run of levels longer than a mini-block chunk holds).
std::optional<EncodedPage> EncodeLeafPage(const LanceField& root, const LeafPath& path, const ArrayData& rows,
                                          const EncodeOptions& options) {
  const LanceField& leaf_field = *path.back().field;
  ShreddedLeaf leaf = Shred(path, rows);
  if (leaf.num_valid == 0) return EncodeAllNull(leaf, options);
  EncodeOptions page_options = options;
  if (IsPackedStructField(leaf_field)) {  // one mini-block column of packed rows, as the reference
    ValueBlock packed = PackStructRows(leaf_field, *leaf.leaf, leaf.slots, page_options.packed_child_bits);
    return EncodeMiniBlock(leaf, packed, page_options);
  }
  ValueBlock values = GatherValues(path, leaf);
  page_options.compress_values = !MetadataIs(leaf_field, kCompressionKey, "none");
  page_options.general = GeneralCompressionOf(leaf_field, kCompressionKey, kCompressionLevelKey, std::nullopt);
  if (options.large_chunks)  // 2.1 dictionaries stay plain
    page_options.dictionary_general =
        GeneralCompressionOf(leaf_field, kDictionaryCompressionKey, kDictionaryCompressionLevelKey,
                             GeneralCompression{pb::COMPRESSION_ALGORITHM_LZ4, std::nullopt});
  // At 2.2 a page whose valid values are all one value is a constant page, before any
  // other layout (as the reference tries it).
  if (options.large_chunks && !leaf_field.dictionary_index)
    if (auto page = EncodeConstant(leaf, values, *leaf_field.type)) return std::move(*page);
  if (leaf_field.dictionary_index) {
    ValueBlock dictionary;
    ValueBlock keys = *DictionaryKeys(PageKeyer(leaf_field), leaf, values, dictionary);
    return EncodeMiniBlock(leaf, keys, page_options, &dictionary);
  }
  const std::string forced = ForcedLayout(root, leaf_field);
  bool full_zip;
  if (forced == "fullzip") {
    full_zip = true;
  } else if (forced == "miniblock") {
    full_zip = false;
  } else if (values.dim > 0) {
    full_zip = true;
  } else if (values.variable) {
    full_zip = LongestValue(values) >= kFullZipMinValueBytes;
  } else {
    full_zip = values.bits / 8 >= kFullZipMinValueBytes;
  }
  if (!full_zip && values.dim > 0) full_zip = true;  // fixed_size_list is only written full-zip
  if (full_zip) {
    page_options.compress_each_value = CompressesEachValue(values, page_options);
    if (!page_options.compress_each_value) CompressWithFsst(leaf_field, values, page_options);
    return EncodeFullZip(leaf, std::move(values), page_options);
  }
  // As the reference, whatever "lance-encoding:compression" says (it governs the keys).
  ValueBlock dictionary;
  if (auto keys = AutomaticDictionaryKeys(leaf, values, page_options, dictionary))
    return EncodeMiniBlock(leaf, *keys, page_options, &dictionary);
  CompressWithFsst(leaf_field, values, page_options);
  return EncodeMiniBlock(leaf, values, page_options);
}

class FieldEncoderImpl final : public FieldEncoder {
 public:
  FieldEncoderImpl(FileVersion version, const LanceField& field, const FileWriterOptions& options)
      : field_(field), options_(options) {
    paths_ = LeafPaths(field_);
    encode_.large_chunks = !(version.major == 2 && version.minor <= 1);
    field_.ForEach([&](const LanceField& node) {
      if (IsBlobV2Field(node) && !encode_.large_chunks)
        ThrowNotSupported("field '{}': blob v2 columns need file version 2.2 or later (got {})", node.name,
                          version.ToString());
    });
    if (encode_.large_chunks)  // as the reference refuses them
      field_.ForEach([&](const LanceField& node) {
        if (IsLegacyBlobField(node))
          ThrowNotSupported("field '{}': legacy blob columns (metadata \"lance-encoding:blob\") cannot be written at "
                            "file version {}; write them at 2.1, or use a blob v2 column (ARROW:extension:name = "
                            "\"lance.blob.v2\")",
                            node.name, version.ToString());
      });
  }
  FieldEncoderImpl(const FieldEncoderImpl&) = delete;
  FieldEncoderImpl& operator=(const FieldEncoderImpl&) = delete;

  uint32_t num_columns() const override { return uint32_t(paths_.size()); }

  void Append(const ArrayData& values, PageSink& sink) override {
    if (values.length == 0) return;
    if (!values.type->Equals(*field_.type))
      ThrowInvalid("field '{}' expects {} but got {}", field_.name, field_.type->ToString(), values.type->ToString());
    pending_.push_back(Slice(values, 0, values.length));
    pending_bytes_ += BufferBytes(values);
    if (pending_bytes_ >= options_.page_size_bytes) Flush(sink);
  }

  void Finish(PageSink& sink) override { Flush(sink); }

  std::string ColumnEncoding(uint32_t) const override {
    lance::encodings::ColumnEncoding encoding;
    encoding.mutable_values();
    return WrapAny(kColumnEncodingUrl, encoding);
  }

  std::vector<int32_t> NodeIds() const override {
    std::vector<int32_t> out;
    ForEachListedNode([&](const LanceField& node) { out.push_back(node.id); });
    return out;
  }

  std::vector<int32_t> NodeColumns() const override {
    std::vector<int32_t> out;
    std::map<const LanceField*, int32_t> leaf_column;
    for (size_t c = 0; c < paths_.size(); ++c) leaf_column[paths_[c].back().field] = int32_t(c);
    ForEachListedNode([&](const LanceField& node) {
      auto it = leaf_column.find(&node);
      out.push_back(it == leaf_column.end() ? -1 : it->second);
    });
    return out;
  }

 private:
  // The field's nodes in pre-order, without a packed column's children (the reference's
  // DataFile.fields leaves them out: they own no column).
  template <typename Fn>
  void ForEachListedNode(Fn&& fn) const {
    std::function<void(const LanceField&)> visit = [&](const LanceField& node) {
      fn(node);
      if (IsPackedStruct(node)) return;
      for (const auto& child : node.children) visit(child);
    };
    visit(field_);
  }

  void Flush(PageSink& sink) {
    if (pending_.empty()) return;
    ArrayPtr rows = pending_.size() == 1 ? pending_[0] : Concatenate(pending_);
    pending_.clear();
    pending_bytes_ = 0;
    for (size_t c = 0; c < paths_.size(); ++c) WritePages(c, rows, rows_written_, sink);
    rows_written_ += uint64_t(rows->length);
  }

  // Leaf column c of `rows` (the first at row `first_row` of the file) as one page, or, when
  // a run of null or empty lists is longer than a chunk holds, split in halves until each
  // part fits; a part with no value is an all-null (constant) page, which holds any number
  // of levels.
  void WritePages(size_t c, const ArrayPtr& rows, uint64_t first_row, PageSink& sink) {
    const LanceField& leaf = *paths_[c].back().field;
    if (IsLegacyBlobField(leaf) || IsBlobV2Field(leaf)) {
      ShreddedLeaf shredded = Shred(paths_[c], *rows);
      EncodedPage page = IsLegacyBlobField(leaf) ? EncodeLegacyBlobPage(leaf, shredded, encode_, sink)
                         : shredded.num_valid == 0 ? EncodeAllNull(shredded, encode_)
                                                   : EncodeBlobV2Page(leaf, shredded, encode_, sink);
      page.priority = first_row;
      sink.WritePage(uint32_t(c), std::move(page));
      return;
    }
    if (std::optional<EncodedPage> page = EncodeLeafPage(field_, paths_[c], *rows, encode_)) {
      page->priority = first_row;
      sink.WritePage(uint32_t(c), std::move(*page));
      return;
    }
    if (rows->length < 2)
      ThrowNotSupported("field '{}': row {} holds more than 65,535 rep/def levels between two values, more than a "
                        "mini-block chunk holds",
                        field_.name, first_row);
    const int64_t half = rows->length / 2;
    WritePages(c, Slice(*rows, 0, half), first_row, sink);
    WritePages(c, Slice(*rows, half, rows->length - half), first_row + uint64_t(half), sink);
  }

  LanceField field_;
  FileWriterOptions options_;
  EncodeOptions encode_;
  std::vector<LeafPath> paths_;
  std::vector<ArrayPtr> pending_;
  uint64_t pending_bytes_ = 0;
  uint64_t rows_written_ = 0;
};

// ------------------------------------------------------------------------------ decoder

struct PageEntry {
  uint64_t first_row = 0;
  uint64_t num_rows = 0;
  const lance::file::v2::ColumnMetadata::Page* meta = nullptr;
  std::string where;
};

class FieldDecoderImpl final : public FieldDecoder {
 public:
  FieldDecoderImpl(const LanceField& field, std::vector<ColumnRef> columns, const ByteSource& source)
      : field_(field), columns_(std::move(columns)), source_(source) {
    paths_ = LeafPaths(field_);
    if (columns_.size() != paths_.size())
      ThrowCorrupt("file {}: field '{}' has {} leaf columns but {} were given", source_.path(), field_.name,
                   paths_.size(), columns_.size());
    pages_.resize(columns_.size());
    readers_.resize(columns_.size());
    for (size_t c = 0; c < columns_.size(); ++c) {
      const auto& meta = *columns_[c].metadata;
      uint64_t row = 0;
      for (int p = 0; p < meta.pages_size(); ++p) {
        PageEntry entry;
        entry.first_row = row;
        entry.num_rows = meta.pages(p).length();
        entry.meta = &meta.pages(p);
        entry.where = fmt::format("file {}, field '{}', column {}, page {}", source_.path(), field_.name,
                                  columns_[c].index, p);
        row += entry.num_rows;
        pages_[c].push_back(std::move(entry));
      }
      readers_[c].resize(pages_[c].size());
      if (c == 0) num_rows_ = row;
      else if (row != num_rows_)
        ThrowCorrupt("file {}: field '{}' column {} has {} rows but column {} has {}", source_.path(), field_.name,
                     columns_[c].index, row, columns_[0].index, num_rows_);
    }
  }

  uint64_t num_rows() const override { return num_rows_; }

  ArrayPtr Read(uint64_t start, uint64_t count) const override {
    if (start + count > num_rows_)
      ThrowInvalid("file {}: rows {}+{} of field '{}' are past its {} rows", source_.path(), start, count, field_.name,
                   num_rows_);
    if (ArrayPtr plain = ReadPlain(start, count)) return plain;
    std::vector<DecodedPath> decoded(paths_.size());
    for (size_t c = 0; c < paths_.size(); ++c) decoded[c] = ReadColumn(c, start, count);
    if (count == 0) return MakeEmptyArray(field_.type);
    return Assemble(field_, paths_, decoded);
  }

  void PrefetchRows(uint64_t start, uint64_t count) const override {
    for (size_t c = 0; c < pages_.size(); ++c)
      for (size_t p = 0; p < pages_[c].size(); ++p) {
        const PageEntry& page = pages_[c][p];
        const uint64_t begin = std::max(start, page.first_row), end = std::min(start + count, page.first_row + page.num_rows);
        if (begin >= end) continue;
        const std::pair<uint64_t, uint64_t> run{begin - page.first_row, end - begin};
        Reader(c, p).PrefetchRows(std::span(&run, 1));
      }
  }

  void PageRanges(uint64_t start, uint64_t count, std::vector<io::ByteRange>& out) const override {
    for (const auto& pages : pages_)
      for (const PageEntry& page : pages) {
        if (page.first_row >= start + count || page.first_row + page.num_rows <= start) continue;
        const auto& meta = *page.meta;
        for (int b = 0; b < std::min(meta.buffer_offsets_size(), meta.buffer_sizes_size()); ++b)
          if (meta.buffer_sizes(b) > 0) out.push_back({meta.buffer_offsets(b), meta.buffer_sizes(b), nullptr});
      }
  }

  ArrayPtr Take(std::span<const uint64_t> rows) const override {
    const bool ascending = std::is_sorted(rows.begin(), rows.end());
    const std::vector<uint64_t> unique = SortedUniqueRows(rows, ascending);
    if (!unique.empty() && unique.back() >= num_rows_)
      ThrowInvalid("file {}: row {} of field '{}' is past its {} rows", source_.path(), unique.back(), field_.name,
                   num_rows_);
    if (unique.empty()) return MakeEmptyArray(field_.type);
    // Rows that are mostly isolated cost one read each in any order: reading them straight
    // into their places in the answer saves restoring the order with a second copy.
    if (!(ascending && unique.size() == rows.size()) && Runs(unique) * 2 > unique.size())
      if (ArrayPtr direct = TakePlain(rows)) return direct;
    ArrayPtr sorted = TakePlain(unique);
    if (!sorted) {
      std::vector<DecodedPath> decoded(paths_.size());
      for (size_t c = 0; c < paths_.size(); ++c) PrefetchColumn(c, unique);
      for (size_t c = 0; c < paths_.size(); ++c) decoded[c] = TakeColumn(c, unique);
      sorted = Assemble(field_, paths_, decoded);
    }
    if (ascending && unique.size() == rows.size()) return sorted;  // the rows were ascending and distinct
    std::vector<int64_t> indices(rows.size());
    for (size_t k = 0; k < rows.size(); ++k)
      indices[k] = int64_t(std::lower_bound(unique.begin(), unique.end(), rows[k]) - unique.begin());
    return lancelet::Take(*sorted, indices);
  }

 private:
  // A top-level fixed-width field (plain_rows.h) whose pages in the range all hold plain
  // rows (PageReader::PlainRowBytes) is read straight into one buffer: the array Read would
  // assemble, without levels, per-page arrays and concatenation. Null when some page needs
  // the general path.
  ArrayPtr ReadPlain(uint64_t start, uint64_t count) const {
    if (count == 0 || paths_.size() != 1 || paths_[0].size() != 1) return nullptr;
    const uint64_t row_bytes = PlainRowBytes(*field_.type);
    if (row_bytes == 0) return nullptr;
    struct Part {
      const PageReader* reader;
      uint64_t begin, n;
    };
    std::vector<Part> parts;
    uint64_t row = start, end = start + count;
    for (size_t p = 0; p < pages_[0].size() && row < end; ++p) {
      const PageEntry& page = pages_[0][p];
      if (row >= page.first_row + page.num_rows) continue;
      const PageReader& reader = Reader(0, p);
      // One layer (the leaf's own) as Unravel expects for a top-level leaf.
      if (reader.PlainRowBytes() != row_bytes || reader.layers().size() != 1) return nullptr;
      const uint64_t begin = row - page.first_row, n = std::min(end - row, page.num_rows - begin);
      parts.push_back({&reader, begin, n});
      row += n;
    }
    if (row != end) return nullptr;  // the general path reports the short column
    auto values = Buffer::AllocateUninitialized(count * row_bytes);
    uint64_t filled = 0;
    for (const Part& part : parts) {
      part.reader->ReadPlainRows(part.begin, part.n, values->mutable_data() + filled * row_bytes);
      filled += part.n;
    }
    return MakePlainArray(field_.type, int64_t(count), std::move(values));
  }

  // Take's counterpart of ReadPlain: each row copied straight from its page into its
  // place in the answer, `rows` in any order; the rows that fall in one page, one after
  // the other, go to that page at once. Null when some page needs the general path.
  ArrayPtr TakePlain(std::span<const uint64_t> rows) const {
    if (paths_.size() != 1 || paths_[0].size() != 1) return nullptr;
    const uint64_t row_bytes = PlainRowBytes(*field_.type);
    if (row_bytes == 0) return nullptr;
    const auto& pages = pages_[0];
    for (size_t p = 0; p < pages.size(); ++p) {
      const PageReader& reader = Reader(0, p);
      if (reader.PlainRowBytes() != row_bytes || reader.layers().size() != 1) return nullptr;
    }
    auto values = Buffer::AllocateUninitialized(rows.size() * row_bytes);
    for (size_t k = 0; k < rows.size();) {
      const auto after = std::upper_bound(pages.begin(), pages.end(), rows[k],
                                          [](uint64_t row, const PageEntry& page) { return row < page.first_row; });
      if (after == pages.begin()) return nullptr;
      const size_t p = size_t(after - pages.begin()) - 1;
      const uint64_t page_first = pages[p].first_row, page_end = page_first + pages[p].num_rows;
      if (rows[k] >= page_end) return nullptr;  // the general path reports the short column
      size_t j = k + 1;
      while (j < rows.size() && rows[j] >= page_first && rows[j] < page_end) ++j;
      Reader(0, p).TakePlainRows(rows.subspan(k, j - k), page_first, values->mutable_data() + k * row_bytes);
      k = j;
    }
    return MakePlainArray(field_.type, int64_t(rows.size()), std::move(values));
  }

  // Runs of consecutive rows in ascending distinct `sorted`.
  static size_t Runs(const std::vector<uint64_t>& sorted) {
    size_t runs = sorted.empty() ? 0 : 1;
    for (size_t k = 1; k < sorted.size(); ++k) runs += sorted[k] != sorted[k - 1] + 1;
    return runs;
  }

  DecodedPath ReadColumn(size_t c, uint64_t start, uint64_t count) const {
    DecodedPath out;
    const auto& pages = pages_[c];
    for (size_t p = 0; p < pages.size() && count > 0; ++p) {
      const PageEntry& page = pages[p];
      if (start >= page.first_row + page.num_rows) continue;
      const uint64_t begin = start - page.first_row;
      const uint64_t n = std::min(count, page.num_rows - begin);
      const PageReader& reader = Reader(c, p);
      DecodedPath part = Unravel(paths_[c], reader.layers(), reader.ReadRows(begin, n), page.where);
      out.Append(std::move(part));
      start += n;
      count -= n;
    }
    if (count > 0) ThrowCorrupt("file {}: field '{}' column {} ends before row {}", source_.path(), field_.name,
                                columns_[c].index, start);
    if (out.layers.empty() && out.leaves.empty()) out.layers.resize(paths_[c].size() - 1);
    return out;
  }

  // Tells each page of column c which runs of `sorted` TakeColumn will read from it
  // (PageReader::PrefetchRows).
  void PrefetchColumn(size_t c, const std::vector<uint64_t>& sorted) const {
    const auto& pages = pages_[c];
    std::vector<std::pair<uint64_t, uint64_t>> runs;
    size_t p = 0, runs_page = pages.size();
    auto flush = [&] {
      if (runs_page < pages.size()) Reader(c, runs_page).PrefetchRows(runs);
      runs.clear();
    };
    for (size_t k = 0; k < sorted.size();) {
      size_t j = k + 1;
      while (j < sorted.size() && sorted[j] == sorted[j - 1] + 1) ++j;
      uint64_t row = sorted[k], count = sorted[j - 1] - sorted[k] + 1;
      while (count > 0) {
        while (p < pages.size() && row >= pages[p].first_row + pages[p].num_rows) ++p;
        if (p == pages.size()) return;  // TakeColumn reports the short column
        if (p != runs_page) {
          flush();
          runs_page = p;
        }
        const uint64_t begin = row - pages[p].first_row, n = std::min(count, pages[p].num_rows - begin);
        runs.emplace_back(begin, n);
        row += n;
        count -= n;
      }
      k = j;
    }
    flush();
  }

  // Rows `sorted` (ascending, distinct, all < num_rows_) of leaf column c. The items of all
  // the rows taken from one page are gathered first and unravelled together.
  DecodedPath TakeColumn(size_t c, const std::vector<uint64_t>& sorted) const {
    DecodedPath out;
    const auto& pages = pages_[c];
    PageItems gathered;
    size_t gathered_page = pages.size();  // none
    auto flush = [&] {
      if (gathered_page == pages.size()) return;
      out.Append(Unravel(paths_[c], Reader(c, gathered_page).layers(), std::move(gathered), pages[gathered_page].where));
      gathered = PageItems();
      gathered_page = pages.size();
    };
    size_t p = 0;
    for (size_t k = 0; k < sorted.size();) {
      size_t j = k + 1;  // rows [sorted[k], sorted[j - 1]] are consecutive
      while (j < sorted.size() && sorted[j] == sorted[j - 1] + 1) ++j;
      uint64_t row = sorted[k], count = sorted[j - 1] - sorted[k] + 1;
      while (count > 0) {
        while (p < pages.size() && row >= pages[p].first_row + pages[p].num_rows) ++p;
        if (p == pages.size())
          ThrowCorrupt("file {}: field '{}' column {} ends before row {}", source_.path(), field_.name,
                       columns_[c].index, row);
        const uint64_t begin = row - pages[p].first_row, n = std::min(count, pages[p].num_rows - begin);
        PageItems part = Reader(c, p).ReadRows(begin, n);
        if (p != gathered_page) {
          flush();
          gathered = std::move(part);
          gathered_page = p;
        } else {
          AppendItems(gathered, part);
        }
        row += n;
        count -= n;
      }
      k = j;
    }
    flush();
    return out;
  }

  static void AppendItems(PageItems& into, const PageItems& part) {
    into.levels.rep.insert(into.levels.rep.end(), part.levels.rep.begin(), part.levels.rep.end());
    into.levels.def.insert(into.levels.def.end(), part.levels.def.begin(), part.levels.def.end());
    into.values.AppendFrom(part.values, 0, part.values.count);
    into.num_rows += part.num_rows;
  }

  const PageReader& Reader(size_t c, size_t p) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = readers_[c][p];
    if (slot) return *slot;
    const PageEntry& page = pages_[c][p];
    const auto& meta = *page.meta;
    if (!meta.encoding().has_direct())
      ThrowNotSupported("{}: page encoding is not stored inline", page.where);
    google::protobuf::Any any;
    if (!any.ParseFromString(meta.encoding().direct().encoding()))
      ThrowCorrupt("{}: page encoding is not a protobuf Any", page.where);
    const std::string& url = any.type_url();
    const std::string expected = "lance.encodings21.PageLayout";
    if (url.size() < expected.size() || url.compare(url.size() - expected.size(), expected.size(), expected) != 0)
      ThrowCorrupt("{}: page encoding is a {}, expected a 2.1 PageLayout", page.where, url);
    pb::PageLayout layout;
    if (!layout.ParseFromString(any.value())) ThrowCorrupt("{}: PageLayout does not parse", page.where);
    PageSource src;
    src.source = &source_;
    src.num_rows = page.num_rows;
    src.path = &paths_[c];
    src.where = page.where;
    if (meta.buffer_offsets_size() != meta.buffer_sizes_size())
      ThrowCorrupt("{}: {} buffer offsets but {} sizes", page.where, meta.buffer_offsets_size(), meta.buffer_sizes_size());
    for (int b = 0; b < meta.buffer_offsets_size(); ++b) src.buffers.emplace_back(meta.buffer_offsets(b), meta.buffer_sizes(b));
    slot = MakePageReader(std::move(src), layout);
    return *slot;
  }

  LanceField field_;
  std::vector<ColumnRef> columns_;
  const ByteSource& source_;
  std::vector<LeafPath> paths_;
  std::vector<std::vector<PageEntry>> pages_;
  mutable std::vector<std::vector<std::unique_ptr<PageReader>>> readers_;
  mutable std::mutex mutex_;
  uint64_t num_rows_ = 0;
};

}  // namespace

uint32_t NumColumns(const LanceField& field) {
  if (IsPackedStruct(field)) return 1;
  if (field.type->id() == TypeId::kStruct) {
    uint32_t n = 0;
    for (const auto& child : field.children) n += NumColumns(child);
    return n;
  }
  if (field.type->is_list()) return field.children.empty() ? 0 : NumColumns(field.children[0]);
  return 1;
}

std::unique_ptr<FieldEncoder> MakeEncoder(FileVersion version, const LanceField& field, const FileWriterOptions& options) {
  return std::make_unique<FieldEncoderImpl>(version, field, options);
}

std::unique_ptr<FieldDecoder> MakeDecoder(FileVersion, const LanceField& field, std::vector<ColumnRef> columns,
                                          const ByteSource& source) {
  return std::make_unique<FieldDecoderImpl>(field, std::move(columns), source);
}

}  // namespace lancelet::format::v21
