#include "index/index.h"

#include <algorithm>
#include <cctype>

namespace lancelet::index {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

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
  const std::string url = Lower(type_url);
  for (IndexKind kind : kKinds)
    if (url == Lower(TypeUrl(kind)) || url == Lower(KindName(kind))) return kind;
  return std::nullopt;
}

}  // namespace lancelet::index
