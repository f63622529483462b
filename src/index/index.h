// The kinds of index lancelet knows, and the base every opened index segment derives
// from. A kind is known by name and by the type URL of its details in the manifest; a
// type URL or a request lancelet does not know is refused by name, never mapped to a
// kind it happens to have (a third kind must be added to kKinds, and every switch over
// IndexKind then fails to compile until it says what that kind does).
//
// Today's kinds are scalar (ScalarIndex: a filter on one column narrowed to candidate
// row ids). Vector indexes (IVF, with scored candidates) derive from Index beside it.
#pragma once

#include <optional>
#include <string>

namespace lancelet::index {

enum class IndexKind { kBTree, kBitmap };

// "/lance.table.BTreeIndexDetails", "/lance.table.BitmapIndexDetails".
const char* TypeUrl(IndexKind kind);
const char* KindName(IndexKind kind);  // "BTree", "Bitmap"
// The kind a type URL or a kind's name names (compared case-insensitively, as the
// reference does), or nullopt for one lancelet does not know.
std::optional<IndexKind> KindOfTypeUrl(const std::string& type_url);

class Index {
 public:
  virtual ~Index() = default;
  virtual IndexKind kind() const = 0;
  virtual uint64_t num_rows() const = 0;  // rows indexed
};

}  // namespace lancelet::index
