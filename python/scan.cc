// Reading rows: Dataset's count_rows, scanner and take, and the RecordBatchReader a scan
// returns (iterated from Python, or handed on whole through the Arrow PyCapsule interface).
#include <set>

#include "bindings.h"

#include "lancelet/vector_search.h"

namespace lancelet::python {
namespace {

VectorQuery QueryOf(const std::vector<double>& vector, const std::optional<std::string>& column, int64_t k,
                    const std::optional<std::string>& where, const std::optional<std::string>& distance,
                    bool postfilter, std::optional<int64_t> nprobes, std::optional<int64_t> refine_factor,
                    bool exact) {
  VectorQuery query;
  query.vector = vector;
  query.column = column.value_or("");
  query.k = k;
  query.filter = where.value_or("");
  if (distance) query.distance = ParseDistanceType(*distance);
  query.postfilter = postfilter;
  query.nprobes = nprobes;
  query.refine_factor = refine_factor;
  query.exact = exact;
  return query;
}

}  // namespace

void DefineDatasetScans(py::class_<PyDataset>& dataset) {
  dataset
      .def("count_rows", [](const PyDataset& d, const std::optional<std::string>& filter) {
        return WithoutGil(d, [&](const DatasetPtr& ds) { return ds->CountRows(filter.value_or("")); });
      }, py::arg("filter") = py::none(), "How many live rows pass `filter` (SQL; None: every row).")
      .def("_scanner", [](const PyDataset& d, const std::optional<std::vector<std::string>>& columns,
                         const std::optional<std::string>& filter, std::optional<int64_t> limit,
                         std::optional<int64_t> offset, std::optional<int64_t> batch_size, bool with_row_id,
                         const std::optional<std::set<uint64_t>>& fragment_ids) {
        ScanBuilder scan = d.ds->NewScan();
        if (columns) scan.Columns(*columns);
        if (filter) scan.Filter(*filter);
        if (limit) scan.Limit(*limit);
        if (offset) scan.Offset(*offset);
        if (batch_size) scan.BatchSize(*batch_size);
        scan.WithRowId(with_row_id);
        ScanSpec spec = scan.spec();
        spec.fragments = fragment_ids;
        std::unique_ptr<RecordBatchReader> reader;
        {
          py::gil_scoped_release release;
          reader = d.ds->Scan(spec);
        }
        SchemaPtr schema = reader->schema();
        return PyReader{std::move(reader), schema};
      }, py::arg("columns") = py::none(), py::arg("filter") = py::none(), py::arg("limit") = py::none(),
         py::arg("offset") = py::none(), py::arg("batch_size") = py::none(), py::arg("with_row_id") = false,
         py::arg("fragment_ids") = py::none(),
         "A RecordBatchReader over the rows that pass `filter` (SQL syntax), with the given columns; with "
         "fragment_ids, only those fragments' rows.")
      .def("search", [](const PyDataset& d, const std::vector<double>& vector, const std::optional<std::string>& column,
                        int64_t k, const std::optional<std::string>& where, const std::optional<std::string>& distance,
                        bool postfilter, const std::optional<std::vector<std::string>>& columns,
                        std::optional<int64_t> nprobes, std::optional<int64_t> refine_factor, bool exact) {
        VectorQuery query = QueryOf(vector, column, k, where, distance, postfilter, nprobes, refine_factor, exact);
        query.columns = columns;
        const DatasetPtr ds = d.ds;
        py::gil_scoped_release release;
        auto reader = ds->Search(query);
        std::vector<RecordBatchPtr> batches;
        while (auto batch = reader->Next()) batches.push_back(batch);
        return PyBatch{RecordBatch::Concatenate(reader->schema(), batches)};
      }, py::arg("vector"), py::arg("column") = py::none(), py::arg("k") = 10, py::arg("where") = py::none(),
         py::arg("distance") = py::none(), py::arg("postfilter") = false, py::arg("columns") = py::none(),
         py::arg("nprobes") = py::none(), py::arg("refine_factor") = py::none(), py::arg("exact") = false,
         "The k rows nearest `vector` as one RecordBatch, nearest first: `columns` "
         "(default: all but the vector column) and _distance. column=None picks the only vector column; "
         "distance is l2 (default; hamming for uint8 vectors), cosine, dot (1 - the inner product) or hamming; "
         "`where` filters first unless postfilter=True. Through the column's IVF_FLAT / IVF_PQ index when it "
         "has one (nprobes partitions probed, default 20; refine_factor re-ranks k * refine_factor candidates "
         "with their own vectors), unless exact=True.")
      .def("explain_search", [](const PyDataset& d, const std::vector<double>& vector,
                                const std::optional<std::string>& column, int64_t k,
                                const std::optional<std::string>& where, const std::optional<std::string>& distance,
                                bool postfilter, std::optional<int64_t> nprobes, std::optional<int64_t> refine_factor,
                                bool exact) {
        const VectorQuery query = QueryOf(vector, column, k, where, distance, postfilter, nprobes, refine_factor, exact);
        return WithoutGil(d, [&](const DatasetPtr& ds) { return ds->ExplainSearch(query); });
      }, py::arg("vector"), py::arg("column") = py::none(), py::arg("k") = 10, py::arg("where") = py::none(),
         py::arg("distance") = py::none(), py::arg("postfilter") = false, py::arg("nprobes") = py::none(),
         py::arg("refine_factor") = py::none(), py::arg("exact") = false,
         "How search() answers the same arguments, as text, found by running it: the index, nprobes and "
         "partitions, the candidates, the rows re-ranked, the stale rows re-scored and the fragments "
         "searched flat; or why every row was scored.")
      .def("_changes", [](const PyDataset& d, uint64_t from_version, std::optional<uint64_t> to_version,
                          const std::optional<std::vector<std::string>>& columns,
                          const std::optional<std::vector<std::string>>& change_types, bool allow_full,
                          std::optional<int64_t> batch_size) {
        ChangesOptions options;
        options.to_version = to_version;
        options.columns = columns;
        if (change_types) options.change_types = *change_types;
        options.allow_full = allow_full;
        if (batch_size) options.batch_size = *batch_size;
        std::unique_ptr<RecordBatchReader> reader;
        {
          py::gil_scoped_release release;
          reader = d.ds->Changes(from_version, options);
        }
        SchemaPtr schema = reader->schema();
        return PyReader{std::move(reader), schema};
      }, py::arg("from_version"), py::arg("to_version") = py::none(), py::arg("columns") = py::none(),
         py::arg("change_types") = py::none(), py::arg("allow_full") = false, py::arg("batch_size") = py::none(),
         "A RecordBatchReader over the change feed (Dataset::Changes).")
      .def("_take", [](const PyDataset& d, const std::vector<uint64_t>& indices,
                      const std::optional<std::vector<std::string>>& columns) {
        return WithoutGil(d, [&](const DatasetPtr& ds) { return PyBatch{ds->Take(indices, OptionalColumns(columns))}; });
      }, py::arg("indices"), py::arg("columns") = py::none(),
         "Rows by position among the live rows, in the order asked (repeats allowed).");
}

void RegisterRecordBatchReader(py::module_& m) {
  py::class_<PyReader>(m, "RecordBatchReader", "A stream of record batches; iterate it, or hand it on through "
                                               "__arrow_c_stream__ (once).")
      .def_property_readonly("schema", [](const PyReader& r) { return PySchema{r.schema}; },
                             "The columns of the batches, a lancelet.Schema.")
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
}

}  // namespace lancelet::python
