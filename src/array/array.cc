#include "lancelet/array.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <new>
#include <numeric>

#include <sanitizer/asan_interface.h>

#include "lancelet/error.h"

namespace lancelet {

// ---------------------------------------------------------------------------- Buffer

namespace {

// Recently freed large buffers, handed out again before asking malloc for new memory.
// A streaming scan frees each batch's buffers before it decodes the next batch of the
// same shape. Without reuse every large buffer (32 MiB for 64K rows of a 128-d float
// embedding) is fresh memory from the OS (malloc serves such sizes with mmap), and the
// kernel takes a page fault for each 4 KiB of it as the decoder writes it: that, not the
// decoding, dominated scan time. Kept: blocks of kMinBlock to kMaxKept bytes, at most
// kMaxKept bytes in all, the oldest dropped first. A block serves a request it exceeds
// by at most an eighth. A large request no kept block fits frees them all first: they
// do not match what is being allocated now, and keeping them would raise peak memory
// (a scan's last, shorter batch must not sit beside the next scan's first one).
class BlockRecycler {
 public:
  static BlockRecycler& Instance() {
    static auto* recycler = new BlockRecycler();  // never destroyed: buffers may outlive static destructors
    return *recycler;
  }

  // A kept block of at least `capacity` bytes (its size in *got), or null.
  uint8_t* Take(size_t capacity, size_t* got) {
    if (capacity < kMinBlock) return nullptr;
    std::vector<Block> dropped;
    {
      std::lock_guard lock(mutex_);
      for (size_t i = blocks_.size(); i-- > 0;) {  // newest first: the likeliest to be cache-warm
        const Block b = blocks_[i];
        if (b.capacity >= capacity && b.capacity - capacity <= capacity / 8) {
          blocks_.erase(blocks_.begin() + std::ptrdiff_t(i));
          kept_ -= b.capacity;
          *got = b.capacity;
          ASAN_UNPOISON_MEMORY_REGION(b.data, b.capacity);
          return b.data;
        }
      }
      dropped.swap(blocks_);
      kept_ = 0;
    }
    for (const Block& b : dropped) Free(b);
    return nullptr;
  }

  // Keeps `data` (from aligned_alloc) or frees it.
  void Give(uint8_t* data, size_t capacity) {
    if (capacity < kMinBlock || capacity > kMaxKept) {
      std::free(data);
      return;
    }
    ASAN_POISON_MEMORY_REGION(data, capacity);  // a use after free of a kept block is still reported
    std::vector<Block> dropped;
    {
      std::lock_guard lock(mutex_);
      while (kept_ + capacity > kMaxKept) {
        dropped.push_back(blocks_.front());
        kept_ -= blocks_.front().capacity;
        blocks_.erase(blocks_.begin());
      }
      blocks_.push_back({data, capacity});
      kept_ += capacity;
    }
    for (const Block& b : dropped) Free(b);
  }

 private:
  static constexpr size_t kMinBlock = size_t(1) << 20;
  static constexpr size_t kMaxKept = size_t(64) << 20;
  struct Block {
    uint8_t* data;
    size_t capacity;
  };
  static void Free(const Block& b) {
    ASAN_UNPOISON_MEMORY_REGION(b.data, b.capacity);
    std::free(b.data);
  }
  std::mutex mutex_;
  std::vector<Block> blocks_;  // oldest first
  size_t kept_ = 0;
};

}  // namespace

std::shared_ptr<Buffer> Buffer::AllocateUninitialized(size_t size) {
  auto buffer = std::shared_ptr<Buffer>(new Buffer());
  size_t capacity = (size + 63) & ~size_t(63);
  if (capacity == 0) capacity = 64;
  size_t got = 0;
  if (uint8_t* reused = BlockRecycler::Instance().Take(capacity, &got)) {
    buffer->data_ = reused;
    buffer->capacity_ = got;
  } else {
    buffer->data_ = static_cast<uint8_t*>(std::aligned_alloc(64, capacity));
    if (!buffer->data_) throw std::bad_alloc();
    buffer->capacity_ = capacity;
  }
  std::memset(buffer->data_ + size, 0, capacity - size);  // the zero padding to the next 64 bytes
  buffer->size_ = size;
  return buffer;
}

std::shared_ptr<Buffer> Buffer::Allocate(size_t size) {
  auto buffer = AllocateUninitialized(size);
  std::memset(buffer->data_, 0, size);
  return buffer;
}

std::shared_ptr<Buffer> Buffer::Copy(const void* data, size_t size) {
  auto buffer = AllocateUninitialized(size);
  if (size) std::memcpy(buffer->data_, data, size);
  return buffer;
}

std::shared_ptr<Buffer> Buffer::FromVector(const std::vector<uint8_t>& bytes) {
  return Copy(bytes.data(), bytes.size());
}

std::shared_ptr<Buffer> Buffer::View(std::shared_ptr<const Buffer> owner, size_t offset, size_t size) {
  if (offset + size > owner->size())
    ThrowInvalid("a view of bytes [{}, {}) is out of range for a buffer of {} bytes", offset, offset + size,
                 owner->size());
  auto view = std::shared_ptr<Buffer>(new Buffer());
  view->data_ = const_cast<uint8_t*>(owner->data()) + offset;
  view->size_ = size;
  view->owner_ = std::move(owner);
  return view;
}

Buffer::~Buffer() {
  if (!owner_) BlockRecycler::Instance().Give(data_, capacity_);
}

std::string_view ArrayData::GetView(int64_t i) const {
  const char* data;
  if (!type->is_variable_binary()) {  // fixed_size_binary, decimals
    size_t width = size_t(type->byte_width());
    data = reinterpret_cast<const char*>(buffers[1]->data());
    return {data + i * width, width};
  }
  data = reinterpret_cast<const char*>(buffers[2]->data());
  int64_t begin = offset(i), end = offset(i + 1);
  return {data + begin, size_t(end - begin)};
}

uint64_t BufferBytes(const ArrayData& array) {
  uint64_t bytes = 0;
  for (const auto& b : array.buffers)
    if (b) bytes += b->size();
  for (const auto& c : array.children)
    if (c) bytes += BufferBytes(*c);
  return bytes;
}

ArrayPtr StructChild(const ArrayData& parent, int index) {
  ArrayPtr child = parent.children.at(size_t(index));
  if (!parent.validity() || parent.null_count == 0) return child;
  auto out = std::make_shared<ArrayData>(*child);
  const size_t bytes = size_t((parent.length + 7) / 8);
  BufferPtr validity = Buffer::Copy(parent.validity(), bytes);
  if (const uint8_t* own = child->validity()) {
    uint8_t* v = validity->mutable_data();
    for (size_t i = 0; i < bytes; ++i) v[i] &= own[i];
  }
  out->null_count = CountNulls(validity->data(), parent.length);
  out->buffers[0] = std::move(validity);
  return out;
}

int64_t CountNulls(const uint8_t* validity, int64_t length) {
  if (!validity) return 0;
  int64_t set = 0, i = 0;
  for (; i + 64 <= length; i += 64) {
    uint64_t word;
    std::memcpy(&word, validity + i / 8, 8);
    set += __builtin_popcountll(word);
  }
  for (; i < length; ++i) set += GetBit(validity, i);
  return length - set;
}

// ----------------------------------------------------------------- construction helpers

namespace {

int64_t OffsetWidth(const DataType& type) { return type.has_large_offsets() ? 8 : 4; }

bool HasOffsets(const DataType& type) { return type.is_variable_binary() || type.is_list(); }

BufferPtr ZeroOffsets(const DataType& type, int64_t length) {
  return Buffer::Allocate(size_t((length + 1) * OffsetWidth(type)));
}

// Builds the validity buffer for a result of `length` slots from a per-slot predicate;
// returns null when every slot is valid.
template <typename ValidAt>
BufferPtr BuildValidity(int64_t length, int64_t* null_count, ValidAt valid_at) {
  auto bits = Buffer::Allocate(size_t((length + 7) / 8));
  int64_t nulls = 0;
  for (int64_t i = 0; i < length; ++i) {
    if (valid_at(i)) SetBit(bits->mutable_data(), i);
    else ++nulls;
  }
  *null_count = nulls;
  return nulls ? bits : nullptr;
}

void WriteOffset(Buffer& offsets, const DataType& type, int64_t i, int64_t value) {
  if (type.has_large_offsets()) offsets.mutable_as<int64_t>()[i] = value;
  else offsets.mutable_as<int32_t>()[i] = int32_t(value);
}

}  // namespace

ArrayPtr MakeEmptyArray(const TypePtr& type) { return MakeNullArray(type, 0); }

ArrayPtr MakeNullArray(const TypePtr& type, int64_t length) {
  auto out = std::make_shared<ArrayData>();
  out->type = type;
  out->length = length;
  out->null_count = length;
  out->buffers.push_back(length ? Buffer::Allocate(size_t((length + 7) / 8)) : nullptr);
  switch (type->id()) {
    case TypeId::kNull: break;  // the all-zero validity is the whole array
    case TypeId::kFixedSizeBinary:
      out->buffers.push_back(Buffer::Allocate(size_t(length * type->fixed_size())));
      break;
    case TypeId::kFixedSizeList:
      out->children.push_back(MakeNullArray(type->child(0)->type, length * type->fixed_size()));
      break;
    case TypeId::kStruct:
      for (const auto& f : type->children()) out->children.push_back(MakeNullArray(f->type, length));
      break;
    case TypeId::kList:
    case TypeId::kMap:
    case TypeId::kLargeList:
      out->buffers.push_back(ZeroOffsets(*type, length));
      out->children.push_back(MakeNullArray(type->child(0)->type, 0));
      break;
    default:
      if (type->is_variable_binary()) {
        out->buffers.push_back(ZeroOffsets(*type, length));
        out->buffers.push_back(Buffer::Allocate(0));
      } else {
        out->buffers.push_back(Buffer::Allocate(size_t((length * type->bit_width() + 7) / 8)));
      }
  }
  return out;
}

// ----------------------------------------------------------------------------- Take

namespace {

// Copies n bytes, sizeof(W) <= n <= 2 * sizeof(W), as two words that overlap when n is
// less than twice the word.
template <typename W>
inline void CopyHeadAndTail(uint8_t* to, const uint8_t* from, size_t n) {
  W head, tail;
  std::memcpy(&head, from, sizeof(W));
  std::memcpy(&tail, from + n - sizeof(W), sizeof(W));
  std::memcpy(to, &head, sizeof(W));
  std::memcpy(to + n - sizeof(W), &tail, sizeof(W));
}

// memcpy of n bytes, inline up to 16: gathering short strings spent as long calling
// memcpy as copying.
inline void CopyBytes(uint8_t* to, const uint8_t* from, size_t n) {
  if (n > 16) std::memcpy(to, from, n);
  else if (n >= 8) CopyHeadAndTail<uint64_t>(to, from, n);
  else if (n >= 4) CopyHeadAndTail<uint32_t>(to, from, n);
  else
    for (size_t i = 0; i < n; ++i) to[i] = from[i];
}

}  // namespace

ArrayPtr Take(const ArrayData& a, std::span<const int64_t> idx) {
  const DataType& type = *a.type;
  const int64_t n = int64_t(idx.size());
  for (int64_t i : idx)
    if (i < 0 || i >= a.length) ThrowInvalid("take index {} is out of range for an array of {} rows", i, a.length);
  if (type.id() == TypeId::kNull) return MakeNullArray(a.type, n);
  auto out = std::make_shared<ArrayData>();
  out->type = a.type;
  out->length = n;
  const uint8_t* validity = a.validity();
  if (validity) {
    out->buffers.push_back(BuildValidity(n, &out->null_count, [&](int64_t i) { return GetBit(validity, idx[i]); }));
  } else {
    out->buffers.push_back(nullptr);
  }

  if (type.id() == TypeId::kBool) {
    auto bits = Buffer::Allocate(size_t((n + 7) / 8));
    const uint8_t* src = a.buffers[1]->data();
    for (int64_t i = 0; i < n; ++i)
      if (GetBit(src, idx[i])) SetBit(bits->mutable_data(), i);
    out->buffers.push_back(bits);
  } else if (type.is_fixed_width() || type.id() == TypeId::kFixedSizeBinary) {
    size_t width = size_t(type.byte_width());
    auto values = Buffer::AllocateUninitialized(size_t(n) * width);  // every slot is written
    const uint8_t* src = a.buffers[1]->data();
    uint8_t* dst = values->mutable_data();
    switch (width) {
      case 1: for (int64_t i = 0; i < n; ++i) dst[i] = src[idx[i]]; break;
      case 2: for (int64_t i = 0; i < n; ++i) std::memcpy(dst + 2 * i, src + 2 * idx[i], 2); break;
      case 4: for (int64_t i = 0; i < n; ++i) std::memcpy(dst + 4 * i, src + 4 * idx[i], 4); break;
      case 8: for (int64_t i = 0; i < n; ++i) std::memcpy(dst + 8 * i, src + 8 * idx[i], 8); break;
      default: for (int64_t i = 0; i < n; ++i) std::memcpy(dst + width * i, src + width * idx[i], width);
    }
    out->buffers.push_back(values);
  } else if (type.is_variable_binary()) {
    // Typed by offset width once, not per row: a join gathers a string column per output row.
    auto gather = [&](auto width_tag) {
      using O = decltype(width_tag);
      const O* from = a.buffers[1]->as<O>();
      int64_t total = 0;
      for (int64_t i = 0; i < n; ++i) total += int64_t(from[idx[i] + 1]) - int64_t(from[idx[i]]);
      if (total > int64_t(std::numeric_limits<O>::max()))
        ThrowInvalid("take result of {} bytes does not fit a {} array", total, type.ToString());
      auto offsets = Buffer::AllocateUninitialized(size_t(n + 1) * sizeof(O));
      auto data = Buffer::AllocateUninitialized(size_t(total));  // every byte is written
      const uint8_t* src = a.buffers[2]->data();
      O* to = offsets->mutable_as<O>();
      uint8_t* dst = data->mutable_data();
      O pos = 0;
      to[0] = 0;
      for (int64_t i = 0; i < n; ++i) {
        const O b = from[idx[i]], e = from[idx[i] + 1];
        CopyBytes(dst + pos, src + b, size_t(e - b));
        pos = O(pos + (e - b));
        to[i + 1] = pos;
      }
      out->buffers.push_back(offsets);
      out->buffers.push_back(data);
    };
    if (type.has_large_offsets()) gather(int64_t{});
    else gather(int32_t{});
  } else if (type.is_list()) {
    auto offsets = ZeroOffsets(type, n);
    std::vector<int64_t> child_idx;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = a.offset(idx[i]); j < a.offset(idx[i] + 1); ++j) child_idx.push_back(j);
      WriteOffset(*offsets, type, i + 1, int64_t(child_idx.size()));
    }
    out->buffers.push_back(offsets);
    out->children.push_back(Take(*a.children[0], child_idx));
  } else if (type.id() == TypeId::kFixedSizeList && !a.children[0]->validity() &&
             ((a.children[0]->type->is_fixed_width() && a.children[0]->type->id() != TypeId::kBool) ||
              a.children[0]->type->id() == TypeId::kFixedSizeBinary)) {
    // Rows of fixed-width items without NULLs: each row is one block of bytes (an
    // embedding is copied whole, not item by item).
    const DataType& item = *a.children[0]->type;
    const size_t row_bytes = size_t(type.fixed_size()) * size_t(item.byte_width());
    auto child = std::make_shared<ArrayData>();
    child->type = a.children[0]->type;
    child->length = n * type.fixed_size();
    auto values = Buffer::AllocateUninitialized(size_t(n) * row_bytes);  // every row is written
    const uint8_t* src = a.children[0]->buffers[1]->data();
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(values->mutable_data() + size_t(i) * row_bytes, src + size_t(idx[i]) * row_bytes, row_bytes);
    child->buffers = {nullptr, values};
    out->children.push_back(child);
  } else if (type.id() == TypeId::kFixedSizeList) {
    int64_t size = type.fixed_size();
    std::vector<int64_t> child_idx;
    child_idx.reserve(size_t(n * size));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < size; ++j) child_idx.push_back(idx[i] * size + j);
    out->children.push_back(Take(*a.children[0], child_idx));
  } else if (type.id() == TypeId::kStruct) {
    for (const auto& child : a.children) out->children.push_back(Take(*child, idx));
  } else {
    ThrowNotSupported("take on type {}", type.ToString());
  }
  return out;
}

ArrayPtr Slice(const ArrayData& a, int64_t start, int64_t length) {
  if (start < 0 || length < 0 || start + length > a.length)
    ThrowInvalid("slice [{}, {}) is out of range for an array of {} rows", start, start + length, a.length);
  const DataType& type = *a.type;
  if (start == 0 && length == a.length) return std::make_shared<ArrayData>(a);
  if (type.id() == TypeId::kNull) return MakeNullArray(a.type, length);
  // Fixed-width values and variable binary copy contiguous ranges; the rest goes through Take.
  bool fast = (type.is_fixed_width() && type.id() != TypeId::kBool) || type.id() == TypeId::kFixedSizeBinary ||
              type.is_variable_binary();
  if (!fast) {
    std::vector<int64_t> idx(static_cast<size_t>(length));
    std::iota(idx.begin(), idx.end(), start);
    return Take(a, idx);
  }
  auto out = std::make_shared<ArrayData>();
  out->type = a.type;
  out->length = length;
  const uint8_t* validity = a.validity();
  out->buffers.push_back(validity ? BuildValidity(length, &out->null_count,
                                                  [&](int64_t i) { return GetBit(validity, start + i); })
                                  : nullptr);
  if (type.is_variable_binary()) {
    int64_t base = a.offset(start), end = a.offset(start + length);
    auto offsets = ZeroOffsets(type, length);
    for (int64_t i = 0; i <= length; ++i) WriteOffset(*offsets, type, i, a.offset(start + i) - base);
    out->buffers.push_back(offsets);
    out->buffers.push_back(Buffer::Copy(a.buffers[2]->data() + base, size_t(end - base)));
  } else {
    size_t width = size_t(type.byte_width());
    out->buffers.push_back(Buffer::Copy(a.buffers[1]->data() + size_t(start) * width, size_t(length) * width));
  }
  return out;
}

ArrayPtr ViewRows(const ArrayPtr& a, int64_t start, int64_t length) {
  const DataType& type = *a->type;
  if (!type.is_fixed_width() || !a->children.empty())
    ThrowInvalid("ViewRows takes a fixed-width array, not {}", type.ToString());
  if (start < 0 || length < 0 || start + length > a->length || start % 64 != 0 ||
      (length % 64 != 0 && start + length != a->length))
    ThrowInvalid("rows [{}, {}) of {} cannot be viewed (starts and ends must fall on 64-row boundaries)", start,
                 start + length, a->length);
  if (start == 0 && length == a->length) return a;
  auto out = std::make_shared<ArrayData>();
  out->type = a->type;
  out->length = length;
  const size_t bitmap_bytes = size_t((length + 7) / 8);
  if (a->buffers[0]) {
    out->buffers.push_back(Buffer::View(a->buffers[0], size_t(start / 8), bitmap_bytes));
    out->null_count = CountNulls(out->buffers[0]->data(), length);
    if (out->null_count == 0) out->buffers[0] = nullptr;
  } else {
    out->buffers.push_back(nullptr);
  }
  if (type.id() == TypeId::kBool) {
    out->buffers.push_back(Buffer::View(a->buffers[1], size_t(start / 8), bitmap_bytes));
  } else {
    const size_t width = size_t(type.byte_width());
    out->buffers.push_back(Buffer::View(a->buffers[1], size_t(start) * width, size_t(length) * width));
  }
  return out;
}

ArrayPtr Filter(const ArrayData& a, const std::vector<bool>& keep) {
  if (int64_t(keep.size()) != a.length)
    ThrowInvalid("filter mask has {} entries for an array of {} rows", keep.size(), a.length);
  std::vector<int64_t> idx;
  idx.reserve(keep.size());
  for (size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) idx.push_back(int64_t(i));
  if (int64_t(idx.size()) == a.length) return std::make_shared<ArrayData>(a);
  return Take(a, idx);
}

// ---------------------------------------------------------------------- Concatenate

ArrayPtr Concatenate(const std::vector<ArrayPtr>& arrays) {
  if (arrays.empty()) ThrowInvalid("cannot concatenate zero arrays");
  if (arrays.size() == 1) return arrays[0];
  const TypePtr& type_ptr = arrays[0]->type;
  const DataType& type = *type_ptr;
  int64_t n = 0, nulls = 0;
  for (const auto& a : arrays) {
    if (!a->type->Equals(type))
      ThrowInvalid("cannot concatenate {} with {}", a->type->ToString(), type.ToString());
    n += a->length;
    nulls += a->null_count;
  }
  if (type.id() == TypeId::kNull) return MakeNullArray(type_ptr, n);
  auto out = std::make_shared<ArrayData>();
  out->type = type_ptr;
  out->length = n;
  out->null_count = nulls;
  if (nulls) {
    auto bits = Buffer::Allocate(size_t((n + 7) / 8));
    int64_t pos = 0;
    for (const auto& a : arrays) {
      for (int64_t i = 0; i < a->length; ++i)
        if (a->IsValid(i)) SetBit(bits->mutable_data(), pos + i);
      pos += a->length;
    }
    out->buffers.push_back(bits);
  } else {
    out->buffers.push_back(nullptr);
  }
  if (type.id() == TypeId::kBool) {
    auto bits = Buffer::Allocate(size_t((n + 7) / 8));
    int64_t pos = 0;
    for (const auto& a : arrays) {
      for (int64_t i = 0; i < a->length; ++i)
        if (GetBit(a->buffers[1]->data(), i)) SetBit(bits->mutable_data(), pos + i);
      pos += a->length;
    }
    out->buffers.push_back(bits);
  } else if (type.is_fixed_width() || type.id() == TypeId::kFixedSizeBinary) {
    size_t width = size_t(type.byte_width());
    auto values = Buffer::AllocateUninitialized(size_t(n) * width);  // every slot is written
    size_t pos = 0;
    for (const auto& a : arrays) {
      std::memcpy(values->mutable_data() + pos, a->buffers[1]->data(), size_t(a->length) * width);
      pos += size_t(a->length) * width;
    }
    out->buffers.push_back(values);
  } else if (HasOffsets(type)) {
    auto offsets = ZeroOffsets(type, n);
    int64_t row = 0, base = 0;
    for (const auto& a : arrays) {
      for (int64_t i = 1; i <= a->length; ++i) WriteOffset(*offsets, type, row + i, base + a->offset(i));
      row += a->length;
      base += a->offset(a->length);
    }
    if (!type.has_large_offsets() && base > INT32_MAX)
      ThrowInvalid("concatenated {} of {} bytes/items overflows 32-bit offsets", type.ToString(), base);
    out->buffers.push_back(offsets);
    if (type.is_variable_binary()) {
      auto data = Buffer::AllocateUninitialized(size_t(base));  // every byte is written
      size_t pos = 0;
      for (const auto& a : arrays) {
        size_t len = size_t(a->offset(a->length));
        std::memcpy(data->mutable_data() + pos, a->buffers[2]->data(), len);
        pos += len;
      }
      out->buffers.push_back(data);
    } else {
      std::vector<ArrayPtr> children;
      for (const auto& a : arrays) children.push_back(a->children[0]);
      out->children.push_back(Concatenate(children));
    }
  } else if (type.id() == TypeId::kFixedSizeList || type.id() == TypeId::kStruct) {
    for (size_t c = 0; c < arrays[0]->children.size(); ++c) {
      std::vector<ArrayPtr> children;
      for (const auto& a : arrays) children.push_back(a->children[c]);
      out->children.push_back(Concatenate(children));
    }
  } else {
    ThrowNotSupported("concatenate on type {}", type.ToString());
  }
  return out;
}

// ------------------------------------------------------------------------- equality

namespace {

bool ValueEqual(const ArrayData& a, int64_t i, const ArrayData& b, int64_t j);

bool RangeEqual(const ArrayData& a, int64_t ab, const ArrayData& b, int64_t bb, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    if (a.IsValid(ab + k) != b.IsValid(bb + k)) return false;
    if (a.IsValid(ab + k) && !ValueEqual(a, ab + k, b, bb + k)) return false;
  }
  return true;
}

bool ValueEqual(const ArrayData& a, int64_t i, const ArrayData& b, int64_t j) {
  const DataType& type = *a.type;
  if (type.id() == TypeId::kBool) return GetBit(a.buffers[1]->data(), i) == GetBit(b.buffers[1]->data(), j);
  if (type.is_fixed_width()) {
    size_t w = size_t(type.bit_width() / 8);
    return std::memcmp(a.buffers[1]->data() + i * w, b.buffers[1]->data() + j * w, w) == 0;
  }
  if (type.is_variable_binary() || type.id() == TypeId::kFixedSizeBinary) return a.GetView(i) == b.GetView(j);
  if (type.is_list()) {
    int64_t an = a.offset(i + 1) - a.offset(i), bn = b.offset(j + 1) - b.offset(j);
    return an == bn && RangeEqual(*a.children[0], a.offset(i), *b.children[0], b.offset(j), an);
  }
  if (type.id() == TypeId::kFixedSizeList) {
    int64_t s = type.fixed_size();
    return RangeEqual(*a.children[0], i * s, *b.children[0], j * s, s);
  }
  if (type.id() == TypeId::kStruct) {
    for (size_t c = 0; c < a.children.size(); ++c)
      if (!RangeEqual(*a.children[c], i, *b.children[c], j, 1)) return false;
    return true;
  }
  return false;
}

}  // namespace

bool ArraysEqual(const ArrayData& a, const ArrayData& b) {
  if (!a.type->Equals(*b.type) || a.length != b.length || a.null_count != b.null_count) return false;
  return RangeEqual(a, 0, b, 0, a.length);
}

bool SlotsEqual(const ArrayData& a, int64_t i, const ArrayData& b, int64_t j) { return RangeEqual(a, i, b, j, 1); }

// ----------------------------------------------------------------------- validation

void ValidateArray(const ArrayData& a, std::string_view context) {
  auto fail = [&](const std::string& what) {
    ThrowCorrupt("{}: invalid {} array of {} rows: {}", context, a.type->ToString(), a.length, what);
  };
  const DataType& type = *a.type;
  if (a.length < 0) fail("negative length");
  if (a.buffers.empty()) fail("no validity slot");
  if (a.buffers[0] && a.buffers[0]->size() < size_t((a.length + 7) / 8)) fail("validity bitmap too short");
  if (a.null_count != CountNulls(a.validity(), a.length)) fail("null_count does not match the bitmap");
  auto need_buffers = [&](size_t n) { if (a.buffers.size() < n) fail("missing buffers"); };
  if (type.id() == TypeId::kNull) {
    if (a.null_count != a.length) fail("a slot of a null array is not NULL");
  } else if (type.id() == TypeId::kBool || type.is_fixed_width()) {
    need_buffers(2);
    if (a.buffers[1]->size() < size_t((a.length * type.bit_width() + 7) / 8)) fail("values buffer too short");
  } else if (type.id() == TypeId::kFixedSizeBinary) {
    need_buffers(2);
    if (a.buffers[1]->size() < size_t(a.length * type.fixed_size())) fail("values buffer too short");
  } else if (HasOffsets(type)) {
    need_buffers(2);
    if (a.buffers[1]->size() < size_t((a.length + 1) * OffsetWidth(type))) fail("offsets buffer too short");
    for (int64_t i = 0; i < a.length; ++i)
      if (a.offset(i) > a.offset(i + 1)) fail(fmt::format("offsets decrease at row {}", i));
    if (a.offset(0) < 0) fail("negative first offset");
    if (type.is_variable_binary()) {
      need_buffers(3);
      if (size_t(a.offset(a.length)) > a.buffers[2]->size()) fail("data buffer shorter than the offsets say");
    } else {
      if (a.children.size() != 1) fail("a list needs one child");
      if (a.offset(a.length) > a.children[0]->length) fail("offsets point past the items");
      ValidateArray(*a.children[0], context);
    }
  } else if (type.id() == TypeId::kFixedSizeList) {
    if (a.children.size() != 1 || a.children[0]->length != a.length * type.fixed_size())
      fail("fixed_size_list items do not match length * list_size");
    ValidateArray(*a.children[0], context);
  } else if (type.id() == TypeId::kStruct) {
    if (a.children.size() != type.children().size()) fail("struct child count differs from its type");
    for (const auto& c : a.children) {
      if (c->length != a.length) fail("struct child length differs");
      ValidateArray(*c, context);
    }
  }
}

}  // namespace lancelet
