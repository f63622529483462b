#include "table/index_plan.h"

#include <algorithm>
#include <set>

#include "index/index_query.h"
#include "index/scalar_index.h"
#include "table/feature_flags.h"
#include "table/fragment_reader.h"
#include "table/index_section.h"

namespace lancelet::table {

namespace {

// A fragment with more than kDenseRows candidates, and more than 1/kDenseFraction of its
// rows, is scanned whole. Measured (bench/index_compare.sh data, scattered values, two
// int64 columns read): by offset wins 3.5 ms to 5.0 ms at 0.1% of the rows, ties at
// 0.3-0.5%, loses 7.2 ms to 6.1 ms at 1%.
constexpr uint64_t kDenseFraction = 256;
constexpr uint64_t kDenseRows = 256;

struct Segment {
  const lance::table::IndexMetadata* meta;
  index::IndexKind kind;
  std::optional<format::RoaringBitmap> fragments;  // nullopt: every fragment
  size_t field_index = 0;                           // in the dataset schema

  bool Covers(uint64_t fragment_id) const { return !fragments || fragments->Contains(uint32_t(fragment_id)); }
};

// The segments lancelet can query, by column name: one index name per column (the first
// listed), all its segments.
std::map<std::string, std::vector<Segment>> UsableSegments(const DatasetState& state) {
  std::map<std::string, std::vector<Segment>> out;
  std::map<std::string, std::string> chosen;  // column -> index name
  for (const auto& meta : state.indices.indices()) {
    auto kind = index::KindOfTypeUrl(meta.index_details().type_url());
    if (!kind || meta.fields_size() != 1) continue;
    const format::LanceField* field = state.schema.FindTopLevelById(meta.fields(0));
    if (!field || !index::CanIndex(*field->type)) continue;
    auto [it, inserted] = chosen.emplace(field->name, meta.name());
    if (it->second != meta.name()) continue;
    out[field->name].push_back(
        Segment{&meta, *kind, IndexFragments(meta), size_t(field - state.schema.fields().data())});
  }
  return out;
}

// One leaf's answer: per segment, its hits by fragment.
struct LeafAnswer {
  std::vector<const Segment*> segments;
  std::vector<index::RowAddrMap> hits;
  std::vector<size_t> use;  // index into IndexedRows::uses
  // Rows of a column of the field's values where the leaf is TRUE.
  std::function<std::vector<int64_t>(const ArrayData&)> select;
};

// nullopt: every row of the fragment.
using Rows = std::optional<format::RoaringBitmap>;

Rows Evaluate(const index::IndexQuery& q, const std::map<const index::IndexLeaf*, LeafAnswer>& answers,
              const DatasetState& state, const FragmentReader& reader, IndexedRows& out) {
  const lance::table::DataFragment& fragment = reader.fragment();
  using Kind = index::IndexQuery::Kind;
  if (q.kind == Kind::kLeaf) {
    const LeafAnswer& a = answers.at(&q.leaf);
    for (size_t s = 0; s < a.segments.size(); ++s) {
      if (!a.segments[s]->Covers(fragment.id())) continue;
      // The changed cells whose new values may match the leaf: the index's own values
      // for them are stale, so they are candidates whatever it says.
      uint64_t changed = 0;
      format::RoaringBitmap rows = reader.ChangedCellsSelected(a.segments[s]->field_index,
                                                               a.segments[s]->meta->dataset_version(), a.select, &changed);
      out.uses[a.use[s]].stale += changed;
      out.uses[a.use[s]].stale_matching += rows.Cardinality();
      auto hit = a.hits[s].fragments.find(uint32_t(fragment.id()));
      if (hit != a.hits[s].fragments.end()) {
        if (!hit->second) return std::nullopt;
        if (!hit->second->IsEmpty() && hit->second->Max() >= fragment.physical_rows())
          ThrowCorrupt("'{}': index '{}' (segment {}) lists row {} of fragment {}, which has {} rows", state.uri,
                       a.segments[s]->meta->name(), UuidText(a.segments[s]->meta->uuid().uuid()),
                       hit->second->Max(), fragment.id(), fragment.physical_rows());
        rows |= *hit->second;
      }
      return rows;
    }
    return std::nullopt;
  }
  if (q.kind == Kind::kAny) return std::nullopt;
  Rows acc;
  bool first = true;
  for (const auto& child : q.children) {
    Rows rows = Evaluate(child, answers, state, reader, out);
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
  auto located = state.CachedRowIdAddresses([&] {
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
  index::RowAddrMap out;
  for (const auto& [high, rows] : row_ids.fragments) {
    if (!rows) continue;  // "every row" has no meaning for row ids
    rows->ForEach([&](uint32_t low) {
      const uint64_t id = uint64_t(high) << 32 | low;
      auto it = std::lower_bound(located->begin(), located->end(), std::make_pair(id, uint64_t(0)));
      if (it != located->end() && it->first == id) out.Add(it->second);
    });
  }
  return out;
}

}  // namespace

std::optional<IndexedRows> PlanIndexedRows(const DatasetState& state, const Expr& filter) {
  if (state.indices.indices_size() == 0) return std::nullopt;
  const bool row_ids = state.manifest.reader_feature_flags() & kFlagStableRowIds;
  const auto segments = UsableSegments(state);
  if (segments.empty()) return std::nullopt;
  const auto query = index::IndexQuery::FromFilter(filter, [&](const std::string& c) { return segments.count(c) > 0; });
  if (query.kind == index::IndexQuery::Kind::kAny) return std::nullopt;

  IndexedRows out;
  std::map<const index::IndexLeaf*, LeafAnswer> answers;
  std::vector<const index::IndexLeaf*> leaves;
  query.Leaves(leaves);
  std::set<uint64_t> live;
  for (const auto& f : state.manifest.fragments()) live.insert(f.id());
  for (const auto* leaf : leaves) {
    LeafAnswer& a = answers[leaf];
    const auto& column_segments = segments.at(leaf->column);
    a.select = leaf->Selector(state.schema.fields()[column_segments[0].field_index].type);
    for (const auto& segment : column_segments) {
      a.segments.push_back(&segment);
      a.hits.push_back(state.OpenIndex(*segment.meta, segment.kind)->Search(*leaf));
      if (row_ids) a.hits.back() = ToAddresses(state, a.hits.back());
      IndexedRows::Use use{segment.meta->name(), leaf->ToString(), 0, 0, 0};
      for (uint64_t f : live) use.fragments += segment.Covers(f);
      for (const auto& [fragment, rows] : a.hits.back().fragments)
        if (live.count(fragment)) use.hits += rows ? rows->Cardinality() : 0;
      a.use.push_back(out.uses.size());
      out.uses.push_back(std::move(use));
    }
  }
  for (const auto& fragment : state.manifest.fragments()) {
    FragmentReader reader(state, fragment);
    Rows rows = Evaluate(query, answers, state, reader, out);
    // Reading rows by offset costs more than a sequential scan once they are dense.
    if (!rows) continue;
    const uint64_t n = rows->Cardinality();
    if (n > kDenseRows && n > fragment.physical_rows() / kDenseFraction) continue;
    std::vector<uint64_t> offsets;
    offsets.reserve(rows->Cardinality());
    rows->ForEach([&](uint32_t o) { offsets.push_back(o); });
    out.candidates.emplace(fragment.id(), std::move(offsets));
  }
  return out;
}

}  // namespace lancelet::table
