// protobuf logs a "[libprotobuf ERROR ...]" line to stderr when a message fails to parse
// (e.g. a corrupt manifest). Every such failure already becomes a Corrupt error naming
// the file, so protobuf's own line is noise before ours.
#pragma once

namespace lancelet::format {

// Installs a no-op protobuf log handler, once per process (later calls do nothing).
// Called where datasets are opened and manifests read, and at CLI start.
void SilenceProtobufLogging();

}  // namespace lancelet::format
