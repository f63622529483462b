// Dataset (one version of a dataset: its versions, scans, writes and indexes), open_dataset
// and write_stream. The GIL is released wherever C++ reads, decodes or writes.
#include <cctype>
#include <map>
#include <sstream>

#include "bindings.h"

namespace lancelet::python {

namespace {

// The dataset's writes, its indexes, and what `lancelet inspect` shows.
void DefineDatasetChanges(py::class_<PyDataset>& dataset) {
  dataset
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
      // pylance's create_index: index_type BTREE, BITMAP, IVF_FLAT or IVF_PQ; the vector
      // parameters under pylance's names (metric is its distance type).
      .def("create_index", [](const PyDataset& d, const std::string& column, const std::string& index_type,
                              const std::string& name, bool replace, uint32_t num_partitions,
                              uint32_t num_sub_vectors, uint32_t num_bits, const std::string& metric,
                              uint32_t sample_rate, uint32_t max_iterations) {
        std::string kind;
        for (char c : index_type) kind += char(std::tolower(static_cast<unsigned char>(c)));
        IndexType type = IndexType::kBTree;
        if (kind == "bitmap") type = IndexType::kBitmap;
        else if (kind == "ivf_flat") type = IndexType::kIvfFlat;
        else if (kind == "ivf_pq") type = IndexType::kIvfPq;
        else if (kind != "btree") ThrowValue("index_type '" + index_type + "': expected BTREE, BITMAP, IVF_FLAT or IVF_PQ");
        VectorIndexOptions options;
        options.num_partitions = num_partitions;
        options.num_sub_vectors = num_sub_vectors;
        options.num_bits = num_bits;
        options.distance = metric;
        options.sample_rate = sample_rate;
        options.max_iterations = max_iterations;
        py::gil_scoped_release release;
        return PyDataset{d.ds->CreateIndex(column, type, options, name, replace)};
      }, py::arg("column"), py::arg("index_type") = "BTREE", py::arg("name") = "", py::arg("replace") = false,
         py::arg("num_partitions") = 0, py::arg("num_sub_vectors") = 0, py::arg("num_bits") = 8,
         py::arg("metric") = "l2", py::arg("sample_rate") = 256, py::arg("max_iterations") = 50)
      .def("list_indices", [](const PyDataset& d) {
        py::list out;
        for (const auto& i : d.ds->ListIndices()) {
          py::dict row;
          row["name"] = i.name;
          row["type"] = i.type;
          row["columns"] = i.columns;
          row["dataset_version"] = i.dataset_version;
          if (!i.distance.empty()) {
            row["num_partitions"] = i.partitions;
            row["metric"] = i.distance;
            if (i.bits) {
              row["num_sub_vectors"] = i.sub_vectors;
              row["num_bits"] = i.bits;
            }
          }
          out.append(row);
        }
        return out;
      })
      .def("optimize", [](const PyDataset& d) {
        py::gil_scoped_release release;
        return PyDataset{d.ds->Optimize()};
      }, "Folds overlays, merges small fragments and refreshes indexes (lancelet optimize).")
      .def("inspect", [](const PyDataset& d) {
        py::gil_scoped_release release;
        return d.ds->Inspect();
      }, "What `lancelet inspect` prints: fragments, files, overlays, deletions, indexes.")
      .def("__repr__", [](const PyDataset& d) {
        return "lancelet.Dataset('" + d.ds->uri() + "', version " + std::to_string(d.ds->version()) + ")";
      });
}

// Schema changes: columns added, dropped, renamed or re-nulled (pylance's names).
void DefineSchemaChanges(py::class_<PyDataset>& dataset) {
  dataset
      .def("add_columns", [](const PyDataset& d, const std::map<std::string, std::string>& transforms) {
        std::vector<Dataset::NewColumn> columns;
        for (const auto& [name, expression] : transforms) columns.push_back({name, expression});
        py::gil_scoped_release release;
        return PyDataset{d.ds->AddColumns(columns)};
      }, py::arg("transforms"),
         "add_columns({\"c\": \"a * 2\"}), as pylance: new columns from SQL expressions over the others, in a "
         "new data file per fragment (no existing file rewritten).")
      .def("drop_columns", [](const PyDataset& d, const std::vector<std::string>& columns) {
        py::gil_scoped_release release;
        return PyDataset{d.ds->DropColumns(columns)};
      }, py::arg("columns"),
         "The dataset without these columns (\"s.a\" for a nested one): a schema change, no data rewritten; "
         "indexes on them are dropped.")
      .def("alter_columns", [](const PyDataset& d, py::args alterations) {
        std::vector<Dataset::ColumnAlteration> changes;
        for (const auto& a : alterations) {
          const py::dict change = a.cast<py::dict>();
          Dataset::ColumnAlteration c;
          for (const auto& [key, value] : change) {
            const std::string k = key.cast<std::string>();
            if (k == "path") c.column = value.cast<std::string>();
            else if (k == "name") c.rename = value.cast<std::string>();
            else if (k == "nullable") c.nullable = value.cast<bool>();
            else ThrowInvalid("alter_columns: unknown key '{}' (path, name, nullable)", k);
          }
          if (c.column.empty()) ThrowInvalid("alter_columns: each alteration needs a \"path\"");
          changes.push_back(std::move(c));
        }
        py::gil_scoped_release release;
        return PyDataset{d.ds->AlterColumns(changes)};
      }, "alter_columns({\"path\": \"a\", \"name\": \"b\", \"nullable\": True}, ...), as pylance: "
         "renames and nullability, no data rewritten.");
}

void DefineOpenAndWrite(py::module_& m) {
  m.def("open_dataset", [](const std::string& uri, std::optional<uint64_t> version, StorageOptions storage_options) {
    OpenOptions options;
    options.storage_options = std::move(storage_options);
    py::gil_scoped_release release;
    return PyDataset{Dataset::Open(uri, version, options)};
  }, py::arg("uri"), py::arg("version") = py::none(), py::arg("storage_options") = StorageOptions());

  m.def("write_stream", [](py::capsule stream, const std::string& uri, const std::string& mode,
                           std::optional<int64_t> max_rows_per_file, const std::optional<std::string>& file_version,
                           bool stable_row_ids, StorageOptions storage_options) {
    WriteOptions options;
    options.storage_options = std::move(storage_options);
    if (mode == "create") options.mode = WriteMode::kCreate;
    else if (mode == "append") options.mode = WriteMode::kAppend;
    else if (mode == "overwrite") options.mode = WriteMode::kOverwrite;
    else ThrowValue("mode '" + mode + "': expected create, append or overwrite");
    if (max_rows_per_file) options.max_rows_per_file = *max_rows_per_file;
    if (file_version) options.file_version = *file_version;
    options.enable_stable_row_ids = stable_row_ids;
    auto reader = ImportArrayStream(CapsulePointer<ArrowArrayStream>(stream, "arrow_array_stream"));
    py::gil_scoped_release release;
    if (options.mode != WriteMode::kAppend) return PyDataset{Dataset::Write(uri, *reader, options)};
    OpenOptions open;
    open.storage_options = options.storage_options;
    return PyDataset{Dataset::Open(uri, std::nullopt, open)->Append(*reader, options)};
  }, py::arg("stream"), py::arg("uri"), py::arg("mode"), py::arg("max_rows_per_file"), py::arg("data_storage_version"),
     py::arg("enable_stable_row_ids"), py::arg("storage_options") = StorageOptions());
}

}  // namespace

void RegisterDataset(py::module_& m) {
  py::class_<PyDataset> dataset(m, "Dataset", "One version of a Lance dataset. Writes return the new version as a new Dataset.");
  dataset
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
      });
  DefineDatasetScans(dataset);
  DefineDatasetChanges(dataset);
  DefineSchemaChanges(dataset);
  DefineOpenAndWrite(m);
}

}  // namespace lancelet::python
