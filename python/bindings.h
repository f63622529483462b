// What the files of the compiled module share: the Python-side wrappers of lancelet's
// objects, the conversions between values and Python objects, the Arrow PyCapsule
// helpers, and one registration function per area, called by PYBIND11_MODULE in
// _lancelet.cc in the order the module's types must exist (a binding's signature names
// only types registered before it).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "lancelet/c_data.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "lancelet/scalar.h"

namespace lancelet::python {

namespace py = pybind11;

// --- the wrapped objects ---

struct PySchema {
  SchemaPtr schema;
};

struct PyBatch {
  RecordBatchPtr batch;
};

// `reader` is null once the stream is read to its end or handed on.
struct PyReader {
  std::shared_ptr<RecordBatchReader> reader;
  SchemaPtr schema;
};

struct PyDataset {
  DatasetPtr ds;
};

// f(dataset) with the GIL released. The handle's pointer is copied first, with the GIL
// held: a write on another thread may move the handle meanwhile (writes replace it only
// with the GIL held).
template <typename F>
decltype(auto) WithoutGil(const PyDataset& d, F&& f) {
  const DatasetPtr ds = d.ds;
  py::gil_scoped_release release;
  return f(ds);
}

// --- errors (errors.cc) ---

// Bad input from Python: InvalidArgumentError, which is also a ValueError.
[[noreturn]] void ThrowValue(const std::string& message);

// --- values: C++ to Python (to_python.cc) ---

// The datetime module, imported once.
py::handle Datetime();
int64_t UnitsPerSecond(TimeUnit unit);
py::object TimestampToDatetime(int64_t ticks, TimeUnit unit, bool utc);
// {column: [values]} of `columns`, or of every column when it is empty.
py::dict BatchToDict(const RecordBatch& b, const std::vector<std::string>& columns = {});
// A read-only numpy view of a numeric column or of a fixed-size list of numbers (2-D).
py::array ColumnToNumpy(const ArrayPtr& column, const std::string& name);

// --- values: Python to C++ (from_python.cc) ---

// {column: values} as a batch: each column a numpy array or a sequence of Python values,
// typed by `schema_arg` (a Schema) or, when it is None, inferred.
PyBatch BatchFromDict(const py::dict& data, const py::object& schema_arg);

inline std::vector<std::string> OptionalColumns(const std::optional<std::vector<std::string>>& columns) {
  return columns ? *columns : std::vector<std::string>{};
}

// --- Arrow PyCapsules ---

template <typename T>
void ReleaseCapsule(PyObject* capsule, const char* name) {
  auto* p = static_cast<T*>(PyCapsule_GetPointer(capsule, name));
  if (!p) { PyErr_Clear(); return; }
  if (p->release) p->release(p);
  delete p;
}

inline py::capsule SchemaCapsule(const Schema& schema) {
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

// --- registration, one function per area ---

// LanceletError and its subclasses, and the translation of lancelet's errors to them
// (errors.cc).
void RegisterErrors(py::module_& m);
// Schema and RecordBatch (batches.cc).
void RegisterSchemaAndBatch(py::module_& m);
// RecordBatchReader, what a scan returns (scan.cc).
void RegisterRecordBatchReader(py::module_& m);
// Dataset's count_rows, scanner and take (scan.cc), for RegisterDataset.
void DefineDatasetScans(py::class_<PyDataset>& dataset);
// Dataset, open_dataset and write_stream (dataset.cc).
void RegisterDataset(py::module_& m);
// ShardedDataset, the training-data view behind lancelet.loader (loader.cc).
void RegisterLoader(py::module_& m);
// batch_from_pydict, batch_from_capsules and reader_of_batches: write_dataset's inputs
// (batches.cc).
void RegisterBatchInputs(py::module_& m);
// sql(db_dir, statement) (sql.cc).
void RegisterSql(py::module_& m);

}  // namespace lancelet::python
