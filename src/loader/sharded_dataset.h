// ShardedDataset over a given store (tests count its reads through io::IoStats).
#pragma once

#include <memory>
#include <string>

#include "io/object_store.h"
#include "lancelet/loader.h"

namespace lancelet::loader {

std::shared_ptr<ShardedDataset> OpenShardedDataset(std::shared_ptr<io::ObjectStore> store, const std::string& path,
                                                   LoaderOptions options);

}  // namespace lancelet::loader
