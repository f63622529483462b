#include "array/ascii_case.h"
#include "index/index.h"

#include <algorithm>
#include <cctype>

namespace lancelet::index {
namespace {

constexpr IndexKind kKinds[] = {IndexKind::kBTree, IndexKind::kBitmap};

}  // namespace

const char* TypeUrl(IndexKind kind) {
  switch (kind) {
    case IndexKind::kBTree: return "/lance.table.BTreeIndexDetails";
    case IndexKind::kBitmap: return "/lance.table.BitmapIndexDetails";
  }
  return "";  // not reached: the switch names every kind
}

const char* KindName(IndexKind kind) {
  switch (kind) {
    case IndexKind::kBTree: return "BTree";
    case IndexKind::kBitmap: return "Bitmap";
  }
  return "";  // not reached: the switch names every kind
}

std::optional<IndexKind> KindOfTypeUrl(const std::string& type_url) {
  const std::string url = AsciiLower(type_url);
  for (IndexKind kind : kKinds)
    if (url == AsciiLower(TypeUrl(kind)) || url == AsciiLower(KindName(kind))) return kind;
  return std::nullopt;
}

}  // namespace lancelet::index
