// Shared by the benchmark drivers: the size of what a dataset version reads from.
#pragma once

#include <cstdint>

#include "lancelet/dataset.h"
#include "table/dataset_state.h"

namespace lancelet::bench {

// Bytes of the data files of the dataset's current version.
inline uint64_t DataFileBytes(const Dataset& ds) {
  const auto& state = table::StateOf(ds);
  uint64_t total = 0;
  for (const auto& fragment : state.manifest.fragments())
    for (const auto& file : fragment.files()) total += state.store->OpenRead(state.DataPath(file.path()))->size();
  return total;
}

}  // namespace lancelet::bench
