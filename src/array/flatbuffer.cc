#include "array/flatbuffer.h"

#include <algorithm>

#include "lancelet/error.h"

namespace lancelet::fb {

// ---- builder ----

void FlatBufferBuilder::PushRaw(const void* data, size_t n) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = n; i > 0; --i) reversed_.push_back(bytes[i - 1]);
}

void FlatBufferBuilder::PreAlign(size_t len, size_t align) {
  max_align_ = std::max(max_align_, align);
  size_t pad = (align - (size() + len) % align) % align;
  reversed_.insert(reversed_.end(), pad, 0);
}

void FlatBufferBuilder::PushUOffset(Ref ref) {
  Align(4);
  uint32_t v = static_cast<uint32_t>(size() + 4 - ref);
  PushRaw(&v, 4);
}

void FlatBufferBuilder::Patch32(Ref at, uint32_t v) {
  // Final address (end - at + k) is stored at reversed index (at - 1 - k).
  for (uint32_t k = 0; k < 4; ++k) reversed_[at - 1 - k] = uint8_t(v >> (8 * k));
}

Ref FlatBufferBuilder::CreateString(std::string_view s) {
  PreAlign(s.size() + 1, 4);
  uint8_t zero = 0;
  PushRaw(&zero, 1);
  PushRaw(s.data(), s.size());
  uint32_t len = static_cast<uint32_t>(s.size());
  PushRaw(&len, 4);
  return static_cast<Ref>(size());
}

Ref FlatBufferBuilder::CreateOffsetVector(const std::vector<Ref>& refs) {
  PreAlign(refs.size() * 4, 4);
  for (size_t i = refs.size(); i > 0; --i) PushUOffset(refs[i - 1]);
  uint32_t n = static_cast<uint32_t>(refs.size());
  PushRaw(&n, 4);
  return static_cast<Ref>(size());
}

Ref FlatBufferBuilder::CreateInt64Vector(const std::vector<int64_t>& values) {
  return CreateStructVector(values.data(), values.size(), 8, 8);
}

Ref FlatBufferBuilder::CreateStructVector(const void* bytes, size_t count, size_t struct_size,
                                          size_t align) {
  size_t len = count * struct_size;
  PreAlign(len, 4);
  PreAlign(len, align);
  PushRaw(bytes, len);
  uint32_t n = static_cast<uint32_t>(count);
  PushRaw(&n, 4);
  return static_cast<Ref>(size());
}

void FlatBufferBuilder::StartTable() {
  fields_.clear();
  table_start_ = size();
  in_table_ = true;
}

void FlatBufferBuilder::AddRef(uint16_t id, Ref ref) {
  PushUOffset(ref);
  fields_.push_back({id, static_cast<Ref>(size())});
}

Ref FlatBufferBuilder::EndTable() {
  Align(4);
  int32_t placeholder = 0;
  PushRaw(&placeholder, 4);
  Ref table = static_cast<Ref>(size());
  uint16_t num_slots = 0;
  for (auto& [id, loc] : fields_) num_slots = std::max<uint16_t>(num_slots, id + 1);
  std::vector<uint16_t> vtable(2 + num_slots, 0);
  vtable[0] = static_cast<uint16_t>(vtable.size() * 2);
  vtable[1] = static_cast<uint16_t>(table - table_start_);
  for (auto& [id, loc] : fields_) vtable[2 + id] = static_cast<uint16_t>(table - loc);
  PushRaw(vtable.data(), vtable.size() * 2);
  Ref vt = static_cast<Ref>(size());
  // The table's first word is the signed distance from the vtable up to the table.
  Patch32(table, vt - table);
  in_table_ = false;
  fields_.clear();
  return table;
}

std::string FlatBufferBuilder::Finish(Ref root) {
  PreAlign(4, std::max<size_t>(max_align_, 8));
  PushUOffset(root);
  return std::string(reversed_.rbegin(), reversed_.rend());
}

// ---- reader ----

void FlatTable::Fail(const char* what, size_t pos) const {
  ThrowCorrupt("{}: malformed Arrow IPC metadata: {} at byte {}", src_->name, what,
               src_->base_offset + static_cast<int64_t>(pos));
}

void FlatTable::Check(size_t pos, size_t len) const {
  if (pos > src_->size || len > src_->size - pos) Fail("flatbuffer offset out of bounds", pos);
}

size_t FlatTable::Deref(size_t pos) const { return pos + Load<uint32_t>(pos); }

FlatTable::FlatTable(const FlatSource* src, size_t pos) : src_(src), pos_(pos) {
  int32_t soffset = Load<int32_t>(pos);
  int64_t vtable = static_cast<int64_t>(pos) - soffset;
  if (vtable < 0 || vtable > static_cast<int64_t>(src->size)) Fail("vtable out of bounds", pos);
  vtable_ = static_cast<size_t>(vtable);
  vtable_size_ = Load<uint16_t>(vtable_);
  if (vtable_size_ < 4 || vtable_size_ % 2 != 0) Fail("bad vtable size", vtable_);
  Check(vtable_, vtable_size_);
}

FlatTable FlatTable::Root(const FlatSource& src) {
  FlatTable probe;
  probe.src_ = &src;
  return FlatTable(&src, probe.Deref(0));
}

size_t FlatTable::FieldPos(uint16_t id) const {
  size_t slot = 4 + 2 * size_t{id};
  if (slot + 2 > vtable_size_) return 0;
  uint16_t rel = Load<uint16_t>(vtable_ + slot);
  return rel == 0 ? 0 : pos_ + rel;
}

std::string_view FlatTable::GetString(uint16_t id) const {
  size_t p = FieldPos(id);
  if (p == 0) return {};
  size_t s = Deref(p);
  uint32_t len = Load<uint32_t>(s);
  Check(s + 4, len);
  return {reinterpret_cast<const char*>(src_->data + s + 4), len};
}

FlatTable FlatTable::GetTable(uint16_t id) const {
  size_t p = FieldPos(id);
  if (p == 0) return {};
  return FlatTable(src_, Deref(p));
}

FlatVector FlatTable::GetVector(uint16_t id) const {
  size_t p = FieldPos(id);
  if (p == 0) return FlatVector(*this, 0, 0);
  size_t v = Deref(p);
  uint32_t n = Load<uint32_t>(v);
  return FlatVector(*this, v + 4, n);
}

int64_t FlatTable::abs_offset() const { return src_->base_offset + static_cast<int64_t>(pos_); }

FlatTable FlatVector::TableAt(uint32_t i) const {
  if (i >= count_) owner_.Fail("vector index out of range", pos_);
  return FlatTable(owner_.src_, owner_.Deref(pos_ + 4 * size_t{i}));
}

int64_t FlatVector::Int64At(uint32_t i) const {
  if (i >= count_) owner_.Fail("vector index out of range", pos_);
  return owner_.Load<int64_t>(pos_ + 8 * size_t{i});
}

const uint8_t* FlatVector::StructAt(uint32_t i, size_t struct_size) const {
  if (i >= count_) owner_.Fail("vector index out of range", pos_);
  size_t p = pos_ + struct_size * i;
  owner_.Check(p, struct_size);
  return owner_.src_->data + p;
}

}  // namespace lancelet::fb
