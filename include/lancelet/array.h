// Columnar arrays in the Arrow memory layout.
//
// Invariants every ArrayData keeps (code relies on them; importers normalise to them):
// - There is no array offset: element i of the array is slot i of its buffers.
// - buffers[0] is the validity bitmap (LSB first) or null when every slot is valid.
// - bool, ints, floats, float16 (as uint16), date32/64, timestamp: buffers[1] = values.
// - utf8/binary: buffers[1] = int32 offsets (length+1), buffers[2] = bytes;
//   large_utf8/large_binary: the same with int64 offsets.
// - fixed_size_binary: buffers[1] = length * byte_width bytes.
// - list/large_list: buffers[1] = int32/int64 offsets, children[0] = items.
// - fixed_size_list: children[0] holds length * list_size items.
// - struct: children[i] is field i, each of the same length as the struct.
// - null_count is exact.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "lancelet/type.h"

namespace lancelet {

// An owned, 64-byte aligned, zero-padded byte region.
class Buffer {
 public:
  static std::shared_ptr<Buffer> Allocate(size_t size);  // zero-filled
  // Like Allocate, but the first `size` bytes are left uninitialized (the padding after
  // them is still zeroed). Only for callers that overwrite all `size` bytes before the
  // buffer is read, e.g. copies and decoded values: zero-filling large buffers first
  // doubles the memory traffic.
  static std::shared_ptr<Buffer> AllocateUninitialized(size_t size);
  static std::shared_ptr<Buffer> Copy(const void* data, size_t size);
  static std::shared_ptr<Buffer> FromVector(const std::vector<uint8_t>& bytes);
  // `size` bytes of `owner` from `offset`, shared rather than copied; read-only by
  // convention. The bytes after a view are the owner's, not zeros, so a view must end
  // where its user reads no further (ViewRows cuts at 64-row boundaries or at the end).
  static std::shared_ptr<Buffer> View(std::shared_ptr<const Buffer> owner, size_t offset, size_t size);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  const uint8_t* data() const { return data_; }
  uint8_t* mutable_data() { return data_; }
  size_t size() const { return size_; }
  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(data_); }
  template <typename T>
  T* mutable_as() { return reinterpret_cast<T*>(data_); }
  std::string_view view() const { return {reinterpret_cast<const char*>(data_), size_}; }
  // Shrinks the logical size (capacity is kept); used by builders.
  void Truncate(size_t size) { if (size < size_) size_ = size; }

 private:
  Buffer() = default;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;  // bytes allocated at data_ (a multiple of 64)
  std::shared_ptr<const Buffer> owner_;  // set for a view, which allocated nothing
};
using BufferPtr = std::shared_ptr<Buffer>;

inline bool GetBit(const uint8_t* bits, int64_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }
inline void SetBit(uint8_t* bits, int64_t i) { bits[i >> 3] |= uint8_t(1u << (i & 7)); }
inline void ClearBit(uint8_t* bits, int64_t i) { bits[i >> 3] &= uint8_t(~(1u << (i & 7))); }
inline void SetBitTo(uint8_t* bits, int64_t i, bool v) { v ? SetBit(bits, i) : ClearBit(bits, i); }

struct ArrayData;
using ArrayPtr = std::shared_ptr<ArrayData>;

struct ArrayData {
  TypePtr type;
  int64_t length = 0;
  int64_t null_count = 0;
  std::vector<BufferPtr> buffers;
  std::vector<ArrayPtr> children;

  bool IsValid(int64_t i) const { return !buffers[0] || GetBit(buffers[0]->data(), i); }
  bool IsNull(int64_t i) const { return !IsValid(i); }
  const uint8_t* validity() const { return buffers[0] ? buffers[0]->data() : nullptr; }

  template <typename T>
  const T* values() const { return buffers[1]->as<T>(); }
  // int32/int64 offsets of a variable binary or list, widened.
  int64_t offset(int64_t i) const {
    return type->has_large_offsets() ? buffers[1]->as<int64_t>()[i] : buffers[1]->as<int32_t>()[i];
  }
  // The bytes of slot i of a utf8/binary/fixed_size_binary array.
  std::string_view GetView(int64_t i) const;

  const ArrayPtr& child(size_t i) const { return children.at(i); }
};

// A zero-length array of the given type.
ArrayPtr MakeEmptyArray(const TypePtr& type);
// An array of `length` nulls of the given type.
ArrayPtr MakeNullArray(const TypePtr& type, int64_t length);

// Copies of parts of arrays (they never share a sliced buffer; see the invariants).
ArrayPtr Slice(const ArrayData& array, int64_t start, int64_t length);
// Rows [start, start + length) of a fixed-width array (bool included) as views of its
// buffers, copying nothing. `start` must be a multiple of 64, so that bitmaps start on a
// byte, and the view must end at a multiple of 64 or at the array's end.
ArrayPtr ViewRows(const ArrayPtr& array, int64_t start, int64_t length);
ArrayPtr Concatenate(const std::vector<ArrayPtr>& arrays);
// Element i of the result is element indices[i] of the input.
ArrayPtr Take(const ArrayData& array, std::span<const int64_t> indices);
// Keeps element i where keep[i] is true.
ArrayPtr Filter(const ArrayData& array, const std::vector<bool>& keep);

// Child `index` of a struct array as a column of its own: null where the struct is.
ArrayPtr StructChild(const ArrayData& parent, int index);

// Deep equality of type, length, validity and valid values (NaN equals NaN bitwise).
bool ArraysEqual(const ArrayData& a, const ArrayData& b);
// Whether slot i of `a` and slot j of `b` (arrays of one type) hold the same value or are
// both null, comparing in place.
bool SlotsEqual(const ArrayData& a, int64_t i, const ArrayData& b, int64_t j);
// Checks the invariants above; throws Corrupt with `context` in the message.
void ValidateArray(const ArrayData& array, std::string_view context);
// Recomputes null_count from the validity bitmap.
int64_t CountNulls(const uint8_t* validity, int64_t length);
// Bytes held by the array's buffers, its children's included.
uint64_t BufferBytes(const ArrayData& array);

}  // namespace lancelet
