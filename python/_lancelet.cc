// The compiled half of the Python package (python/lancelet/__init__.py is the other):
// Dataset, Schema, RecordBatch and RecordBatchReader over the C++ API, values to and from
// Python objects, numpy views, the Arrow PyCapsule interface, and lancelet's errors as
// Python exceptions. The GIL is released wherever C++ reads, decodes or writes.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <optional>

#include <sstream>

#include "array/decimal_text.h"
#include "cli/inspect.h"
#include "lancelet/c_data.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "lancelet/loader.h"
#include "lancelet/scalar.h"
#include "lancelet/sql.h"

namespace py = pybind11;
using namespace lancelet;

namespace {

// --- errors ---

// Set by PYBIND11_MODULE: the Python class of each ErrorKind.
PyObject* g_error_types[6] = {};

PyObject* ErrorType(ErrorKind kind) { return g_error_types[static_cast<int>(kind)]; }

[[noreturn]] void ThrowValue(const std::string& message) { throw Error(ErrorKind::kInvalidArgument, message); }

// --- values: C++ to Python ---

// The datetime module, imported once and never released: a static py::object would be
// destroyed after the interpreter at exit.
py::handle Datetime() {
  static py::handle module = py::module_::import("datetime").release();
  return module;
}

py::object ScalarToPython(const Scalar& value);

py::object DaysToDate(int64_t days) {
  return Datetime().attr("date")(1970, 1, 1) + Datetime().attr("timedelta")(py::arg("days") = days);
}

py::object TimestampToDatetime(int64_t ticks, TimeUnit unit, bool utc) {
  py::handle dt = Datetime();
  int64_t per_second = unit == TimeUnit::kSecond ? 1 : unit == TimeUnit::kMilli ? 1000 : unit == TimeUnit::kMicro ? 1000000 : 1000000000;
  int64_t seconds = ticks / per_second, rest = ticks % per_second;
  if (rest < 0) rest += per_second, --seconds;
  const int64_t micros = unit == TimeUnit::kNano ? rest / 1000 : rest * (1000000 / per_second);
  py::object tz = py::none();
  if (utc) tz = dt.attr("timezone").attr("utc");
  py::object epoch = dt.attr("datetime")(1970, 1, 1, py::arg("tzinfo") = tz);
  return epoch + dt.attr("timedelta")(py::arg("seconds") = seconds, py::arg("microseconds") = micros);
}

int64_t UnitsPerSecond(TimeUnit unit) {
  return unit == TimeUnit::kSecond ? 1 : unit == TimeUnit::kMilli ? 1000 : unit == TimeUnit::kMicro ? 1000000 : 1000000000;
}

// A count of `unit` as a datetime.timedelta (nanoseconds truncate to microseconds).
py::object TicksToTimedelta(int64_t ticks, TimeUnit unit) {
  const int64_t per_second = UnitsPerSecond(unit);
  int64_t seconds = ticks / per_second, rest = ticks % per_second;
  if (rest < 0) rest += per_second, --seconds;
  const int64_t micros = unit == TimeUnit::kNano ? rest / 1000 : rest * (1000000 / per_second);
  return Datetime().attr("timedelta")(py::arg("seconds") = seconds, py::arg("microseconds") = micros);
}

// A time of day: datetime.time within one day, else the timedelta it spells.
py::object TicksToTime(int64_t ticks, TimeUnit unit) {
  const int64_t per_second = UnitsPerSecond(unit);
  if (ticks < 0 || ticks >= 86400 * per_second) return TicksToTimedelta(ticks, unit);
  const int64_t seconds = ticks / per_second, rest = ticks % per_second;
  const int64_t micros = unit == TimeUnit::kNano ? rest / 1000 : rest * (1000000 / per_second);
  return Datetime().attr("time")(seconds / 3600, seconds / 60 % 60, seconds % 60, micros);
}

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

py::object ScalarToPython(const Scalar& value) {
  if (value.is_null()) return py::none();
  const DataType& type = *value.type;
  switch (type.id()) {
    case TypeId::kBool: return py::bool_(value.as_bool());
    case TypeId::kUInt8: case TypeId::kUInt16: case TypeId::kUInt32: case TypeId::kUInt64:
      return py::int_(value.as_uint());
    case TypeId::kInt8: case TypeId::kInt16: case TypeId::kInt32: case TypeId::kInt64:
      return py::int_(value.as_int());
    case TypeId::kFloat16: case TypeId::kFloat32: case TypeId::kFloat64: return py::float_(value.as_double());
    case TypeId::kUtf8: case TypeId::kLargeUtf8: return py::str(value.as_string());
    case TypeId::kBinary: case TypeId::kLargeBinary: case TypeId::kFixedSizeBinary: return py::bytes(value.as_string());
    case TypeId::kDate32: return DaysToDate(value.as_int());
    case TypeId::kDate64: return DaysToDate(value.as_int() / 86400000 - (value.as_int() % 86400000 < 0));
    case TypeId::kTimestamp: return TimestampToDatetime(value.as_int(), type.unit(), !type.timezone().empty());
    case TypeId::kTime32: case TypeId::kTime64: return TicksToTime(value.as_int(), type.unit());
    case TypeId::kDuration: return TicksToTimedelta(value.as_int(), type.unit());
    case TypeId::kDecimal128: case TypeId::kDecimal256:
      return py::module_::import("decimal").attr("Decimal")(FormatDecimal(value.as_string(), type));
    case TypeId::kNull: return py::none();
    case TypeId::kList: case TypeId::kLargeList: case TypeId::kFixedSizeList: {
      py::list out;
      for (const auto& item : value.as_list()) out.append(ScalarToPython(item));
      return out;
    }
    case TypeId::kMap: {
      // A dict when every key is hashable; else the (key, value) pairs, as pyarrow does.
      py::list pairs;
      for (const auto& entry : value.as_list())
        pairs.append(py::make_tuple(ScalarToPython(entry.as_list()[0]), ScalarToPython(entry.as_list()[1])));
      try {
        return py::dict(pairs);
      } catch (const py::error_already_set&) {
        return pairs;
      }
    }
    case TypeId::kStruct: {
      py::dict out;
      const auto& fields = value.as_list();
      for (size_t i = 0; i < fields.size(); ++i) out[py::str(type.child(i)->name)] = ScalarToPython(fields[i]);
      return out;
    }
  }
  ThrowValue("no Python value for type " + type.ToString());
}

template <typename T>
py::list PrimitiveList(const ArrayData& a) {
  py::list out(a.length);
  const T* v = a.values<T>();
  for (int64_t i = 0; i < a.length; ++i) {
    if (a.IsNull(i)) out[size_t(i)] = py::none();
    else if constexpr (std::is_floating_point_v<T>) out[size_t(i)] = py::float_(double(v[i]));
    else out[size_t(i)] = py::int_(v[i]);
  }
  return out;
}

// A column as a list of Python values; flat numbers and strings skip the Scalar step.
py::list ColumnToList(const ArrayData& a) {
  switch (a.type->id()) {
    case TypeId::kInt8: return PrimitiveList<int8_t>(a);
    case TypeId::kInt16: return PrimitiveList<int16_t>(a);
    case TypeId::kInt32: return PrimitiveList<int32_t>(a);
    case TypeId::kInt64: return PrimitiveList<int64_t>(a);
    case TypeId::kUInt8: return PrimitiveList<uint8_t>(a);
    case TypeId::kUInt16: return PrimitiveList<uint16_t>(a);
    case TypeId::kUInt32: return PrimitiveList<uint32_t>(a);
    case TypeId::kUInt64: return PrimitiveList<uint64_t>(a);
    case TypeId::kFloat32: return PrimitiveList<float>(a);
    case TypeId::kFloat64: return PrimitiveList<double>(a);
    case TypeId::kUtf8: case TypeId::kLargeUtf8: {
      py::list out(a.length);
      for (int64_t i = 0; i < a.length; ++i) {
        if (a.IsNull(i)) { out[size_t(i)] = py::none(); continue; }
        auto view = a.GetView(i);
        out[size_t(i)] = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(view.data(), Py_ssize_t(view.size()), "replace"));
      }
      return out;
    }
    default: {
      py::list out(a.length);
      for (int64_t i = 0; i < a.length; ++i) out[size_t(i)] = ScalarToPython(GetScalar(a, i));
      return out;
    }
  }
}

// --- values: Python to C++ ---

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

// A numpy array of a numeric dtype as a column: 1-D to that type, 2-D to fixed-size
// lists of it (one row per line).
std::optional<ArrayPtr> NumpyToColumn(py::handle v, const std::string& column) {
  if (!py::isinstance<py::array>(v)) return std::nullopt;
  auto arr = py::array::ensure(v, py::array::c_style);
  const char kind = arr.dtype().kind();
  const auto size = arr.dtype().itemsize();
  TypePtr type;
  if (kind == 'i') type = size == 1 ? DataType::Int8() : size == 2 ? DataType::Int16() : size == 4 ? DataType::Int32() : DataType::Int64();
  else if (kind == 'u') type = size == 1 ? DataType::UInt8() : size == 2 ? DataType::UInt16() : size == 4 ? DataType::UInt32() : DataType::UInt64();
  else if (kind == 'f' && size == 2) type = DataType::Float16();
  else if (kind == 'f' && size == 4) type = DataType::Float32();
  else if (kind == 'f' && size == 8) type = DataType::Float64();
  else return std::nullopt;  // bools, strings, objects: as Python values
  if (arr.ndim() != 1 && arr.ndim() != 2)
    ThrowValue("column '" + column + "': a numpy array of " + std::to_string(arr.ndim()) + " dimensions (1 or 2 are stored)");
  const int64_t rows = arr.shape(0), width = arr.ndim() == 2 ? arr.shape(1) : 1;
  auto values = std::make_shared<ArrayData>();
  values->type = type;
  values->length = rows * width;
  values->buffers = {nullptr, Buffer::Copy(arr.data(), size_t(rows * width * size))};
  if (arr.ndim() == 1) return values;
  auto list = std::make_shared<ArrayData>();
  list->type = DataType::FixedSizeList(type, int32_t(width));
  list->length = rows;
  list->buffers = {nullptr};
  list->children = {values};
  return list;
}

// --- Arrow PyCapsules ---

template <typename T>
void ReleaseCapsule(PyObject* capsule, const char* name) {
  auto* p = static_cast<T*>(PyCapsule_GetPointer(capsule, name));
  if (!p) { PyErr_Clear(); return; }
  if (p->release) p->release(p);
  delete p;
}

py::capsule SchemaCapsule(const Schema& schema) {
  auto* out = new ArrowSchema();
  ExportSchema(schema, out);
  return py::capsule(out, "arrow_schema", [](PyObject* c) { ReleaseCapsule<ArrowSchema>(c, "arrow_schema"); });
}

template <typename T>
T* CapsulePointer(py::handle capsule, const char* name) {
  auto* p = static_cast<T*>(PyCapsule_GetPointer(capsule.ptr(), name));
  if (!p) throw py::error_already_set();
  return p;
}

// --- the classes ---

struct PySchema {
  SchemaPtr schema;
};

std::vector<std::string> Names(const Schema& schema) {
  std::vector<std::string> out;
  for (const auto& f : schema.fields()) out.push_back(f->name);
  return out;
}

// A schema from (name, type text) pairs, in that order.
PySchema ParseSchema(const std::vector<std::pair<std::string, std::string>>& columns) {
  std::vector<FieldPtr> fields;
  for (const auto& [name, type] : columns) fields.push_back(Field::Make(name, DataType::Parse(type)));
  return PySchema{std::make_shared<Schema>(fields)};
}

struct PyBatch {
  RecordBatchPtr batch;
};

struct PyReader {
  std::shared_ptr<RecordBatchReader> reader;
  SchemaPtr schema;
};

struct PyDataset {
  DatasetPtr ds;
};

// `columns` empty: all of them.
py::dict BatchToDict(const RecordBatch& b, const std::vector<std::string>& columns = {}) {
  py::dict out;
  if (columns.empty()) {
    for (size_t c = 0; c < b.num_columns(); ++c) out[py::str(b.schema()->field(c)->name)] = ColumnToList(*b.column(c));
  } else {
    for (const auto& name : columns) out[py::str(name)] = ColumnToList(*b.column(name));
  }
  return out;
}

py::array ColumnToNumpy(const ArrayPtr& column, const std::string& name) {
  const ArrayData* values = column.get();
  std::vector<py::ssize_t> shape = {py::ssize_t(column->length)};
  if (column->type->id() == TypeId::kFixedSizeList) {
    values = column->children[0].get();
    shape.push_back(column->type->fixed_size());
  }
  py::dtype dtype;
  switch (values->type->id()) {
    case TypeId::kInt8: dtype = py::dtype::of<int8_t>(); break;
    case TypeId::kInt16: dtype = py::dtype::of<int16_t>(); break;
    case TypeId::kInt32: dtype = py::dtype::of<int32_t>(); break;
    case TypeId::kInt64: dtype = py::dtype::of<int64_t>(); break;
    case TypeId::kUInt8: dtype = py::dtype::of<uint8_t>(); break;
    case TypeId::kUInt16: dtype = py::dtype::of<uint16_t>(); break;
    case TypeId::kUInt32: dtype = py::dtype::of<uint32_t>(); break;
    case TypeId::kUInt64: dtype = py::dtype::of<uint64_t>(); break;
    case TypeId::kFloat16: dtype = py::dtype("float16"); break;
    case TypeId::kFloat32: dtype = py::dtype::of<float>(); break;
    case TypeId::kFloat64: dtype = py::dtype::of<double>(); break;
    default:
      ThrowValue("column '" + name + "' is " + column->type->ToString() +
                 ": numpy views hold numbers and fixed-size lists of numbers; use to_pydict()");
  }
  if (column->null_count > 0 || values->null_count > 0)
    ThrowValue("column '" + name + "' holds NULLs, which a numpy array cannot; filter them out or use to_pydict()");
  // The array views lancelet's buffer (no copy) and keeps the column alive; read-only,
  // since the buffer may be shared with other batches.
  auto* keep = new ArrayPtr(column);
  py::capsule base(keep, [](void* p) { delete static_cast<ArrayPtr*>(p); });
  py::array out(dtype, shape, values->buffers[1] ? values->buffers[1]->data() : nullptr, base);
  out.attr("setflags")(py::arg("write") = false);
  return out;
}

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

std::vector<std::string> OptionalColumns(const std::optional<std::vector<std::string>>& columns) {
  return columns ? *columns : std::vector<std::string>{};
}

}  // namespace

PYBIND11_MODULE(_lancelet, m) {
  m.doc() = "lancelet's compiled core; import lancelet instead";

  // Errors: LanceletError and one subclass per kind; bad input is also a ValueError, a
  // missing thing a LookupError and an operating-system failure an OSError.
  PyObject* base = PyErr_NewException("lancelet.LanceletError", PyExc_Exception, nullptr);
  m.attr("LanceletError") = py::handle(base);
  auto make = [&](ErrorKind kind, const char* name, PyObject* also) {
    py::tuple bases = also ? py::make_tuple(py::handle(base), py::handle(also)) : py::make_tuple(py::handle(base));
    PyObject* type = PyErr_NewException((std::string("lancelet.") + name).c_str(), bases.ptr(), nullptr);
    g_error_types[static_cast<int>(kind)] = type;
    m.attr(name) = py::handle(type);
  };
  make(ErrorKind::kInvalidArgument, "InvalidArgumentError", PyExc_ValueError);
  make(ErrorKind::kNotFound, "NotFoundError", PyExc_LookupError);
  make(ErrorKind::kCorrupt, "CorruptError", nullptr);
  make(ErrorKind::kNotSupported, "NotSupportedError", nullptr);
  make(ErrorKind::kConflict, "ConflictError", nullptr);
  make(ErrorKind::kIo, "IOError", PyExc_OSError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const SqlError& e) {
      PyErr_SetString(ErrorType(e.kind()), e.Render().c_str());
    } catch (const Error& e) {
      PyErr_SetString(ErrorType(e.kind()), e.what());
    }
  });

  py::class_<PySchema>(m, "Schema", "The columns of a dataset or batch: names, types and nullability.")
      .def_property_readonly("names", [](const PySchema& s) { return Names(*s.schema); })
      .def_property_readonly("types", [](const PySchema& s) {
        std::vector<std::string> out;
        for (const auto& f : s.schema->fields()) out.push_back(f->type->ToString());
        return out;
      }, "Each column's type, as text (int64, utf8, fixed_size_list<float32>[768], ...).")
      .def_static("parse", [](const std::map<std::string, std::string>& columns) {
        return ParseSchema({columns.begin(), columns.end()});
      }, py::arg("columns"), "A schema from {name: type text}; use from_pairs to keep an order.")
      .def_static("from_pairs", &ParseSchema, py::arg("columns"), "A schema from [(name, type text), ...] in that order.")
      .def("__arrow_c_schema__", [](const PySchema& s) { return SchemaCapsule(*s.schema); })
      .def("__eq__", [](const PySchema& a, const PySchema& b) { return a.schema->Equals(*b.schema); })
      .def("__len__", [](const PySchema& s) { return s.schema->num_fields(); })
      .def("__repr__", [](const PySchema& s) { return "lancelet.Schema(" + s.schema->ToString() + ")"; });

  py::class_<PyBatch>(m, "RecordBatch", "Rows in columns (Arrow layout); hand it to pyarrow, polars or DuckDB "
                                        "through the Arrow PyCapsule interface.")
      .def_property_readonly("num_rows", [](const PyBatch& b) { return b.batch->num_rows(); })
      .def_property_readonly("num_columns", [](const PyBatch& b) { return b.batch->num_columns(); })
      .def_property_readonly("schema", [](const PyBatch& b) { return PySchema{b.batch->schema()}; })
      .def_property_readonly("column_names", [](const PyBatch& b) { return Names(*b.batch->schema()); })
      .def("to_pydict", [](const PyBatch& b, const std::optional<std::vector<std::string>>& columns) {
        return BatchToDict(*b.batch, OptionalColumns(columns));
      }, py::arg("columns") = py::none(),
           "{column: [values]} (of `columns`, or all): ints, floats, str, bytes, bool, lists, dicts, "
           "datetime.date/datetime, None.")
      .def("to_pylist", [](const PyBatch& b) {
        py::dict columns = BatchToDict(*b.batch);
        py::list out;
        for (int64_t i = 0; i < b.batch->num_rows(); ++i) {
          py::dict row;
          for (auto [name, values] : columns) row[name] = values.cast<py::list>()[size_t(i)];
          out.append(row);
        }
        return out;
      }, "[{column: value}] per row.")
      .def("to_numpy", [](const PyBatch& b, const std::string& column) {
        return ColumnToNumpy(b.batch->column(column), column);
      }, py::arg("column"),
           "A read-only numpy view of a numeric column (no copy); fixed-size lists of numbers come as 2-D arrays.")
      .def("__len__", [](const PyBatch& b) { return b.batch->num_rows(); })
      .def("__arrow_c_schema__", [](const PyBatch& b) { return SchemaCapsule(*b.batch->schema()); })
      .def("__arrow_c_array__", [](const PyBatch& b, py::object requested_schema) {
        (void)requested_schema;  // exported as it is; a consumer casts if it wants another type
        auto* array = new ArrowArray();
        auto* schema = new ArrowSchema();
        ExportRecordBatch(*b.batch, array, schema);
        py::capsule s(schema, "arrow_schema", [](PyObject* c) { ReleaseCapsule<ArrowSchema>(c, "arrow_schema"); });
        py::capsule a(array, "arrow_array", [](PyObject* c) { ReleaseCapsule<ArrowArray>(c, "arrow_array"); });
        return py::make_tuple(s, a);
      }, py::arg("requested_schema") = py::none())
      .def("__repr__", [](const PyBatch& b) {
        return "lancelet.RecordBatch(" + std::to_string(b.batch->num_rows()) + " rows: " + b.batch->schema()->ToString() + ")";
      });

  py::class_<PyReader>(m, "RecordBatchReader", "A stream of record batches; iterate it, or hand it on through "
                                               "__arrow_c_stream__ (once).")
      .def_property_readonly("schema", [](const PyReader& r) { return PySchema{r.schema}; })
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", [](PyReader& r) {
        if (!r.reader) throw py::stop_iteration();
        RecordBatchPtr next;
        {
          py::gil_scoped_release release;
          next = r.reader->Next();
        }
        if (!next) {
          r.reader.reset();
          throw py::stop_iteration();
        }
        return PyBatch{next};
      })
      .def("read_all", [](PyReader& r) {
        std::vector<RecordBatchPtr> batches;
        {
          py::gil_scoped_release release;
          while (r.reader)
            if (auto b = r.reader->Next()) batches.push_back(b);
            else r.reader.reset();
        }
        return PyBatch{RecordBatch::Concatenate(r.schema, batches)};
      }, "Every remaining batch as one RecordBatch.")
      .def("__arrow_c_schema__", [](const PyReader& r) { return SchemaCapsule(*r.schema); })
      .def("__arrow_c_stream__", [](PyReader& r, py::object requested_schema) {
        (void)requested_schema;
        if (!r.reader) ThrowValue("this reader was already read or handed on");
        auto* stream = new ArrowArrayStream();
        ExportRecordBatchReader(std::move(r.reader), stream);
        return py::capsule(stream, "arrow_array_stream",
                           [](PyObject* c) { ReleaseCapsule<ArrowArrayStream>(c, "arrow_array_stream"); });
      }, py::arg("requested_schema") = py::none());

  py::class_<PyDataset>(m, "Dataset", "One version of a Lance dataset. Writes return the new version as a new Dataset.")
      .def_property_readonly("uri", [](const PyDataset& d) { return d.ds->uri(); })
      .def_property_readonly("version", [](const PyDataset& d) { return d.ds->version(); })
      .def_property_readonly("schema", [](const PyDataset& d) { return PySchema{d.ds->schema()}; })
      .def("versions", [](const PyDataset& d) {
        std::vector<VersionInfo> versions;
        {
          py::gil_scoped_release release;
          versions = d.ds->ListVersions();
        }
        py::list out;
        for (const auto& v : versions) {
          py::dict row;
          row["version"] = v.version;
          row["timestamp"] = TimestampToDatetime(v.timestamp_nanos, TimeUnit::kNano, true);
          row["operation"] = v.operation;
          out.append(row);
        }
        return out;
      }, "[{version, timestamp, operation}] for every version on disk.")
      .def("checkout", [](const PyDataset& d, uint64_t version) {
        py::gil_scoped_release release;
        return PyDataset{d.ds->Checkout(version)};
      }, py::arg("version"))
      .def("latest", [](const PyDataset& d) {
        py::gil_scoped_release release;
        return PyDataset{d.ds->Latest()};
      })
      .def("count_rows", [](const PyDataset& d, const std::optional<std::string>& filter) {
        py::gil_scoped_release release;
        return d.ds->CountRows(filter.value_or(""));
      }, py::arg("filter") = py::none())
      .def("scanner", [](const PyDataset& d, const std::optional<std::vector<std::string>>& columns,
                         const std::optional<std::string>& filter, std::optional<int64_t> limit,
                         std::optional<int64_t> offset, std::optional<int64_t> batch_size, bool with_row_id) {
        ScanBuilder scan = d.ds->NewScan();
        if (columns) scan.Columns(*columns);
        if (filter) scan.Filter(*filter);
        if (limit) scan.Limit(*limit);
        if (offset) scan.Offset(*offset);
        if (batch_size) scan.BatchSize(*batch_size);
        scan.WithRowId(with_row_id);
        std::unique_ptr<RecordBatchReader> reader;
        {
          py::gil_scoped_release release;
          reader = scan.Open();
        }
        SchemaPtr schema = reader->schema();
        return PyReader{std::move(reader), schema};
      }, py::arg("columns") = py::none(), py::arg("filter") = py::none(), py::arg("limit") = py::none(),
         py::arg("offset") = py::none(), py::arg("batch_size") = py::none(), py::arg("with_row_id") = false,
         "A RecordBatchReader over the rows that pass `filter` (SQL syntax), with the given columns.")
      .def("take", [](const PyDataset& d, const std::vector<uint64_t>& indices,
                      const std::optional<std::vector<std::string>>& columns) {
        py::gil_scoped_release release;
        return PyBatch{d.ds->Take(indices, OptionalColumns(columns))};
      }, py::arg("indices"), py::arg("columns") = py::none(),
         "Rows by position among the live rows, in the order asked (repeats allowed).")
      .def("update", [](const PyDataset& d, const std::map<std::string, std::string>& values,
                        const std::optional<std::string>& where, const std::string& mode) {
        std::vector<Dataset::SetClause> set;
        for (const auto& [column, expression] : values) set.push_back({column, expression});
        const UpdateMode parsed = ParseUpdateMode(mode, "mode");
        uint64_t rows = 0;
        DatasetPtr next;
        {
          py::gil_scoped_release release;
          next = d.ds->Update(set, where.value_or(""), &rows, parsed);
        }
        return py::make_tuple(PyDataset{next}, rows);
      }, py::arg("values"), py::arg("where") = py::none(), py::arg("mode") = "auto")
      .def("delete", [](const PyDataset& d, const std::string& where) {
        uint64_t rows = 0;
        DatasetPtr next;
        {
          py::gil_scoped_release release;
          next = d.ds->Delete(where, &rows);
        }
        return py::make_tuple(PyDataset{next}, rows);
      }, py::arg("where"))
      .def("create_index", [](const PyDataset& d, const std::string& column, const std::string& index_type,
                              const std::string& name, bool replace) {
        std::string kind;
        for (char c : index_type) kind += char(std::tolower(static_cast<unsigned char>(c)));
        if (kind != "btree" && kind != "bitmap") ThrowValue("index_type '" + index_type + "': expected BTREE or BITMAP");
        py::gil_scoped_release release;
        return PyDataset{d.ds->CreateIndex(column, kind == "btree" ? IndexType::kBTree : IndexType::kBitmap, name, replace)};
      }, py::arg("column"), py::arg("index_type") = "BTREE", py::arg("name") = "", py::arg("replace") = false)
      .def("list_indices", [](const PyDataset& d) {
        py::list out;
        for (const auto& i : d.ds->ListIndices()) {
          py::dict row;
          row["name"] = i.name;
          row["type"] = i.type;
          row["columns"] = i.columns;
          row["dataset_version"] = i.dataset_version;
          out.append(row);
        }
        return out;
      })
      .def("optimize", [](const PyDataset& d) {
        py::gil_scoped_release release;
        return PyDataset{d.ds->Optimize()};
      }, "Folds overlays, merges small fragments and refreshes indexes (lancelet optimize).")
      .def("inspect", [](const PyDataset& d) {
        std::ostringstream out;
        {
          py::gil_scoped_release release;
          cli::PrintInspect(*d.ds, out);
        }
        return out.str();
      }, "What `lancelet inspect` prints: fragments, files, overlays, deletions, indexes.")
      .def("__repr__", [](const PyDataset& d) {
        return "lancelet.Dataset('" + d.ds->uri() + "', version " + std::to_string(d.ds->version()) + ")";
      });

  py::class_<ShardedDataset, std::shared_ptr<ShardedDataset>>(m, "ShardedDataset", "See lancelet.loader.")
      .def_static("from_path", [](const std::string& path, const std::optional<std::vector<std::string>>& columns,
                                  size_t metadata_cache_entries) {
        LoaderOptions options{OptionalColumns(columns), metadata_cache_entries};
        py::gil_scoped_release release;
        return ShardedDataset::FromPath(path, options);
      }, py::arg("path"), py::arg("columns") = py::none(), py::arg("metadata_cache_entries") = 256)
      .def_property_readonly("path", &ShardedDataset::path)
      .def_property_readonly("version", &ShardedDataset::version)
      .def_property_readonly("schema", [](const ShardedDataset& d) { return PySchema{d.schema()}; })
      .def("shard_count", &ShardedDataset::shard_count)
      .def("shard_sizes", &ShardedDataset::shard_sizes)
      .def("total", &ShardedDataset::total)
      .def("cached_shards", &ShardedDataset::cached_shards)
      .def("read_batch", [](const ShardedDataset& d, size_t shard, const std::vector<uint64_t>& samples) {
        py::gil_scoped_release release;
        return PyBatch{d.ReadBatch(shard, samples)};
      }, py::arg("shard_id"), py::arg("sample_indices"));

  m.def("open_dataset", [](const std::string& uri, std::optional<uint64_t> version) {
    py::gil_scoped_release release;
    return PyDataset{Dataset::Open(uri, version)};
  }, py::arg("uri"), py::arg("version") = py::none());

  m.def("batch_from_pydict", &BatchFromDict, py::arg("data"), py::arg("schema") = py::none());

  m.def("write_stream", [](py::capsule stream, const std::string& uri, const std::string& mode,
                           std::optional<int64_t> max_rows_per_file, const std::optional<std::string>& file_version,
                           bool stable_row_ids) {
    WriteOptions options;
    if (mode == "create") options.mode = WriteMode::kCreate;
    else if (mode == "append") options.mode = WriteMode::kAppend;
    else if (mode == "overwrite") options.mode = WriteMode::kOverwrite;
    else ThrowValue("mode '" + mode + "': expected create, append or overwrite");
    if (max_rows_per_file) options.max_rows_per_file = *max_rows_per_file;
    if (file_version) options.file_version = *file_version;
    options.enable_stable_row_ids = stable_row_ids;
    auto reader = ImportArrayStream(CapsulePointer<ArrowArrayStream>(stream, "arrow_array_stream"));
    py::gil_scoped_release release;
    return PyDataset{options.mode == WriteMode::kAppend ? Dataset::Open(uri)->Append(*reader, options)
                                                        : Dataset::Write(uri, *reader, options)};
  }, py::arg("stream"), py::arg("uri"), py::arg("mode"), py::arg("max_rows_per_file"), py::arg("data_storage_version"),
     py::arg("enable_stable_row_ids"));

  m.def("batch_from_capsules", [](py::capsule schema, py::capsule array) {
    SchemaPtr s = ImportSchema(CapsulePointer<ArrowSchema>(schema, "arrow_schema"));
    return PyBatch{ImportRecordBatch(CapsulePointer<ArrowArray>(array, "arrow_array"), s)};
  }, py::arg("schema"), py::arg("array"));

  m.def("reader_of_batches", [](const std::vector<PyBatch*>& batches) {
    if (batches.empty()) ThrowValue("no batches to write");
    struct Reader : RecordBatchReader {
      std::vector<RecordBatchPtr> batches;
      size_t next = 0;
      SchemaPtr schema() const override { return batches.front()->schema(); }
      RecordBatchPtr Next() override { return next < batches.size() ? batches[next++] : nullptr; }
    };
    auto reader = std::make_shared<Reader>();
    for (auto* b : batches) reader->batches.push_back(b->batch);
    SchemaPtr schema = reader->schema();
    return PyReader{reader, schema};
  }, py::arg("batches"));

  m.def("sql", [](const std::string& db_dir, const std::string& statement) -> py::object {
    SqlResult result;
    {
      py::gil_scoped_release release;
      SqlSession session(db_dir);
      result = session.Execute(statement);
    }
    if (result.rows) return py::cast(PyBatch{result.rows});
    return py::str(result.message);
  }, py::arg("db_dir"), py::arg("statement"));
}
