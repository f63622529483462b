// Private to the 2.1 / 2.2 reader: value transforms layered on top of the Flat / Variable
// buffers that the page layouts (mini-block, full-zip, constant) already decode.
//   - Fsst                 (v21_fsst.cc): strings compressed with a per-page symbol table;
//   - PackedStruct         (v21_packed_struct.cc): fixed-width struct children interleaved
//                          row by row, and VariablePackedStruct, which also allows
//                          length-prefixed variable-width children;
//   - blobs                (v21_blob.cc): BlobLayout pages (legacy blobs) and blob v2
//                          descriptors;
//   - constant scalars     (v21_constant_scalar.cc): the value buffer of a ConstantLayout.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/v21_internal.h"

namespace lancelet::format::v21 {

// ---------------------------------------------------------------------------------- FSST

// A symbol table as the reference stores it in Fsst.symbol_table (always 2312 bytes):
//   u64 header: 0x46535354 ("FSST") in the high 32 bits, bit 24 = compression was applied,
//               bits 0..7 = number of symbols n;
//   n u64 symbols (little-endian, the symbol's bytes in order), then n u8 symbol lengths
//   (1..8); the rest is zero padding.
// A compressed string is a sequence of codes: code c < n expands to symbol c, code 255 is
// followed by one literal byte. When compression was not applied the bytes are raw.
class FsstTable {
 public:
  static FsstTable Parse(const std::string& bytes, const std::string& where);
  bool active() const { return active_; }
  // Appends the expansion of `compressed` to `out`.
  void Expand(std::string_view compressed, std::string& out, const std::string& where) const;
  // Replaces the (variable-width) values of `block` by their expansions.
  void ExpandBlock(ValueBlock& block, const std::string& where) const;

 private:
  // Bytes `compressed` expands to; throws Corrupt on a code past the table or a cut escape.
  uint64_t ExpandedSize(std::string_view compressed, const std::string& where) const;
  // Expands codes ExpandedSize accepted to `out`, which has room for the expansion plus 8
  // bytes; returns the end of the expansion.
  char* ExpandChecked(std::string_view compressed, char* out) const;
  // The same for codes not yet checked: sets `bad` on a code past the table or an escape
  // that ends the value (whose output is then not the value's).
  char* ExpandUnchecked(std::string_view compressed, char* out, bool& bad) const;

  bool active_ = false;
  uint32_t num_symbols_ = 0;
  std::array<uint64_t, 256> symbols_{};
  std::array<uint8_t, 256> lengths_{};
};

// The writing side: a symbol table trained on a page's values (the FSST paper's greedy
// generations: parse a sample with the current table, then keep the 255 symbols and
// symbol pairs with the most bytes covered), and values compressed with it by greedy
// longest match, escaping bytes no symbol starts.
class FsstEncoder {
 public:
  // Trains on a sample of the values of `block` (variable width).
  static FsstEncoder Train(const ValueBlock& block);
  // The table as Fsst.symbol_table stores it (2312 bytes, "compression applied" set).
  std::string SymbolTable() const;
  // Appends the codes of `value` to `out`.
  void Compress(std::string_view value, std::string& out) const;
  // `block`'s values compressed, as a variable-width block.
  ValueBlock CompressBlock(const ValueBlock& block) const;

 private:
  struct Symbol {
    uint64_t bytes = 0;  // little-endian, the symbol's bytes in order
    uint8_t length = 0;
  };
  void Index();
  // The code of the longest symbol at the start of `rest`, or -1.
  int LongestMatch(std::string_view rest) const;
  std::vector<Symbol> symbols_;  // code order
  // Symbols of 2 bytes or more by their first two bytes (a little-endian u16), longest
  // first: codes pair_codes_[pair_start_[key] .. pair_start_[key + 1]); and the 1-byte
  // symbol of each byte, or -1.
  std::vector<uint32_t> pair_start_;
  std::vector<uint8_t> pair_codes_;
  std::array<int16_t, 256> single_{};
};

// A binary / utf8 array whose values are FSST-compressed (the 2.0 Fsst encoding wraps a
// Binary encoding), expanded with `symbol_table` (the bytes above). Validity is kept.
ArrayPtr ExpandFsstArray(const ArrayData& compressed, const std::string& symbol_table, const std::string& where);

// --------------------------------------------------------------------------- packed structs

// Whether a struct field is stored as one packed column ("packed" or
// "lance-encoding:packed" field metadata), as legacy blob descriptors, or as blob v2.
bool IsPackedStructField(const LanceField& field);
bool IsLegacyBlobField(const LanceField& field);
bool IsBlobV2Field(const LanceField& field);

// Rows of a VariablePackedStruct rewritten into the form MakePackedStructArray reads:
// fixed-width children at their width, variable-width children as u64 length + bytes.
void NormalizeVariablePackedRows(const pb::VariablePackedStruct& encoding, ValueBlock& rows, const std::string& where);

// The rows of a packed struct field with fixed-width children (its `slots`, in order):
// each row the children's values back to back, as PackedStruct stores them; `child_bits`
// gets each child's width. Throws NotSupported for a child that is not fixed-width
// (bool, variable-width, nested) and Invalid for a child holding nulls, which packed rows
// cannot store.
ValueBlock PackStructRows(const LanceField& field, const ArrayData& array, const std::vector<int64_t>& slots,
                          std::vector<uint64_t>& child_bits);

// Splits packed rows into a struct array of type `type` (children fixed-width, or
// variable-width when the rows are normalized variable rows). `valid` is the struct's own
// validity, one entry per row.
ArrayPtr MakePackedStructArray(const TypePtr& type, const ValueBlock& rows, const std::vector<uint8_t>& valid,
                               const std::string& where);

// The array type a 2.1 leaf column decodes to: the schema type, except for blobs, which
// decode to their descriptors (legacy: struct<position: uint64, size: uint64>; blob v2:
// struct<kind: uint8, position: uint64, size: uint64, blob_id: uint32, blob_uri: utf8>).
TypePtr DecodedLeafType(const LanceField& leaf);
TypePtr LegacyBlobDescriptorType();
TypePtr BlobV2DescriptorType();

// Checks a value compression tree of the packed kinds (PackedStruct(Flat),
// VariablePackedStruct) and returns the shape ParseValueCodec would for it.
ValueCodec ParsePackedCodec(const pb::CompressiveEncoding& encoding, const std::string& where);

// ------------------------------------------------------------------------------- blobs

std::unique_ptr<PageReader> MakeBlobReader(PageSource page, const pb::BlobLayout& layout);
// A page of legacy blobs (2.1): every non-empty value's bytes written out of line through
// `sink`, then the BlobLayout page of their (position, size) descriptors.
EncodedPage EncodeLegacyBlobPage(const LanceField& field, const ShreddedLeaf& leaf, const EncodeOptions& options,
                                 PageSink& sink);
// A page of blob v2 descriptors (2.2): each valid row's bytes inline (out of line in the
// data file) or in sidecars through `sink`, by size; external rows keep their uri.
EncodedPage EncodeBlobV2Page(const LanceField& field, const ShreddedLeaf& leaf, const EncodeOptions& options,
                             PageSink& sink);

// ---------------------------------------------------------------------- constant scalars

// Parses a ConstantLayout value buffer: u32 buffer count, u32 length of each buffer, then
// the buffers of a one-element Arrow array (fixed width: the value bytes; binary / utf8:
// 32- or 64-bit offsets {start, end}, then the bytes). Returns the value's bytes.
std::string ParseConstantScalar(const std::string& buffer, bool variable, const std::string& where);

}  // namespace lancelet::format::v21
