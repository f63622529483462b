// Arrow IPC files and streams as inputs.
#pragma once

#include <memory>
#include <string>

#include "lancelet/record_batch.h"
#include "lancelet/storage_options.h"

namespace lancelet::text {

// The batches of the Arrow IPC file or stream at `path` (a path or URI of any store,
// opened with `storage_options`),
// as they are: OpenTextInput conforms them to a schema when it is given one.
std::unique_ptr<RecordBatchReader> OpenArrowIpc(const std::string& path, const StorageOptions& storage_options = {});

}  // namespace lancelet::text
