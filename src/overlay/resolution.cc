#include "overlay/resolution.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "format/gallop.h"

namespace lancelet::overlay {

ResolutionCounters& Counters() {
  static ResolutionCounters counters;
  return counters;
}

namespace {

void CountListed(uint64_t n) { Counters().cells_listed.fetch_add(n, std::memory_order_relaxed); }
void CountVisits(uint64_t n) { Counters().cells_visited.fetch_add(n, std::memory_order_relaxed); }

// The list form costs 4 bytes a cell, the run form 24 bytes a run.
Layer MakeLayer(size_t overlay, const format::RoaringBitmap& coverage) {
  Layer layer;
  layer.overlay = overlay;
  if (coverage.RunCountUpperBound() * 6 <= coverage.Cardinality()) {
    uint64_t rank = 0;
    for (const auto& run : coverage.Runs()) {
      layer.runs.push_back({run.start, run.end, rank});
      rank += run.end - run.start;
    }
    CountListed(layer.runs.size());
  } else {
    layer.cells = coverage.ToVector();
    CountListed(layer.cells.size());
  }
  return layer;
}

// The list form of `cells` (ascending, unique), or the run form when its runs average
// 32 cells or more. A scan scatters a listed cell with no more work, while a range of a
// run layer lists its cells first, which short runs do not repay.
Layer LayerOfCells(size_t overlay, std::vector<uint32_t> cells) {
  Layer layer;
  layer.overlay = overlay;
  size_t runs = 0;
  for (size_t k = 0; k < cells.size(); ++k) runs += k == 0 || cells[k] != cells[k - 1] + 1;
  if (runs * 32 <= cells.size()) {
    for (size_t k = 0; k < cells.size(); ++k) {
      if (k == 0 || cells[k] != cells[k - 1] + 1) layer.runs.push_back({cells[k], uint64_t(cells[k]) + 1, k});
      else layer.runs.back().end++;
    }
    CountListed(layer.runs.size());
  } else {
    layer.cells = std::move(cells);
    CountListed(layer.cells.size());
  }
  return layer;
}

using format::Gallop;

// For each of `values`, the first index of `sorted` whose element is not less than it
// (sorted.size() when none is). The binary searches run in lockstep: each takes the same
// steps over the same array, so the loads of one step are independent of each other and
// their cache misses overlap, and a step is a conditional move, never a mispredicted
// branch. A take's few offsets against a long cell list each miss the cache at nearly
// every step, which one search at a time pays in full.
std::vector<size_t> LowerBounds(std::span<const uint32_t> sorted, std::span<const uint64_t> values) {
  std::vector<size_t> at(values.size(), 0);
  if (sorted.empty()) return at;
  for (size_t n = sorted.size(); n > 1;) {
    const size_t half = n / 2;
    for (size_t j = 0; j < at.size(); ++j) at[j] = sorted[at[j] + half] < values[j] ? at[j] + half : at[j];
    n -= half;
  }
  for (size_t j = 0; j < at.size(); ++j) at[j] += sorted[at[j]] < values[j];
  return at;
}

// Calls fn(from, to, rank of from) for each part of a run-form layer's runs inside
// [start, end), ascending.
template <typename Fn>
void ForEachRunIn(const Layer& layer, uint64_t start, uint64_t end, Fn&& fn) {
  auto run = std::partition_point(layer.runs.begin(), layer.runs.end(),
                                  [&](const Layer::Run& r) { return r.end <= start; });
  for (; run != layer.runs.end() && run->start < end; ++run) {
    const uint64_t from = std::max<uint64_t>(start, run->start);
    fn(from, std::min(end, run->end), run->rank + (from - run->start));
  }
}

// A layer's covered cells in [start, end): the rank of the first (in the list form, also
// its index in the list) and how many.
struct Span {
  uint64_t first_rank = 0, count = 0;
};
Span CoveredIn(const Layer& layer, uint64_t start, uint64_t end) {
  if (layer.listed()) {
    const std::span<const uint32_t> cells(layer.cells);
    const auto lo = std::lower_bound(cells.begin(), cells.end(), start);
    const auto hi = std::lower_bound(lo, cells.end(), end);
    return {uint64_t(lo - cells.begin()), uint64_t(hi - lo)};
  }
  Span span;
  ForEachRunIn(layer, start, end, [&](uint64_t from, uint64_t to, uint64_t rank) {
    if (span.count == 0) span.first_rank = rank;
    span.count += to - from;
  });
  return span;
}

}  // namespace

std::shared_ptr<const FieldLayers> FieldLayers::Build(const CoverageLayers& coverage) {
  auto out = std::make_shared<FieldLayers>();
  for (const auto& layer : coverage.newest_first) out->newest_first.push_back(MakeLayer(layer.overlay, *layer.coverage));
  return out;
}

uint64_t FieldLayers::MemoryBytes() const {
  uint64_t bytes = sizeof(*this) + (merged_values ? BufferBytes(*merged_values) : 0);
  for (const auto& layer : newest_first)
    bytes += sizeof(layer) + layer.cells.size() * sizeof(uint32_t) + layer.runs.size() * sizeof(Layer::Run);
  return bytes;
}

MergedCells MergeCells(const FieldLayers& layers) {
  MergedCells out;
  uint64_t lo = UINT64_MAX, hi = 0, covered = 0;
  for (const Layer& layer : layers.newest_first) {
    if (layer.listed() && layer.cells.empty()) continue;
    lo = std::min<uint64_t>(lo, layer.listed() ? layer.cells.front() : layer.runs.front().start);
    hi = std::max<uint64_t>(hi, layer.listed() ? uint64_t(layer.cells.back()) + 1 : layer.runs.back().end);
    covered += layer.covered();
  }
  if (hi <= lo) return out;
  // A cell's slot: (layer + 1) << 40 | rank. Written oldest layer first, so the newest
  // layer covering a cell writes last and stands.
  constexpr int kSourceShift = 40;
  auto for_each_cell = [&](auto&& visit) {
    for (size_t i = layers.newest_first.size(); i-- > 0;) {
      const Layer& layer = layers.newest_first[i];
      const uint64_t tag = uint64_t(i + 1) << kSourceShift;
      if (layer.listed()) {
        for (size_t k = 0; k < layer.cells.size(); ++k) visit(layer.cells[k], tag | k);
      } else {
        for (const Layer::Run& run : layer.runs)
          for (uint64_t c = run.start; c < run.end; ++c) visit(c, tag | (run.rank + (c - run.start)));
      }
    }
  };
  auto emit = [&](uint64_t cell, uint64_t slot) {
    out.cells.push_back(uint32_t(cell));
    out.source.push_back(uint32_t((slot >> kSourceShift) - 1));
    out.ranks.push_back(slot & ((uint64_t{1} << kSourceShift) - 1));
  };
  if (hi - lo <= 8 * covered) {  // a slot per offset of the span: two linear passes
    std::vector<uint64_t> slots(hi - lo, 0);
    for_each_cell([&](uint64_t cell, uint64_t slot) { slots[cell - lo] = slot; });
    for (uint64_t j = 0; j < slots.size(); ++j)
      if (slots[j] != 0) emit(lo + j, slots[j]);
    return out;
  }
  // Cells spread thin over a long span: sort them instead, newest layer last per cell.
  std::vector<std::pair<uint32_t, uint64_t>> all;
  all.reserve(covered);
  for_each_cell([&](uint64_t cell, uint64_t slot) { all.push_back({uint32_t(cell), slot}); });
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t j = 0; j < all.size(); ++j)
    if (j + 1 == all.size() || all[j + 1].first != all[j].first) emit(all[j].first, all[j].second);
  return out;
}

std::shared_ptr<const FieldLayers> MergedLayers(std::vector<uint32_t> cells, ArrayPtr values) {
  auto out = std::make_shared<FieldLayers>();
  out->merged_values = std::move(values);
  if (!cells.empty()) out->newest_first.push_back(LayerOfCells(kMergedOverlay, std::move(cells)));
  return out;
}

std::vector<uint32_t> OverlayPatch::ListCells() const {
  if (!coverage) return {cells.begin(), cells.end()};
  std::vector<uint32_t> out;
  out.reserve(size_t(count));
  coverage->AppendMembersIn(origin, end, out);
  return out;
}

Resolution ResolveRange(const FieldLayers& layers, uint64_t start, uint64_t count) {
  Resolution out;
  const uint64_t end = start + count;
  for (const Layer& layer : layers.newest_first) {
    const Span span = CoveredIn(layer, start, end);
    if (span.count == 0) continue;
    CountVisits(layer.listed() ? span.count : 1);
    if (span.count == count) {  // every row: older layers and the base file are not needed
      out.base = WholeRead{layer.overlay, span.first_rank, count, {}};
      break;
    }
    OverlayPatch patch;
    patch.overlay = layer.overlay;
    patch.origin = uint32_t(start);
    patch.first_rank = span.first_rank;
    if (layer.listed()) {
      patch.cells = std::span<const uint32_t>(layer.cells).subspan(span.first_rank, span.count);
    } else {
      ForEachRunIn(layer, start, end, [&](uint64_t from, uint64_t to, uint64_t) {
        for (uint64_t c = from; c < to; ++c) patch.owned.push_back(uint32_t(c));
      });
      patch.cells = patch.owned;
    }
    out.patches.push_back(std::move(patch));
  }
  // Oldest first: a cell several layers cover is written by each and the newest writes
  // last. Overwriting costs less than finding which cells newer layers took.
  std::reverse(out.patches.begin(), out.patches.end());
  return out;
}

Resolution ResolveRange(const CoverageLayers& layers, uint64_t start, uint64_t count,
                        std::vector<RangeCursor>& cursors) {
  Resolution out;
  const uint64_t end = start + count;
  cursors.resize(layers.newest_first.size());
  out.patches.reserve(layers.newest_first.size());
  for (size_t l = 0; l < layers.newest_first.size(); ++l) {
    const auto& layer = layers.newest_first[l];
    const format::RoaringBitmap& coverage = *layer.coverage;
    RangeCursor& cursor = cursors[l];
    const uint64_t first_rank = cursor.position == start ? cursor.rank : coverage.Rank(uint32_t(start));
    const uint64_t covered = coverage.CountInRange(start, end);
    cursor = {end, first_rank + covered};
    // Under a layer covering every row, older layers only move their cursors on.
    if (covered == 0 || out.base) continue;
    if (covered == count) {  // every row: older layers and the base file are not needed
      out.base = WholeRead{layer.overlay, first_rank, count, {}};
      continue;
    }
    OverlayPatch patch;
    patch.overlay = layer.overlay;
    patch.origin = uint32_t(start);
    patch.first_rank = first_rank;
    patch.coverage = &coverage;
    patch.end = end;
    patch.count = covered;
    CountVisits(covered);  // once each, by the scatter's walk
    out.patches.push_back(std::move(patch));
  }
  std::reverse(out.patches.begin(), out.patches.end());  // oldest first, as above
  return out;
}

// A layer with more than this many cells per wanted offset is searched offset by offset.
constexpr size_t kSearchEachOffset = 16;

namespace {

// Resolves `offsets` layer by layer, newest first. find(layer, wanted) returns (index into
// wanted, rank) for every wanted offset the layer covers, ascending by index; `wanted` is
// the offsets ascending.
template <typename Layers, typename Find>
Resolution ResolveOffsetsWith(const Layers& layers, std::span<const uint64_t> offsets, Find&& find) {
  Resolution out;
  if (offsets.empty() || layers.empty()) return out;
  // Walk the offsets in ascending order: `order` lists their positions so (stable, so a
  // repeated offset keeps its positions in order). Offsets already ascending (a scan's
  // rows, an index lookup's one row) are walked as they are.
  const bool sorted = std::is_sorted(offsets.begin(), offsets.end());
  std::vector<uint32_t> order;
  std::vector<uint64_t> sorted_copy;
  std::span<const uint64_t> ascending = offsets;
  if (!sorted) {
    order.resize(offsets.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return offsets[a] < offsets[b]; });
    sorted_copy.resize(offsets.size());
    for (size_t i = 0; i < order.size(); ++i) sorted_copy[i] = offsets[order[i]];
    ascending = sorted_copy;
  }

  std::vector<bool> claimed;  // sized at the first patch: most lookups meet no overlay
  for (const auto& layer : layers.newest_first) {
    if constexpr (requires { layer.prefix_end; }) {
      // A layer covering [0, prefix_end) past every offset: the rank of an offset is itself.
      if (layer.prefix_end > ascending.back()) {
        out.base = WholeRead{layer.overlay, 0, offsets.size(), {offsets.begin(), offsets.end()}};
        break;
      }
    }
    std::vector<std::pair<uint32_t, uint64_t>> met = find(layer, ascending);
    if (met.empty()) continue;
    if (!sorted) {
      for (auto& [index, rank] : met) index = order[index];  // to positions
      std::sort(met.begin(), met.end());  // by position: patches ascend
    }
    if (met.size() == offsets.size()) {  // every offset: older layers and the base are not needed
      WholeRead base{layer.overlay, 0, offsets.size(), {}};
      base.ranks.reserve(met.size());
      for (const auto& [position, rank] : met) base.ranks.push_back(rank);
      out.base = std::move(base);
      break;
    }
    OverlayPatch patch;
    patch.overlay = layer.overlay;
    if (claimed.empty()) claimed.assign(offsets.size(), false);
    for (const auto& [position, rank] : met) {
      if (claimed[position]) continue;
      claimed[position] = true;
      patch.owned.push_back(position);
      patch.ranks.push_back(rank);
    }
    if (patch.owned.empty()) continue;
    patch.cells = patch.owned;
    out.patches.push_back(std::move(patch));
  }
  return out;
}

}  // namespace

Resolution ResolveOffsets(const FieldLayers& layers, std::span<const uint64_t> offsets) {
  return ResolveOffsetsWith(layers, offsets, [](const Layer& layer, std::span<const uint64_t> wanted) {
    // (index, rank) of every wanted offset this layer covers, claimed or not. Both sides
    // leap: the offsets to the next covered cell, the layer to the next offset.
    std::vector<std::pair<uint32_t, uint64_t>> met;
    uint64_t visits = 0;
    size_t i = 0, c = 0;
    if (layer.listed()) {
      const std::span<const uint32_t> cells(layer.cells);
      if (cells.size() > kSearchEachOffset * wanted.size()) {  // far fewer offsets than cells
        const std::vector<size_t> at = LowerBounds(cells, wanted);
        for (i = 0; i < wanted.size(); ++i)
          if (at[i] < cells.size() && cells[at[i]] == wanted[i]) met.push_back({uint32_t(i), at[i]});
        visits += wanted.size();
      }
      while (i < wanted.size() && c < cells.size()) {
        ++visits;
        if (cells[c] < wanted[i]) c = Gallop(cells, c, wanted[i]);
        else if (wanted[i] < cells[c]) i = Gallop(wanted, i, cells[c]);
        else met.push_back({uint32_t(i++), c});  // the next offset may repeat this cell
      }
    } else {
      const std::span<const Layer::Run> runs(layer.runs);
      while (i < wanted.size() && c < runs.size()) {
        ++visits;
        if (runs[c].end <= wanted[i]) c = Gallop(runs, c, wanted[i] + 1, [](const Layer::Run& r) { return r.end; });
        else if (wanted[i] < runs[c].start) i = Gallop(wanted, i, runs[c].start);
        else met.push_back({uint32_t(i), runs[c].rank + (wanted[i] - runs[c].start)}), ++i;
      }
    }
    CountVisits(visits);
    return met;
  });
}

Resolution ResolveOffsets(const CoverageLayers& layers, std::span<const uint64_t> offsets) {
  return ResolveOffsetsWith(layers, offsets,
                            [](const CoverageLayers::Layer& layer, std::span<const uint64_t> wanted) {
                              std::vector<std::pair<uint32_t, uint64_t>> met;
                              if (layer.prefix_end > 0) {  // ascending: members up to the first past the end
                                for (size_t i = 0; i < wanted.size() && wanted[i] < layer.prefix_end; ++i)
                                  met.push_back({uint32_t(i), wanted[i]});
                                return met;
                              }
                              Counters().offsets_looked_up.fetch_add(wanted.size(), std::memory_order_relaxed);
                              for (const auto& m : layer.coverage->MembersAmong(wanted))
                                met.push_back({uint32_t(m.index), m.rank});
                              return met;
                            });
}

std::shared_ptr<const CoverageLayers> CoverageLayers::Of(const FragmentOverlays& overlays, int32_t field_id) {
  auto out = std::make_shared<CoverageLayers>();
  const auto& list = overlays.overlays();
  for (size_t i = list.size(); i-- > 0;) {
    const Overlay& o = list[i];
    const int f = o.FieldIndex(field_id);
    if (f < 0 || o.Coverage(size_t(f))->IsEmpty()) continue;
    const auto& coverage = o.Coverage(size_t(f));
    const uint64_t cells = coverage->Cardinality();
    const bool prefix = coverage->Min() == 0 && uint64_t(coverage->Max()) + 1 == cells;
    out->newest_first.push_back({i, coverage, prefix ? cells : 0});
  }
  return out;
}

}  // namespace lancelet::overlay
