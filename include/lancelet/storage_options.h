// Options for the store that holds a dataset, keyed as the reference keys its
// `storage_options` (allow_http, timeout, aws_region, ...). Keys are case-insensitive.
//
// The local file system and memory:// need none of them: they accept every key the
// reference knows and use none, so one set of options serves a dataset wherever it lives.
// A key the reference does not know is refused, naming it, rather than ignored: a typo
// would otherwise go unnoticed until the store that needed it was used.
#pragma once

#include <map>
#include <string>

namespace lancelet {

using StorageOptions = std::map<std::string, std::string>;

}  // namespace lancelet
