// Private to the 2.1 / 2.2 structural encodings (v21_*.cc).
//
// A 2.1 file stores one column per leaf of the schema: a list shares its item's column and
// a struct parent has none. Each page of a leaf column holds, for a range of top-level rows,
//   - repetition levels (one per item, when the path to the leaf has lists),
//   - definition levels (one per item, when some layer has nulls or empty lists), and
//   - the values of the "visible" items (items that reach the leaf; null and empty lists
//     are invisible items without a value slot).
// The page layout (lance.encodings21.PageLayout) says how these are laid out: mini-block
// chunks, full-zip rows, or an all-null / constant page.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "encodings_v2_1.pb.h"
#include "format/field_codec.h"

namespace lancelet::format::v21 {

namespace pb = lance::encodings21;

inline constexpr const char* kPageLayoutUrl = "/lance.encodings21.PageLayout";
inline constexpr const char* kColumnEncodingUrl = "/lance.encodings.ColumnEncoding";
// Pages whose buffers span at most this many bytes are read whole (PageSource::PrefetchWhole):
// as much as a remote store fetches for one small read of unknown reach anyway.
inline constexpr uint64_t kSmallPageBytes = 64 << 10;

// google.protobuf.Any with the reference's "/package.Message" type URL.
std::string WrapAny(const std::string& type_url, const google::protobuf::MessageLite& message);

// ------------------------------------------------------------------------------ paths

// One node on the way from a top-level field down to a leaf column.
struct PathNode {
  enum Kind { kStruct, kList, kLeaf };
  Kind kind;
  const LanceField* field;
  size_t child = 0;  // struct: index of the child the path continues into
};
// Outermost first; back() is the leaf (a primitive, binary, fixed_size_binary or
// fixed_size_list of a fixed-width type).
using LeafPath = std::vector<PathNode>;

// The leaf columns of a field, in column order. Throws NotSupported for types 2.1 cannot
// store here (empty structs, fixed_size_list of nested types).
std::vector<LeafPath> LeafPaths(const LanceField& field);

// ----------------------------------------------------------------------------- levels

// Repetition / definition levels of a run of items. Empty vectors mean "absent" (no lists,
// resp. nothing null or empty) when has_rep / has_def is false.
struct Levels {
  bool has_rep = false;
  bool has_def = false;
  std::vector<uint16_t> rep;
  std::vector<uint16_t> def;
};

// Definition-level numbering of a page's layers (innermost first, as stored).
struct LevelScheme {
  explicit LevelScheme(const std::vector<pb::RepDefLayer>& layers_innermost_first);
  size_t num_layers() const { return null_level.size(); }
  uint16_t max_rep = 0;            // number of list layers
  uint16_t max_visible_def = 0;    // def levels at or below this reach the leaf
  // Indexed outermost first (like LeafPath); 0 = the layer cannot be null / empty.
  std::vector<uint16_t> null_level;
  std::vector<uint16_t> empty_level;
  std::vector<bool> is_list;
};

bool IsListLayer(pb::RepDefLayer layer);
int NumDefLevels(pb::RepDefLayer layer);

// Values of visible items. Fixed width: `bits` per value packed LSB-first in `data` (a
// fixed_size_list value is all its items; their validity, if stored, is kept apart in
// `item_validity`). Variable: `offsets` (count + 1, starting at 0) into `data`.
struct ValueBlock {
  bool variable = false;
  uint64_t count = 0;
  uint64_t bits = 0;
  std::string data;
  std::vector<uint64_t> offsets{0};
  // fixed_size_list items with their own validity: dim bits per value, LSB-first.
  uint32_t dim = 0;
  bool has_item_validity = false;
  std::string item_validity;

  // Appends values [start, start + n) of `other` (same shape).
  void AppendFrom(const ValueBlock& other, uint64_t start, uint64_t n);
  // Appends n zero / empty values.
  void AppendEmpty(uint64_t n);
};

// One leaf column of a page ready to encode: levels over all items, the layers they use and
// which slots of the leaf array the visible items are.
struct ShreddedLeaf {
  std::vector<pb::RepDefLayer> layers;  // innermost first
  Levels levels;
  uint64_t num_rows = 0;
  uint64_t num_items = 0;               // levels (or visible items when there are none)
  const ArrayData* leaf = nullptr;
  std::vector<int64_t> slots;           // leaf index of each visible item
  std::vector<bool> slot_valid;         // whether each visible item is valid (def == 0)
  uint64_t num_valid = 0;
};

// Turns the rows of `root` (the top-level field's array) into levels for one leaf.
ShreddedLeaf Shred(const LeafPath& path, const ArrayData& root);

// The values of the visible items, in the layout the leaf type is stored in.
ValueBlock GatherValues(const LeafPath& path, const ShreddedLeaf& leaf);

// ---------------------------------------------------------------------------- decoding

// Levels and visible values of a contiguous run of rows of one page.
struct PageItems {
  Levels levels;
  ValueBlock values;
  uint64_t num_rows = 0;
};

struct DecodedLayer {
  std::vector<uint8_t> valid;      // one per element
  std::vector<int64_t> offsets{0};  // list layers: one more than `valid`
};

// One leaf column decoded for some rows: per non-leaf path node (same index as LeafPath)
// its validity (and offsets), and the leaf values.
struct DecodedPath {
  std::vector<DecodedLayer> layers;
  std::vector<ArrayPtr> leaves;
  uint64_t num_rows = 0;
  void Append(DecodedPath&& other);
};

DecodedPath Unravel(const LeafPath& path, const std::vector<pb::RepDefLayer>& layers, PageItems&& items,
                    const std::string& where);
// Builds the field's array from its leaf columns (one DecodedPath per LeafPaths() entry,
// all covering the same rows).
ArrayPtr Assemble(const LanceField& field, const std::vector<LeafPath>& paths, std::vector<DecodedPath>& decoded);

// ------------------------------------------------------------------------------- pages

// What a page reader needs from the container.
struct PageSource {
  const ByteSource* source = nullptr;
  std::vector<std::pair<uint64_t, uint64_t>> buffers;  // (file offset, size)
  uint64_t num_rows = 0;
  const LeafPath* path = nullptr;
  std::string where;  // "file F, column C, page P" for errors
  std::string ReadBuffer(size_t index) const;
  std::string ReadRange(size_t index, uint64_t offset, uint64_t length) const;
  // ReadRange straight into `out` (length bytes). A remote store answers a small read by
  // fetching the block around it, for the reads near it that usually follow.
  void ReadRangeInto(size_t index, uint64_t offset, uint64_t length, void* out) const;
  // The same for a caller that needs nothing near the range (a chunk, a run of rows): a
  // remote store fetches exactly these bytes.
  void ReadExactInto(size_t index, uint64_t offset, uint64_t length, void* out) const;
  // Ranges of buffer `index` (offsets within it) read together (ByteSource::ReadRangesInto).
  void ReadRangesInto(size_t index, std::vector<io::ByteRange> ranges) const;
  // Ranges of buffer `index` about to be read (ByteSource::Prefetch).
  bool Prefetch(size_t index, std::vector<io::ByteRange> ranges) const;
  // Asks for all of the page's buffers in one range when they lie within `max_span` bytes:
  // a remote store then fetches a small page in one request, where its buffers read one
  // after the other (metadata, then dictionary, then chunks) would cost one each.
  void PrefetchWhole(uint64_t max_span) const;
  // The range in place when the source holds it in memory (ByteSource::Resident), else null.
  const uint8_t* ResidentRange(size_t index, uint64_t offset, uint64_t length) const;
};

class PageReader {
 public:
  virtual ~PageReader() = default;
  virtual const std::vector<pb::RepDefLayer>& layers() const = 0;
  // Items of rows [start, start + count) of the page.
  virtual PageItems ReadRows(uint64_t start, uint64_t count) const = 0;
  // Bytes per row when the page holds one value per row, none of them null, with no levels
  // and fixed-width values that need no transform after decoding: then ReadPlainRows gives
  // the same values as ReadRows, as raw bytes (see plain_rows.h). 0 otherwise.
  virtual uint64_t PlainRowBytes() const { return 0; }
  // Writes rows [start, start + count) as PlainRowBytes() bytes each to `out`. Only for
  // pages with PlainRowBytes() > 0.
  virtual void ReadPlainRows(uint64_t start, uint64_t count, uint8_t* out) const;
  // Writes page row rows[i] - first_row, PlainRowBytes() bytes, to out + i * PlainRowBytes(),
  // `rows` in any order and all within the page. Only for pages with PlainRowBytes() > 0.
  // This default reads each run of consecutive rows with ReadPlainRows.
  virtual void TakePlainRows(std::span<const uint64_t> rows, uint64_t first_row, uint8_t* out) const;
  // Runs of rows (start, count within the page) about to be read by ReadRows: a reader
  // that can tell which bytes they lie in asks the source for them together, so that a
  // remote file fetches them in a few concurrent requests rather than one per run. This
  // default does nothing.
  virtual void PrefetchRows(std::span<const std::pair<uint64_t, uint64_t>> /*runs*/) const {}
};

std::unique_ptr<PageReader> MakePageReader(PageSource page, const pb::PageLayout& layout);
std::unique_ptr<PageReader> MakeMiniBlockReader(PageSource page, const pb::MiniBlockLayout& layout);
std::unique_ptr<PageReader> MakeFullZipReader(PageSource page, const pb::FullZipLayout& layout);

class FsstTable;  // v21_value_codecs.h

// Value compression trees this build decodes (Flat, Variable(Flat offsets),
// FixedSizeList(Flat), Fsst(Variable), PackedStruct(Flat), VariablePackedStruct);
// everything else throws NotSupported naming `where`.
struct ValueCodec {
  bool variable = false;
  uint64_t bits = 0;          // fixed: bits per value incl. fsl validity bytes
  uint64_t item_bits = 0;     // fixed: bits per innermost item
  uint32_t dim = 0;           // fixed_size_list dimension (0 when not a list)
  bool has_item_validity = false;
  uint32_t offset_bits = 0;   // variable: 32 or 64
  // Applied by FinishValues after the layout has produced the stored values.
  std::shared_ptr<const FsstTable> fsst;                              // expand strings
  std::shared_ptr<const pb::VariablePackedStruct> variable_packed;   // normalize rows
  // Set when the stored values go through DecodeChunkValues (v21_compression.h): the
  // subtree with InlineBitpacking / Rle / ByteStreamSplit / General.
  std::shared_ptr<const pb::CompressiveEncoding> compressed;
};
ValueCodec ParseValueCodec(const pb::CompressiveEncoding& encoding, const std::string& where);
// "Flat", "InlineBitpacking", ...: the compression a CompressiveEncoding node holds.
const char* CompressionName(const pb::CompressiveEncoding& encoding);
// Throws NotSupported: "<where>: <what> compression <name> is not supported yet".
[[noreturn]] void ThrowUnsupportedCompression(const pb::CompressiveEncoding& encoding, std::string_view what,
                                              const std::string& where);
// Turns values as stored (one chunk, or the rows read from a full-zip page) into values
// as the leaf type holds them (FSST expansion, packed-row normalization).
void FinishValues(const ValueCodec& codec, ValueBlock& values, const std::string& where);
// Throws NotSupported for a level compression DecodeLevels (v21_compression.h) cannot read.
void CheckLevelCodec(const pb::CompressiveEncoding& encoding, const std::string& what, const std::string& where);

// ------------------------------------------------------------------------------ encoding

// General compression of a whole buffer (v21_general.cc): ZSTD or LZ4, and the level the
// file records (absent: the scheme's default).
struct GeneralCompression {
  pb::CompressionScheme scheme = pb::COMPRESSION_ALGORITHM_ZSTD;
  std::optional<int32_t> level;
  void Describe(pb::BufferCompression* out) const {
    out->set_scheme(scheme);
    if (level) out->set_level(*level);
  }
};

struct EncodeOptions {
  bool large_chunks = false;  // 2.2: u32 chunk metadata and value sizes
  // False when the field's "lance-encoding:compression" is "none": values stay Flat.
  bool compress_values = true;
  // The field's "lance-encoding:compression" when it names zstd or lz4 (with
  // "lance-encoding:compression-level"): mini-block chunks compress their first value
  // buffer with it, and full-zip values are compressed one by one.
  std::optional<GeneralCompression> general;
  // How a mini-block page's dictionary is compressed: LZ4 at 2.2 (as the reference, unless
  // "lance-encoding:dict-values-compression" says otherwise), nothing at 2.1.
  std::optional<GeneralCompression> dictionary_general;
  // Set for a packed struct's rows (v21_value_codecs.h PackStructRows): its children's
  // widths, which the page describes as PackedStruct(bits_per_value, Flat(row bits)).
  std::vector<uint64_t> packed_child_bits;
  // Set when the page's variable-width values were FSST-compressed with this symbol table
  // (v21_value_codecs.h FsstEncoder): the layout describes them as Fsst(Variable).
  std::string fsst_table;
  // A full-zip page compresses its variable-width values one by one with ZSTD at level 0
  // (decided in v21_field.cc, as the reference decides it).
  bool compress_each_value = false;
  // Set when a full-zip page's variable-width values are packed rows (blob v2 descriptors):
  // the layout describes them with this instead of Variable.
  const pb::VariablePackedStruct* variable_packed = nullptr;
};

// Describes the FSST wrapper in `encoding` when options.fsst_table is set; returns where the
// inner (Variable) encoding goes.
pb::CompressiveEncoding* DescribeFsst(const EncodeOptions& options, pb::CompressiveEncoding* encoding);
// Describes General(compression, ...) in `encoding` when `compression` is set; returns where
// the inner encoding goes.
pb::CompressiveEncoding* DescribeGeneral(const std::optional<GeneralCompression>& compression,
                                         pb::CompressiveEncoding* encoding);

// With a dictionary, `values` are keys into it (fixed width) and the page stores it.
// Nullopt when more rep/def levels lie between two values than a chunk holds (65,535):
// the caller then splits the rows over several pages.
std::optional<EncodedPage> EncodeMiniBlock(const ShreddedLeaf& leaf, const ValueBlock& values, const EncodeOptions& options,
                            const ValueBlock* dictionary = nullptr);
EncodedPage EncodeFullZip(const ShreddedLeaf& leaf, ValueBlock values, const EncodeOptions& options);
EncodedPage EncodeAllNull(const ShreddedLeaf& leaf, const EncodeOptions& options);
// A 2.2 page whose valid values are all equal, as a ConstantLayout (v21_constant.cc);
// nullopt when they differ or the leaf's type has no constant form (fixed_size_list).
std::optional<EncodedPage> EncodeConstant(const ShreddedLeaf& leaf, const ValueBlock& values, const DataType& type);

// Level helpers shared by the layouts.
int BitWidth(uint64_t max_value);  // bits to represent max_value (0 for 0)
std::string LevelBytes(const std::vector<uint16_t>& levels, size_t begin, size_t end);
// Whether field metadata `key` is present with `value` (compared case-insensitively).
bool MetadataIs(const LanceField& field, const char* key, const std::string& value);
std::vector<uint16_t> ParseLevels(const std::string& bytes, size_t count, const std::string& where);

}  // namespace lancelet::format::v21
