// Arrow IPC body compression (Message.fbs BodyCompression, method BUFFER): undoing the
// per-buffer LZ4 frame or zstd compression of record batch bodies.
#include <lz4frame.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include <fmt/format.h>

#include "array/ipc_internal.h"

namespace lancelet::ipc {
namespace {

constexpr int64_t kPrefixSize = 8;
// First output allocation when the payload is small; later ones double.
constexpr size_t kMinChunk = 64 * 1024;

// Runs one streaming decoder over `in` into `storage`, which ends up holding exactly the
// decoded bytes. `step(dst, &dst_size, src, &src_size)` has the LZ4F/zstd streaming shape:
// it consumes up to src_size bytes, produces up to dst_size, updates both, and returns
// 0 when a frame has just ended, an error code, or a positive "more input" hint.
// Returns "" on success, else the error with *error_at set to the input offset reached.
template <typename Step, typename IsError, typename ErrorName>
std::string Drive(std::span<const uint8_t> in, int64_t declared, std::vector<uint8_t>* storage,
                  const char* codec, int64_t* error_at, Step step, IsError is_error,
                  ErrorName error_name) {
  // One byte past the declared size so that over-long output is noticed, not truncated.
  const size_t limit = size_t(declared) + 1;
  storage->assign(std::min(limit, std::max(kMinChunk, in.size() * 4)), 0);
  size_t in_pos = 0;
  size_t out_pos = 0;
  size_t hint = 1;
  for (;;) {
    if (out_pos == storage->size()) {
      if (storage->size() == limit) {
        *error_at = int64_t(in_pos);
        return fmt::format("{} data decodes to more than the {} bytes its prefix declares", codec,
                           declared);
      }
      storage->resize(std::min(limit, storage->size() * 2));
    }
    if (in_pos == in.size() && hint == 0) break;
    size_t src_size = in.size() - in_pos;
    size_t dst_size = storage->size() - out_pos;
    hint = step(storage->data() + out_pos, &dst_size, in.data() + in_pos, &src_size);
    if (is_error(hint)) {
      *error_at = int64_t(in_pos);
      return fmt::format("corrupt {} data: {}", codec, error_name(hint));
    }
    in_pos += src_size;
    out_pos += dst_size;
    // With input exhausted and room left, a decoder that still wants input is truncated.
    if (in_pos == in.size() && hint != 0 && out_pos < storage->size()) {
      *error_at = int64_t(in_pos);
      return fmt::format("{} data ends inside a frame", codec);
    }
  }
  if (int64_t(out_pos) != declared) {
    *error_at = int64_t(in_pos);
    return fmt::format("{} data decodes to {} bytes, its prefix declares {}", codec, out_pos,
                       declared);
  }
  storage->resize(out_pos);
  return "";
}

std::string DecodeZstd(std::span<const uint8_t> in, int64_t declared,
                       std::vector<uint8_t>* storage, int64_t* error_at) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!ctx) throw std::bad_alloc();
  auto step = [&](uint8_t* dst, size_t* dst_size, const uint8_t* src, size_t* src_size) {
    ZSTD_outBuffer out{dst, *dst_size, 0};
    ZSTD_inBuffer input{src, *src_size, 0};
    size_t ret = ZSTD_decompressStream(ctx.get(), &out, &input);
    *dst_size = out.pos;
    *src_size = input.pos;
    return ret;
  };
  return Drive(in, declared, storage, "zstd", error_at, step,
               [](size_t r) { return ZSTD_isError(r) != 0; }, ZSTD_getErrorName);
}

std::string DecodeLz4Frame(std::span<const uint8_t> in, int64_t declared,
                           std::vector<uint8_t>* storage, int64_t* error_at) {
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION))) throw std::bad_alloc();
  std::unique_ptr<LZ4F_dctx, LZ4F_errorCode_t (*)(LZ4F_dctx*)> ctx(raw,
                                                                   LZ4F_freeDecompressionContext);
  auto step = [&](uint8_t* dst, size_t* dst_size, const uint8_t* src, size_t* src_size) {
    return LZ4F_decompress(ctx.get(), dst, dst_size, src, src_size, nullptr);
  };
  return Drive(in, declared, storage, "LZ4 frame", error_at, step,
               [](size_t r) { return LZ4F_isError(r) != 0; }, LZ4F_getErrorName);
}

}  // namespace

const char* CodecName(CompressionCodec codec) {
  switch (codec) {
    case CompressionCodec::kLz4Frame: return "LZ4_FRAME";
    case CompressionCodec::kZstd: return "ZSTD";
  }
  return "unknown";
}

DecompressedBuffer DecompressBuffer(CompressionCodec codec, std::span<const uint8_t> buffer,
                                    std::vector<uint8_t>* storage) {
  DecompressedBuffer out;
  if (buffer.empty()) return out;
  if (buffer.size() < size_t(kPrefixSize)) {
    out.error = fmt::format("compressed buffer of {} bytes is shorter than its 8-byte length prefix",
                            buffer.size());
    return out;
  }
  int64_t declared;
  std::memcpy(&declared, buffer.data(), sizeof(declared));
  std::span<const uint8_t> payload = buffer.subspan(kPrefixSize);
  if (declared == kUncompressedLengthRaw) {
    out.bytes = payload;
    return out;
  }
  if (declared < 0) {
    out.error = fmt::format("negative uncompressed length {} in the buffer prefix", declared);
    return out;
  }
  // A zero-length buffer needs no decoding, whatever follows its prefix.
  if (declared == 0) return out;
  int64_t at = 0;
  out.error = codec == CompressionCodec::kZstd ? DecodeZstd(payload, declared, storage, &at)
                                               : DecodeLz4Frame(payload, declared, storage, &at);
  if (!out.error.empty()) {
    out.error_at = kPrefixSize + at;
    return out;
  }
  out.bytes = std::span<const uint8_t>(storage->data(), storage->size());
  return out;
}

}  // namespace lancelet::ipc
