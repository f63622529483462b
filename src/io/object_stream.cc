// The store-generic halves of ObjectStore: an object read as a stream, and a tree removed
// entry by entry. Stores with a native way (LocalStore) override both.
#include <streambuf>

#include "io/object_store.h"
#include "lancelet/error.h"

namespace lancelet::io {
namespace {

// Serves an object's bytes from a buffer refilled by ReadAt, so that a text reader's
// small reads cost one store read per kChunk bytes.
class ObjectStreamBuffer final : public std::streambuf {
 public:
  explicit ObjectStreamBuffer(std::unique_ptr<ReadableFile> file) : file_(std::move(file)) {}

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const uint64_t left = file_->size() - offset_;
    if (left == 0) return traits_type::eof();
    const uint64_t n = std::min<uint64_t>(left, kChunk);
    buffer_.resize(n);
    file_->ReadAt(offset_, n, buffer_.data());
    offset_ += n;
    setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  static constexpr uint64_t kChunk = 1 << 20;
  std::unique_ptr<ReadableFile> file_;
  uint64_t offset_ = 0;  // of the byte after the buffer
  std::string buffer_;
};

// An istream that owns its buffer.
class ObjectStream final : public std::istream {
 public:
  explicit ObjectStream(std::unique_ptr<ReadableFile> file) : std::istream(nullptr), buffer_(std::move(file)) {
    rdbuf(&buffer_);
    // A failed read throws the store's own error (the object, the server's answer)
    // instead of leaving a bad stream that the reader can only call "read failed".
    exceptions(std::ios::badbit);
  }

 private:
  ObjectStreamBuffer buffer_;
};

}  // namespace

std::unique_ptr<std::istream> ObjectStore::OpenStream(const std::string& path) const {
  if (!Head(path)) ThrowNotFound("{}: no such file", path);
  return std::make_unique<ObjectStream>(OpenRead(path));
}

void ObjectStore::DeleteTree(const std::string& dir) {
  for (const auto& name : List(dir)) {
    const std::string child = JoinPath(dir, name);
    if (Head(child)) Delete(child);
    else DeleteTree(child);
  }
  DeleteDirIfEmpty(dir);
}

}  // namespace lancelet::io
