// The compiled half of the Python package (python/lancelet/__init__.py is the other):
// Dataset, Schema, RecordBatch and RecordBatchReader over the C++ API, values to and from
// Python objects, numpy views, the Arrow PyCapsule interface, and lancelet's errors as
// Python exceptions. Each area is a file of this folder with a registration function
// (bindings.h); the GIL is released wherever C++ reads, decodes or writes.
#include "bindings.h"

using namespace lancelet::python;

// Types first, in the order their bindings name them: a signature names only types
// registered before it.
PYBIND11_MODULE(_lancelet, m) {
  m.doc() = "lancelet's compiled core; import lancelet instead";
  RegisterErrors(m);
  RegisterSchemaAndBatch(m);
  RegisterRecordBatchReader(m);
  RegisterDataset(m);
  RegisterLoader(m);
  RegisterBatchInputs(m);
  RegisterSql(m);
}
