// lancelet/fragments.h: compaction and index builds as tasks for workers, and the commits
// that publish their parts.
//
// A part is a serialized lance.table.Transaction holding what one task did: a Rewrite
// with one group, an Update (REWRITE_COLUMNS) with one fragment, or a CreateIndex with one
// new segment; read_version is the version the task ran at. The client merges the parts of
// one kind into one transaction, so a job commits as few versions as Optimize and
// CreateIndex do.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "io/object_store.h"
#include "lancelet/error.h"
#include "lancelet/fragments.h"
#include "lancelet/session.h"
#include "table/attempt_files.h"
#include "table/commit.h"
#include "table/compaction.h"
#include "table/dataset_state.h"
#include "index/index.h"
#include "index/index_builder.h"
#include "index/scalar_index.h"
#include "table/index_build.h"
#include "table/index_section.h"
#include "table/ivf_build.h"
#include "table/manifest_store.h"

namespace lancelet {

namespace {

using Json = nlohmann::ordered_json;

// Reads our own task JSON; a malformed one (hand-edited, truncated) is InvalidArgument
// naming the document and what nlohmann found wrong.
template <typename Read>
auto ReadTaskJson(std::string_view text, const char* what, Read&& read) {
  try {
    return read(Json::parse(text));
  } catch (const Json::exception& e) {
    ThrowInvalid("{} JSON '{}': {}", what, text.substr(0, 200), e.what());
  }
}

const char* ActionName(CompactionAction action) {
  switch (action) {
    case CompactionAction::kRewriteRows: return "rewrite";
    case CompactionAction::kFoldOverlays: return "fold";
    case CompactionAction::kMergeOverlays: return "merge";
    case CompactionAction::kNone: break;
  }
  return "none";
}

// The dataset a task runs on must be the version it was planned at: a fragment's rows and
// overlays differ between versions, and the commit checks conflicts from that version.
std::shared_ptr<const table::DatasetState> StateAt(const DatasetPtr& dataset, uint64_t read_version,
                                                   const char* what) {
  auto state = table::StatePtrOf(dataset);
  if (state->version() != read_version)
    ThrowInvalid("{} was planned at version {} of '{}', but the dataset given is at version {}; open that version",
                 what, read_version, state->uri, state->version());
  return state;
}

// The fragments a task names, each in the version it runs on (NotFound otherwise).
std::vector<const lance::table::DataFragment*> TaskFragments(const table::DatasetState& state,
                                                             const std::vector<uint64_t>& ids, const char* what) {
  std::vector<const lance::table::DataFragment*> out;
  for (uint64_t id : ids) {
    const auto* f = state.FindFragment(id);
    if (!f) ThrowNotFound("'{}': {} names fragment {}, which version {} does not have", state.uri, what, id,
                          state.version());
    out.push_back(f);
  }
  return out;
}

std::string PartBytes(lance::table::Transaction& t, uint64_t read_version) {
  t.set_read_version(read_version);
  return t.SerializeAsString();
}

lance::table::Transaction ParsePart(const std::string& bytes, uint64_t read_version, const std::string& uri) {
  lance::table::Transaction t;
  if (!t.ParseFromString(bytes)) ThrowInvalid("'{}': a commit part does not parse as a transaction", uri);
  if (t.read_version() != read_version)
    ThrowInvalid("'{}': a commit part was made at version {}, not the plan's version {}", uri, t.read_version(),
                 read_version);
  return t;
}

// The data and overlay files `fragments` name that `base` does not (what a part wrote),
// and their bytes.
template <typename Fragments>
void NewFiles(const Fragments& fragments, const std::set<std::string>& base, std::vector<std::string>& out,
              uint64_t& bytes) {
  auto add = [&](const lance::table::DataFile& file) {
    if (file.has_base_id() || base.contains(file.path())) return;
    out.push_back(file.path());
    bytes += file.file_size_bytes();
  };
  for (const auto& f : fragments) {
    for (const auto& file : f.files()) add(file);
    for (const auto& overlay : f.overlays()) add(overlay.data_file());
  }
}

std::set<std::string> DataFilesOf(const lance::table::Manifest& manifest) {
  std::set<std::string> out;
  for (const auto& f : manifest.fragments()) {
    for (const auto& file : f.files()) out.insert(file.path());
    for (const auto& overlay : f.overlays()) out.insert(overlay.data_file().path());
  }
  return out;
}

// Commits `t` on `base`; when a concurrent commit makes it impossible (Conflict), the
// files it would have published are removed before the error goes on: nothing else refers
// to them. Other errors leave them to cleanup, since the commit may have landed.
std::shared_ptr<const table::DatasetState> CommitParts(const std::shared_ptr<const table::DatasetState>& base,
                                                      lance::table::Transaction t,
                                                      const std::vector<std::string>& written,
                                                      const std::vector<std::string>& directories = {}) {
  table::CommitOptions options;
  options.session = base->session;
  try {
    return table::Commit(base->store, base->uri, base, std::move(t), options);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kConflict) throw;
    table::AttemptFiles attempt(*base->store);  // not published: removes them
    for (const auto& path : written) attempt.Add(io::JoinPath(io::JoinPath(base->uri, table::kDataDir), path));
    for (const auto& dir : directories) attempt.AddOwnDirectory(dir);
    throw;
  }
}

std::shared_ptr<const table::DatasetState> BaseAt(const std::string& raw_uri, uint64_t read_version,
                                                  const WriteOptions& options) {
  auto [store, uri] = io::OpenStore(raw_uri, options.storage_options);
  const std::shared_ptr<Session> session = options.session ? options.session : Session::Default();
  return table::LoadState(store, session->caches(), uri, read_version);
}

}  // namespace

std::string CompactionTask::ToJson() const {
  return Json{{"read_version", read_version},
              {"action", ActionName(action)},
              {"fragment_ids", fragment_ids},
              {"target_rows_per_fragment", target_rows_per_fragment}}
      .dump();
}

CompactionTask CompactionTask::FromJson(std::string_view text) {
  return ReadTaskJson(text, "compaction task", [](const Json& j) {
    CompactionTask task;
    task.read_version = j.at("read_version").get<uint64_t>();
    const std::string action = j.at("action").get<std::string>();
    for (auto a : {CompactionAction::kRewriteRows, CompactionAction::kFoldOverlays, CompactionAction::kMergeOverlays})
      if (action == ActionName(a)) task.action = a;
    if (task.action == CompactionAction::kNone)
      ThrowInvalid("compaction task JSON: action '{}', expected rewrite, fold or merge", action);
    task.fragment_ids = j.at("fragment_ids").get<std::vector<uint64_t>>();
    task.target_rows_per_fragment = j.at("target_rows_per_fragment").get<uint64_t>();
    if (task.fragment_ids.empty() || (task.action != CompactionAction::kRewriteRows && task.fragment_ids.size() != 1))
      ThrowInvalid("compaction task JSON: a {} task names {} fragments", action, task.fragment_ids.size());
    return task;
  });
}

std::vector<CompactionTask> PlanCompactionTasks(const DatasetPtr& dataset, const OptimizeOptions& options) {
  const auto plan = dataset->PlanOptimize(options);
  std::vector<CompactionTask> out;
  std::map<int, size_t> groups;  // rewrite group -> its task
  for (const FragmentOptimization& f : plan) {
    if (f.action == CompactionAction::kNone) continue;
    if (f.action == CompactionAction::kRewriteRows) {
      auto [it, added] = groups.emplace(f.rewrite_group, out.size());
      if (!added) {
        out[it->second].fragment_ids.push_back(f.fragment_id);
        continue;
      }
    }
    CompactionTask task;
    task.read_version = dataset->version();
    task.action = f.action;
    task.fragment_ids = {f.fragment_id};
    if (f.action == CompactionAction::kRewriteRows) task.target_rows_per_fragment = options.target_rows_per_fragment;
    out.push_back(std::move(task));
  }
  return out;
}

std::string ExecuteCompactionTask(const DatasetPtr& dataset, const CompactionTask& task) {
  const auto state = StateAt(dataset, task.read_version, "the compaction task");
  const auto fragments = TaskFragments(*state, task.fragment_ids, "the compaction task");
  table::AttemptFiles attempt(*state->store);
  lance::table::Transaction t;
  if (task.action == CompactionAction::kRewriteRows) {
    if (task.target_rows_per_fragment == 0) ThrowInvalid("a rewrite task needs target_rows_per_fragment > 0");
    *t.mutable_rewrite()->add_groups() =
        table::RewriteFragments(*state, fragments, task.target_rows_per_fragment, attempt).group;
  } else {
    table::FoldCommit fold(t);
    if (task.action == CompactionAction::kFoldOverlays)
      fold.AddFolded(table::FoldOverlays(*state, *fragments[0], attempt));
    else
      fold.AddMerged(table::MergeOverlayRun(*state, *fragments[0], {}, attempt).fragment);
    fold.Finish();
  }
  attempt.Wait();
  attempt.Published();  // the files stay for CommitCompaction (or cleanup)
  return PartBytes(t, task.read_version);
}

DatasetPtr CommitCompaction(const std::string& raw_uri, uint64_t read_version, const std::vector<std::string>& parts,
                            const OptimizeOptions& options, OptimizeStats* stats, const WriteOptions& write_options) {
  const auto base = BaseAt(raw_uri, read_version, write_options);
  const std::set<std::string> base_files = DataFilesOf(base->manifest);
  OptimizeStats local;
  OptimizeStats& out = stats ? *stats : local;
  out = OptimizeStats{};
  lance::table::Transaction rewrite, fold;
  std::vector<std::string> rewrite_files, fold_files;
  std::set<uint32_t> modified;
  for (const std::string& bytes : parts) {
    lance::table::Transaction t = ParsePart(bytes, read_version, base->uri);
    if (t.has_rewrite()) {
      for (auto& g : *t.mutable_rewrite()->mutable_groups()) {
        out.fragments_removed += uint64_t(g.old_fragments_size());
        out.fragments_added += uint64_t(g.new_fragments_size());
        for (const auto& f : g.old_fragments()) {
          out.overlays_removed += uint64_t(f.overlays_size());
          if (f.has_deletion_file()) out.rows_deleted_materialized += f.deletion_file().num_deleted_rows();
        }
        NewFiles(g.new_fragments(), base_files, rewrite_files, out.bytes_written);
        *rewrite.mutable_rewrite()->add_groups() = std::move(g);
      }
    } else if (t.has_update()) {
      for (auto& f : *t.mutable_update()->mutable_updated_fragments()) {
        const auto* before = base->FindFragment(f.id());
        if (!before) ThrowInvalid("'{}': a commit part updates fragment {}, which version {} does not have",
                                  base->uri, f.id(), read_version);
        out.overlays_removed += uint64_t(before->overlays_size() - f.overlays_size());
        ++(f.overlays_size() == 0 ? out.fragments_folded : out.fragments_merged);
        NewFiles(std::vector{f}, base_files, fold_files, out.bytes_written);
        *fold.mutable_update()->add_updated_fragments() = std::move(f);
      }
      modified.insert(t.update().fields_modified().begin(), t.update().fields_modified().end());
      fold.mutable_update()->set_update_mode(t.update().update_mode());
    } else {
      ThrowInvalid("'{}': a commit part of a compaction holds a {} transaction", base->uri, table::OperationName(t));
    }
  }
  for (uint32_t id : modified) fold.mutable_update()->add_fields_modified(id);

  std::shared_ptr<const table::DatasetState> current = base;
  if (rewrite.has_rewrite()) {
    current = CommitParts(base, std::move(rewrite), rewrite_files);
    out.versions.push_back(current->version());
  }
  if (fold.has_update()) {
    // Read at the plan's version too: the conflict rules rebase it over the rewrite,
    // whose fragments it does not touch.
    try {
      current = CommitParts(base, std::move(fold), fold_files);
    } catch (const Error& e) {
      if (out.versions.empty()) throw;
      throw Error(e.kind(), fmt::format("{} (the rewrite committed version {}; the folds did not)", e.what(),
                                        out.versions.back()));
    }
    out.versions.push_back(current->version());
  }
  DatasetPtr result = table::MakeDataset(current);
  return options.optimize_indices && current != base ? table::IndexUncovered(result, out) : result;
}

namespace {


}  // namespace

std::string IndexTask::ToJson() const {
  Json out{{"read_version", read_version},
           {"column", column},
           {"index_type", IndexTypeName(type)},
           {"name", name},
           {"fragment_ids", fragment_ids}};
  if (table::IsVectorIndexType(type))
    out["vector"] = {{"num_partitions", vector.num_partitions}, {"num_sub_vectors", vector.num_sub_vectors},
                     {"num_bits", vector.num_bits},             {"distance", vector.distance},
                     {"sample_rate", vector.sample_rate},       {"max_iterations", vector.max_iterations},
                     {"seed", vector.seed},                     {"trains_model", trains_model}};
  return out.dump();
}

IndexTask IndexTask::FromJson(std::string_view text) {
  return ReadTaskJson(text, "index task", [](const Json& j) {
    IndexTask task;
    task.read_version = j.at("read_version").get<uint64_t>();
    task.column = j.at("column").get<std::string>();
    const std::string type = j.at("index_type").get<std::string>();
    const auto named = IndexTypeNamed(type);
    if (!named || type != IndexTypeName(*named))
      ThrowInvalid("index task JSON: index_type '{}', expected BTREE, BITMAP, IVF_FLAT or IVF_PQ", type);
    task.type = *named;
    task.name = j.at("name").get<std::string>();
    task.fragment_ids = j.at("fragment_ids").get<std::vector<uint64_t>>();
    if (table::IsVectorIndexType(task.type)) {
      const Json& v = j.at("vector");
      task.vector.num_partitions = v.at("num_partitions").get<uint32_t>();
      task.vector.num_sub_vectors = v.at("num_sub_vectors").get<uint32_t>();
      task.vector.num_bits = v.at("num_bits").get<uint32_t>();
      task.vector.distance = v.at("distance").get<std::string>();
      task.vector.sample_rate = v.at("sample_rate").get<uint32_t>();
      task.vector.max_iterations = v.at("max_iterations").get<uint32_t>();
      task.vector.seed = v.at("seed").get<uint64_t>();
      task.trains_model = v.at("trains_model").get<bool>();
    }
    return task;
  });
}

std::vector<IndexTask> PlanIndexTasks(const DatasetPtr& dataset, const std::string& column, IndexType type,
                                      size_t num_tasks, const std::string& name,
                                      const VectorIndexOptions& vector_options) {
  if (num_tasks == 0) ThrowInvalid("an index build needs at least one task");
  const auto state = table::StatePtrOf(dataset);
  const bool vector = table::IsVectorIndexType(type);
  // Checks the column and type here, in the client, rather than once per worker.
  if (vector) {
    table::VectorIndexField(*state, column);
    if (type == IndexType::kIvfPq && vector_options.num_bits == 4)
      ThrowNotSupported("a 4-bit IVF_PQ index is built in one process: lancelet does not read its model back to "
                        "share it between tasks");
  } else if (!state->schema.StructPathNamed(column)) {
    ThrowNotFound("no column '{}' in dataset '{}' to index (columns: {}; a struct field is named as a.b)", column,
                  state->uri, state->arrow_schema->ToString());
  }
  uint64_t total = 0;
  for (const auto& f : state->manifest.fragments())
    total += f.physical_rows() - (f.has_deletion_file() ? f.deletion_file().num_deleted_rows() : 0);
  IndexTask first;
  first.read_version = state->version();
  first.column = column;
  first.type = type;
  first.name = name.empty() ? column + "_idx" : name;
  if (vector) {
    first.vector = vector_options;
    // The model serves every segment, so its partitions are counted on every row.
    if (first.vector.num_partitions == 0)
      first.vector.num_partitions = uint32_t(std::max<uint64_t>(1, uint64_t(std::sqrt(double(total)))));
  }
  std::vector<IndexTask> out;
  const uint64_t per_task = std::max<uint64_t>(1, (total + num_tasks - 1) / num_tasks);
  uint64_t rows = 0;
  for (const auto& f : state->manifest.fragments()) {
    if (out.empty() || (rows >= per_task && out.size() < num_tasks)) {
      out.push_back(first);
      out.back().trains_model = vector && out.size() == 1;
      rows = 0;
    }
    out.back().fragment_ids.push_back(f.id());
    rows += f.physical_rows();
  }
  return out;
}

std::string BuildIndexSegment(const DatasetPtr& dataset, const IndexTask& task, const std::string& model) {
  const auto state = StateAt(dataset, task.read_version, "the index task");
  TaskFragments(*state, task.fragment_ids, "the index task");
  const std::set<uint64_t> fragments(task.fragment_ids.begin(), task.fragment_ids.end());
  table::AttemptFiles attempt(*state->store);
  lance::table::Transaction t;
  auto* segment = t.mutable_create_index()->add_new_indices();
  if (!table::IsVectorIndexType(task.type)) {
    *segment = table::BuildScalarSegment(state, task.column, task.type, task.name, fragments, attempt);
  } else {
    const format::StructPath path = table::VectorIndexField(*state, task.column);
    if (task.trains_model) {
      VectorIndexOptions options;
      static_cast<VectorIndexParameters&>(options) = task.vector;
      *segment = table::BuildIvfSegment(state, path, task.type, options, task.name, fragments, attempt);
    } else {
      if (model.empty()) ThrowInvalid("the index task on '{}' needs the model: the part of the task that trained it",
                                      task.column);
      lance::table::Transaction trained = ParsePart(model, task.read_version, state->uri);
      if (!trained.has_create_index() || trained.create_index().new_indices_size() != 1 ||
          trained.create_index().new_indices(0).name() != task.name)
        ThrowInvalid("'{}': the model given to the index task is not a segment of index '{}'", state->uri, task.name);
      auto delta = table::BuildIvfDeltaSegment(state, path, trained.create_index().new_indices(0), fragments, attempt);
      if (!delta) ThrowNotSupported("'{}': the model of index '{}' cannot be read back to share it", state->uri,
                                    task.name);
      *segment = std::move(*delta);
    }
  }
  attempt.Wait();
  attempt.Published();  // the segment stays for CommitIndexSegments (or cleanup)
  return PartBytes(t, task.read_version);
}

namespace {

// The segments of an index build's parts, made at `read_version`: of one index (one name,
// one kind), over disjoint fragments, which `covered` receives. InvalidArgument otherwise,
// or when there is none.
std::vector<lance::table::IndexMetadata> SegmentsOf(const std::vector<std::string>& parts, uint64_t read_version,
                                                    const std::string& uri, format::RoaringBitmap& covered) {
  std::vector<lance::table::IndexMetadata> segments;
  for (const std::string& bytes : parts) {
    lance::table::Transaction part = ParsePart(bytes, read_version, uri);
    if (!part.has_create_index())
      ThrowInvalid("'{}': a commit part of an index build holds a {} transaction", uri, table::OperationName(part));
    for (auto& segment : *part.mutable_create_index()->mutable_new_indices()) {
      if (!segments.empty() && (segment.name() != segments[0].name() ||
                                segment.index_details().type_url() != segments[0].index_details().type_url()))
        ThrowInvalid("'{}': the segments belong to two indexes, '{}' and '{}'", uri, segments[0].name(),
                     segment.name());
      if (const auto fragments = table::IndexFragments(segment))
        for (uint32_t f : fragments->ToVector()) {
          if (covered.Contains(f))
            ThrowInvalid("'{}': two segments of index '{}' cover fragment {}", uri, segment.name(), f);
          covered.Add(f);
        }
      segments.push_back(std::move(segment));
    }
  }
  if (segments.empty()) ThrowInvalid("'{}': an index build gave no segment", uri);
  return segments;
}

}  // namespace

std::string MergeIndexSegments(const DatasetPtr& dataset, const std::vector<std::string>& parts) {
  const auto state = table::StatePtrOf(dataset);
  format::RoaringBitmap covered;
  const std::vector<lance::table::IndexMetadata> segments = SegmentsOf(parts, state->version(), state->uri, covered);
  const lance::table::IndexMetadata& first = segments[0];
  const auto kind = index::KindOfTypeUrl(first.index_details().type_url());
  if (!kind || (*kind != index::IndexKind::kBTree && *kind != index::IndexKind::kBitmap))
    ThrowNotSupported("'{}': segments of index '{}' are not BTree or Bitmap ones, which are merged", state->uri,
                      first.name());
  const auto field = first.fields_size() == 1 ? state->schema.StructPathOf(first.fields(0)) : std::nullopt;
  if (!field) ThrowInvalid("'{}': index '{}' is not on one field of the schema", state->uri, first.name());
  for (const auto& segment : segments)
    if (!table::IndexFragments(segment))
      ThrowInvalid("'{}': a segment of '{}' lists no fragments", state->uri, first.name());
  auto fragment_rows = [&](uint32_t id) -> uint64_t {
    const auto* f = state->FindFragment(id);
    if (!f) ThrowCorrupt("'{}': a segment of '{}' names fragment {}, which version {} does not have", state->uri,
                         first.name(), id, state->version());
    return f->physical_rows();
  };
  table::AttemptFiles attempt(*state->store);
  const std::string uuid = table::NewUuid();
  const std::string dir = io::JoinPath(io::JoinPath(state->uri, table::kIndicesDir), uuid);
  attempt.AddOwnDirectory(dir);
  state->store->CreateDir(dir);
  index::IndexBuilder builder(*state->store, dir, *kind, state->WriteVersion(), field->field->type);
  for (const auto& segment : segments)
    index::ForEachSegmentRow(*state->store, state->IndexDirectory(segment), *kind, fragment_rows,
                             [&](const ArrayPtr& values, std::span<const uint64_t> ids) { builder.Add(values, ids); });
  lance::table::Transaction t;
  lance::table::IndexMetadata* merged = t.mutable_create_index()->add_new_indices();
  *merged = first;
  merged->mutable_uuid()->set_uuid(table::UuidBytes(uuid));
  merged->set_fragment_bitmap(covered.SerializePortable(format::RoaringBitmap::RunContainers::kNone));
  merged->clear_files();
  for (const auto& file : builder.Finish()) {
    auto* f = merged->add_files();
    f->set_path(file.name);
    f->set_size_bytes(file.size);
  }
  attempt.Published();
  table::AttemptFiles merged_away(*state->store);  // never published: the inputs go
  for (const auto& segment : segments) merged_away.AddOwnDirectory(state->IndexDirectory(segment));
  return PartBytes(t, state->version());
}

DatasetPtr CommitIndexSegments(const std::string& raw_uri, uint64_t read_version, const std::vector<std::string>& parts,
                               bool replace, const WriteOptions& write_options) {
  const auto base = BaseAt(raw_uri, read_version, write_options);
  format::RoaringBitmap covered;
  std::vector<lance::table::IndexMetadata> segments = SegmentsOf(parts, read_version, base->uri, covered);
  const std::string name = segments[0].name();
  lance::table::Transaction t;
  auto* create = t.mutable_create_index();
  std::vector<std::string> directories;
  for (auto& segment : segments) {
    directories.push_back(base->IndexDirectory(segment));
    *create->add_new_indices() = std::move(segment);
  }
  for (const auto& existing : base->indices.indices()) {
    if (existing.name() != name) continue;
    if (!replace) {
      table::AttemptFiles attempt(*base->store);
      for (const auto& dir : directories) attempt.AddOwnDirectory(dir);
      ThrowInvalid("dataset '{}' already has an index named '{}' (replace it, or choose another name)", base->uri,
                   name);
    }
    *create->add_removed_indices() = existing;
  }
  return table::MakeDataset(CommitParts(base, std::move(t), {}, directories));
}

}  // namespace lancelet
