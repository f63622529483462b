// Fuzz target: scalar index files (index/scalar_index.h), opened and searched as a query
// would, with every check of index/btree_pages.h and index/id_bounds.h in the way.
// Input:
//   u8 flags      bit 0: a Bitmap segment (else a BTree); bit 1: ids are stable row ids
//   BTree:  u32 length, then that many bytes of page_lookup.lance; the rest is page_data.lance
//   Bitmap: the rest is bitmap_page_lookup.lance
// Each file is a whole Lance file. Searches cover every leaf kind, with number and
// string literals (a literal of the wrong type for the values is an ordinary error).
// Build with -DLANCELET_FUZZ=ON (clang, libFuzzer); tests/fuzz runs it briefly.
#include "fuzz_support.h"
#include "index/scalar_index.h"
#include "lancelet/expr.h"

namespace lancelet::fuzz {

inline const std::vector<index::IndexLeaf>& FuzzIndexLeaves() {
  static const auto* leaves = [] {
    auto* out = new std::vector<index::IndexLeaf>();
    for (const char* filter : {"v = 7", "v < 3", "v >= 40", "v BETWEEN 2 AND 9", "v IN (1, 5, 50, 4000)", "v IS NULL",
                               "NOT (v = 7)", "v > 2.5", "v = 'n3'", "v < 'n2'", "v IN ('n1', 'zz')"})
      out->push_back(index::IndexQuery::FromFilter(*ParseExpression(filter), [](const std::string&) { return true; }).leaf);
    return out;
  }();
  return *leaves;
}

inline void SearchIndexFiles(const uint8_t* data, size_t size) {
  InputReader in(data, size);
  const uint8_t flags = in.Get<uint8_t>();
  const bool bitmap = flags & 1;
  MemoryStore store;
  std::vector<std::string> files;
  if (bitmap) {
    files.push_back(std::string("idx/") + index::kBitmapLookupFile);
    store.Add(files.back(), std::string(in.Rest()));
  } else {
    files.push_back(std::string("idx/") + index::kBTreeLookupFile);
    store.Add(files.back(), std::string(in.Bytes(in.Get<uint32_t>())));
    files.push_back(std::string("idx/") + index::kBTreeDataFile);
    store.Add(files.back(), std::string(in.Rest()));
  }
  // A file claiming more rows than the harness reads is not searched (fuzz_support.h).
  for (const auto& path : files) {
    auto file = format::LanceFileReader::Open(store, path);
    for (size_t f = 0; f < file->schema().fields().size(); ++f)
      if (file->num_rows(f) > kMaxRowsRead) return;
  }
  index::IndexSource source{"fuzz", {}, {}};
  if (flags & 2) {
    source.ids = index::IdBounds{true, uint64_t(1) << 20, std::nullopt, {}};
  } else {
    source.ids.max_fragment = 3;
    source.ids.fragment_rows = {{0, 6000}, {1, 300}, {3, 70000}};  // ascending by id
  }
  auto segment = index::ScalarIndex::Open(store, "idx", bitmap ? index::IndexKind::kBitmap : index::IndexKind::kBTree,
                                          source);
  for (const auto& leaf : FuzzIndexLeaves()) {
    try {
      const index::RowAddrMap found = segment->Search(leaf);
      if (!found.fragments.empty()) {
        const auto& [fragment, rows] = *found.fragments.begin();
        const uint64_t id = uint64_t(fragment) << 32 | (rows && !rows->IsEmpty() ? rows->Min() : 0);
        (void)segment->Locate(leaf, id);
      }
    } catch (const Error&) {
    }
  }
  (void)segment->num_rows();
}

inline int FuzzIndex(const uint8_t* data, size_t size) {
  try {
    SearchIndexFiles(data, size);
  } catch (const Error&) {
  }
  return 0;
}

}  // namespace lancelet::fuzz

#ifndef LANCELET_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return lancelet::fuzz::FuzzIndex(data, size); }
#endif
