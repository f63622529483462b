#include "table/fragment_reader.h"

#include <algorithm>

#include "table/deletions.h"
#include "format/row_id_sequence.h"
#include "io/run_concurrently.h"
#include "lancelet/builder.h"
#include "lancelet/error.h"
#include "overlay/patch.h"
#include "table/index_staleness.h"

namespace lancelet::table {

namespace {

// Restricts values decoded with a data file's field `stored` to the dataset schema's
// field `wanted` (the same field id). They differ when the reference changed the schema
// without rewriting the data: drop_columns of a struct child keeps the child in the file
// (the schema simply loses it), and a nested rename changes only the name. Children are
// matched by field id; a child the file lacks reads as NULL. Fixed-size lists have no
// child ids (the item is part of the type) and leaves pass through unchanged.
ArrayPtr ProjectToSchema(ArrayPtr values, const format::LanceField& stored, const format::LanceField& wanted) {
  if (values->type->Equals(*wanted.type) || wanted.children.empty()) return values;
  auto out = std::make_shared<ArrayData>(*values);
  out->type = wanted.type;
  out->children.clear();
  for (const auto& want : wanted.children) {
    ArrayPtr child;
    for (size_t i = 0; i < stored.children.size() && i < values->children.size(); ++i)
      if (stored.children[i].id == want.id) child = ProjectToSchema(values->children[i], stored.children[i], want);
    if (!child) {
      // Only a struct can lack a child (its length is the struct's); a list's item always
      // shares the list's field lineage.
      if (values->type->id() != TypeId::kStruct)
        ThrowCorrupt("field {} ('{}'): the data file has no child with field id {}", wanted.id, wanted.name, want.id);
      child = MakeNullArray(want.type, values->length);
    }
    out->children.push_back(std::move(child));
  }
  return out;
}

}  // namespace

FragmentReader::FragmentReader(const DatasetState& state, const lance::table::DataFragment& fragment)
    : state_(state), fragment_(fragment) {}

FragmentReader::~FragmentReader() = default;

uint64_t FragmentReader::num_deleted() const {
  return fragment_.has_deletion_file() ? deletions().Cardinality() : 0;
}

void FragmentReader::OpenAll(const std::vector<size_t>& fields, uint64_t start, uint64_t count) const {
  for (int f = 0; f < fragment_.files_size(); ++f) OpenFile(size_t(f));
  deletions();
  for (const auto& [file, indices] : PlainFieldsByFile(fields))
    file->PrefetchFields(indices, start, count, kPrefetchBytes);  // one request per file
}

void FragmentReader::OpenAll(const std::vector<size_t>& fields, std::span<const uint64_t> rows) const {
  if (rows.empty()) return;
  const uint64_t span = rows.back() + 1 - rows.front();
  if (rows.size() >= kDenseTakeMinRows && rows.size() * kDenseTakeSpan >= span)
    return OpenAll(fields, rows.front(), span);
  for (int f = 0; f < fragment_.files_size(); ++f) OpenFile(size_t(f));
  deletions();
  PrefetchPagesOf(fields, rows);
}

void FragmentReader::PrefetchPagesOf(const std::vector<size_t>& fields, std::span<const uint64_t> rows) const {
  if (rows.size() > kPrefetchTakeRows || !state_.store->costly_requests()) return;
  for (const auto& [file, indices] : PlainFieldsByFile(fields))
    file->PrefetchPagesOf(indices, rows, kPrefetchPageBufferBytes);
}

std::function<void()> FragmentReader::RowsFetch(const std::vector<size_t>& fields, uint64_t start,
                                                uint64_t count) const {
  return [by_file = PlainFieldsByFile(fields), start, count] {
    for (const auto& [file, indices] : by_file) file->PrefetchRows(indices, start, count);
  };
}

uint64_t FragmentReader::StoredRowBytes(const std::vector<size_t>& fields) const {
  uint64_t bytes = 0;
  for (const auto& [file, indices] : PlainFieldsByFile(fields)) bytes += file->StoredBytes(indices);
  return physical_rows() == 0 ? 0 : bytes / physical_rows();
}

std::map<const format::LanceFileReader*, std::vector<size_t>> FragmentReader::PlainFieldsByFile(
    const std::vector<size_t>& fields) const {
  std::map<const format::LanceFileReader*, std::vector<size_t>> by_file;
  for (size_t field : fields)
    if (FieldSource source = Locate(field); source.file && !CoverageOf(field))
      by_file[source.file].push_back(source.field_index);
  return by_file;
}

ArrayPtr FragmentReader::BaseValues(const FieldSource& src, size_t field, uint64_t rows,
                                    const ReadFileField& read) const {
  if (!src.file) return MakeNullArray(state_.schema.fields()[field].type, int64_t(rows));
  return ProjectToSchema(read(*src.file, src.field_index), src.file->schema().fields()[src.field_index],
                         state_.schema.fields()[field]);
}

std::vector<size_t> FragmentReader::ReadPlainFields(const std::vector<size_t>& fields, uint64_t rows,
                                                    const ReadFileField& read, std::vector<ArrayPtr>& out) const {
  out.assign(fields.size(), nullptr);
  std::vector<size_t> plain, rest;
  std::vector<FieldSource> sources;
  for (size_t k = 0; k < fields.size(); ++k) {
    if (CoverageOf(fields[k])) {
      rest.push_back(k);
      continue;
    }
    plain.push_back(k);
    sources.push_back(Locate(fields[k]));  // opens the files here, not in the threads
  }
  const int threads = state_.store->costly_requests() ? int(plain.size()) : 1;
  io::RunConcurrently(plain.size(), threads,
                      [&](size_t i) { out[plain[i]] = BaseValues(sources[i], fields[plain[i]], rows, read); });
  return rest;
}

const format::RoaringBitmap& FragmentReader::deletions() const {
  if (!deletions_) {
    if (fragment_.has_deletion_file()) {
      deletions_ = std::make_unique<format::RoaringBitmap>(
          ReadDeletionFile(*state_.store, state_.DeletionFilePath(fragment_.id(), fragment_.deletion_file()),
                           fragment_.id(), physical_rows(), fragment_.deletion_file()));
    } else {
      deletions_ = std::make_unique<format::RoaringBitmap>();
    }
  }
  return *deletions_;
}

const format::LanceFileReader& FragmentReader::OpenFile(size_t data_file) const {
  auto& slot = files_[data_file];
  if (!slot) {
    slot = state_.OpenDataFile(fragment_.files(int(data_file)));
  }
  return *slot;
}

FragmentReader::FieldSource FragmentReader::Locate(size_t field) const {
  const auto& top = state_.schema.fields().at(field);
  const int32_t id = top.id;
  // 2.1+ data files list only the fields that own a column (leaves, packed structs):
  // a list or struct is held by the file that lists any field below it.
  std::vector<int32_t> ids;
  top.ForEach([&](const format::LanceField& f) { ids.push_back(f.id); });
  for (int f = 0; f < fragment_.files_size(); ++f) {
    const auto& data_file = fragment_.files(f);
    bool holds = false;
    for (int32_t fid : data_file.fields())
      for (int32_t want : ids) holds |= fid == want;
    if (!holds) continue;
    const auto& reader = OpenFile(size_t(f));
    const auto& file_fields = reader.schema().fields();
    for (size_t i = 0; i < file_fields.size(); ++i)
      if (file_fields[i].id == id) return {&reader, i};
    ThrowCorrupt("fragment {} of '{}': data file '{}' is listed as holding field id {} but its schema lacks it",
                 fragment_.id(), state_.uri, data_file.path(), id);
  }
  return {};
}

const overlay::FragmentOverlays& FragmentReader::overlays() const {
  if (!overlays_) overlays_ = state_.OverlaysOf(fragment_);
  return *overlays_;
}

const format::LanceFileReader& FragmentReader::OpenOverlayFile(size_t index, bool whole_if_small) const {
  auto& slot = overlay_files_[index];
  if (!slot) {
    slot = state_.OpenDataFile(overlays().overlays()[index].proto->data_file(),
                               whole_if_small ? kReadWholeOverlayFileBytes : format::LanceFileReader::kTailBytes);
    CheckOverlayFile(index, *slot);
  }
  return *slot;
}

// Rank addressing pairs the k-th covered cell of a field with the k-th value of its
// column, so the column holds exactly as many values as the coverage has cells. One
// exception: a sparse overlay written with one row count for all its columns (the
// reference's equal-length writer) pads each to its largest coverage. A listed field the
// file lacks would read as no overlay at all.
void FragmentReader::CheckOverlayFile(size_t index, const format::LanceFileReader& file) const {
  CheckOverlayFile(index, FieldRowsOf(file));
}

SessionCaches::FieldRows FragmentReader::FieldRowsOf(const format::LanceFileReader& file) {
  SessionCaches::FieldRows out;
  const auto& fields = file.schema().fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    out.emplace_back(fields[i].id, file.num_rows(i));
    // Fields inside a struct have its values: they are listed, not counted.
    fields[i].ForEach([&](const format::LanceField& f) {
      if (f.id != fields[i].id) out.emplace_back(f.id, SessionCaches::kNotCounted);
    });
  }
  return out;
}

void FragmentReader::CheckOverlayFile(size_t index, const SessionCaches::FieldRows& file) const {
  const overlay::Overlay& o = overlays().overlays()[index];
  for (size_t f = 0; f < o.field_ids.size(); ++f) {
    if (o.field_ids[f] == overlay::kTombstoneFieldId) continue;
    auto it = std::find_if(file.begin(), file.end(), [&](const auto& field) { return field.first == o.field_ids[f]; });
    if (it == file.end())
      ThrowCorrupt("'{}' fragment {}: overlay file '{}' lists field {} but has no column for it", state_.uri,
                   fragment_.id(), o.proto->data_file().path(), o.field_ids[f]);
    if (it->second != SessionCaches::kNotCounted) CheckOverlayValues(index, f, it->second);
  }
}

void FragmentReader::CheckOverlayValues(size_t index, size_t field, uint64_t values) const {
  const overlay::Overlay& o = overlays().overlays()[index];
  const uint64_t cells = o.Coverage(field)->Cardinality();
  if (values == cells) return;
  uint64_t largest = 0;
  for (size_t f = 0; f < o.field_ids.size(); ++f) largest = std::max(largest, o.Coverage(f)->Cardinality());
  if (o.dense || values != largest)
    ThrowCorrupt("'{}' fragment {}: overlay file '{}' holds {} values of field {} for {} covered cells{}", state_.uri,
                 fragment_.id(), o.proto->data_file().path(), values, o.field_ids[field], cells,
                 o.dense ? "" : fmt::format(" (or {}, the overlay's largest coverage)", largest));
}

size_t FragmentReader::OverlayColumn(const format::LanceFileReader& file, size_t overlay, int32_t field_id) const {
  const auto& fields = file.schema().fields();
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].id == field_id) return i;
  ThrowCorrupt("'{}' fragment {}: overlay file '{}' lists field {} but has no column for it", state_.uri,
               fragment_.id(), overlays().overlays()[overlay].proto->data_file().path(), field_id);
}

const overlay::CoverageLayers* FragmentReader::CoverageOf(size_t field) const {
  if (fragment_.overlays_size() == 0) return nullptr;
  const int32_t id = state_.schema.fields()[field].id;
  const auto* known = coverage_.Find(id);
  if (!known) {
    // A field no overlay lists has no layers: the manifest says so without a trip to the
    // shared cache (an index lookup reads its row through here, per query). An overlay
    // without a data file or fields takes the long way, whose load refuses it.
    const auto& list = fragment_.overlays();
    const bool listed = std::any_of(list.begin(), list.end(), [&](const lance::table::DataOverlayFile& o) {
      const auto& ids = o.data_file().fields();
      return ids.empty() || std::find(ids.begin(), ids.end(), id) != ids.end();
    });
    std::shared_ptr<const overlay::CoverageLayers> layers;
    if (listed) {
      layers = state_.CachedCoverageLayers(fragment_.id(), id, [&] { return overlay::CoverageLayers::Of(overlays(), id); });
      layers->reads.fetch_add(1, std::memory_order_relaxed);
    }
    known = &coverage_.Add(id, std::move(layers));
  }
  return !*known || (*known)->empty() ? nullptr : known->get();
}

const overlay::FieldLayers* FragmentReader::LayersOf(size_t field) const {
  const overlay::CoverageLayers* coverage = CoverageOf(field);
  if (!coverage) return nullptr;
  const int32_t id = state_.schema.fields()[field].id;
  auto known = layers_.find(id);
  // Kept only once made: if Build throws, the next read tries again.
  if (known == layers_.end())
    known = layers_.emplace(id, state_.CachedFieldLayers(fragment_.id(), id, [&] {
                                  return overlay::FieldLayers::Build(*coverage);
                                })).first;
  return known->second.get();
}

const overlay::FieldLayers* FragmentReader::MergedLayersOf(size_t field) const {
  const overlay::CoverageLayers* coverage = CoverageOf(field);
  if (!coverage || coverage->newest_first.size() < kMergeFromLayers) return nullptr;
  const int32_t id = state_.schema.fields()[field].id;
  const auto* known = merged_.Find(id);
  if (!known) {
    std::shared_ptr<const overlay::FieldLayers> merged;
    if (coverage->reads.load(std::memory_order_relaxed) >= 2)
      merged = state_.CachedMergedLayers(fragment_.id(), id, [&] { return MergeLayers(*LayersOf(field), field); });
    known = &merged_.Add(id, std::move(merged));
  }
  return known->get();
}

std::shared_ptr<const overlay::FieldLayers> FragmentReader::MergeLayers(const overlay::FieldLayers& layers,
                                                                        size_t field) const {
  const int32_t id = state_.schema.fields()[field].id;
  std::vector<ArrayPtr> columns;
  std::vector<int64_t> starts;
  int64_t rows = 0;
  uint64_t bytes = 0;
  for (const auto& layer : layers.newest_first) {
    ArrayPtr column = WholeOverlayColumn(layer.overlay, id);
    if (!column) return nullptr;
    CheckOverlayType(field, layer.overlay, *column);
    bytes += BufferBytes(*column);
    if (bytes > kMergedValueBytes) return nullptr;
    starts.push_back(rows);
    rows += column->length;
    columns.push_back(std::move(column));
  }
  overlay::MergedCells merged = overlay::MergeCells(layers);
  std::vector<int64_t> indices(merged.cells.size());
  for (size_t k = 0; k < indices.size(); ++k) indices[k] = starts[merged.source[k]] + int64_t(merged.ranks[k]);
  return overlay::MergedLayers(std::move(merged.cells), lancelet::Take(*Concatenate(columns), indices));
}

void FragmentReader::CheckOverlayType(size_t field, size_t overlay, const ArrayData& values) const {
  const auto& schema_field = state_.schema.fields()[field];
  if (!values.type->Equals(*schema_field.type))
    ThrowCorrupt("'{}' fragment {}: overlay file '{}' holds field {} as {}, but the schema says {}", state_.uri,
                 fragment_.id(), overlays().overlays()[overlay].proto->data_file().path(), schema_field.id,
                 values.type->ToString(), schema_field.type->ToString());
}

FragmentReader::ChangedValues FragmentReader::ChangedCells(const format::StructPath& path, uint64_t version) const {
  ChangedValues out;
  if (fragment_.overlays_size() == 0) return out;
  const auto& list = overlays().overlays();
  const IndexStaleness staleness(state_.schema, {path.ids.back()}, version);
  for (size_t i = 0; i < list.size(); ++i) {
    const overlay::Overlay& o = list[i];
    format::RoaringBitmap changed = staleness.CellsOf(o);
    if (changed.IsEmpty()) continue;
    // The node's values come from the outermost ancestor-or-self the overlay stores as a
    // column (its own coverage orders them), descending the struct children below it.
    size_t level = 0;
    while (level < path.ids.size() && !o.CoverageOf(path.ids[level])) ++level;
    bool readable = level < path.ids.size();
    if (readable && level > 0) {  // a nested column of its own: only if the file has it as the schema does
      const format::LanceField* node = state_.schema.FindById(path.ids[level]);
      const auto& stored = OpenOverlayFile(i, true).schema().fields();
      readable = std::any_of(stored.begin(), stored.end(), [&](const format::LanceField& f) {
        return f.id == node->id && f.type->Equals(*node->type);
      });
    }
    if (!readable) {
      out.unreadable |= changed;
      continue;
    }
    const format::RoaringBitmap& coverage = *o.CoverageOf(path.ids[level]);
    ArrayPtr column = WholeOverlayColumn(i, path.ids[level]);
    if (!column) {  // too large to keep: read it for this query alone
      const auto& file = OpenOverlayFile(i, true);
      const size_t index = OverlayColumn(file, i, path.ids[level]);
      column = file.ReadField(index, 0, file.num_rows(index));
    }
    if (level == 0) CheckOverlayType(path.top, i, *column);
    const uint64_t cells = coverage.Cardinality();
    if (uint64_t(column->length) < cells)
      ThrowCorrupt("'{}' fragment {}: overlay file '{}' holds {} values of field {} for {} covered cells", state_.uri,
                   fragment_.id(), o.proto->data_file().path(), column->length, path.ids[level], cells);
    for (size_t c = size_t(level); c < path.children.size(); ++c) column = StructChild(*column, path.children[c]);
    std::vector<uint32_t> offsets;
    offsets.reserve(cells);
    coverage.ForEach([&](uint32_t offset) { offsets.push_back(offset); });
    if (uint64_t(column->length) > cells) column = Slice(*column, 0, int64_t(cells));  // values past the coverage are not cells
    changed -= coverage;
    out.unreadable |= changed;
    out.values.push_back(std::move(column));
    out.offsets.push_back(std::move(offsets));
  }
  return out;
}

ArrayPtr FragmentReader::WholeOverlayColumn(size_t overlay, int32_t field_id) const {
  auto known = whole_columns_.find({overlay, field_id});
  if (known != whole_columns_.end()) return known->second;  // a batch asks once per layer: skip the shared cache
  const uint64_t bytes = overlays().overlays()[overlay].proto->data_file().file_size_bytes();
  ArrayPtr column;
  if (bytes > 0 && bytes <= kWholeOverlayBytes) {  // 0: size not recorded, so no bound
    const lance::table::DataFile& data_file = overlays().overlays()[overlay].proto->data_file();
    // The column is kept, so the file's bytes are not (unless a reader has it open anyway):
    // a scan of many small overlays would otherwise hold each value twice.
    std::shared_ptr<const format::LanceFileReader> file = overlay_files_[overlay];
    const std::string path = state_.DataPath(data_file);
    auto open = [&]() -> const format::LanceFileReader& {
      if (!file) file = state_.OpenDataFileOnce(data_file, path, kReadWholeOverlayFileBytes);
      return *file;
    };
    // Checked against this version's coverage on every version: what the session keeps
    // was read for another one.
    CheckOverlayFile(overlay, *state_.session->OverlayFieldRows(state_.store, path, [&] {
      return std::make_shared<const SessionCaches::FieldRows>(FieldRowsOf(open()));
    }));
    column = state_.session->OverlayColumn(state_.store, path, field_id, [&] {
      const size_t index = OverlayColumn(open(), overlay, field_id);
      overlay::Counters().values_decoded_whole.fetch_add(file->num_rows(index), std::memory_order_relaxed);
      return file->ReadField(index, 0, file->num_rows(index));
    });
  }
  whole_columns_.emplace(std::make_pair(overlay, field_id), column);
  return column;
}

std::pair<ArrayPtr, int64_t> FragmentReader::OverlayValues(int32_t field_id, size_t overlay, uint64_t first_rank,
                                                           uint64_t count, std::span<const uint64_t> ranks,
                                                           bool in_scan) const {
  // A merged layer's values are in memory. A file within the tail a take reads anyway is
  // decoded whole once and kept, unless a take wants few of its values: a one-off take of
  // 100 rows decoded 25,000 values of a 10% layer to use a few. A larger file gives just
  // the ranks the read needs (from memory when a scan opened it whole): a first scan then
  // holds batch-sized values, not a second copy of every overlay it reads (each fresh
  // page costs a page fault).
  ArrayPtr column;
  if (overlay == overlay::kMergedOverlay) {
    column = (*merged_.Find(field_id))->merged_values;
  } else {
    const overlay::Overlay& o = overlays().overlays()[overlay];
    const uint64_t file_bytes = o.proto->data_file().file_size_bytes();
    const int f = o.FieldIndex(field_id);
    const bool few =
        !in_scan && !ranks.empty() && f >= 0 && ranks.size() * kWholeForTakeShare < o.Coverage(size_t(f))->Cardinality();
    if (file_bytes > 0 && file_bytes <= format::LanceFileReader::kTailBytes && !few)
      column = WholeOverlayColumn(overlay, field_id);
  }
  if (column) {
    if (ranks.empty()) return {column, int64_t(first_rank)};
    return {lancelet::Take(*column, std::vector<int64_t>(ranks.begin(), ranks.end())), 0};
  }
  // Ranks of a larger file: its tail and the pages they fall in, not the whole file.
  const auto& file = OpenOverlayFile(overlay, in_scan);
  const size_t index = OverlayColumn(file, overlay, field_id);
  return {ranks.empty() ? file.ReadField(index, first_rank, count) : file.TakeField(index, ranks), 0};
}

ArrayPtr FragmentReader::Overlaid(size_t field, overlay::Resolution resolution, bool in_scan,
                                  const std::function<ArrayPtr()>& read_base) const {
  const auto& schema_field = state_.schema.fields()[field];
  ArrayPtr values;
  if (const auto& base = resolution.base) {
    // The overlay covers every wanted row: its ranks are read for this batch alone, as a
    // base file's rows would be.
    auto [column, first] =
        OverlayValues(schema_field.id, base->overlay, base->first_rank, base->count, base->ranks, in_scan);
    values = first == 0 && uint64_t(column->length) == base->count ? column : Slice(*column, first, int64_t(base->count));
    if (base->overlay != overlay::kMergedOverlay) CheckOverlayType(field, base->overlay, *values);
  } else {
    values = read_base();
  }
  if (resolution.patches.empty()) return values;
  std::vector<overlay::Replacement> replacements;
  replacements.reserve(resolution.patches.size());
  for (const auto& patch : resolution.patches) {
    auto [column, first] =
        OverlayValues(schema_field.id, patch.overlay, patch.first_rank, patch.size(), patch.ranks, in_scan);
    replacements.push_back({patch.cells, std::move(column), first, patch.origin, patch.coverage, patch.end, patch.count});
  }
  return overlay::ApplyReplacements(std::move(values), replacements);
}

ArrayPtr FragmentReader::ReadFieldRange(size_t field, uint64_t start, uint64_t count) const {
  auto read_base = [&] {
    return BaseValues(Locate(field), field, count, [&](const format::LanceFileReader& file, size_t index) {
      return file.ReadField(index, start, count);
    });
  };
  const overlay::CoverageLayers* coverage = CoverageOf(field);
  if (!coverage) return read_base();
  const overlay::FieldLayers* merged = MergedLayersOf(field);
  return Overlaid(field,
                  merged ? overlay::ResolveRange(*merged, start, count)
                         : overlay::ResolveRange(*coverage, start, count, range_cursors_[field]),
                  true, read_base);
}

std::vector<ArrayPtr> FragmentReader::ReadRange(const std::vector<size_t>& fields, uint64_t start,
                                                uint64_t count) const {
  if (start + count > physical_rows())
    ThrowInvalid("fragment {}: rows [{}, {}) are past its {} rows", fragment_.id(), start, start + count,
                 physical_rows());
  const ReadFileField read = [&](const format::LanceFileReader& file, size_t index) {
    return file.ReadField(index, start, count);
  };
  std::vector<ArrayPtr> out;
  const std::vector<size_t> rest = ReadPlainFields(fields, count, read, out);
  for (size_t k : rest) {
    const size_t field = fields[k];
    const uint64_t chunk_rows = read_ahead_ ? ChunkRows(field) : 0;
    out[k] = count < chunk_rows ? FromChunk(field, start, count, chunk_rows) : ReadFieldRange(field, start, count);
  }
  return out;
}

uint64_t FragmentReader::ChunkRows(size_t field) const {
  const DataType& type = *state_.schema.fields()[field].type;
  if (!type.is_fixed_width() || !type.children().empty() || type.bit_width() % 8 != 0) return 0;
  if (!CoverageOf(field) || MergedLayersOf(field)) return 0;  // a merged field costs one layer a batch
  return kChunkBytes / uint64_t(type.byte_width());
}

const FragmentReader::Chunk& FragmentReader::ChunkHolding(size_t field, uint64_t start, uint64_t count,
                                                          uint64_t chunk_rows) const {
  Chunk& chunk = chunks_[field];
  if (!chunk.Holds(start, count)) {
    chunk.values = nullptr;  // the last batch may still hold it; this reader no longer does
    chunk.values = ReadFieldRange(field, start, std::min(physical_rows() - start, chunk_rows));
    chunk.start = start;
  }
  return chunk;
}

ArrayPtr FragmentReader::FromChunk(size_t field, uint64_t start, uint64_t count, uint64_t chunk_rows) const {
  const Chunk& chunk = ChunkHolding(field, start, count, chunk_rows);
  const int64_t at = int64_t(start - chunk.start), n = int64_t(count);
  // A scan's batches start on multiples of 64 rows: views of the chunk, copying nothing.
  if (at % 64 == 0 && (n % 64 == 0 || at + n == chunk.values->length)) return ViewRows(chunk.values, at, n);
  return Slice(*chunk.values, at, n);
}

ArrayPtr FragmentReader::TakeFromChunk(size_t field, std::span<const uint64_t> offsets) const {
  const uint64_t chunk_rows = read_ahead_ && !offsets.empty() ? ChunkRows(field) : 0;
  if (chunk_rows == 0) return nullptr;
  const uint64_t first = offsets.front(), span = offsets.back() - first + 1;
  // (Offsets out of order make `span` wrap past any chunk.)
  if (span >= chunk_rows || !std::is_sorted(offsets.begin(), offsets.end())) return nullptr;
  // A new chunk is read only for rows dense enough, and not for a few rows alone.
  if (!chunks_[field].Holds(first, span) &&
      (offsets.size() < kDenseTakeMinRows || offsets.size() * kDenseTakeSpan < span))
    return nullptr;
  const Chunk& chunk = ChunkHolding(field, first, span, chunk_rows);
  std::vector<int64_t> indices(offsets.size());
  for (size_t k = 0; k < offsets.size(); ++k) indices[k] = int64_t(offsets[k] - chunk.start);
  return lancelet::Take(*chunk.values, indices);
}

std::vector<ArrayPtr> FragmentReader::Take(const std::vector<size_t>& fields, std::span<const uint64_t> offsets) const {
  return ReadOffsets(fields, offsets, false);
}

std::vector<ArrayPtr> FragmentReader::ReadRows(const std::vector<size_t>& fields,
                                               std::span<const uint64_t> offsets) const {
  return ReadOffsets(fields, offsets, true);
}

std::vector<ArrayPtr> FragmentReader::ReadOffsets(const std::vector<size_t>& fields, std::span<const uint64_t> offsets,
                                                  bool in_scan) const {
  for (uint64_t o : offsets)
    if (o >= physical_rows())
      ThrowInvalid("fragment {}: offset {} is past its {} rows", fragment_.id(), o, physical_rows());
  const ReadFileField read = [&](const format::LanceFileReader& file, size_t index) {
    return file.TakeField(index, offsets);
  };
  if (!in_scan) PrefetchPagesOf(fields, offsets);
  std::vector<ArrayPtr> out;
  for (size_t k : ReadPlainFields(fields, offsets.size(), read, out)) {
    // Offsets are looked up in the coverage bitmaps, so that a take lists no cells.
    const size_t field = fields[k];
    if (in_scan)
      if (ArrayPtr taken = TakeFromChunk(field, offsets)) {
        out[k] = std::move(taken);
        continue;
      }
    const overlay::FieldLayers* merged = MergedLayersOf(field);
    const overlay::CoverageLayers& coverage = *CoverageOf(field);
    out[k] = Overlaid(field, merged ? overlay::ResolveOffsets(*merged, offsets) : overlay::ResolveOffsets(coverage, offsets),
                      in_scan, [&] { return BaseValues(Locate(field), field, offsets.size(), read); });
  }
  return out;
}

ArrayPtr FragmentReader::RowAddresses(std::span<const uint64_t> offsets) const {
  FixedWidthBuilder<uint64_t> b(DataType::UInt64());
  for (uint64_t o : offsets) b.Append((fragment_.id() << 32) | o);
  return b.Finish();
}

ArrayPtr FragmentReader::RowIds(std::span<const uint64_t> offsets) const {
  using Frag = lance::table::DataFragment;
  if (fragment_.row_id_sequence_case() == Frag::ROW_ID_SEQUENCE_NOT_SET) return RowAddresses(offsets);
  if (!row_ids_) {
    std::string context = fmt::format("row ids of fragment {} in '{}'", fragment_.id(), state_.uri);
    std::string bytes;
    if (fragment_.row_id_sequence_case() == Frag::kInlineRowIds) {
      bytes = fragment_.inline_row_ids();
    } else {
      const auto& ext = fragment_.external_row_ids();
      const std::string path = io::JoinPath(state_.uri, ext.path());
      context = fmt::format("row ids of fragment {} in '{}' (bytes [{}, {}) of '{}')", fragment_.id(), state_.uri,
                            ext.offset(), ext.offset() + ext.size(), path);
      auto file = state_.store->OpenRead(path);
      if (ext.offset() > file->size() || ext.size() > file->size() - ext.offset())
        ThrowCorrupt("{}: the file has only {} bytes", context, file->size());
      bytes = file->Read(ext.offset(), ext.size());
    }
    auto sequence = format::RowIdSequence::Decode(bytes, context);
    // The length is checked before ToVector: a corrupt segment may claim 2^60 ids.
    const uint64_t count = sequence.size();
    if (count != physical_rows() && count != physical_rows() - num_deleted())
      ThrowCorrupt("{}: {} ids for {} physical rows of which {} are deleted", context, count, physical_rows(),
                   num_deleted());
    std::vector<uint64_t> ids = sequence.ToVector();
    if (ids.size() != physical_rows()) {
      // Some writers drop deleted rows from the sequence: then id i belongs to the i-th
      // live row. Spread the ids back over physical offsets (deleted rows get none).
      std::vector<uint64_t> spread(physical_rows(), 0);
      size_t next = 0;
      for (uint64_t o = 0; o < physical_rows(); ++o)
        if (!deletions().Contains(uint32_t(o))) spread[o] = ids[next++];
      ids = std::move(spread);
    }
    row_ids_ = std::make_unique<std::vector<uint64_t>>(std::move(ids));
  }
  FixedWidthBuilder<uint64_t> b(DataType::UInt64());
  for (uint64_t o : offsets) b.Append((*row_ids_)[o]);
  return b.Finish();
}

}  // namespace lancelet::table
