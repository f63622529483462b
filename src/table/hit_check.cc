#include "table/hit_check.h"

#include <fmt/format.h>

#include "lancelet/error.h"
#include "table/feature_flags.h"
#include "table/fragment_reader.h"
#include "table/index_section.h"

namespace lancelet::table {

namespace {

bool HasOr(const index::IndexQuery& q) {
  if (q.kind == index::IndexQuery::Kind::kOr) return true;
  for (const auto& child : q.children)
    if (HasOr(child)) return true;
  return false;
}

[[noreturn]] void ThrowWrongHit(const DatasetState& state, const IndexSegment& segment, const index::IndexLeaf& leaf,
                                const lance::table::DataFragment& fragment, uint64_t offset) {
  // What the segment holds for the row: its address, or under stable row ids its id.
  uint64_t id = fragment.id() << 32 | offset;
  if (state.manifest.reader_feature_flags() & kFlagStableRowIds) {
    const uint64_t at[] = {offset};
    id = FragmentReader(state, fragment).RowIds(at)->values<uint64_t>()[0];
  }
  auto places = state.OpenIndex(*segment.meta, segment.kind)->Locate(leaf, id);
  ThrowCorrupt("index '{}': {}: it lists row {} of fragment {} as matching {}, but the row's value does not (the "
               "index file is damaged: rebuild the index)",
               segment.meta->name(),
               places.empty() ? fmt::format("'{}'", state.IndexDirectory(*segment.meta)) : places[0], offset,
               fragment.id(), leaf.ToString());
}

}  // namespace

void CheckIndexHits(const DatasetState& state, const IndexAnswers& answers,
                    const lance::table::DataFragment& fragment, std::span<const uint64_t> offsets,
                    const RecordBatch& filter_rows, const std::vector<int64_t>& passed) {
  // The positions to check: those the filter did not pass, or all of them under an OR.
  std::vector<int64_t> check;
  const bool all = HasOr(answers.query);
  for (size_t p = 0, next = 0; p < offsets.size(); ++p) {
    const bool pass = next < passed.size() && passed[next] == int64_t(p);
    next += pass;
    if (!pass || all) check.push_back(int64_t(p));
  }
  if (check.empty()) return;
  for (const auto& [leaf, answer] : answers.answers) {
    const int s = answer.SegmentFor(fragment.id());
    if (s < 0) continue;
    auto hits = answer.hits[size_t(s)].fragments.find(uint32_t(fragment.id()));
    if (hits == answer.hits[size_t(s)].fragments.end() || !hits->second) continue;
    const auto& changed = answer.stale[size_t(s)]->offsets;
    auto stale = changed.find(fragment.id());
    std::vector<int64_t> listed;  // checked positions the segment returned, its value current
    for (int64_t p : check) {
      const uint32_t offset = uint32_t(offsets[size_t(p)]);
      if (hits->second->Contains(offset) && (stale == changed.end() || !stale->second.Contains(offset)))
        listed.push_back(p);
    }
    if (listed.empty()) continue;
    std::vector<ArrayPtr> columns;
    for (const auto& column : filter_rows.columns()) columns.push_back(Take(*column, listed));
    const RecordBatch rows(filter_rows.schema(), std::move(columns), int64_t(listed.size()));
    const std::vector<int64_t> holds = EvaluateSelection(*Bind(*leaf->AsFilter(), *rows.schema()), rows);
    for (size_t k = 0, next = 0; k < listed.size(); ++k) {
      if (next < holds.size() && holds[next] == int64_t(k)) {
        ++next;
        continue;
      }
      ThrowWrongHit(state, *answer.segments[size_t(s)], *leaf, fragment, offsets[size_t(listed[k])]);
    }
  }
}

}  // namespace lancelet::table
