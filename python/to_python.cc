// Values from C++ to Python: scalars, columns as lists, batches as dicts, numeric columns
// as numpy views.
#include <cmath>
#include <type_traits>

#include "lancelet/decimal.h"
#include "bindings.h"

namespace lancelet::python {

// The datetime module, imported once and never released: a static py::object would be
// destroyed after the interpreter at exit.
py::handle Datetime() {
  static py::handle module = py::module_::import("datetime").release();
  return module;
}

int64_t UnitsPerSecond(TimeUnit unit) {
  return unit == TimeUnit::kSecond ? 1 : unit == TimeUnit::kMilli ? 1000 : unit == TimeUnit::kMicro ? 1000000 : 1000000000;
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

namespace {

py::object DaysToDate(int64_t days) {
  return Datetime().attr("date")(1970, 1, 1) + Datetime().attr("timedelta")(py::arg("days") = days);
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

}  // namespace

py::dict BatchToDict(const RecordBatch& b, const std::vector<std::string>& columns) {
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
}  // namespace lancelet::python
