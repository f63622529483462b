// Dataset (one version of a dataset: its versions, scans, writes and indexes), open_dataset
// and write_stream. The GIL is released wherever C++ reads, decodes or writes.
#include <cctype>
#include <map>
#include <sstream>

#include "bindings.h"
#include "lancelet/fragments.h"
#include "lancelet/merge_insert.h"

namespace lancelet::python {

namespace {

// Runs a write on `self`'s version without the GIL and moves `self` to the version it
// committed: pylance's handles follow their own writes. The handle's pointer is read and
// replaced only with the GIL held, so that a thread reading through the same handle
// (which copies the pointer before releasing the GIL) never sees it change under it.
template <typename Write>
void MoveTo(PyDataset& d, Write write) {
  d.ds = WithoutGil(d, write);
}
template <typename Write>
void MoveTo(py::handle self, Write write) {
  MoveTo(self.cast<PyDataset&>(), write);
}

// Python's (column, SQL expression) pairs, a dict or a list, as an UPDATE's SET clauses.
template <typename Pairs>
std::vector<Dataset::SetClause> SetClausesOf(const Pairs& pairs) {
  std::vector<Dataset::SetClause> out;
  for (const auto& [column, expression] : pairs) out.push_back({column, expression});
  return out;
}

py::dict OptimizeStatsDict(const OptimizeStats& stats) {
  py::dict out;
  out["fragments_removed"] = stats.fragments_removed;
  out["fragments_added"] = stats.fragments_added;
  out["fragments_folded"] = stats.fragments_folded;
  out["fragments_merged"] = stats.fragments_merged;
  out["overlays_removed"] = stats.overlays_removed;
  out["rows_deleted_materialized"] = stats.rows_deleted_materialized;
  out["bytes_written"] = stats.bytes_written;
  out["indexes_optimized"] = stats.indexes_optimized;
  return out;
}

// Compaction, index upkeep and cleanup; lancelet/__init__.py gives them pylance's names
// (optimize.compact_files, optimize.optimize_indices, cleanup_old_versions).
void DefineMaintenance(py::class_<PyDataset>& dataset) {
  dataset
      .def("_optimize", [](py::object self, std::optional<uint64_t> target_rows_per_fragment,
                           bool materialize_deletions, double materialize_deletions_threshold, bool optimize_indices) {
        OptimizeOptions options;
        if (target_rows_per_fragment) options.target_rows_per_fragment = *target_rows_per_fragment;
        options.materialize_deletions = materialize_deletions;
        options.materialize_deletions_threshold = materialize_deletions_threshold;
        options.optimize_indices = optimize_indices;
        OptimizeStats stats;
        MoveTo(self, [&](const DatasetPtr& ds) { return ds->Optimize(options, &stats); });
        return OptimizeStatsDict(stats);
      }, py::arg("target_rows_per_fragment") = py::none(), py::arg("materialize_deletions") = true,
         py::arg("materialize_deletions_threshold") = 0.1, py::arg("optimize_indices") = true)
      .def("_optimize_indices", [](py::object self) {
        MoveTo(self, [](const DatasetPtr& ds) { return ds->OptimizeIndices(); });
      })
      .def("drop_index", [](py::object self, const std::string& name) {
        MoveTo(self, [&](const DatasetPtr& ds) { return ds->DropIndex(name); });
      }, py::arg("name"), "Drops the index `name` and moves this handle to the version without it (pylance's drop_index).")
      .def("_cleanup", [](const PyDataset& d, std::optional<int64_t> older_than_seconds,
                          std::optional<uint64_t> keep_versions, bool delete_unverified, bool dry_run, bool force) {
        CleanupOptions options;
        options.older_than_seconds = older_than_seconds;
        options.keep_versions = keep_versions;
        options.delete_unverified = delete_unverified;
        options.dry_run = dry_run;
        options.force = force;
        const auto stats = WithoutGil(d, [&](const DatasetPtr& ds) { return ds->Cleanup(options); });
        py::dict out;
        out["old_versions"] = stats.versions_removed;
        out["versions_kept_recent"] = stats.versions_kept_recent;
        out["files_removed"] = stats.files_removed;
        out["bytes_removed"] = stats.bytes_freed;
        out["uploads_aborted"] = stats.uploads_aborted;
        return out;
      }, py::arg("older_than_seconds"), py::arg("keep_versions"), py::arg("delete_unverified"), py::arg("dry_run"),
         py::arg("force"))
      .def("_move_to_latest", [](py::object self) {
        MoveTo(self, [](const DatasetPtr& ds) { return ds->Latest(); });
      })
      .def("_fragments", [](const PyDataset& d) {
        const auto plan = WithoutGil(d, [&](const DatasetPtr& ds) { return ds->PlanOptimize(); });
        py::list out;
        for (const auto& f : plan) {
          py::dict row;
          row["fragment_id"] = f.fragment_id;
          row["physical_rows"] = f.physical_rows;
          row["num_deletions"] = f.deleted_rows;
          row["overlays"] = f.overlays;
          out.append(row);
        }
        return out;
      })
      .def("_config", [](const PyDataset& d) { return d.ds->Config(); })
      .def("_pinned", [](const PyDataset& d) { return PyDataset{d.ds}; },
           "A second handle on this handle's version (no I/O), which this handle's writes do not move.");
}

// Building and listing indexes (pylance's names).
// create_index's vector parameters under pylance's names (metric is the distance).
VectorIndexOptions VectorOptions(uint32_t num_partitions, uint32_t num_sub_vectors, uint32_t num_bits,
                                 const std::string& metric, uint32_t sample_rate, uint32_t max_iterations) {
  VectorIndexOptions options;
  options.num_partitions = num_partitions;
  options.num_sub_vectors = num_sub_vectors;
  options.num_bits = num_bits;
  options.distance = metric;
  options.sample_rate = sample_rate;
  options.max_iterations = max_iterations;
  return options;
}

// pylance's index_type names, in any case.
IndexType ParseIndexType(const std::string& index_type) {
  if (auto type = IndexTypeNamed(index_type)) return *type;
  ThrowValue("index_type '" + index_type + "': expected BTREE, BITMAP, IVF_FLAT or IVF_PQ");
}

void DefineIndexes(py::class_<PyDataset>& dataset) {
  dataset
      // pylance's create_index: index_type BTREE, BITMAP, IVF_FLAT or IVF_PQ; the vector
      // parameters under pylance's names (metric is its distance type).
      .def("create_index", [](py::object self, const std::string& column, const std::string& index_type,
                              const std::string& name, bool replace, uint32_t num_partitions,
                              uint32_t num_sub_vectors, uint32_t num_bits, const std::string& metric,
                              uint32_t sample_rate, uint32_t max_iterations) {
        const IndexType type = ParseIndexType(index_type);
        const VectorIndexOptions options =
            VectorOptions(num_partitions, num_sub_vectors, num_bits, metric, sample_rate, max_iterations);
        MoveTo(self, [&](const DatasetPtr& ds) { return ds->CreateIndex(column, type, options, name, replace); });
        return self;
      }, py::arg("column"), py::arg("index_type") = "BTREE", py::arg("name") = "", py::arg("replace") = false,
         py::arg("num_partitions") = 0, py::arg("num_sub_vectors") = 0, py::arg("num_bits") = 8,
         py::arg("metric") = "l2", py::arg("sample_rate") = 256, py::arg("max_iterations") = 50,
         "Builds an index on `column` (BTREE, BITMAP, IVF_FLAT or IVF_PQ; the vector parameters under "
         "pylance's names), moves this handle to the version holding it and returns this dataset, as pylance.")
      .def("list_indices", [](const PyDataset& d) {
        py::list out;
        for (const auto& i : d.ds->ListIndices()) {
          py::dict row;
          row["name"] = i.name;
          row["type"] = i.type;
          row["columns"] = i.columns;
          row["fields"] = i.columns;  // pylance's name
          row["dataset_version"] = i.dataset_version;
          row["version"] = i.dataset_version;  // pylance's name
          row["segments"] = i.segments;
          row["indexed_fragments"] = i.indexed_fragments;
          row["unindexed_fragments"] = i.unindexed_fragments;
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
      }, "[{name, type, fields, version, segments, indexed_fragments, unindexed_fragments}] of the indexes, as "
         "pylance's list_indices; vector indexes add "
         "num_partitions, metric and the PQ parameters.");
}

// The dataset's row writes, and what `lancelet inspect` shows.
void DefineDatasetChanges(py::class_<PyDataset>& dataset) {
  dataset
      .def("_update", [](PyDataset& d, const std::map<std::string, std::string>& values,
                         const std::optional<std::string>& where, const std::string& mode) {
        const std::vector<Dataset::SetClause> set = SetClausesOf(values);
        const UpdateMode parsed = ParseUpdateMode(mode, "mode");
        uint64_t rows = 0;
        MoveTo(d, [&](const DatasetPtr& ds) { return ds->Update(set, where.value_or(""), &rows, parsed); });
        py::dict out;
        out["num_rows_updated"] = rows;
        return out;
      }, py::arg("values"), py::arg("where") = py::none(), py::arg("mode") = "auto")
      // MergeInsertBuilder.execute: the source stream read against this version's schema,
      // one commit, this handle moved to the version written.
      .def("_merge_insert", [](PyDataset& d, py::capsule stream, const std::vector<std::string>& on,
                               bool update_all, const std::optional<std::string>& matched_condition, bool insert_all,
                               bool by_source_delete, const std::optional<std::string>& by_source_condition) {
        MergeInsertOptions options;
        options.on = on;
        options.when_matched_update_all = update_all;
        options.matched_condition = matched_condition.value_or("");
        options.when_not_matched_insert_all = insert_all;
        options.when_not_matched_by_source_delete = by_source_delete;
        options.by_source_condition = by_source_condition.value_or("");
        auto reader = ImportArrayStream(CapsulePointer<ArrowArrayStream>(stream, "arrow_array_stream"));
        MergeInsertResult result;
        MoveTo(d, [&](const DatasetPtr& ds) {
          result = MergeInsert(ds, *reader, options);
          return result.dataset;
        });
        py::dict out;
        out["num_inserted_rows"] = result.inserted;
        out["num_updated_rows"] = result.updated;
        out["num_deleted_rows"] = result.deleted;
        return out;
      }, py::arg("stream"), py::arg("on"), py::arg("update_all"), py::arg("matched_condition"), py::arg("insert_all"),
         py::arg("by_source_delete"), py::arg("by_source_condition"))
      .def("delete", [](PyDataset& d, const std::string& where) {
        uint64_t rows = 0;
        MoveTo(d, [&](const DatasetPtr& ds) { return ds->Delete(where, &rows); });
        py::dict out;
        out["num_deleted_rows"] = rows;
        return out;
      }, py::arg("predicate"),
         "Deletes the rows where `predicate` (SQL) holds and moves this handle to the version written; "
         "returns {\"num_deleted_rows\": n}, as pylance 14.")
      .def("inspect", [](const PyDataset& d) {
        return WithoutGil(d, [&](const DatasetPtr& ds) { return ds->Inspect(); });
      }, "What `lancelet inspect` prints: fragments, files, overlays, deletions, indexes.")
      .def("__repr__", [](const PyDataset& d) {
        return "lancelet.Dataset('" + d.ds->uri() + "', version " + std::to_string(d.ds->version()) + ")";
      });
}

// Schema changes: columns added, dropped, renamed or re-nulled (pylance's names).
void DefineSchemaChanges(py::class_<PyDataset>& dataset) {
  dataset
      .def("add_columns", [](py::object self, const std::map<std::string, std::string>& transforms) {
        std::vector<Dataset::NewColumn> columns;
        for (const auto& [name, expression] : transforms) columns.push_back({name, expression});
        MoveTo(self, [&](const DatasetPtr& ds) { return ds->AddColumns(columns); });
        return self;
      }, py::arg("transforms"),
         "add_columns({\"c\": \"a * 2\"}), as pylance: new columns from SQL expressions over the others, in a "
         "new data file per fragment (no existing file rewritten). Moves this handle to the new version and "
         "returns it.")
      .def("drop_columns", [](py::object self, const std::vector<std::string>& columns) {
        MoveTo(self, [&](const DatasetPtr& ds) { return ds->DropColumns(columns); });
        return self;
      }, py::arg("columns"),
         "The dataset without these columns (\"s.a\" for a nested one): a schema change, no data rewritten; "
         "indexes on them are dropped. Moves this handle to the new version and returns it.")
      .def("alter_columns", [](py::object self, py::args alterations) {
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
        MoveTo(self, [&](const DatasetPtr& ds) { return ds->AlterColumns(changes); });
        return self;
      }, "alter_columns({\"path\": \"a\", \"name\": \"b\", \"nullable\": True}, ...), as pylance: "
         "renames and nullability, no data rewritten. Moves this handle to the new version and returns it.");
}

// restore() and the tag calls behind ds.tags (python/lancelet/_dataset.py: Tags).
void DefineVersionNames(py::class_<PyDataset>& dataset) {
  dataset
      .def("restore", [](py::object self) { MoveTo(self, [](const DatasetPtr& ds) { return ds->Restore(); }); },
           "Makes this handle's version the latest again (a new version holding its content) and moves the "
           "handle there, as pylance's restore().")
      .def("_tags", [](const PyDataset& d) {
        const auto tags = WithoutGil(d, [&](const DatasetPtr& ds) { return ds->ListTags(); });
        py::dict out;
        for (const auto& t : tags) {
          py::dict tag;
          tag["branch"] = py::none();
          tag["version"] = t.version;
          tag["manifest_size"] = t.manifest_size;
          tag["metadata"] = py::dict();
          out[py::str(t.name)] = tag;
        }
        return out;
      })
      .def("_tag_version", [](const PyDataset& d, const std::string& name) {
        return WithoutGil(d, [&](const DatasetPtr& ds) { return ds->CheckoutTag(name)->version(); });
      })
      .def("_create_tag", [](const PyDataset& d, const std::string& name, uint64_t version) {
        WithoutGil(d, [&](const DatasetPtr& ds) { ds->CreateTag(name, version); });
      })
      .def("_update_tag", [](const PyDataset& d, const std::string& name, uint64_t version) {
        WithoutGil(d, [&](const DatasetPtr& ds) { ds->UpdateTag(name, version); });
      })
      .def("_delete_tag", [](const PyDataset& d, const std::string& name) {
        WithoutGil(d, [&](const DatasetPtr& ds) { ds->DeleteTag(name); });
      });
}

void DefineOpenAndWrite(py::module_& m) {
  m.def("open_dataset", [](const std::string& uri, std::optional<uint64_t> version, StorageOptions storage_options) {
    OpenOptions options;
    options.storage_options = std::move(storage_options);
    py::gil_scoped_release release;
    return PyDataset{Dataset::Open(uri, version, options)};
  }, py::arg("uri"), py::arg("version") = py::none(), py::arg("storage_options") = StorageOptions());
  m.def("open_dataset_tag", [](const std::string& uri, const std::string& tag, StorageOptions storage_options) {
    OpenOptions options;
    options.storage_options = std::move(storage_options);
    py::gil_scoped_release release;
    return PyDataset{Dataset::OpenTag(uri, tag, options)};
  }, py::arg("uri"), py::arg("tag"), py::arg("storage_options") = StorageOptions());

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

// lancelet/fragments.h; fragments and overlay groups cross as JSON (lancelet/_fragments.py).
// Compaction and index builds as tasks: plans and tasks cross processes as JSON text,
// commit parts as bytes (lancelet/optimize.py wraps them in pylance's shapes).
void DefineDistributedTasks(py::module_& m) {
  m.def("plan_compaction", [](const PyDataset& d, std::optional<uint64_t> target_rows_per_fragment,
                              bool materialize_deletions, double materialize_deletions_threshold) {
    OptimizeOptions options;
    if (target_rows_per_fragment) options.target_rows_per_fragment = *target_rows_per_fragment;
    options.materialize_deletions = materialize_deletions;
    options.materialize_deletions_threshold = materialize_deletions_threshold;
    std::vector<std::string> out;
    for (const CompactionTask& t : PlanCompactionTasks(d.ds, options)) out.push_back(t.ToJson());
    return out;
  }, py::arg("dataset"), py::arg("target_rows_per_fragment"), py::arg("materialize_deletions"),
     py::arg("materialize_deletions_threshold"));
  m.def("execute_compaction_task", [](const PyDataset& d, const std::string& task) {
    const CompactionTask parsed = CompactionTask::FromJson(task);
    std::string part;
    {
      py::gil_scoped_release release;
      part = ExecuteCompactionTask(d.ds, parsed);
    }
    return py::bytes(part);
  }, py::arg("dataset"), py::arg("task"));
  m.def("commit_compaction", [](const std::string& uri, uint64_t read_version, const std::vector<std::string>& parts,
                                bool optimize_indices, StorageOptions storage_options) {
    OptimizeOptions options;
    options.optimize_indices = optimize_indices;
    WriteOptions write;
    write.storage_options = std::move(storage_options);
    OptimizeStats stats;
    DatasetPtr ds;
    {
      py::gil_scoped_release release;
      ds = CommitCompaction(uri, read_version, parts, options, &stats, write);
    }
    return py::make_tuple(PyDataset{ds}, OptimizeStatsDict(stats));
  }, py::arg("uri"), py::arg("read_version"), py::arg("parts"), py::arg("optimize_indices"),
     py::arg("storage_options") = StorageOptions());
  m.def("compaction_task_json", [](const std::string& json) { return CompactionTask::FromJson(json).ToJson(); },
        py::arg("json"), "The compaction task JSON checked.");
  m.def("index_task_json", [](const std::string& json) { return IndexTask::FromJson(json).ToJson(); },
        py::arg("json"), "The index task JSON checked.");
  m.def("plan_index_tasks", [](const PyDataset& d, const std::string& column, const std::string& index_type,
                               size_t num_tasks, const std::string& name, uint32_t num_partitions,
                               uint32_t num_sub_vectors, uint32_t num_bits, const std::string& metric,
                               uint32_t sample_rate, uint32_t max_iterations) {
    const VectorIndexOptions options =
        VectorOptions(num_partitions, num_sub_vectors, num_bits, metric, sample_rate, max_iterations);
    std::vector<std::string> out;
    for (const IndexTask& t : PlanIndexTasks(d.ds, column, ParseIndexType(index_type), num_tasks, name, options))
      out.push_back(t.ToJson());
    return out;
  }, py::arg("dataset"), py::arg("column"), py::arg("index_type"), py::arg("num_tasks"), py::arg("name") = "",
     py::arg("num_partitions") = 0, py::arg("num_sub_vectors") = 0, py::arg("num_bits") = 8, py::arg("metric") = "l2",
     py::arg("sample_rate") = 256, py::arg("max_iterations") = 50);
  m.def("build_index_segment", [](const PyDataset& d, const std::string& task, const std::string& model) {
    const IndexTask parsed = IndexTask::FromJson(task);
    std::string part;
    {
      py::gil_scoped_release release;
      part = BuildIndexSegment(d.ds, parsed, model);
    }
    return py::bytes(part);
  }, py::arg("dataset"), py::arg("task"), py::arg("model") = std::string());
  m.def("merge_index_segments", [](const PyDataset& d, const std::vector<std::string>& parts) {
    std::string part;
    {
      py::gil_scoped_release release;
      part = MergeIndexSegments(d.ds, parts);
    }
    return py::bytes(part);
  }, py::arg("dataset"), py::arg("parts"));
  m.def("commit_index_segments", [](const std::string& uri, uint64_t read_version,
                                    const std::vector<std::string>& parts, bool replace,
                                    StorageOptions storage_options) {
    WriteOptions write;
    write.storage_options = std::move(storage_options);
    py::gil_scoped_release release;
    return PyDataset{CommitIndexSegments(uri, read_version, parts, replace, write)};
  }, py::arg("uri"), py::arg("read_version"), py::arg("parts"), py::arg("replace"),
     py::arg("storage_options") = StorageOptions());
}

// lancelet.commit: the fragments, deletions or overlay groups of one operation, as JSON,
// published in one version.
void DefineCommit(py::module_& m) {
  m.def("commit", [](const std::string& uri, const std::string& kind, const std::vector<std::string>& items,
                     std::optional<py::capsule> schema, std::optional<uint64_t> read_version,
                     StorageOptions storage_options,
                     const std::optional<std::vector<std::pair<std::string, std::string>>>& update_set,
                     const std::string& update_where, const std::vector<uint64_t>& deleted_fragment_ids,
                     const std::vector<std::string>& new_fragments) {
    Operation op;
    auto parse = [](const std::vector<std::string>& texts) {
      std::vector<FragmentMetadata> out;
      for (const std::string& json : texts) out.push_back(FragmentMetadata::FromJson(json));
      return out;
    };
    if (kind == "update") {
      std::optional<std::pair<std::vector<Dataset::SetClause>, std::string>> update;
      if (update_set) update.emplace(SetClausesOf(*update_set), update_where);
      op = Operation::Update(deleted_fragment_ids, parse(items), parse(new_fragments), std::move(update));
    } else if (kind == "delete") {
      op = Operation::Delete(parse(items), deleted_fragment_ids, update_where);
    } else if (kind == "data_overlay") {
      std::vector<OverlayGroupMetadata> groups;
      for (const std::string& json : items) groups.push_back(OverlayGroupMetadata::FromJson(json));
      op = update_set ? Operation::UpdateOverlays(std::move(groups), SetClausesOf(*update_set), update_where)
                      : Operation::DataOverlay(std::move(groups));
    } else {
      std::vector<FragmentMetadata> parsed = parse(items);
      if (kind == "append") op = Operation::Append(std::move(parsed));
      else if (kind == "overwrite" && schema)
        op = Operation::Overwrite(ImportSchema(CapsulePointer<ArrowSchema>(*schema, "arrow_schema")), std::move(parsed));
      else ThrowValue("operation '" + kind + "': expected append, overwrite with a schema, delete, update or data_overlay");
    }
    WriteOptions options;
    options.storage_options = std::move(storage_options);
    py::gil_scoped_release release;
    return PyDataset{CommitOperation(uri, op, read_version, options)};
  }, py::arg("uri"), py::arg("kind"), py::arg("items"), py::arg("schema"), py::arg("read_version"),
     py::arg("storage_options") = StorageOptions(), py::arg("update_set") = py::none(), py::arg("update_where") = "",
     py::arg("deleted_fragment_ids") = std::vector<uint64_t>(), py::arg("new_fragments") = std::vector<std::string>());
}

void DefineFragments(py::module_& m) {
  m.def("write_fragments", [](py::capsule stream, const std::string& uri, const std::string& mode,
                              std::optional<int64_t> max_rows_per_file, const std::optional<std::string>& file_version,
                              StorageOptions storage_options) {
    WriteOptions options;
    options.storage_options = std::move(storage_options);
    if (mode == "overwrite") options.mode = WriteMode::kOverwrite;
    else if (mode == "append" || mode == "create") options.mode = WriteMode::kAppend;
    else ThrowValue("mode '" + mode + "': expected append, create or overwrite");
    if (max_rows_per_file) options.max_rows_per_file = *max_rows_per_file;
    if (file_version) options.file_version = *file_version;
    auto reader = ImportArrayStream(CapsulePointer<ArrowArrayStream>(stream, "arrow_array_stream"));
    std::vector<std::string> out;
    {
      py::gil_scoped_release release;
      for (const FragmentMetadata& f : WriteFragments(uri, *reader, options)) out.push_back(f.ToJson());
    }
    return out;
  }, py::arg("stream"), py::arg("uri"), py::arg("mode"), py::arg("max_rows_per_file"), py::arg("data_storage_version"),
     py::arg("storage_options") = StorageOptions());
  m.def("fragment_json", [](const std::string& json) { return FragmentMetadata::FromJson(json).ToJson(); },
        py::arg("json"), "The fragment JSON checked and in the reference's shape.");
  m.def(
      "overlay_group_json",
      [](const std::string& json, bool lists) {
        return OverlayGroupMetadata::FromJson(json).ToJson(lists ? OverlayGroupMetadata::OffsetForm::kLists
                                                                 : OverlayGroupMetadata::OffsetForm::kCompact);
      },
      py::arg("json"), py::arg("lists") = false,
      "The overlay group JSON checked, its offsets compact (base64 Roaring bitmaps) or as lists.");
  m.def("write_update_overlays", [](const PyDataset& d, const std::vector<uint64_t>& fragment_ids,
                                    const std::vector<std::pair<std::string, std::string>>& set,
                                    const std::string& where) {
    const std::vector<Dataset::SetClause> clauses = SetClausesOf(set);
    const DatasetPtr ds = d.ds;
    std::vector<std::string> out;
    {
      py::gil_scoped_release release;
      for (const OverlayGroupMetadata& g : WriteUpdateOverlays(ds, fragment_ids, clauses, where))
        out.push_back(g.ToJson());
    }
    return out;
  }, py::arg("dataset"), py::arg("fragment_ids"), py::arg("set"), py::arg("where"));
  m.def("fragment_metadata", [](const PyDataset& d, uint64_t id) { return FragmentMetadataOf(d.ds, id).ToJson(); },
        py::arg("dataset"), py::arg("fragment_id"));
  m.def("write_deletions", [](const PyDataset& d, const std::vector<uint64_t>& fragment_ids,
                              const std::string& predicate) {
    const DatasetPtr ds = d.ds;
    Deletions found;
    {
      py::gil_scoped_release release;
      found = WriteDeletions(ds, fragment_ids, predicate);
    }
    std::vector<std::string> updated;
    for (const FragmentMetadata& f : found.updated_fragments) updated.push_back(f.ToJson());
    return py::make_tuple(updated, found.deleted_fragment_ids, found.rows_deleted);
  }, py::arg("dataset"), py::arg("fragment_ids"), py::arg("predicate"));
  DefineCommit(m);
  DefineDistributedTasks(m);
}


}  // namespace

void RegisterDataset(py::module_& m) {
  py::class_<PyDataset> dataset(m, "Dataset", "A handle on a Lance dataset at one version. As pylance's, a write moves the handle it is called on to the version it committed.");
  dataset
      .def_property_readonly("uri", [](const PyDataset& d) { return d.ds->uri(); }, "Where the dataset lives.")
      .def_property_readonly("version", [](const PyDataset& d) { return d.ds->version(); },
                             "The version this handle reads (writes move it to the version they commit).")
      .def_property_readonly("lance_schema", [](const PyDataset& d) { return PySchema{d.ds->schema()}; },
                             "The columns as a lancelet.Schema (types as lancelet writes them), with or without pyarrow.")
      .def("versions", [](const PyDataset& d) {
        const auto versions = WithoutGil(d, [&](const DatasetPtr& ds) { return ds->ListVersions(); });
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
        return WithoutGil(d, [&](const DatasetPtr& ds) { return PyDataset{ds->Checkout(version)}; });
      }, py::arg("version"), "A new handle on `version` (checkout_version is pylance's name).")
      .def("latest", [](const PyDataset& d) {
        return WithoutGil(d, [&](const DatasetPtr& ds) { return PyDataset{ds->Latest()}; });
      }, "A new handle on the newest version.");
  DefineDatasetScans(dataset);
  DefineDatasetChanges(dataset);
  DefineIndexes(dataset);
  DefineSchemaChanges(dataset);
  DefineMaintenance(dataset);
  DefineVersionNames(dataset);
  DefineOpenAndWrite(m);
  DefineFragments(m);
}

}  // namespace lancelet::python
