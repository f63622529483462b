// Schema and RecordBatch, and the constructors of write_dataset's inputs: a batch from a
// dict of columns or from Arrow PyCapsules, and a reader over batches.
#include <map>

#include "bindings.h"

namespace lancelet::python {

namespace {

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

void DefineSchema(py::module_& m) {
  py::class_<PySchema>(m, "Schema", "The columns of a dataset or batch: names, types and nullability.")
      .def_property_readonly("names", [](const PySchema& s) { return Names(*s.schema); }, "The column names, in order.")
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
}

void DefineRecordBatch(py::module_& m) {
  py::class_<PyBatch>(m, "RecordBatch", "Rows in columns (Arrow layout); hand it to pyarrow, polars or DuckDB "
                                        "through the Arrow PyCapsule interface.")
      .def_property_readonly("num_rows", [](const PyBatch& b) { return b.batch->num_rows(); }, "How many rows.")
      .def_property_readonly("num_columns", [](const PyBatch& b) { return b.batch->num_columns(); }, "How many columns.")
      .def_property_readonly("schema", [](const PyBatch& b) { return PySchema{b.batch->schema()}; },
                             "The columns, a lancelet.Schema.")
      .def_property_readonly("column_names", [](const PyBatch& b) { return Names(*b.batch->schema()); },
                             "The column names, in order.")
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
}

}  // namespace

void RegisterSchemaAndBatch(py::module_& m) {
  DefineSchema(m);
  DefineRecordBatch(m);
}

void RegisterBatchInputs(py::module_& m) {
  m.def("batch_from_pydict", &BatchFromDict, py::arg("data"), py::arg("schema") = py::none());

  m.def("batch_from_capsules", [](py::capsule schema, py::capsule array) {
    SchemaPtr s = ImportSchema(CapsulePointer<ArrowSchema>(schema, "arrow_schema"));
    return PyBatch{ImportRecordBatch(CapsulePointer<ArrowArray>(array, "arrow_array"), s)};
  }, py::arg("schema"), py::arg("array"));

  // A reader pulling lancelet RecordBatches from a Python iterator as the writer asks for
  // them (the GIL taken for each), so that a large input is converted a slice at a time.
  m.def("reader_of_iterator", [](const PySchema& schema, py::iterator batches) {
    struct Reader : RecordBatchReader {
      SchemaPtr schema_;
      py::object batches;  // released with the GIL held (the destructor takes it)
      ~Reader() override {
        py::gil_scoped_acquire hold;
        batches = py::object();
      }
      SchemaPtr schema() const override { return schema_; }
      RecordBatchPtr Next() override {
        py::gil_scoped_acquire hold;
        if (!batches) return nullptr;
        PyObject* next = PyIter_Next(batches.ptr());
        if (!next) {
          if (PyErr_Occurred()) throw py::error_already_set();
          batches = py::object();
          return nullptr;
        }
        return py::reinterpret_steal<py::object>(next).cast<PyBatch&>().batch;
      }
    };
    auto reader = std::make_shared<Reader>();
    reader->schema_ = schema.schema;
    reader->batches = batches;
    return PyReader{reader, schema.schema};
  }, py::arg("schema"), py::arg("batches"));

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
}

}  // namespace lancelet::python
