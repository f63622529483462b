// The Arrow C Data and C Stream interfaces.
#include "lancelet/c_data.h"

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "array/dictionary_array.h"
#include "lancelet/error.h"

namespace lancelet {
namespace {

// ---------------------------------------------------------------- format strings

const char* TimeUnitLetter(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond: return "s";
    case TimeUnit::kMilli: return "m";
    case TimeUnit::kMicro: return "u";
    case TimeUnit::kNano: return "n";
  }
  return "?";
}

[[noreturn]] void UnsupportedFormat(std::string_view format, std::string_view name) {
  ThrowNotSupported("Arrow C data: field '{}' has format '{}', which lancelet does not support", name,
                    format);
}

int32_t ParseWidth(std::string_view format, size_t prefix, std::string_view name) {
  std::string digits(format.substr(prefix));
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9)
    ThrowInvalid("Arrow C data: field '{}' has malformed format '{}'", name, format);
  return std::stoi(digits);
}

TypePtr ParseFormat(std::string_view format, std::string_view name, std::vector<FieldPtr> children,
                    bool keys_sorted) {
  auto want_children = [&](size_t n) {
    if (children.size() != n)
      ThrowInvalid("Arrow C data: field '{}' of format '{}' has {} children, expected {}", name, format,
                   children.size(), n);
  };
  if (format.size() == 1) {
    switch (format[0]) {
      case 'b': return DataType::Bool();
      case 'c': return DataType::Int8();
      case 'C': return DataType::UInt8();
      case 's': return DataType::Int16();
      case 'S': return DataType::UInt16();
      case 'i': return DataType::Int32();
      case 'I': return DataType::UInt32();
      case 'l': return DataType::Int64();
      case 'L': return DataType::UInt64();
      case 'e': return DataType::Float16();
      case 'f': return DataType::Float32();
      case 'g': return DataType::Float64();
      case 'u': return DataType::Utf8();
      case 'U': return DataType::LargeUtf8();
      case 'z': return DataType::Binary();
      case 'Z': return DataType::LargeBinary();
      case 'n': return DataType::Null();
    }
    UnsupportedFormat(format, name);
  }
  if (format.starts_with("w:")) return DataType::FixedSizeBinary(ParseWidth(format, 2, name));
  if (format.starts_with("+w:")) {
    want_children(1);
    return DataType::FixedSizeList(children[0], ParseWidth(format, 3, name));
  }
  if (format == "+l") { want_children(1); return DataType::List(children[0]); }
  if (format == "+L") { want_children(1); return DataType::LargeList(children[0]); }
  if (format == "+m") { want_children(1); return DataType::Map(children[0], keys_sorted); }
  if (format == "+s") return DataType::Struct(std::move(children));
  if (format == "tdD") return DataType::Date32();
  if (format == "tdm") return DataType::Date64();
  if (format.size() == 3 && (format.starts_with("tt") || format.starts_with("tD"))) {
    std::optional<TimeUnit> unit;
    switch (format[2]) {
      case 's': unit = TimeUnit::kSecond; break;
      case 'm': unit = TimeUnit::kMilli; break;
      case 'u': unit = TimeUnit::kMicro; break;
      case 'n': unit = TimeUnit::kNano; break;
    }
    if (unit && format[1] == 'D') return DataType::Duration(*unit);
    if (unit) return *unit <= TimeUnit::kMilli ? DataType::Time32(*unit) : DataType::Time64(*unit);
  }
  if (format.starts_with("d:")) {
    // d:precision,scale[,bitwidth]
    std::vector<int32_t> parts;
    std::string_view rest = format.substr(2);
    while (true) {
      size_t comma = rest.find(',');
      std::string_view part = rest.substr(0, comma);
      bool negative = part.starts_with('-');
      int32_t v = ParseWidth(negative ? part.substr(1) : part, 0, name);
      parts.push_back(negative ? -v : v);
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    if (parts.size() == 2 || (parts.size() == 3 && parts[2] == 128)) return DataType::Decimal128(parts[0], parts[1]);
    if (parts.size() == 3 && parts[2] == 256) return DataType::Decimal256(parts[0], parts[1]);
  }
  if (format.size() >= 4 && format.starts_with("ts") && format[3] == ':') {
    std::string tz(format.substr(4));
    switch (format[2]) {
      case 's': return DataType::Timestamp(TimeUnit::kSecond, tz);
      case 'm': return DataType::Timestamp(TimeUnit::kMilli, tz);
      case 'u': return DataType::Timestamp(TimeUnit::kMicro, tz);
      case 'n': return DataType::Timestamp(TimeUnit::kNano, tz);
    }
  }
  UnsupportedFormat(format, name);
}

// Metadata: int32 pair count, then per pair int32 length + key bytes, int32 length + value.
std::string EncodeMetadata(const Metadata& metadata) {
  std::string out;
  auto put = [&](int32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  put(static_cast<int32_t>(metadata.size()));
  for (const auto& [key, value] : metadata) {
    put(static_cast<int32_t>(key.size()));
    out += key;
    put(static_cast<int32_t>(value.size()));
    out += value;
  }
  return out;
}

Metadata DecodeMetadata(const char* bytes, std::string_view name) {
  Metadata metadata;
  if (!bytes) return metadata;
  size_t pos = 0;
  auto get = [&]() {
    int32_t v;
    std::memcpy(&v, bytes + pos, 4);
    pos += 4;
    if (v < 0) ThrowInvalid("Arrow C data: field '{}' has a negative length in its metadata", name);
    return v;
  };
  int32_t n = get();
  for (int32_t i = 0; i < n; ++i) {
    int32_t klen = get();
    std::string key(bytes + pos, size_t(klen));
    pos += size_t(klen);
    int32_t vlen = get();
    metadata[key] = std::string(bytes + pos, size_t(vlen));
    pos += size_t(vlen);
  }
  return metadata;
}

// ---------------------------------------------------------------- schema export

struct ExportedSchema {
  std::string format;
  std::string name;
  std::string metadata;  // empty when there is none
  std::vector<ArrowSchema> children;
  std::vector<ArrowSchema*> child_pointers;
  std::unique_ptr<ArrowSchema> dictionary;  // a dictionary-encoded field's values
};

// A field exported dictionary-encoded: it has a key type and its values can be keyed.
bool ExportsDictionary(const Field& field) {
  return field.dictionary_index && CanDictionaryEncode(*field.dictionary_index, *field.type);
}

void ReleaseSchema(ArrowSchema* schema) {
  if (!schema || !schema->release) return;
  for (int64_t i = 0; i < schema->n_children; ++i) {
    ArrowSchema* child = schema->children[i];
    if (child->release) child->release(child);
  }
  if (schema->dictionary && schema->dictionary->release) schema->dictionary->release(schema->dictionary);
  delete static_cast<ExportedSchema*>(schema->private_data);
  schema->release = nullptr;
}

// `keys`: the key type of a field exported dictionary-encoded (the format is then the
// keys', and `dictionary` describes the values).
void FillSchema(std::string name, const DataType& type, bool nullable, const Metadata& metadata,
                ArrowSchema* out, const TypePtr& keys = nullptr) {
  auto priv = new ExportedSchema();
  if (keys) {
    priv->dictionary = std::make_unique<ArrowSchema>();
    FillSchema("", type, true, {}, priv->dictionary.get());
    priv->format = FormatString(*keys);
    priv->name = std::move(name);
    if (!metadata.empty()) priv->metadata = EncodeMetadata(metadata);
    out->format = priv->format.c_str();
    out->name = priv->name.c_str();
    out->metadata = priv->metadata.empty() ? nullptr : priv->metadata.data();
    out->flags = nullable ? ARROW_FLAG_NULLABLE : 0;
    out->n_children = 0;
    out->children = nullptr;
    out->dictionary = priv->dictionary.get();
    out->release = ReleaseSchema;
    out->private_data = priv;
    return;
  }
  priv->format = FormatString(type);
  priv->name = std::move(name);
  if (!metadata.empty()) priv->metadata = EncodeMetadata(metadata);
  priv->children.resize(type.children().size());
  for (size_t i = 0; i < type.children().size(); ++i) {
    ExportField(*type.child(i), &priv->children[i]);
    priv->child_pointers.push_back(&priv->children[i]);
  }
  out->format = priv->format.c_str();
  out->name = priv->name.c_str();
  out->metadata = priv->metadata.empty() ? nullptr : priv->metadata.data();
  out->flags = (nullable ? ARROW_FLAG_NULLABLE : 0) |
               (type.id() == TypeId::kMap && type.keys_sorted() ? ARROW_FLAG_MAP_KEYS_SORTED : 0);
  out->n_children = static_cast<int64_t>(priv->children.size());
  out->children = priv->child_pointers.empty() ? nullptr : priv->child_pointers.data();
  out->dictionary = nullptr;
  out->release = ReleaseSchema;
  out->private_data = priv;
}

// ---------------------------------------------------------------- array export

struct ExportedArray {
  ArrayPtr array;  // keeps the buffers alive
  std::vector<const void*> buffers;
  std::vector<ArrowArray> children;
  std::vector<ArrowArray*> child_pointers;
  std::unique_ptr<ArrowArray> dictionary;  // the values, when the array holds keys
};

void ReleaseArray(ArrowArray* array) {
  if (!array || !array->release) return;
  for (int64_t i = 0; i < array->n_children; ++i) {
    ArrowArray* child = array->children[i];
    if (child->release) child->release(child);
  }
  if (array->dictionary && array->dictionary->release) array->dictionary->release(array->dictionary);
  delete static_cast<ExportedArray*>(array->private_data);
  array->release = nullptr;
}

// ---------------------------------------------------------------- import

// Releases an imported struct when it goes out of scope, also on throw.
template <typename T>
struct ReleaseGuard {
  T* ptr;
  ~ReleaseGuard() {
    if (ptr && ptr->release) ptr->release(ptr);
  }
};

// Arrow's view layouts (string_view "vu", binary_view "vz": polars' strings). lancelet
// holds them as large_utf8 / large_binary; only a stream's top-level columns are taken
// (ImportedStreamReader converts their arrays), so anywhere else they are refused.
bool IsViewFormat(std::string_view format) { return format == "vu" || format == "vz"; }

FieldPtr FieldFromSchema(const ArrowSchema& schema, int depth, bool views_allowed = false) {
  std::string name = schema.name ? schema.name : "";
  if (!schema.release) ThrowInvalid("Arrow C data: field '{}' was already released", name);
  if (!schema.format) ThrowInvalid("Arrow C data: field '{}' has no format", name);
  if (IsViewFormat(schema.format)) {
    if (!views_allowed || schema.dictionary)
      ThrowNotSupported("Arrow C data: field '{}' has format '{}' (a {} view), which lancelet imports only as a "
                        "top-level column of an Arrow C stream",
                        name, schema.format, schema.format[1] == 'u' ? "string" : "binary");
    return Field::Make(name, schema.format[1] == 'u' ? DataType::LargeUtf8() : DataType::LargeBinary(),
                       (schema.flags & ARROW_FLAG_NULLABLE) != 0, DecodeMetadata(schema.metadata, name));
  }
  if (depth > 64) ThrowInvalid("Arrow C data: field '{}' is nested deeper than 64 levels", name);
  if (schema.dictionary) {
    // The format is the keys'; the dictionary's schema gives the values' type.
    TypePtr keys = ParseFormat(schema.format, name, {}, false);
    if (!keys->is_integer())
      ThrowInvalid("Arrow C data: field '{}' has dictionary keys of type {}; keys are integers", name, keys->ToString());
    if (schema.dictionary->dictionary)
      ThrowNotSupported("Arrow C data: field '{}' is a dictionary of dictionaries, which lancelet does not import", name);
    FieldPtr values = FieldFromSchema(*schema.dictionary, depth + 1);
    auto field = std::make_shared<Field>(*Field::Make(name, values->type, (schema.flags & ARROW_FLAG_NULLABLE) != 0,
                                                      DecodeMetadata(schema.metadata, name)));
    field->dictionary_index = std::move(keys);
    return field;
  }
  std::vector<FieldPtr> children;
  for (int64_t i = 0; i < schema.n_children; ++i)
    children.push_back(FieldFromSchema(*schema.children[i], depth + 1));
  TypePtr type = ParseFormat(schema.format, name, std::move(children), (schema.flags & ARROW_FLAG_MAP_KEYS_SORTED) != 0);
  return Field::Make(name, type, (schema.flags & ARROW_FLAG_NULLABLE) != 0,
                     DecodeMetadata(schema.metadata, name));
}

// Copies bits [offset, offset + length) to a new bitmap starting at bit 0.
BufferPtr CopyBits(const uint8_t* src, int64_t offset, int64_t length) {
  auto out = Buffer::Allocate(size_t((length + 7) / 8));
  if (offset % 8 == 0) {
    if (length > 0) std::memcpy(out->mutable_data(), src + offset / 8, size_t((length + 7) / 8));
    // Clear bits past the end so that equal arrays have equal bytes.
    for (int64_t i = length; i < ((length + 7) / 8) * 8; ++i) ClearBit(out->mutable_data(), i);
    return out;
  }
  for (int64_t i = 0; i < length; ++i)
    if (GetBit(src, offset + i)) SetBit(out->mutable_data(), i);
  return out;
}

class Importer {
 public:
  // Imports slots [start, start + length) of `array` (start already includes array.offset).
  // `keys`: the key type when the field is dictionary-encoded (Field::dictionary_index);
  // the array then holds keys into array.dictionary, and the result is their values.
  ArrayPtr Import(const ArrowArray& array, const TypePtr& type, int64_t start, int64_t length,
                  int depth, const TypePtr& keys = nullptr) {
    const DataType& t = *type;
    if (depth > 64) Fail(t, "nested deeper than 64 levels");
    if (!array.release) Fail(t, "the array was already released");
    if (keys) return ImportKeyed(array, type, keys, start, length, depth);
    if (array.dictionary) Fail(t, "has a dictionary, but its field is not dictionary-encoded");
    if (start < 0 || length < 0) Fail(t, fmt::format("bad window [{}, +{})", start, length));
    if (t.id() == TypeId::kNull) {  // the C data null layout has no buffers
      if (array.n_buffers != 0) Fail(t, fmt::format("has {} buffers, expected 0", array.n_buffers));
      return MakeNullArray(type, length);
    }
    auto out = std::make_shared<ArrayData>();
    out->type = type;
    out->length = length;
    size_t n_buffers = 1, n_children = 0;
    switch (t.id()) {
      case TypeId::kUtf8: case TypeId::kLargeUtf8: case TypeId::kBinary: case TypeId::kLargeBinary:
        n_buffers = 3; break;
      case TypeId::kList: case TypeId::kLargeList: case TypeId::kMap: n_buffers = 2; n_children = 1; break;
      case TypeId::kFixedSizeList: n_children = 1; break;
      case TypeId::kStruct: n_children = t.children().size(); break;
      default: n_buffers = 2; break;
    }
    if (array.n_buffers != int64_t(n_buffers) || (n_buffers > 0 && !array.buffers))
      Fail(t, fmt::format("has {} buffers, expected {}", array.n_buffers, n_buffers));
    if (array.n_children != int64_t(n_children) || (n_children > 0 && !array.children))
      Fail(t, fmt::format("has {} children, expected {}", array.n_children, n_children));
    auto buffer = [&](size_t i) -> const uint8_t* {
      const void* p = array.buffers[i];
      if (!p && length > 0) Fail(t, fmt::format("buffer {} is null", i));
      return static_cast<const uint8_t*>(p);
    };

    const auto* validity = static_cast<const uint8_t*>(array.buffers[0]);
    if (validity && array.null_count != 0 && length > 0) {
      BufferPtr bits = CopyBits(validity, start, length);
      out->null_count = CountNulls(bits->data(), length);
      if (out->null_count > 0) out->buffers.push_back(bits);
    }
    if (out->null_count == 0) {
      if (array.null_count > 0 && !validity) Fail(t, "has nulls but no validity buffer");
      out->buffers.push_back(nullptr);
    }

    switch (t.id()) {
      case TypeId::kBool:
        out->buffers.push_back(length ? CopyBits(buffer(1), start, length) : Buffer::Allocate(0));
        break;
      case TypeId::kFixedSizeBinary: {
        int64_t w = t.fixed_size();
        out->buffers.push_back(CopyBytes(buffer(1), start * w, length * w));
        break;
      }
      case TypeId::kUtf8: case TypeId::kLargeUtf8: case TypeId::kBinary: case TypeId::kLargeBinary: {
        auto [offsets, first, last] = RebaseOffsets(t, buffer(1), start, length);
        out->buffers.push_back(offsets);
        out->buffers.push_back(CopyBytes(buffer(2), first, last - first));
        break;
      }
      case TypeId::kList: case TypeId::kLargeList: case TypeId::kMap: {
        auto [offsets, first, last] = RebaseOffsets(t, buffer(1), start, length);
        out->buffers.push_back(offsets);
        const ArrowArray& items = *array.children[0];
        out->children.push_back(
            Import(items, t.child(0)->type, items.offset + first, last - first, depth + 1,
                   t.child(0)->dictionary_index));
        break;
      }
      case TypeId::kFixedSizeList: {
        const ArrowArray& items = *array.children[0];
        int64_t size = t.fixed_size();
        CheckChildLength(t, items, start * size + length * size);
        out->children.push_back(
            Import(items, t.child(0)->type, items.offset + start * size, length * size, depth + 1,
                   t.child(0)->dictionary_index));
        break;
      }
      case TypeId::kStruct:
        for (size_t i = 0; i < n_children; ++i) {
          const ArrowArray& child = *array.children[i];
          // A struct's offset applies to its children as well: slot k is child slot k.
          CheckChildLength(t, child, start + length);
          out->children.push_back(
              Import(child, t.child(i)->type, child.offset + start, length, depth + 1, t.child(i)->dictionary_index));
        }
        break;
      default: {
        int64_t w = t.bit_width() / 8;
        out->buffers.push_back(CopyBytes(buffer(1), start * w, length * w));
        break;
      }
    }
    return out;
  }

 private:
  [[noreturn]] void Fail(const DataType& type, std::string_view what) {
    ThrowInvalid("Arrow C data: {} array {}", type.ToString(), what);
  }

 public:
  // Slots [start, start + length) of a string or binary view array as `type` (large_utf8
  // or large_binary): each 16-byte view is a little-endian i32 length, then the value
  // itself when it is at most 12 bytes, else a 4-byte prefix, the i32 index of a variadic
  // data buffer (buffers 2 .. n-2) and the i32 offset in it; buffer n-1 holds the
  // variadic buffers' i64 sizes, against which every out-of-line value is checked.
  ArrayPtr ImportView(const ArrowArray& array, const TypePtr& type, int64_t start, int64_t length) {
    const DataType& t = *type;
    if (array.dictionary) Fail(t, "(a view) has a dictionary");
    if (start < 0 || length < 0) Fail(t, fmt::format("(a view) has a bad window [{}, +{})", start, length));
    if (array.n_buffers < 3 || !array.buffers)
      Fail(t, fmt::format("(a view) has {} buffers, expected at least 3", array.n_buffers));
    const int64_t n_data = array.n_buffers - 3;
    const auto* sizes = static_cast<const int64_t*>(array.buffers[array.n_buffers - 1]);
    if (n_data > 0 && !sizes) Fail(t, "(a view) has no variadic buffer sizes");
    const auto* views = static_cast<const uint8_t*>(array.buffers[1]);
    if (!views && length > 0) Fail(t, "(a view) has no views buffer");
    auto out = std::make_shared<ArrayData>();
    out->type = type;
    out->length = length;
    const auto* validity = static_cast<const uint8_t*>(array.buffers[0]);
    BufferPtr bits;
    if (validity && array.null_count != 0 && length > 0) {
      bits = CopyBits(validity, start, length);
      out->null_count = CountNulls(bits->data(), length);
    } else if (array.null_count > 0) {
      Fail(t, "(a view) has nulls but no validity buffer");
    }
    out->buffers.push_back(out->null_count > 0 ? bits : nullptr);
    auto offsets = Buffer::Allocate(size_t(length + 1) * sizeof(int64_t));
    int64_t* off = offsets->mutable_as<int64_t>();
    std::string data;
    off[0] = 0;
    for (int64_t i = 0; i < length; ++i) {
      if (!(out->null_count > 0 && !GetBit(bits->data(), i))) {
        const uint8_t* view = views + (start + i) * 16;
        int32_t size, index, offset;
        std::memcpy(&size, view, 4);
        if (size < 0) Fail(t, fmt::format("(a view) slot {} has length {}", start + i, size));
        if (size <= 12) {
          data.append(reinterpret_cast<const char*>(view + 4), size_t(size));
        } else {
          std::memcpy(&index, view + 8, 4);
          std::memcpy(&offset, view + 12, 4);
          if (index < 0 || index >= n_data || offset < 0 || int64_t(offset) + size > sizes[index] ||
              !array.buffers[2 + index])
            Fail(t, fmt::format("(a view) slot {} points at bytes [{}, +{}) of variadic buffer {}, which {}",
                                start + i, offset, size, index,
                                index >= 0 && index < n_data ? fmt::format("holds {} bytes", sizes[index])
                                                             : fmt::format("is not one of {}", n_data)));
          data.append(static_cast<const char*>(array.buffers[2 + index]) + offset, size_t(size));
        }
      }
      off[i + 1] = int64_t(data.size());
    }
    out->buffers.push_back(offsets);
    out->buffers.push_back(data.empty() ? Buffer::Allocate(0) : Buffer::Copy(data.data(), data.size()));
    return out;
  }

 private:
  ArrayPtr ImportKeyed(const ArrowArray& array, const TypePtr& type, const TypePtr& keys, int64_t start,
                       int64_t length, int depth) {
    if (!array.dictionary) Fail(*type, "is dictionary-encoded but has no dictionary");
    ArrowArray key_array = array;  // the same buffers, read as the keys
    key_array.dictionary = nullptr;
    ArrayPtr key_values = Import(key_array, keys, start, length, depth);
    const ArrowArray& dictionary = *array.dictionary;
    ArrayPtr values = Import(dictionary, type, dictionary.offset, dictionary.length, depth + 1);
    try {
      return DecodeDictionary(*key_values, *values);
    } catch (const Error& e) {
      Fail(*type, e.what());
    }
  }

  void CheckChildLength(const DataType& type, const ArrowArray& child, int64_t need) {
    if (child.length < need)
      Fail(type, fmt::format("child has {} slots, {} needed", child.length, need));
  }

  BufferPtr CopyBytes(const uint8_t* src, int64_t offset, int64_t size) {
    if (size == 0) return Buffer::Allocate(0);
    return Buffer::Copy(src + offset, size_t(size));
  }

  struct Offsets {
    BufferPtr buffer;
    int64_t first;
    int64_t last;
  };

  template <typename T>
  Offsets Rebase(const DataType& type, const uint8_t* src, int64_t start, int64_t length) {
    auto out = Buffer::Allocate(size_t(length + 1) * sizeof(T));
    if (!src) return {out, 0, 0};  // length 0 and no offsets buffer
    const T* in = reinterpret_cast<const T*>(src) + start;
    T* dst = out->mutable_as<T>();
    T first = in[0];
    for (int64_t i = 0; i <= length; ++i) {
      if (in[i] < first || (i > 0 && in[i] < in[i - 1])) Fail(type, "has decreasing offsets");
      dst[i] = in[i] - first;
    }
    return {out, int64_t(first), int64_t(in[length])};
  }

  Offsets RebaseOffsets(const DataType& type, const uint8_t* src, int64_t start, int64_t length) {
    return type.has_large_offsets() ? Rebase<int64_t>(type, src, start, length)
                                    : Rebase<int32_t>(type, src, start, length);
  }
};

// ---------------------------------------------------------------- streams

struct ExportedStream {
  std::shared_ptr<RecordBatchReader> reader;
  std::string last_error;
};

ExportedStream& StreamState(ArrowArrayStream* stream) {
  return *static_cast<ExportedStream*>(stream->private_data);
}

template <typename Fn>
int GuardStreamCall(ArrowArrayStream* stream, Fn fn) {
  try {
    fn();
    return 0;
  } catch (const Error& e) {
    StreamState(stream).last_error = e.what();
    return e.kind() == ErrorKind::kInvalidArgument ? EINVAL : EIO;
  } catch (const std::exception& e) {
    StreamState(stream).last_error = e.what();
    return EIO;
  }
}

int StreamGetSchema(ArrowArrayStream* stream, ArrowSchema* out) {
  return GuardStreamCall(stream, [&] { ExportSchema(*StreamState(stream).reader->schema(), out); });
}

int StreamGetNext(ArrowArrayStream* stream, ArrowArray* out) {
  return GuardStreamCall(stream, [&] {
    RecordBatchPtr batch = StreamState(stream).reader->Next();
    if (batch) {
      ExportRecordBatch(*batch, out);
    } else {
      std::memset(out, 0, sizeof(*out));  // release == null marks the end
    }
  });
}

const char* StreamLastError(ArrowArrayStream* stream) {
  const std::string& error = StreamState(stream).last_error;
  return error.empty() ? nullptr : error.c_str();
}

void StreamRelease(ArrowArrayStream* stream) {
  if (!stream || !stream->release) return;
  delete static_cast<ExportedStream*>(stream->private_data);
  stream->release = nullptr;
}

class ImportedStreamReader final : public RecordBatchReader {
 public:
  explicit ImportedStreamReader(ArrowArrayStream* stream) : stream_(*stream) {
    stream->release = nullptr;  // ours now
    if (!stream_.release) ThrowInvalid("Arrow C stream: the stream was already released");
    try {
      ArrowSchema schema;
      std::memset(&schema, 0, sizeof(schema));
      Check(stream_.get_schema(&stream_, &schema), "get_schema");
      schema_ = ImportStreamSchema(&schema);
    } catch (...) {
      stream_.release(&stream_);
      throw;
    }
  }
  ~ImportedStreamReader() override {
    if (stream_.release) stream_.release(&stream_);
  }

  SchemaPtr schema() const override { return schema_; }

  RecordBatchPtr Next() override {
    if (done_) return nullptr;
    ArrowArray array;
    std::memset(&array, 0, sizeof(array));
    Check(stream_.get_next(&stream_, &array), "get_next");
    if (!array.release) {
      done_ = true;
      return nullptr;
    }
    if (views_.empty()) return ImportRecordBatch(&array, schema_);
    return ImportWithViews(&array);
  }

 private:
  // The stream's schema, its top-level view columns (IsViewFormat) taken as large_utf8 /
  // large_binary and remembered in views_.
  SchemaPtr ImportStreamSchema(ArrowSchema* schema) {
    ReleaseGuard<ArrowSchema> guard{schema};
    if (!schema->release) ThrowInvalid("Arrow C stream: the schema was already released");
    if (!schema->format || std::string_view(schema->format) != "+s")
      ThrowInvalid("Arrow C data: a schema must have format '+s', found '{}'", schema->format ? schema->format : "");
    std::vector<FieldPtr> fields;
    for (int64_t i = 0; i < schema->n_children; ++i) {
      fields.push_back(FieldFromSchema(*schema->children[i], 1, /*views_allowed=*/true));
      if (IsViewFormat(schema->children[i]->format)) views_.push_back(size_t(i));
    }
    std::string name = schema->name ? schema->name : "";
    return std::make_shared<Schema>(fields, DecodeMetadata(schema->metadata, name));
  }

  // A batch whose view columns are converted (Importer::ImportView) and the others
  // imported as ImportRecordBatch would.
  RecordBatchPtr ImportWithViews(ArrowArray* array) {
    ReleaseGuard<ArrowArray> guard{array};
    const auto& fields = schema_->fields();
    if (array->n_children != int64_t(fields.size()) || (array->n_children > 0 && !array->children))
      ThrowInvalid("Arrow C stream: a batch has {} columns, expected {}", array->n_children, fields.size());
    if (array->null_count > 0) ThrowInvalid("Arrow C data: a record batch's struct array has null rows");
    Importer importer;
    std::vector<ArrayPtr> columns;
    for (size_t i = 0, v = 0; i < fields.size(); ++i) {
      const ArrowArray& child = *array->children[i];
      // A struct's offset applies to its children as well: slot k is child slot k.
      if (child.length < array->offset + array->length)
        ThrowInvalid("Arrow C stream: column '{}' has {} slots, {} needed", fields[i]->name, child.length,
                     array->offset + array->length);
      const int64_t start = child.offset + array->offset;
      const bool view = v < views_.size() && views_[v] == i;
      v += view;
      columns.push_back(view ? importer.ImportView(child, fields[i]->type, start, array->length)
                             : importer.Import(child, fields[i]->type, start, array->length, 1,
                                               fields[i]->dictionary_index));
      ValidateArray(*columns.back(), "Arrow C data import");
    }
    return std::make_shared<RecordBatch>(schema_, std::move(columns), array->length);
  }

  void Check(int code, const char* call) {
    if (code == 0) return;
    const char* message = stream_.get_last_error ? stream_.get_last_error(&stream_) : nullptr;
    ThrowIo("Arrow C stream: {} failed with error {}: {}", call, code,
            message ? message : "(no message)");
  }

  ArrowArrayStream stream_;
  SchemaPtr schema_;
  std::vector<size_t> views_;  // indexes of the columns that arrive as views, ascending
  bool done_ = false;
};

}  // namespace

std::string FormatString(const DataType& type) {
  switch (type.id()) {
    case TypeId::kBool: return "b";
    case TypeId::kInt8: return "c";
    case TypeId::kUInt8: return "C";
    case TypeId::kInt16: return "s";
    case TypeId::kUInt16: return "S";
    case TypeId::kInt32: return "i";
    case TypeId::kUInt32: return "I";
    case TypeId::kInt64: return "l";
    case TypeId::kUInt64: return "L";
    case TypeId::kFloat16: return "e";
    case TypeId::kFloat32: return "f";
    case TypeId::kFloat64: return "g";
    case TypeId::kUtf8: return "u";
    case TypeId::kLargeUtf8: return "U";
    case TypeId::kBinary: return "z";
    case TypeId::kLargeBinary: return "Z";
    case TypeId::kFixedSizeBinary: return fmt::format("w:{}", type.fixed_size());
    case TypeId::kFixedSizeList: return fmt::format("+w:{}", type.fixed_size());
    case TypeId::kList: return "+l";
    case TypeId::kLargeList: return "+L";
    case TypeId::kStruct: return "+s";
    case TypeId::kDate32: return "tdD";
    case TypeId::kDate64: return "tdm";
    case TypeId::kTimestamp: return fmt::format("ts{}:{}", TimeUnitLetter(type.unit()), type.timezone());
    case TypeId::kTime32: case TypeId::kTime64: return fmt::format("tt{}", TimeUnitLetter(type.unit()));
    case TypeId::kDuration: return fmt::format("tD{}", TimeUnitLetter(type.unit()));
    case TypeId::kDecimal128: return fmt::format("d:{},{}", type.precision(), type.scale());
    case TypeId::kDecimal256: return fmt::format("d:{},{},256", type.precision(), type.scale());
    case TypeId::kNull: return "n";
    case TypeId::kMap: return "+m";
  }
  ThrowInvalid("Arrow C data: no format string for type {}", type.ToString());
}

void ExportType(const DataType& type, ArrowSchema* out) { FillSchema("", type, true, {}, out); }

void ExportField(const Field& field, ArrowSchema* out) {
  FillSchema(field.name, *field.type, field.nullable, field.metadata, out,
             ExportsDictionary(field) ? field.dictionary_index : nullptr);
}

void ExportSchema(const Schema& schema, ArrowSchema* out) {
  TypePtr type = DataType::Struct(schema.fields());
  FillSchema("", *type, false, schema.metadata(), out);
}

namespace {

// ExportArray for an array of `field`'s type: a dictionary-encoded field below `field`
// exports keys, with its dictionary of the array's values.
void ExportFieldArray(const ArrayPtr& array, const Field* field, ArrowArray* out) {
  if (field && ExportsDictionary(*field)) {
    DictionaryArrays encoded = EncodeDictionary(
        *array, field->dictionary_index,
        fmt::format("Arrow C data: field '{}' ({} keys): an array", field->name, field->dictionary_index->ToString()));
    ExportArray(encoded.keys, out);
    auto* priv = static_cast<ExportedArray*>(out->private_data);
    priv->dictionary = std::make_unique<ArrowArray>();
    ExportArray(encoded.values, priv->dictionary.get());
    out->dictionary = priv->dictionary.get();
    return;
  }
  auto priv = new ExportedArray();
  priv->array = array;
  if (array->type->id() != TypeId::kNull)
    for (const auto& buffer : array->buffers) priv->buffers.push_back(buffer ? buffer->data() : nullptr);
  priv->children.resize(array->children.size());
  const auto& child_fields = array->type->children();
  for (size_t i = 0; i < array->children.size(); ++i) {
    ExportFieldArray(array->children[i], i < child_fields.size() ? child_fields[i].get() : nullptr,
                     &priv->children[i]);
    priv->child_pointers.push_back(&priv->children[i]);
  }
  out->length = array->length;
  out->null_count = array->null_count;
  out->offset = 0;
  out->n_buffers = static_cast<int64_t>(priv->buffers.size());
  out->n_children = static_cast<int64_t>(priv->children.size());
  out->buffers = priv->buffers.data();
  out->children = priv->child_pointers.empty() ? nullptr : priv->child_pointers.data();
  out->dictionary = nullptr;
  out->release = ReleaseArray;
  out->private_data = priv;
}

}  // namespace

void ExportArray(const ArrayPtr& array, ArrowArray* out) { ExportFieldArray(array, nullptr, out); }

void ExportRecordBatch(const RecordBatch& batch, ArrowArray* out, ArrowSchema* out_schema) {
  auto data = std::make_shared<ArrayData>();
  data->type = DataType::Struct(batch.schema()->fields());
  data->length = batch.num_rows();
  data->buffers.push_back(nullptr);
  data->children = batch.columns();
  if (out_schema) ExportSchema(*batch.schema(), out_schema);
  ExportFieldArray(data, nullptr, out);
}

TypePtr ImportType(ArrowSchema* schema) { return ImportField(schema)->type; }

FieldPtr ImportField(ArrowSchema* schema) {
  ReleaseGuard<ArrowSchema> guard{schema};
  return FieldFromSchema(*schema, 0);
}

SchemaPtr ImportSchema(ArrowSchema* schema) {
  ReleaseGuard<ArrowSchema> guard{schema};
  FieldPtr root = FieldFromSchema(*schema, 0);
  if (root->type->id() != TypeId::kStruct)
    ThrowInvalid("Arrow C data: a schema must have format '+s', found '{}'", schema->format);
  return std::make_shared<Schema>(root->type->children(), root->metadata);
}

ArrayPtr ImportArray(ArrowArray* array, ArrowSchema* schema) {
  ReleaseGuard<ArrowArray> array_guard{array};
  FieldPtr field = ImportField(schema);
  if (!field->dictionary_index) return ImportArray(array, field->type);
  if (!array->release) ThrowInvalid("Arrow C data: the array was already released");
  Importer importer;
  ArrayPtr out = importer.Import(*array, field->type, array->offset, array->length, 0, field->dictionary_index);
  ValidateArray(*out, "Arrow C data import");
  return out;
}

ArrayPtr ImportArray(ArrowArray* array, const TypePtr& type) {
  ReleaseGuard<ArrowArray> guard{array};
  if (!array || !array->release) ThrowInvalid("Arrow C data: the array was already released");
  Importer importer;
  ArrayPtr out = importer.Import(*array, type, array->offset, array->length, 0);
  ValidateArray(*out, "Arrow C data import");
  return out;
}

RecordBatchPtr ImportRecordBatch(ArrowArray* array, const SchemaPtr& schema) {
  ArrayPtr data = ImportArray(array, DataType::Struct(schema->fields()));
  if (data->null_count != 0)
    ThrowInvalid("Arrow C data: a record batch's struct array has {} null rows", data->null_count);
  return std::make_shared<RecordBatch>(schema, data->children, data->length);
}

void ExportRecordBatchReader(std::shared_ptr<RecordBatchReader> reader, ArrowArrayStream* out) {
  out->get_schema = StreamGetSchema;
  out->get_next = StreamGetNext;
  out->get_last_error = StreamLastError;
  out->release = StreamRelease;
  out->private_data = new ExportedStream{std::move(reader), {}};
}

std::unique_ptr<RecordBatchReader> ImportArrayStream(ArrowArrayStream* stream) {
  return std::make_unique<ImportedStreamReader>(stream);
}

}  // namespace lancelet
