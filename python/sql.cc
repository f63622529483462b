// sql(db_dir, statement): one statement in a fresh session over a directory of datasets;
// rows come back as a RecordBatch, anything else as its message.
#include "bindings.h"
#include "lancelet/sql.h"

namespace lancelet::python {

void RegisterSql(py::module_& m) {
  m.def("sql", [](const std::string& db_dir, const std::string& statement, StorageOptions storage_options) -> py::object {
    SqlResult result;
    {
      py::gil_scoped_release release;
      SqlSession session(db_dir, std::move(storage_options));
      result = session.Execute(statement);
    }
    if (result.rows) return py::cast(PyBatch{result.rows});
    return py::str(result.message);
  }, py::arg("db_dir"), py::arg("statement"), py::arg("storage_options") = StorageOptions());
}

}  // namespace lancelet::python
