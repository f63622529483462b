// ShardedDataset: the training-data shard view (include/lancelet/loader.h) behind
// lancelet.loader.
#include "bindings.h"
#include "lancelet/loader.h"

namespace lancelet::python {

void RegisterLoader(py::module_& m) {
  py::class_<ShardedDataset, std::shared_ptr<ShardedDataset>>(m, "ShardedDataset", "See lancelet.loader.")
      .def_static("from_path", [](const std::string& path, const std::optional<std::vector<std::string>>& columns,
                                  size_t metadata_cache_entries, StorageOptions storage_options, uint64_t shard_rows,
                                  uint64_t num_shards, uint64_t min_shard_rows) {
        LoaderOptions options;
        options.columns = OptionalColumns(columns);
        options.metadata_cache_entries = metadata_cache_entries;
        options.storage_options = std::move(storage_options);
        options.shard_rows = shard_rows;
        options.num_shards = num_shards;
        options.min_shard_rows = min_shard_rows;
        py::gil_scoped_release release;
        return ShardedDataset::FromPath(path, options);
      }, py::arg("path"), py::arg("columns") = py::none(), py::arg("metadata_cache_entries") = 256,
         py::arg("storage_options") = StorageOptions(), py::arg("shard_rows") = 0, py::arg("num_shards") = 0,
         py::arg("min_shard_rows") = 1)
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
}

}  // namespace lancelet::python
