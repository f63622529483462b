// General compression of a whole buffer (a mini-block chunk's first value buffer, a
// dictionary, a full-zip value): ZSTD or LZ4 with the reference's framing.
#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <memory>

#include "format/little_endian.h"
#include "format/v21_compression.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

namespace {

constexpr uint64_t kMaxDecompressedBytes = uint64_t(1) << 36;

// As in the 2.0 buffers (v20_common.cc): zstd expands at most one 128 KiB block per 4
// input bytes and LZ4 at most 255 bytes per input byte, so a size prefix claiming more is
// corrupt and is refused before it is allocated (found by fuzz/compression_fuzz.cc).
constexpr uint64_t kMaxZstdExpansion = 32768, kMaxLz4Expansion = 255;

// A bare frame (older writers) starts with the zstd magic number and has the reserved bit
// of its frame header descriptor clear; a length prefix practically never looks like that.
bool IsBareZstdFrame(std::string_view data) {
  return data.size() >= 8 && LoadLE(data.data(), 4) == 0xFD2FB528u && (uint8_t(data[4]) & 0x10) == 0;
}

std::string DecompressZstdStream(std::string_view data, const std::string& where) {
  std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> stream(ZSTD_createDStream(), ZSTD_freeDStream);
  if (!stream) ThrowIo("{}: cannot create a zstd decoder", where);
  ZSTD_initDStream(stream.get());
  std::string out;
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  size_t ret = 1;
  while (in.pos < in.size) {
    const size_t start = out.size();
    out.resize(start + ZSTD_DStreamOutSize());
    ZSTD_outBuffer o{out.data() + start, ZSTD_DStreamOutSize(), 0};
    ret = ZSTD_decompressStream(stream.get(), &o, &in);
    if (ZSTD_isError(ret)) ThrowCorrupt("{}: bad zstd frame ({})", where, ZSTD_getErrorName(ret));
    out.resize(start + o.pos);
    if (out.size() > kMaxDecompressedBytes) ThrowCorrupt("{}: zstd frame expands past {} bytes", where, out.size());
    if (ret == 0 && in.pos < in.size) ZSTD_initDStream(stream.get());  // another frame follows
  }
  if (ret != 0) ThrowCorrupt("{}: zstd frame is truncated", where);
  return out;
}

// One compression context per thread, reused: making one costs more than compressing a
// small chunk.
ZSTD_CCtx* ThreadZstdContext() {
  thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> context(ZSTD_createCCtx(), ZSTD_freeCCtx);
  if (!context) ThrowIo("cannot create a zstd encoder");
  return context.get();
}

}  // namespace

void AppendCompressed(const GeneralCompression& compression, std::string_view data, std::string& out) {
  const size_t start = out.size();
  switch (compression.scheme) {
    case pb::COMPRESSION_ALGORITHM_ZSTD: {
      AppendLE<uint64_t>(out, data.size());
      ZSTD_CCtx* context = ThreadZstdContext();
      ZSTD_CCtx_reset(context, ZSTD_reset_session_and_parameters);
      ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, compression.level.value_or(0));
      ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 0);
      out.resize(start + 8 + ZSTD_compressBound(data.size()));
      const size_t written = ZSTD_compress2(context, out.data() + start + 8, out.size() - start - 8, data.data(), data.size());
      if (ZSTD_isError(written)) ThrowIo("zstd compression failed: {}", ZSTD_getErrorName(written));
      out.resize(start + 8 + written);
      return;
    }
    case pb::COMPRESSION_ALGORITHM_LZ4: {
      if (data.size() > uint64_t(LZ4_MAX_INPUT_SIZE))
        ThrowInvalid("a buffer of {} bytes is too large for lz4 (at most {})", data.size(), LZ4_MAX_INPUT_SIZE);
      AppendLE<uint32_t>(out, uint32_t(data.size()));
      out.resize(start + 4 + size_t(LZ4_compressBound(int(data.size()))));
      const int written = LZ4_compress_default(data.data(), out.data() + start + 4, int(data.size()), int(out.size() - start - 4));
      if (written <= 0 && !data.empty()) ThrowIo("lz4 compression of {} bytes failed", data.size());
      out.resize(start + 4 + size_t(std::max(written, 0)));
      return;
    }
    default:
      ThrowNotSupported("general compression scheme {} is not supported for writing", int(compression.scheme));
  }
}

std::string CompressBuffer(const GeneralCompression& compression, std::string_view data) {
  std::string out;
  AppendCompressed(compression, data, out);
  return out;
}

std::string DecompressBuffer(const pb::BufferCompression& compression, std::string_view data, const std::string& where) {
  switch (compression.scheme()) {
    case pb::COMPRESSION_ALGORITHM_ZSTD: {
      if (data.empty()) return {};
      if (IsBareZstdFrame(data)) return DecompressZstdStream(data, where);
      if (data.size() < 8) ThrowCorrupt("{}: zstd buffer of {} bytes has no size prefix", where, data.size());
      const uint64_t size = LoadLE(data.data(), 8);
      if (size > kMaxDecompressedBytes || size > (data.size() - 8) * kMaxZstdExpansion)
        ThrowCorrupt("{}: zstd buffer of {} bytes claims {} bytes", where, data.size(), size);
      std::string out(size, '\0');
      const size_t got = ZSTD_decompress(out.data(), out.size(), data.data() + 8, data.size() - 8);
      if (ZSTD_isError(got)) ThrowCorrupt("{}: bad zstd buffer ({})", where, ZSTD_getErrorName(got));
      if (got != size) ThrowCorrupt("{}: zstd buffer holds {} bytes, its prefix says {}", where, got, size);
      return out;
    }
    case pb::COMPRESSION_ALGORITHM_LZ4: {
      if (data.size() < 4) ThrowCorrupt("{}: lz4 buffer of {} bytes has no size prefix", where, data.size());
      const uint64_t size = LoadLE(data.data(), 4);
      if (size > uint64_t(LZ4_MAX_INPUT_SIZE) || size > (data.size() - 4) * kMaxLz4Expansion + 16)
        ThrowCorrupt("{}: lz4 buffer of {} bytes claims {} bytes", where, data.size(), size);
      std::string out(size, '\0');
      const int got = LZ4_decompress_safe(data.data() + 4, out.data(), int(data.size() - 4), int(size));
      if (got < 0 || uint64_t(got) != size)
        ThrowCorrupt("{}: bad lz4 buffer (expected {} bytes, decoded {})", where, size, got);
      return out;
    }
    default:
      ThrowNotSupported("{}: general compression scheme {} is not supported", where, int(compression.scheme()));
  }
}

}  // namespace lancelet::format::v21
