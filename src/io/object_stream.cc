// The store-generic halves of ObjectStore: an object read as a stream, and a tree removed
// entry by entry (stores with a native way, LocalStore, override both); and an object
// written as a stream.
#include <streambuf>
#include <vector>

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

// Hands the file kChunk bytes at a time.
class ObjectOutputStream::Buffer final : public std::streambuf {
 public:
  explicit Buffer(std::unique_ptr<WritableFile> file) : file_(std::move(file)), bytes_(kChunk) { Reset(); }
  void Finish() {
    Drain();
    file_->Finish();
  }

 protected:
  int_type overflow(int_type c) override {
    Drain();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override {  // a flush hands the bytes on; only Finish publishes
    Drain();
    return 0;
  }

 private:
  static constexpr size_t kChunk = 1 << 20;
  void Reset() { setp(bytes_.data(), bytes_.data() + bytes_.size()); }
  void Drain() {
    if (pptr() > pbase()) file_->Write(pbase(), uint64_t(pptr() - pbase()));
    Reset();
  }

  std::unique_ptr<WritableFile> file_;
  std::vector<char> bytes_;
};

ObjectOutputStream::ObjectOutputStream(std::unique_ptr<WritableFile> file)
    : std::ostream(nullptr), buffer_(std::make_unique<Buffer>(std::move(file))) {
  rdbuf(buffer_.get());
  exceptions(std::ios::badbit);
}

ObjectOutputStream::~ObjectOutputStream() = default;

void ObjectOutputStream::Finish() {
  flush();
  buffer_->Finish();
}

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
