// Fuzz target: the 2.1 / 2.2 compressive encodings on their own (bitpacking, RLE, byte
// stream split, general ZSTD / LZ4, FSST, dictionaries, levels) and the 2.0 buffer
// compression. Input:
//   u8  op (below); u16 n, the number of values to decode;
//   u32 length + a serialized CompressiveEncoding (ops 0-3; for ops 4-9 only the first
//       bytes are read, as parameters); the rest is the data.
// Build with -DLANCELET_FUZZ=ON (clang, libFuzzer); tests/fuzz runs it briefly.
#include "format/v20_internal.h"
#include "format/v21_compression.h"
#include "format/v21_value_codecs.h"
#include "fuzz_support.h"

namespace lancelet::fuzz {

enum CompressionOp : uint8_t {
  kBlock = 0,        // DecodeBlock: levels, dictionaries, constant pages
  kLevels = 1,       // DecodeLevels
  kChunk = 2,        // DecodeChunkValues; data = ChunkBufferCount x (u32 length + bytes)
  kDictionary = 3,   // DecodeDictionary, then a lookup of n indices
  kFsst = 4,         // FsstTable::Parse(first 2312 bytes), Expand(the rest)
  kBitpacking = 5,   // Inline (param 0 even) or OutOfLine bitpacking
  kRle = 6,          // DecodeRleBlock
  kByteStreamSplit = 7,
  kGeneral = 8,      // DecompressBuffer with ZSTD or LZ4
  kV20Buffer = 9,    // the 2.0 Flat buffer decompression ("zstd" / "lz4")
  kNumOps = 10,
};

inline int FuzzCompression(const uint8_t* data, size_t size) {
  namespace v21 = format::v21;
  const std::string where = "fuzz compression";
  try {
    InputReader in(data, size);
    const uint8_t op = in.Get<uint8_t>() % kNumOps;
    const uint64_t n = in.Get<uint16_t>();
    const std::string_view params = in.Bytes(in.Get<uint32_t>());
    const auto param = [&](size_t i) { return i < params.size() ? uint8_t(params[i]) : uint8_t(0); };
    lance::encodings21::CompressiveEncoding encoding;
    if (op <= kDictionary && !encoding.ParseFromString(std::string(params))) return 0;
    static constexpr uint32_t kWordBits[] = {8, 16, 32, 64};
    const uint32_t word_bits = kWordBits[param(1) % 4];
    switch (op) {
      case kBlock:
        (void)v21::DecodeBlock(encoding, in.Rest(), n, where);
        break;
      case kLevels:
        v21::CheckLevelEncoding(encoding, "levels", where);
        (void)v21::DecodeLevels(encoding, in.Rest(), n, where);
        break;
      case kChunk: {
        (void)v21::ParseValueCodec(encoding, where);
        std::vector<std::string> buffers;
        const uint64_t count = std::min<uint64_t>(v21::ChunkBufferCount(encoding), 8);
        for (uint64_t b = 0; b < count; ++b) buffers.emplace_back(in.Bytes(in.Get<uint32_t>()));
        (void)v21::DecodeChunkValues(encoding, std::move(buffers), n, where);
        break;
      }
      case kDictionary: {
        const auto dictionary = v21::DecodeDictionary(encoding, in.Rest(), n, where);
        v21::ValueBlock indices;
        indices.bits = 32;
        indices.count = n;
        for (uint64_t i = 0; i < n; ++i) PutLE<uint32_t>(indices.data, uint32_t(i * 7 % (n + 1)));
        (void)v21::LookUpDictionary(dictionary, indices, where);
        break;
      }
      case kFsst: {
        const std::string_view rest = in.Rest();
        const size_t table = std::min<size_t>(rest.size(), 2312);
        auto fsst = v21::FsstTable::Parse(std::string(rest.substr(0, table)), where);
        std::string out;
        fsst.Expand(rest.substr(table), out, where);
        break;
      }
      case kBitpacking: {
        const uint32_t width = param(2) % (word_bits + 1);
        if (param(0) % 2 == 0) (void)v21::DecodeInlineBitpacking(word_bits, in.Rest(), n, where);
        else (void)v21::DecodeOutOfLineBitpacking(word_bits, width, in.Rest(), n, where);
        break;
      }
      case kRle:
        (void)v21::DecodeRleBlock(word_bits, param(2) % 2 ? 16 : 8, in.Rest(), n, where);
        break;
      case kByteStreamSplit:
        (void)v21::DecodeByteStreamSplit(word_bits, in.Rest(), n, where);
        break;
      case kGeneral: {
        lance::encodings21::BufferCompression compression;
        compression.set_scheme(param(0) % 2 ? lance::encodings21::COMPRESSION_ALGORITHM_LZ4
                                            : lance::encodings21::COMPRESSION_ALGORITHM_ZSTD);
        (void)v21::DecompressBuffer(compression, in.Rest(), where);
        break;
      }
      default:
        (void)format::v20::Decompress(param(0) % 2 ? "lz4" : "zstd", std::string(in.Rest()), where);
    }
  } catch (const Error&) {
  }
  return 0;
}

}  // namespace lancelet::fuzz

#ifndef LANCELET_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return lancelet::fuzz::FuzzCompression(data, size);
}
#endif
