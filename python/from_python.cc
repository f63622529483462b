// Values from Python to C++: scalars of a given type, the type of a list of values, numpy
// arrays as columns, and a dict of columns as a batch.
#include <cstring>
#include <limits>

#include "lancelet/decimal.h"
#include "bindings.h"

namespace lancelet::python {

namespace {

// datetime.time / datetime.timedelta / int as a count of `unit`; nullopt for other objects.
std::optional<int64_t> PythonToTicks(py::handle v, TimeUnit unit) {
  const int64_t per_second = UnitsPerSecond(unit);
  auto from_micros = [&](int64_t micros) {
    return unit == TimeUnit::kNano ? micros * 1000 : micros / (1000000 / per_second);
  };
  if (py::isinstance(v, Datetime().attr("time"))) {
    int64_t micros = ((v.attr("hour").cast<int64_t>() * 60 + v.attr("minute").cast<int64_t>()) * 60 +
                      v.attr("second").cast<int64_t>()) * 1000000 + v.attr("microsecond").cast<int64_t>();
    return from_micros(micros);
  }
  if (py::isinstance(v, Datetime().attr("timedelta"))) {
    int64_t micros = (v.attr("days").cast<int64_t>() * 86400 + v.attr("seconds").cast<int64_t>()) * 1000000 +
                     v.attr("microseconds").cast<int64_t>();
    return from_micros(micros);
  }
  if (py::hasattr(v, "__index__") && !py::isinstance<py::float_>(v)) return v.cast<int64_t>();
  return std::nullopt;
}
bool IsDate(py::handle v) { return py::isinstance(v, Datetime().attr("date")); }

int64_t DateToDays(py::handle v) {
  py::object day = py::reinterpret_borrow<py::object>(v);
  if (py::isinstance(v, Datetime().attr("datetime"))) day = v.attr("date")();
  return (day - Datetime().attr("date")(1970, 1, 1)).attr("days").cast<int64_t>();
}

int64_t DatetimeToTicks(py::handle v, TimeUnit unit) {
  py::handle dt = Datetime();
  py::object value = py::reinterpret_borrow<py::object>(v);
  if (value.attr("tzinfo").is_none()) value = value.attr("replace")(py::arg("tzinfo") = dt.attr("timezone").attr("utc"));
  py::object delta = value - dt.attr("datetime")(1970, 1, 1, py::arg("tzinfo") = dt.attr("timezone").attr("utc"));
  const int64_t micros = delta.attr("days").cast<int64_t>() * 86400000000 + delta.attr("seconds").cast<int64_t>() * 1000000 +
                         delta.attr("microseconds").cast<int64_t>();
  switch (unit) {
    case TimeUnit::kSecond: return micros / 1000000;
    case TimeUnit::kMilli: return micros / 1000;
    case TimeUnit::kMicro: return micros;
    case TimeUnit::kNano: return micros * 1000;
  }
  return micros;
}

Scalar PythonToScalar(py::handle v, const TypePtr& type, const std::string& column);

std::vector<Scalar> Items(py::handle v, const TypePtr& item, const std::string& column) {
  if (py::isinstance<py::str>(v) || py::isinstance<py::bytes>(v) || py::isinstance<py::dict>(v) || !py::hasattr(v, "__iter__"))
    ThrowValue("column '" + column + "': expected a sequence for a list value, got " + std::string(py::str(v.get_type().attr("__name__"))));
  std::vector<Scalar> out;
  for (py::handle x : v) out.push_back(PythonToScalar(x, item, column));
  return out;
}

Scalar PythonToScalar(py::handle v, const TypePtr& type, const std::string& column) {
  if (v.is_none()) return Scalar::Null(type);
  auto wrong = [&](const char* expected) -> Scalar {
    ThrowValue("column '" + column + "' is " + type->ToString() + ": expected " + expected + ", got " +
               std::string(py::str(v.get_type().attr("__name__"))) + " " + std::string(py::repr(v)));
  };
  switch (type->id()) {
    case TypeId::kBool:
      if (!py::isinstance<py::bool_>(v) && !py::hasattr(v, "__bool__")) return wrong("a bool");
      return Scalar{type, v.cast<bool>()};
    case TypeId::kInt8: case TypeId::kInt16: case TypeId::kInt32: case TypeId::kInt64:
    case TypeId::kDate64:
      if (py::isinstance<py::float_>(v) || !py::hasattr(v, "__index__")) {
        if (type->id() == TypeId::kDate64 && IsDate(v)) return Scalar{type, DateToDays(v) * 86400000};
        return wrong("an int");
      }
      return Scalar{type, py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr())).cast<int64_t>()};
    case TypeId::kUInt8: case TypeId::kUInt16: case TypeId::kUInt32: case TypeId::kUInt64:
      if (py::isinstance<py::float_>(v) || !py::hasattr(v, "__index__")) return wrong("an int");
      return Scalar{type, py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr())).cast<uint64_t>()};
    case TypeId::kFloat16: case TypeId::kFloat32: case TypeId::kFloat64:
      if (!py::hasattr(v, "__float__") || py::isinstance<py::str>(v)) return wrong("a number");
      return Scalar{type, v.cast<double>()};
    case TypeId::kUtf8: case TypeId::kLargeUtf8:
      if (!py::isinstance<py::str>(v)) return wrong("a str");
      return Scalar{type, v.cast<std::string>()};
    case TypeId::kBinary: case TypeId::kLargeBinary: case TypeId::kFixedSizeBinary:
      if (!py::isinstance<py::bytes>(v) && !PyByteArray_Check(v.ptr())) return wrong("bytes");
      return Scalar{type, std::string(py::bytes(py::reinterpret_borrow<py::object>(v)))};
    case TypeId::kDate32:
      if (IsDate(v)) return Scalar{type, DateToDays(v)};
      if (py::hasattr(v, "__index__") && !py::isinstance<py::float_>(v)) return Scalar{type, v.cast<int64_t>()};
      return wrong("a datetime.date or days since 1970-01-01");
    case TypeId::kTimestamp: {
      if (py::isinstance(v, Datetime().attr("datetime"))) return Scalar{type, DatetimeToTicks(v, type->unit())};
      if (py::hasattr(v, "__index__") && !py::isinstance<py::float_>(v)) return Scalar{type, v.cast<int64_t>()};
      return wrong("a datetime.datetime or ticks since the epoch");
    }
    case TypeId::kTime32: case TypeId::kTime64: case TypeId::kDuration: {
      auto ticks = PythonToTicks(v, type->unit());
      if (!ticks) return wrong(type->id() == TypeId::kDuration ? "a datetime.timedelta or a count of its unit"
                                                               : "a datetime.time or a count of its unit");
      return Scalar{type, *ticks};
    }
    case TypeId::kDecimal128: case TypeId::kDecimal256: {
      if (py::isinstance<py::float_>(v) || py::isinstance<py::bool_>(v)) return wrong("a decimal.Decimal, int or str");
      auto bytes = ParseDecimal(std::string(py::str(v)), *type);
      if (!bytes) return wrong("a number that fits the precision");
      return Scalar{type, std::move(*bytes)};
    }
    case TypeId::kNull: return wrong("None");
    case TypeId::kList: case TypeId::kLargeList:
      return Scalar{type, Items(v, type->child(0)->type, column)};
    case TypeId::kMap: {
      // A dict, or a sequence of (key, value) pairs.
      const TypePtr& entries = type->child(0)->type;
      std::vector<Scalar> out;
      py::object pairs = py::isinstance<py::dict>(v) ? py::reinterpret_borrow<py::dict>(v).attr("items")()
                                                      : py::reinterpret_borrow<py::object>(v);
      for (py::handle pair : pairs) {
        auto kv = py::reinterpret_borrow<py::sequence>(pair);
        if (py::len(kv) != 2) return wrong("a dict or (key, value) pairs");
        out.push_back(Scalar{entries, std::vector<Scalar>{PythonToScalar(kv[0], entries->child(0)->type, column),
                                                          PythonToScalar(kv[1], entries->child(1)->type, column)}});
      }
      return Scalar{type, std::move(out)};
    }
    case TypeId::kFixedSizeList: {
      auto items = Items(v, type->child(0)->type, column);
      if (int64_t(items.size()) != type->fixed_size())
        ThrowValue("column '" + column + "' is " + type->ToString() + ": a value has " + std::to_string(items.size()) +
                   " items");
      return Scalar{type, std::move(items)};
    }
    case TypeId::kStruct: {
      if (!py::isinstance<py::dict>(v)) return wrong("a dict");
      auto d = py::reinterpret_borrow<py::dict>(v);
      std::vector<Scalar> fields;
      for (const auto& f : type->children()) {
        py::str key(f->name);
        fields.push_back(d.contains(key) ? PythonToScalar(d[key], f->type, column + "." + f->name) : Scalar::Null(f->type));
      }
      return Scalar{type, std::move(fields)};
    }
  }
  return wrong("a supported value");
}

// The type of a list of Python values: the first non-None value decides, ints widen to
// float when floats follow.
TypePtr InferType(const py::list& values, const std::string& column) {
  py::object date = Datetime().attr("date"), datetime = Datetime().attr("datetime");
  TypePtr found;
  for (py::handle v : values) {
    if (v.is_none()) continue;
    TypePtr t;
    if (py::isinstance<py::bool_>(v)) t = DataType::Bool();
    else if (py::isinstance<py::int_>(v)) t = DataType::Int64();
    else if (py::isinstance<py::float_>(v)) t = DataType::Float64();
    else if (py::isinstance<py::str>(v)) t = DataType::Utf8();
    else if (py::isinstance<py::bytes>(v)) t = DataType::Binary();
    else if (py::isinstance(v, datetime)) t = DataType::Timestamp(TimeUnit::kMicro);
    else if (py::isinstance(v, date)) t = DataType::Date32();
    else if (py::isinstance<py::dict>(v)) {
      std::vector<FieldPtr> fields;
      for (auto [k, x] : py::reinterpret_borrow<py::dict>(v)) {
        py::list one;
        for (py::handle row : values) one.append(row.is_none() ? py::none() : row.attr("get")(k));
        fields.push_back(Field::Make(py::str(k), InferType(one, column + "." + std::string(py::str(k)))));
      }
      t = DataType::Struct(std::move(fields));
    } else if (py::hasattr(v, "__iter__")) {
      py::list items;
      for (py::handle row : values)
        if (!row.is_none())
          for (py::handle x : row) items.append(x);
      t = DataType::List(InferType(items, column + " items"));
    } else {
      ThrowValue("column '" + column + "': cannot store a " + std::string(py::str(v.get_type().attr("__name__"))));
    }
    if (!found) found = t;
    else if (found->id() == TypeId::kInt64 && t->id() == TypeId::kFloat64) found = t;
    else if (!(found->id() == TypeId::kFloat64 && t->id() == TypeId::kInt64) && !found->Equals(*t))
      ThrowValue("column '" + column + "' mixes " + found->ToString() + " and " + t->ToString() + " values");
  }
  if (!found) ThrowValue("column '" + column + "': every value is None, so its type is unknown; pass a schema");
  return found;
}

// numpy's unit of a datetime64 / timedelta64 dtype ("D", "s", "ms", "us", "ns", ...).
std::string NumpyTimeUnit(const py::dtype& dtype) {
  const std::string text = py::str(dtype.attr("str"));
  const auto open = text.find('[');
  return open == std::string::npos ? "" : text.substr(open + 1, text.size() - open - 2);
}

// A validity bitmap of `rows` slots from `valid(i)`; null (every slot valid) when none is
// null. Sets `null_count`.
template <typename Valid>
BufferPtr Validity(int64_t rows, int64_t& null_count, Valid valid) {
  BufferPtr bits = Buffer::Allocate(size_t((rows + 7) / 8));
  null_count = 0;
  for (int64_t i = 0; i < rows; ++i)
    if (valid(i)) SetBit(bits->mutable_data(), i);
    else ++null_count;
  return null_count ? bits : nullptr;
}

ArrayPtr Flat(TypePtr type, int64_t length, std::vector<BufferPtr> buffers) {
  auto out = std::make_shared<ArrayData>();
  out->type = std::move(type);
  out->length = length;
  out->buffers = std::move(buffers);
  return out;
}

// The Arrow type of a datetime64 / timedelta64 dtype: dates for "D", timestamps or
// durations for s / ms / us / ns; other units are refused naming the column.
TypePtr NumpyTimeType(char kind, const std::string& unit, const std::string& column) {
  TimeUnit u;
  if (unit == "s") u = TimeUnit::kSecond;
  else if (unit == "ms") u = TimeUnit::kMilli;
  else if (unit == "us") u = TimeUnit::kMicro;
  else if (unit == "ns") u = TimeUnit::kNano;
  else if (unit == "D" && kind == 'M') return DataType::Date32();
  else
    ThrowValue("column '" + column + "': numpy " + (kind == 'M' ? "datetime64[" : "timedelta64[") + unit +
               "] has no Arrow type; use the units D (datetime64 only), s, ms, us or ns");
  return kind == 'M' ? DataType::Timestamp(u) : DataType::Duration(u);
}

// datetime64 / timedelta64 values as int64 ticks (int32 days for date32); NaT is NULL.
ArrayPtr NumpyTimes(const py::array& arr, const TypePtr& type) {
  const int64_t rows = arr.shape(0);
  const auto* ticks = static_cast<const int64_t*>(arr.data());
  constexpr int64_t kNaT = std::numeric_limits<int64_t>::min();
  int64_t nulls = 0;
  BufferPtr validity = Validity(rows, nulls, [&](int64_t i) { return ticks[i] != kNaT; });
  BufferPtr values;
  if (type->id() == TypeId::kDate32) {
    values = Buffer::Allocate(size_t(rows) * 4);
    for (int64_t i = 0; i < rows; ++i) values->mutable_as<int32_t>()[i] = ticks[i] == kNaT ? 0 : int32_t(ticks[i]);
  } else {
    values = Buffer::Copy(ticks, size_t(rows) * 8);
    for (int64_t i = 0; i < rows; ++i)
      if (ticks[i] == kNaT) values->mutable_as<int64_t>()[i] = 0;
  }
  auto out = Flat(type, rows, {validity, values});
  out->null_count = nulls;
  return out;
}

// Where VariableWidth's rows put their bytes: counted on the first pass (dst null), then
// written, so the values are built in their final buffer with no growing copy.
struct ByteSink {
  uint8_t* dst = nullptr;
  size_t size = 0;
  void append(const void* data, size_t n) {
    if (dst) std::memcpy(dst + size, data, n);
    size += n;
  }
  void push(uint8_t c) {
    if (dst) dst[size] = c;
    ++size;
  }
};

// One code point as UTF-8; invalid code points become U+FFFD.
void AppendUtf8(uint32_t c, ByteSink& out) {
  if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
  if (c < 0x80) {
    out.push(uint8_t(c));
  } else if (c < 0x800) {
    out.push(uint8_t(0xC0 | (c >> 6)));
    out.push(uint8_t(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push(uint8_t(0xE0 | (c >> 12)));
    out.push(uint8_t(0x80 | ((c >> 6) & 0x3F)));
    out.push(uint8_t(0x80 | (c & 0x3F)));
  } else {
    out.push(uint8_t(0xF0 | (c >> 18)));
    out.push(uint8_t(0x80 | ((c >> 12) & 0x3F)));
    out.push(uint8_t(0x80 | ((c >> 6) & 0x3F)));
    out.push(uint8_t(0x80 | (c & 0x3F)));
  }
}

// Variable-width values from `row(i, sink)`, which appends row i's bytes to the sink and
// returns false for NULL (it is called twice per row: to count, then to write): utf8 or
// binary, large when the bytes pass 2 GiB.
template <typename Row>
ArrayPtr VariableWidth(bool text, int64_t rows, Row row) {
  ByteSink count;
  for (int64_t i = 0; i < rows; ++i) row(i, count);
  const bool large = count.size > size_t(std::numeric_limits<int32_t>::max());
  TypePtr type = text ? (large ? DataType::LargeUtf8() : DataType::Utf8())
                      : (large ? DataType::LargeBinary() : DataType::Binary());
  BufferPtr bytes = Buffer::AllocateUninitialized(count.size);
  BufferPtr offsets = Buffer::AllocateUninitialized(size_t(rows + 1) * (large ? 8 : 4));
  ByteSink write{bytes->mutable_data(), 0};
  auto set_offset = [&](int64_t i) {
    if (large) offsets->mutable_as<int64_t>()[i] = int64_t(write.size);
    else offsets->mutable_as<int32_t>()[i] = int32_t(write.size);
  };
  set_offset(0);
  std::vector<bool> valid(size_t(rows), true);
  for (int64_t i = 0; i < rows; ++i) {
    valid[size_t(i)] = row(i, write);
    set_offset(i + 1);
  }
  int64_t nulls = 0;
  BufferPtr validity = Validity(rows, nulls, [&](int64_t i) { return bool(valid[size_t(i)]); });
  auto out = Flat(type, rows, {validity, offsets, bytes});
  out->null_count = nulls;
  return out;
}

// numpy S (bytes) and U (UCS-4) arrays: each value without its trailing NULs, as numpy
// and pyarrow read them.
ArrayPtr NumpyFixedWidthStrings(const py::array& arr) {
  const auto width = size_t(arr.dtype().itemsize());
  const auto* base = static_cast<const uint8_t*>(arr.data());
  if (arr.dtype().kind() == 'S')
    return VariableWidth(false, arr.shape(0), [&](int64_t i, ByteSink& out) {
      const uint8_t* v = base + size_t(i) * width;
      size_t n = width;
      while (n > 0 && v[n - 1] == 0) --n;
      out.append(v, n);
      return true;
    });
  return VariableWidth(true, arr.shape(0), [&](int64_t i, ByteSink& out) {
    uint32_t chars[1];
    size_t n = width / 4;
    auto at = [&](size_t k) { std::memcpy(chars, base + size_t(i) * width + k * 4, 4); return chars[0]; };
    while (n > 0 && at(n - 1) == 0) --n;
    for (size_t k = 0; k < n; ++k) AppendUtf8(at(k), out);
    return true;
  });
}

// A 1-D object array of str (or of bytes) and None, read without a Scalar per value;
// nullopt when it holds anything else.
std::optional<ArrayPtr> NumpyObjectStrings(const py::array& arr) {
  const int64_t rows = arr.shape(0);
  auto* const* items = static_cast<PyObject* const*>(arr.data());
  bool text = false, binary = false;
  for (int64_t i = 0; i < rows; ++i) {
    if (items[i] == Py_None) continue;
    if (PyUnicode_Check(items[i])) text = true;
    else if (PyBytes_Check(items[i])) binary = true;
    else return std::nullopt;
  }
  if (text == binary) return std::nullopt;  // mixed, or every value None: the general path says so
  return VariableWidth(text, rows, [&](int64_t i, ByteSink& out) {
    if (items[i] == Py_None) return false;
    Py_ssize_t n = 0;
    const char* v = nullptr;
    if (text) {
      v = PyUnicode_AsUTF8AndSize(items[i], &n);
      if (!v) throw py::error_already_set();
    } else {
      char* raw = nullptr;
      PyBytes_AsStringAndSize(items[i], &raw, &n);
      v = raw;
    }
    out.append(v, size_t(n));
    return true;
  });
}

// The Arrow type of a numeric or bool numpy dtype; null for other kinds.
TypePtr NumpyNumberType(char kind, py::ssize_t size) {
  if (kind == 'b') return DataType::Bool();
  if (kind == 'i') return size == 1 ? DataType::Int8() : size == 2 ? DataType::Int16() : size == 4 ? DataType::Int32() : DataType::Int64();
  if (kind == 'u') return size == 1 ? DataType::UInt8() : size == 2 ? DataType::UInt16() : size == 4 ? DataType::UInt32() : DataType::UInt64();
  if (kind == 'f' && size == 2) return DataType::Float16();
  if (kind == 'f' && size == 4) return DataType::Float32();
  if (kind == 'f' && size == 8) return DataType::Float64();
  return nullptr;
}

// Numbers and bools, 1-D, or 2-D as fixed-size lists of them (one row per line).
ArrayPtr NumpyNumbers(const py::array& arr, const TypePtr& type, const std::string& column) {
  if (arr.ndim() != 1 && arr.ndim() != 2)
    ThrowValue("column '" + column + "': a numpy array of " + std::to_string(arr.ndim()) + " dimensions (1 or 2 are stored)");
  const int64_t rows = arr.shape(0), width = arr.ndim() == 2 ? arr.shape(1) : 1;
  const int64_t n = rows * width;
  BufferPtr values;
  if (type->id() == TypeId::kBool) {
    values = Buffer::Allocate(size_t((n + 7) / 8));
    const auto* bytes = static_cast<const uint8_t*>(arr.data());
    for (int64_t i = 0; i < n; ++i)
      if (bytes[i]) SetBit(values->mutable_data(), i);
  } else {
    values = Buffer::Copy(arr.data(), size_t(n * arr.dtype().itemsize()));
  }
  ArrayPtr flat = Flat(type, n, {nullptr, values});
  if (arr.ndim() == 1) return flat;
  auto list = Flat(DataType::FixedSizeList(type, int32_t(width)), rows, {nullptr});
  list->children = {flat};
  return list;
}

// A numpy array as a column: numbers and bools (2-D: fixed-size lists), datetime64 and
// timedelta64 (NaT is NULL), S / U strings, object arrays of str or bytes. nullopt for
// what the general path (Python values) takes.
std::optional<ArrayPtr> NumpyArrayToColumn(const py::array& given, const std::string& column) {
  auto arr = py::array::ensure(given, py::array::c_style);
  const char kind = arr.dtype().kind();
  if (TypePtr number = NumpyNumberType(kind, arr.dtype().itemsize())) return NumpyNumbers(arr, number, column);
  if (arr.ndim() != 1) return std::nullopt;
  if (kind == 'M' || kind == 'm') return NumpyTimes(arr, NumpyTimeType(kind, NumpyTimeUnit(arr.dtype()), column));
  if (kind == 'S' || kind == 'U') return NumpyFixedWidthStrings(arr);
  if (kind == 'O') return NumpyObjectStrings(arr);
  return std::nullopt;
}

// A numpy masked array: its data as a column with the masked slots NULL (1-D only).
std::optional<ArrayPtr> NumpyMaskedToColumn(py::handle v, const std::string& column) {
  py::module_ ma = py::module_::import("numpy.ma");
  py::array mask = ma.attr("getmaskarray")(v);
  if (mask.ndim() != 1) ThrowValue("column '" + column + "': a masked numpy array must have 1 dimension");
  auto out = NumpyArrayToColumn(v.attr("data").cast<py::array>(), column);
  if (!out) return std::nullopt;
  ArrayPtr column_data = std::make_shared<ArrayData>(**out);
  auto masked = py::array_t<bool, py::array::c_style | py::array::forcecast>::ensure(mask);
  const bool* m = masked.data();
  const uint8_t* before = column_data->validity();
  int64_t nulls = 0;
  column_data->buffers[0] = Validity(column_data->length, nulls, [&](int64_t i) {
    return !m[i] && (!before || GetBit(before, i));
  });
  column_data->null_count = nulls;
  return column_data;
}

std::optional<ArrayPtr> NumpyToColumn(py::handle v, const std::string& column) {
  if (!py::isinstance<py::array>(v)) return std::nullopt;
  if (py::hasattr(v, "mask") && py::isinstance(v, py::module_::import("numpy.ma").attr("MaskedArray")))
    return NumpyMaskedToColumn(v, column);
  return NumpyArrayToColumn(py::reinterpret_borrow<py::array>(v), column);
}

}  // namespace

PyBatch BatchFromDict(const py::dict& data, const py::object& schema_arg) {
  std::vector<FieldPtr> fields;
  std::vector<ArrayPtr> columns;
  SchemaPtr given;
  if (!schema_arg.is_none()) given = py::cast<PySchema&>(schema_arg).schema;
  std::optional<int64_t> rows;
  for (auto [key, value] : data) {
    const std::string name = py::str(key);
    ArrayPtr column;
    TypePtr type;
    if (given) {
      int i = given->FieldIndex(name);
      if (i < 0) ThrowValue("column '" + name + "' is not in the schema (" + given->ToString() + ")");
      type = given->field(size_t(i))->type;
    }
    if (auto numpy = NumpyToColumn(value, name); numpy && (!type || (*numpy)->type->Equals(*type))) {
      column = *numpy;
      type = column->type;
    } else {
      py::list values = py::list(py::reinterpret_borrow<py::object>(value));
      if (!type) type = InferType(values, name);
      std::vector<Scalar> scalars;
      scalars.reserve(values.size());
      for (py::handle v : values) scalars.push_back(PythonToScalar(v, type, name));
      column = MakeArray(type, scalars);
    }
    if (rows && *rows != column->length)
      ThrowValue("column '" + name + "' has " + std::to_string(column->length) + " values but the columns before it have " +
                 std::to_string(*rows));
    rows = column->length;
    fields.push_back(given ? given->field(size_t(given->FieldIndex(name))) : Field::Make(name, type));
    columns.push_back(column);
  }
  if (given && fields.size() != size_t(given->num_fields()))
    for (const auto& f : given->fields())
      if (!data.contains(py::str(f->name))) ThrowValue("the schema's column '" + f->name + "' is missing from the data");
  return {RecordBatch::Make(std::make_shared<Schema>(fields), columns)};
}

}  // namespace lancelet::python
