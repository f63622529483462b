// Private to the 2.1 / 2.2 reader: the compressive encodings the reference writes by
// default or on request, one file each:
//   - v21_bitpacking.cc        FastLanes bit-unpacking, InlineBitpacking, OutOfLineBitpacking;
//   - v21_rle.cc               Rle (run values + run lengths);
//   - v21_byte_stream_split.cc ByteStreamSplit;
//   - v21_general.cc           General (whole-buffer ZSTD / LZ4);
//   - v21_dictionary.cc        mini-block dictionaries;
//   - v21_compressed_values.cc the dispatch over a compression tree, for mini-block chunk
//                              values, whole blocks (levels, dictionaries) and levels.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "format/v21_internal.h"

namespace lancelet::format::v21 {

// ------------------------------------------------------------------------------ bitpacking

// FastLanes order: 1024 values of a `word_bits` integer (8, 16, 32, 64) packed at `width`
// bits each (0..word_bits) into width * 128 bytes. The words are viewed as 1024 / word_bits
// lanes interleaved word by word (lane l owns words l, l + lanes, l + 2 * lanes, ...); each
// lane's words form one little-endian bit stream holding word_bits values, the value of
// row r at bits [r * width, (r + 1) * width). Row r of lane l is value
//   kFastLanesOrder[r / 8] * 16 + (r % 8) * 128 + l.
inline constexpr int kFastLanesOrder[8] = {0, 4, 2, 6, 1, 5, 3, 7};
inline constexpr uint64_t kFastLanesValues = 1024;

// Unpacks one FastLanes block into 1024 little-endian words of word_bits / 8 bytes at `out`.
void FastLanesUnpack(uint32_t word_bits, uint32_t width, const uint8_t* packed, uint8_t* out);

// InlineBitpacking: blocks of [one word_bits word holding the width][width * 128 bytes], each
// block 1024 values (the last one padded), and nothing else. Returns `n` values of
// word_bits / 8 bytes each.
std::string DecodeInlineBitpacking(uint32_t word_bits, std::string_view data, uint64_t n, const std::string& where);

// OutOfLineBitpacking: whole blocks of 1024 values at `width` bits (width * 128 bytes each);
// a partial last block is either packed and padded like the others, or its values follow
// unpacked (word_bits each), whichever the buffer length says.
std::string DecodeOutOfLineBitpacking(uint32_t word_bits, uint32_t width, std::string_view data, uint64_t n,
                                      const std::string& where);
// Values rows[i] - first of an InlineBitpacking buffer of n values (word_bits each),
// written to out + i * word_bits / 8; each is unpacked alone, which beats unpacking whole
// blocks when a take needs few of their values. Every row must lie in [first, first + n).
// False, with nothing promised about `out`, when the buffer is not what
// DecodeInlineBitpacking accepts (which then names the fault).
bool GatherInlineBitpacked(uint32_t word_bits, std::string_view data, uint64_t n, std::span<const uint64_t> rows,
                           uint64_t first, uint8_t* out);
// The inverse of DecodeInlineBitpacking: n values of word_bits / 8 bytes at `values`, each
// block of 1024 (the last one padded with zeros) at the bit width of its widest value.
std::string EncodeInlineBitpacking(uint32_t word_bits, const uint8_t* values, uint64_t n);
// The bit width of the widest of n values of word_bits / 8 bytes (0 when all are zero).
uint32_t MaxBitWidth(uint32_t word_bits, const uint8_t* values, uint64_t n);

// The inverse for 16-bit words (rep/def levels), each below 2^width: whole blocks, then a
// partial block packed and padded when padding costs fewer bits than packing saves, else
// its values unpacked (the reference's rule, which a reader tells apart by the length).
std::string EncodeOutOfLineBitpacking16(const uint16_t* values, uint64_t n, uint32_t width);
// Bytes EncodeOutOfLineBitpacking16 writes for n values at `width` bits.
uint64_t OutOfLineBitpackedBytes16(uint64_t n, uint32_t width);

// ------------------------------------------------------------------------------------ rle

// Run values (value_bits each) and run lengths (length_bits each, 8 or 16, little-endian,
// never 0) into n values.
std::string DecodeRle(uint32_t value_bits, uint32_t length_bits, std::string_view values, std::string_view lengths,
                      uint64_t n, const std::string& where);
// Block form: u64 byte size of the run values, the run values, then the run lengths.
std::string DecodeRleBlock(uint32_t value_bits, uint32_t length_bits, std::string_view data, uint64_t n,
                           const std::string& where);
// Runs of equal values (value_bits 8, 16, 32 or 64) as the two mini-block buffers: the run
// values and their u8 lengths (a longer run is split in runs of 255). RunCount counts the
// runs of any length, as the reference's statistic does.
std::pair<std::string, std::string> EncodeRle(uint32_t value_bits, const uint8_t* values, uint64_t n);
uint64_t RunCount(uint32_t value_bits, const uint8_t* values, uint64_t n);
// The runs EncodeRle stores: runs of more than 255 count once per 255 values.
uint64_t StoredRunCount(uint32_t value_bits, const uint8_t* values, uint64_t n);

// The block form of n 16-bit levels with u8 run lengths (a longer run is split in runs of
// 255), and its size.
std::string EncodeRleBlock16(const uint16_t* values, uint64_t n);
uint64_t RleBlockBytes16(const uint16_t* values, uint64_t n);

// --------------------------------------------------------------------- byte stream split

// n values of value_bits (a multiple of 8) stored as value_bits / 8 streams of n bytes: byte
// j of value i at j * n + i.
std::string DecodeByteStreamSplit(uint32_t value_bits, std::string_view data, uint64_t n, const std::string& where);
// The inverse, for n values of value_bits / 8 bytes.
std::string EncodeByteStreamSplit(uint32_t value_bits, const uint8_t* values, uint64_t n);
// The reference's rule for splitting 32- or 64-bit values under General compression: the
// mean Shannon entropy of each byte position over the first 64 values is under 4 bits
// (the byte streams then hold runs a general compressor finds).
bool ByteStreamsPay(uint32_t value_bits, const uint8_t* values, uint64_t n);

// -------------------------------------------------------------------------------- general

// One buffer compressed as a whole:
//   ZSTD  u64 little-endian uncompressed size, then a zstd frame (a bare zstd frame, as
//         written by older versions, is also accepted);
//   LZ4   u32 little-endian uncompressed size, then an LZ4 block.
std::string DecompressBuffer(const pb::BufferCompression& compression, std::string_view data, const std::string& where);
// The inverse, framed as above. ZSTD frames leave out the content size, as the reference's
// streaming encoder does; LZ4 uses the default (fast) mode.
std::string CompressBuffer(const GeneralCompression& compression, std::string_view data);
// Appends CompressBuffer(compression, data) to `out`.
void AppendCompressed(const GeneralCompression& compression, std::string_view data, std::string& out);

// ------------------------------------------------------------------------------- dispatch

// ParseValueCodec for the nodes above (InlineBitpacking, Rle, ByteStreamSplit, General):
// the shape of the decoded values, with `compressed` set to `e`.
ValueCodec ParseCompressedCodec(const pb::CompressiveEncoding& e, const std::string& where);
// Value buffers per mini-block chunk that the tree `e` reads (Rle: 2).
uint64_t ChunkBufferCount(const pb::CompressiveEncoding& e);

// The value buffers of one mini-block chunk decoded into `n` values as the tree's leaf
// stores them: fixed width (bits per value of the uncompressed data) or variable
// (offsets + bytes). Fsst and packed-struct nodes pass through (ValueCodec and
// FinishValues handle them).
ValueBlock DecodeChunkValues(const pb::CompressiveEncoding& e, std::vector<std::string> buffers, uint64_t n,
                             const std::string& where);

// A whole buffer (block) decoded into `n` values: levels, dictionaries, constant pages.
// Flat, Variable, InlineBitpacking, OutOfLineBitpacking, Rle, General.
ValueBlock DecodeBlock(const pb::CompressiveEncoding& e, std::string_view data, uint64_t n, const std::string& where);

// Repetition / definition levels: a block of n 16-bit values.
std::vector<uint16_t> DecodeLevels(const pb::CompressiveEncoding& e, std::string_view data, uint64_t n,
                                   const std::string& where);
// Throws NotSupported unless DecodeLevels handles `e`.
void CheckLevelEncoding(const pb::CompressiveEncoding& e, const std::string& what, const std::string& where);

// ----------------------------------------------------------------------------- dictionary

// The dictionary of a mini-block page, decoded once.
ValueBlock DecodeDictionary(const pb::CompressiveEncoding& e, std::string_view data, uint64_t num_items,
                            const std::string& where);
// Looks `indices` (fixed width, 8..64 bits, unsigned) up in `dictionary`; an index past
// its end is corrupt (the reference gives null items the index of an empty / zero value).
ValueBlock LookUpDictionary(const ValueBlock& dictionary, const ValueBlock& indices, const std::string& where);

}  // namespace lancelet::format::v21
