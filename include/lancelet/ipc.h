// Arrow IPC: the streaming format and the file ("ARROW1") format, written and read
// without any Arrow library.
//
// Written: metadata version V5, little endian, no compression, no dictionaries, every
// body buffer 8-byte aligned and padded. A validity buffer is written only for arrays
// with nulls (length 0 otherwise).
// Read: both formats (detected by the "ARROW1" magic), the pre-0.15 stream framing
// without the continuation marker, sliced buffers as other writers produce (offsets
// not starting at 0, children longer than needed, empty validity buffers). Arrays come
// back normalised to the invariants in array.h. Compressed bodies (LZ4_FRAME or ZSTD,
// method BUFFER, including raw -1 buffers) are decompressed; dictionaries and types
// lancelet has no TypeId for are rejected with NotSupported.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "lancelet/record_batch.h"

namespace lancelet {

// Writes the streaming format to an ostream (a file, std::cout, an ostringstream):
// WriteSchema once, then WriteBatch any number of times, then Close to write the
// end-of-stream marker. The ostream must outlive the writer.
class IpcStreamWriter {
 public:
  explicit IpcStreamWriter(std::ostream& out) : out_(out) {}

  // Throws InvalidArgument when called twice.
  void WriteSchema(const Schema& schema);
  // Throws InvalidArgument before WriteSchema, after Close, or when the batch's columns
  // do not match the schema's field types.
  void WriteBatch(const RecordBatch& batch);
  // Writes the end-of-stream marker; a second Close does nothing.
  void Close();

  int64_t bytes_written() const { return bytes_written_; }

 private:
  void Emit(std::string_view bytes);

  std::ostream& out_;
  std::shared_ptr<const Schema> schema_;
  bool closed_ = false;
  int64_t bytes_written_ = 0;
};

// The whole stream (schema, batches, end-of-stream marker) as bytes.
std::string WriteIpcStream(const Schema& schema, const std::vector<RecordBatchPtr>& batches);
// The whole file: magic, stream, footer, footer length, magic.
std::string WriteIpcFile(const Schema& schema, const std::vector<RecordBatchPtr>& batches);

// Reads a stream or a file held in memory. The schema is decoded eagerly (errors are
// thrown here); batches are decoded by Next(). Errors are Corrupt (or NotSupported) and
// name `source_name` and the byte offset of the offending part.
std::unique_ptr<RecordBatchReader> ReadIpc(std::string bytes, std::string_view source_name);
// Reads up to `n` bytes of an input into `out`; returns how many, 0 at its end.
using IpcReadSome = std::function<size_t(char* out, size_t n)>;
// Reads a stream front to back as it arrives (a pipe), holding one message at a time, not
// the stream. Input in the file format is read whole first (its footer comes last).
std::unique_ptr<RecordBatchReader> ReadIpcStream(IpcReadSome read, std::string_view source_name);

// Called with the byte range [offset, offset + length) of a message the reader is done
// with: a mapped file's owner can drop those pages from memory.
using IpcRelease = std::function<void(int64_t offset, int64_t length)>;
// The same over bytes that `owner` keeps alive (a mapped file): batches copy what they
// decode, so the bytes are only read, and each message is released once decoded.
std::unique_ptr<RecordBatchReader> ReadIpc(std::shared_ptr<const void> owner, std::string_view bytes,
                                           std::string_view source_name, IpcRelease release = nullptr);

}  // namespace lancelet
