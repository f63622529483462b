#include "table/cell_checks.h"

#include <algorithm>

#include "lancelet/error.h"

namespace lancelet::table {

size_t CheckCells(const DatasetState& state, std::string_view who, uint64_t fragment_id,
                  const lance::table::DataFragment& fragment, const std::string& column,
                  const std::vector<uint32_t>& offsets, const ArrayPtr& values) {
  const auto& fields = state.schema.fields();
  auto it = std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return f.name == column; });
  if (it == fields.end())
    ThrowInvalid("{} '{}': no column '{}' (columns: {})", who, state.uri, column, state.arrow_schema->ToString());
  if (it->IsBlob())
    ThrowInvalid("{} '{}': column '{}' is a blob column, whose values live outside the data file; "
                 "blob columns cannot take overlays",
                 who, state.uri, column);
  if (!values || !values->type->Equals(*it->type))
    ThrowInvalid("{} '{}' fragment {}: column '{}' has type {}, but the values have type {}", who, state.uri,
                 fragment_id, column, it->type->ToString(), values ? values->type->ToString() : "none");
  if (int64_t(offsets.size()) != values->length)
    ThrowInvalid("{} '{}' fragment {} column '{}': {} offsets but {} values", who, state.uri, fragment_id, column,
                 offsets.size(), values->length);
  for (size_t i = 0; i < offsets.size(); ++i) {
    if (i > 0 && offsets[i] <= offsets[i - 1])
      ThrowInvalid("{} '{}' fragment {} column '{}': offsets must be strictly increasing, but offset {} "
                   "follows {} at position {}",
                   who, state.uri, fragment_id, column, offsets[i], offsets[i - 1], i);
    if (offsets[i] >= fragment.physical_rows())
      ThrowInvalid("{} '{}' fragment {} column '{}': offset {} is at or beyond the fragment's {} physical rows", who,
                   state.uri, fragment_id, column, offsets[i], fragment.physical_rows());
  }
  return size_t(it - fields.begin());
}

void CheckTakesOverlays(const DatasetState& state, std::string_view who, const lance::table::DataFragment& fragment) {
  for (const auto& file : fragment.files())
    if (IsLegacyDataFile(file))
      ThrowNotSupported("{} '{}': fragment {} uses the legacy Lance file format (0.1/0.2), which takes no overlays; "
                        "migrate the dataset by writing a copy with data_storage_version 2.0 or newer (lancelet: "
                        "scan --format arrow, then create --from)",
                        who, state.uri, fragment.id());
}

}  // namespace lancelet::table
