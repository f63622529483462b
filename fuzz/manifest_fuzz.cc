// Fuzz target: manifest files. The input is a whole manifest file (transaction section,
// Manifest protobuf, 16-byte footer); the schema is then loaded as a dataset would, and
// inline row id / version sequences are decoded.
// Build with -DLANCELET_FUZZ=ON (clang, libFuzzer); tests/fuzz runs it briefly.
#include "format/lance_schema.h"
#include "format/row_id_sequence.h"
#include "fuzz_support.h"
#include "table/manifest_store.h"
#include "table.pb.h"

namespace lancelet::fuzz {
inline int FuzzManifest(const uint8_t* data, size_t size) {
  try {
    MemoryStore store;
    store.Add("t.lance/_versions/1.manifest", std::string(reinterpret_cast<const char*>(data), size));
    const lance::table::Manifest manifest = table::ReadManifest(store, "t.lance/_versions/1.manifest");
    Metadata metadata(manifest.schema_metadata().begin(), manifest.schema_metadata().end());
    const auto schema = format::LanceSchema::FromProto(manifest.fields(), metadata);
    (void)schema.ToArrow();
    for (const auto& fragment : manifest.fragments()) {
      if (fragment.has_inline_row_ids()) {
        auto ids = format::RowIdSequence::Decode(fragment.inline_row_ids(), "fuzz row ids");
        if (ids.size() <= kMaxRowsRead) (void)ids.ToVector();
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
}  // namespace lancelet::fuzz

#ifndef LANCELET_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return lancelet::fuzz::FuzzManifest(data, size);
}
#endif
