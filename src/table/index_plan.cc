#include "table/index_plan.h"

#include <algorithm>
#include <set>

#include "index/index_query.h"
#include "index/scalar_index.h"
#include "table/feature_flags.h"
#include "table/fragment_reader.h"
#include "table/index_answers.h"
#include "table/index_section.h"

namespace lancelet::table {

namespace {

// A fragment with more than kDenseRows candidates, and more than 1/kDenseFraction of its
// rows, is scanned whole. Measured (bench/index_compare.sh data, scattered values, two
// int64 columns read): by offset wins 3.5 ms to 5.0 ms at 0.1% of the rows, ties at
// 0.3-0.5%, loses 7.2 ms to 6.1 ms at 1%.
constexpr uint64_t kDenseFraction = 256;
constexpr uint64_t kDenseRows = 256;

// The changed cells of a segment are searched in about this many pages (of at least
// one cell), listed in the segment's own page lookup: a point lookup then evaluates the
// filter on one small page of them at most, and on none when no page's range holds the
// value, rather than on every changed cell.
constexpr int64_t kStalePages = 256;

// The segments lancelet can query, by column (a struct path joined with '.', as filters
// name it): one index name per column (the first listed), all its segments. A nested
// field whose joined name a filter would resolve to another field is left out.
std::map<std::string, std::vector<IndexSegment>> UsableSegments(const DatasetState& state) {
  std::map<std::string, std::vector<IndexSegment>> out;
  std::map<std::string, std::string> chosen;  // column -> index name
  for (const auto& meta : state.indices.indices()) {
    auto kind = index::KindOfTypeUrl(meta.index_details().type_url());
    if (!kind || meta.fields_size() != 1) continue;
    auto path = state.schema.StructPathOf(meta.fields(0));
    if (!path || !index::CanIndex(*path->field->type)) continue;
    auto named = state.schema.StructPathNamed(path->name);
    if (!named || named->field != path->field) continue;
    auto [it, inserted] = chosen.emplace(path->name, meta.name());
    if (it->second != meta.name()) continue;
    const std::string column = path->name;
    out[column].push_back(IndexSegment{&meta, *kind, IndexFragments(meta), std::move(*path)});
  }
  return out;
}

// The cells a segment has not seen, with their new values (DatasetState::StaleCells).
std::shared_ptr<const DatasetState::StaleCells> StaleCellsOf(const DatasetState& state, const IndexSegment& segment) {
  return state.CachedStaleCells(segment.meta->uuid().uuid(), [&] {
    const bool row_ids = state.manifest.reader_feature_flags() & kFlagStableRowIds;
    auto out = std::make_shared<DatasetState::StaleCells>();
    std::vector<ArrayPtr> values;
    std::vector<uint64_t> ids;
    for (const auto& fragment : state.manifest.fragments()) {
      if (fragment.overlays_size() == 0 || !segment.Covers(fragment.id())) continue;
      FragmentReader reader(state, fragment);
      auto changed = reader.ChangedCells(segment.path, segment.meta->dataset_version());
      format::RoaringBitmap all = changed.unreadable;
      for (const auto& offsets : changed.offsets) all |= format::RoaringBitmap::FromValues(offsets);
      if (all.IsEmpty()) continue;
      out->changed[fragment.id()] = all.Cardinality();
      out->bytes += all.PortableSizeInBytes();
      out->offsets[fragment.id()] = std::move(all);
      if (!changed.unreadable.IsEmpty()) {
        out->bytes += changed.unreadable.PortableSizeInBytes();
        out->unreadable.emplace(fragment.id(), std::move(changed.unreadable));
      }
      for (size_t k = 0; k < changed.values.size(); ++k) {
        values.push_back(std::move(changed.values[k]));
        const auto& offsets = changed.offsets[k];
        if (row_ids) {
          const std::vector<uint64_t> wide(offsets.begin(), offsets.end());
          ArrayPtr found = reader.RowIds(wide);
          ids.insert(ids.end(), found->values<uint64_t>(), found->values<uint64_t>() + found->length);
        } else {
          for (uint32_t offset : offsets) ids.push_back(fragment.id() << 32 | offset);
        }
      }
    }
    auto opened = state.OpenIndex(*segment.meta, segment.kind);
    out->with_values = opened;
    if (!ids.empty()) {
      ArrayPtr all = Concatenate(values);
      const int64_t page_rows = std::max<int64_t>(1, (int64_t(ids.size()) + kStalePages - 1) / kStalePages);
      out->values = index::InMemoryBTree(*all, ids, page_rows);
      out->with_values = index::WithRows(opened, out->values);
      out->bytes += 2 * (BufferBytes(*all) + ids.size() * sizeof(uint64_t));  // the sorted copy, and what sorting held
    }
    return std::shared_ptr<const DatasetState::StaleCells>(std::move(out));
  });
}

// nullopt: every row of the fragment.
using Rows = std::optional<format::RoaringBitmap>;

Rows Evaluate(const index::IndexQuery& q, const std::map<const index::IndexLeaf*, LeafAnswer>& answers,
              const lance::table::DataFragment& fragment) {
  using Kind = index::IndexQuery::Kind;
  if (q.kind == Kind::kLeaf) {
    const LeafAnswer& a = answers.at(&q.leaf);
    const uint32_t id = uint32_t(fragment.id());
    const int s = a.SegmentFor(fragment.id());
    if (s < 0) return std::nullopt;
    // The changed cells whose new values may match the leaf: the index's own values
    // for them are stale, so they are candidates whatever it says.
    format::RoaringBitmap rows;
    if (auto it = a.stale[s]->unreadable.find(id); it != a.stale[s]->unreadable.end()) rows |= it->second;
    auto hit = a.hits[s].fragments.find(id);
    if (hit != a.hits[s].fragments.end()) {
      if (!hit->second) return std::nullopt;
      rows |= *hit->second;  // within the fragment's rows: the search checked its ids (IdBounds)
    }
    return rows;
  }
  if (q.kind == Kind::kAny) return std::nullopt;
  Rows acc;
  bool first = true;
  for (const auto& child : q.children) {
    Rows rows = Evaluate(child, answers, fragment);
    if (q.kind == Kind::kOr) {
      if (!rows) return std::nullopt;
      if (first) acc = std::move(rows);
      else *acc |= *rows;
      first = false;
    } else if (rows) {
      if (!acc) acc = std::move(rows);
      else *acc &= *rows;
    }
  }
  return acc;
}

// Under stable row ids an index holds row ids: the same rows by address.
index::RowAddrMap ToAddresses(const DatasetState& state, const index::RowAddrMap& row_ids) {
  auto located = RowIdAddresses(state);
  index::RowAddrMap out;
  for (const auto& [fragment, rows] : row_ids.fragments) {
    if (!rows) continue;  // "every row" has no meaning for row ids
    const uint64_t high = uint64_t(fragment) << 32;  // (clang 14 cannot capture a structured binding)
    rows->ForEach([&](uint32_t low) {
      const uint64_t id = high | low;
      auto it = std::lower_bound(located->begin(), located->end(), std::make_pair(id, uint64_t(0)));
      if (it != located->end() && it->first == id) out.Add(it->second);
    });
  }
  return out;
}

}  // namespace

std::shared_ptr<const DatasetState::RowIdAddresses> RowIdAddresses(const DatasetState& state) {
  return state.CachedRowIdAddresses([&] {
    auto all = std::make_shared<DatasetState::RowIdAddresses>();
    for (const auto& fragment : state.manifest.fragments()) {
      FragmentReader reader(state, fragment);
      std::vector<uint64_t> offsets(reader.physical_rows());
      for (uint64_t o = 0; o < offsets.size(); ++o) offsets[o] = o;
      auto ids = reader.RowIds(offsets);
      const auto& deleted = reader.deletions();
      for (uint64_t o = 0; o < offsets.size(); ++o)
        if (!deleted.Contains(uint32_t(o))) all->emplace_back(ids->values<uint64_t>()[o], fragment.id() << 32 | o);
    }
    std::sort(all->begin(), all->end());
    return all;
  });
}

std::optional<IndexedRows> PlanIndexedRows(const DatasetState& state, const Expr& filter, bool count_stale_matches) {
  if (state.indices.indices_size() == 0) return std::nullopt;
  const bool row_ids = state.manifest.reader_feature_flags() & kFlagStableRowIds;
  auto plan = std::make_shared<IndexAnswers>();
  plan->segments = UsableSegments(state);
  const auto& segments = plan->segments;
  if (segments.empty()) return std::nullopt;
  plan->query = index::IndexQuery::FromFilter(filter, [&](const std::string& c) { return segments.count(c) > 0; });
  const auto& query = plan->query;
  if (query.kind == index::IndexQuery::Kind::kAny) return std::nullopt;

  IndexedRows out;
  auto& answers = plan->answers;
  std::vector<const index::IndexLeaf*> leaves;
  query.Leaves(leaves);
  std::set<uint64_t> live;
  for (const auto& f : state.manifest.fragments()) live.insert(f.id());
  for (const auto* leaf : leaves) {
    LeafAnswer& a = answers[leaf];
    for (const auto& segment : segments.at(leaf->column)) {
      a.segments.push_back(&segment);
      a.stale.push_back(StaleCellsOf(state, segment));
      const auto& stale = *a.stale.back();
      a.hits.push_back(stale.with_values->Search(*leaf));
      if (row_ids) a.hits.back() = ToAddresses(state, a.hits.back());
      IndexedRows::Use use{segment.meta->name(), leaf->ToString(), 0, 0, 0, 0};
      for (uint64_t f : live) use.fragments += segment.Covers(f);
      for (const auto& [fragment, cells] : stale.changed) use.stale += cells;
      if (count_stale_matches) {
        for (const auto& [fragment, rows] : stale.unreadable) use.stale_matching += rows.Cardinality();
        index::RowAddrMap matching = stale.values ? stale.values->Search(*leaf) : index::RowAddrMap{};
        if (row_ids) matching = ToAddresses(state, matching);
        for (const auto& [fragment, rows] : matching.fragments) use.stale_matching += rows->Cardinality();
        index::RowAddrMap own = state.OpenIndex(*segment.meta, segment.kind)->Search(*leaf);
        if (row_ids) own = ToAddresses(state, own);
        for (const auto& [fragment, rows] : own.fragments)
          if (live.count(fragment)) use.hits += rows ? rows->Cardinality() : 0;
      }
      out.uses.push_back(std::move(use));
    }
  }
  for (const auto& fragment : state.manifest.fragments()) {
    Rows rows = Evaluate(query, answers, fragment);
    // Reading rows by offset costs more than a sequential scan once they are dense.
    if (!rows) continue;
    const uint64_t n = rows->Cardinality();
    if (n > kDenseRows && n > fragment.physical_rows() / kDenseFraction) continue;
    std::vector<uint64_t> offsets;
    offsets.reserve(n);
    rows->ForEach([&](uint32_t o) { offsets.push_back(o); });
    out.candidates.emplace(fragment.id(), std::move(offsets));
  }
  out.answers = std::move(plan);
  return out;
}

}  // namespace lancelet::table
