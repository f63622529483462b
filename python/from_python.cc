// Values from Python to C++: scalars of a given type, the type of a list of values, numpy
// arrays as columns, and a dict of columns as a batch.
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
