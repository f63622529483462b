// Tags: names for versions, stored as the reference stores them, one JSON file per tag
// at `_refs/tags/<name>.json` holding {"branch": null, "version": N, "createdAt": T,
// "updatedAt": T, "manifestSize": B, "metadata": {}} (B: the size of that version's
// manifest file; T: RFC 3339 UTC), as lance 12.0.0 writes it. Only "version" is required
// to read one.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "io/object_store.h"
#include "lancelet/dataset.h"

namespace lancelet::table {

// The reference's rule for a tag name: not empty; ASCII letters, digits, '.', '-', '_';
// no leading or trailing '.', no "..", not ending in ".lock". InvalidArgument otherwise.
void CheckTagName(const std::string& name);

// Every tag of the dataset at `uri`, by name. Corrupt for a tag file without a version.
std::vector<TagInfo> ListTags(const io::ObjectStore& store, const std::string& uri);
// NotFound "tag 'x' does not exist in '<uri>'".
TagInfo GetTag(const io::ObjectStore& store, const std::string& uri, const std::string& name);
// The versions tags name (cleanup keeps them).
std::set<uint64_t> TaggedVersions(const io::ObjectStore& store, const std::string& uri);

// Creates a tag on an existing version; InvalidArgument when the tag exists (put-if-absent,
// so two creators cannot both win), NotFound when the version does not.
void CreateTag(io::ObjectStore& store, const std::string& uri, const std::string& name, uint64_t version);
// Points an existing tag at another version (NotFound when either is missing).
void UpdateTag(io::ObjectStore& store, const std::string& uri, const std::string& name, uint64_t version);
// NotFound when the tag does not exist.
void DeleteTag(io::ObjectStore& store, const std::string& uri, const std::string& name);

}  // namespace lancelet::table
