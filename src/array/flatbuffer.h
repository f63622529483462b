// A minimal FlatBuffers codec: just enough to write and read the Arrow IPC metadata
// (tables, unions, strings, vectors of offsets, vectors of structs, scalars).
//
// FlatBufferBuilder builds back to front like the reference builder: children (strings,
// vectors, nested tables) are added first and referenced by the Ref they return, which
// counts bytes from the end of the buffer. Every scalar lands at an address aligned to
// its size, so the finished buffer is valid when placed at an 8-aligned address.
//
// FlatTable is a bounds-checked view of one table inside a byte span; every malformed
// offset throws Corrupt naming the source and the absolute byte offset.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lancelet::fb {

// Distance of an object's first byte from the end of the builder's buffer.
using Ref = uint32_t;

class FlatBufferBuilder {
 public:
  Ref CreateString(std::string_view s);
  Ref CreateOffsetVector(const std::vector<Ref>& refs);
  Ref CreateInt64Vector(const std::vector<int64_t>& values);
  // `bytes` is `count` structs of `struct_size` bytes each, laid out in final order.
  Ref CreateStructVector(const void* bytes, size_t count, size_t struct_size, size_t align);

  void StartTable();
  void AddBool(uint16_t id, bool v) { AddScalar<uint8_t>(id, v ? 1 : 0); }
  void AddUInt8(uint16_t id, uint8_t v) { AddScalar(id, v); }
  void AddInt16(uint16_t id, int16_t v) { AddScalar(id, v); }
  void AddInt32(uint16_t id, int32_t v) { AddScalar(id, v); }
  void AddInt64(uint16_t id, int64_t v) { AddScalar(id, v); }
  void AddRef(uint16_t id, Ref ref);
  Ref EndTable();

  // Writes the root offset and returns the finished buffer (its size is a multiple of 8).
  std::string Finish(Ref root);

  size_t size() const { return reversed_.size(); }

 private:
  template <typename T>
  void AddScalar(uint16_t id, T v) {
    Align(sizeof(T));
    PushRaw(&v, sizeof(T));
    fields_.push_back({id, static_cast<Ref>(size())});
  }
  // Pads so that, after `len` more bytes, the size is a multiple of `align`.
  void PreAlign(size_t len, size_t align);
  void Align(size_t align) { PreAlign(0, align); }
  // Prepends bytes given in final order.
  void PushRaw(const void* data, size_t n);
  void PushUOffset(Ref ref);
  // Overwrites 4 bytes at distance `at` from the end (the object starting there).
  void Patch32(Ref at, uint32_t v);

  std::vector<uint8_t> reversed_;  // the buffer, last byte first
  size_t max_align_ = 1;
  std::vector<std::pair<uint16_t, Ref>> fields_;
  size_t table_start_ = 0;
  bool in_table_ = false;
};

// Where a flatbuffer came from, for error messages.
struct FlatSource {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::string_view name;     // file or stream name
  int64_t base_offset = 0;   // absolute offset of data[0] in the source
};

class FlatVector;

class FlatTable {
 public:
  FlatTable() = default;
  // The root table of the buffer.
  static FlatTable Root(const FlatSource& src);

  bool valid() const { return src_ != nullptr; }
  bool Has(uint16_t id) const { return FieldPos(id) != 0; }

  bool GetBool(uint16_t id, bool def) const { return Scalar<uint8_t>(id, def ? 1 : 0) != 0; }
  uint8_t GetUInt8(uint16_t id, uint8_t def) const { return Scalar<uint8_t>(id, def); }
  int16_t GetInt16(uint16_t id, int16_t def) const { return Scalar<int16_t>(id, def); }
  int32_t GetInt32(uint16_t id, int32_t def) const { return Scalar<int32_t>(id, def); }
  int64_t GetInt64(uint16_t id, int64_t def) const { return Scalar<int64_t>(id, def); }
  // Absent string reads as empty.
  std::string_view GetString(uint16_t id) const;
  // Absent table reads as !valid().
  FlatTable GetTable(uint16_t id) const;
  // Absent vector reads as empty.
  FlatVector GetVector(uint16_t id) const;

  // Absolute offset in the source of this table, and the source's name, for messages.
  int64_t abs_offset() const;
  std::string_view source_name() const { return src_->name; }
  [[noreturn]] void Fail(const char* what, size_t pos) const;

 private:
  friend class FlatVector;
  FlatTable(const FlatSource* src, size_t pos);
  size_t FieldPos(uint16_t id) const;
  template <typename T>
  T Scalar(uint16_t id, T def) const {
    size_t p = FieldPos(id);
    if (p == 0) return def;
    return Load<T>(p);
  }
  template <typename T>
  T Load(size_t pos) const {
    Check(pos, sizeof(T));
    T v;
    std::memcpy(&v, src_->data + pos, sizeof(T));
    return v;
  }
  void Check(size_t pos, size_t len) const;
  size_t Deref(size_t pos) const;  // follows a uoffset stored at pos

  const FlatSource* src_ = nullptr;
  size_t pos_ = 0;
  size_t vtable_ = 0;
  uint16_t vtable_size_ = 0;
};

class FlatVector {
 public:
  FlatVector() = default;
  FlatVector(FlatTable owner, size_t pos, uint32_t count)
      : owner_(owner), pos_(pos), count_(count) {}
  uint32_t size() const { return count_; }
  FlatTable TableAt(uint32_t i) const;
  int64_t Int64At(uint32_t i) const;
  // Bytes of struct i, checked to lie inside the buffer.
  const uint8_t* StructAt(uint32_t i, size_t struct_size) const;

 private:
  FlatTable owner_;  // for bounds checks and messages
  size_t pos_ = 0;  // first element
  uint32_t count_ = 0;
};

}  // namespace lancelet::fb
