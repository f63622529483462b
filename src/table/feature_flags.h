// Manifest feature flags: bits a reader (or writer) must understand before touching a
// dataset. Bits this build understands are listed here; any other bit is refused.
#pragma once

#include <cstdint>
#include <string>

#include "table.pb.h"

namespace lancelet::table {

inline constexpr uint64_t kFlagDeletionFiles = 1;
inline constexpr uint64_t kFlagStableRowIds = 2;
inline constexpr uint64_t kFlagUseV2FormatDeprecated = 4;
inline constexpr uint64_t kFlagTableConfig = 8;
inline constexpr uint64_t kFlagBasePaths = 16;
inline constexpr uint64_t kFlagDisableTransactionFile = 32;
inline constexpr uint64_t kFlagDataOverlays = 64;  // some fragment has DataOverlayFiles

inline constexpr uint64_t kKnownFlags = kFlagDeletionFiles | kFlagStableRowIds | kFlagUseV2FormatDeprecated |
                                        kFlagTableConfig | kFlagBasePaths | kFlagDisableTransactionFile |
                                        kFlagDataOverlays;

// Throws NotSupported naming the lowest unknown bit.
void CheckReaderFlags(const lance::table::Manifest& manifest, const std::string& path);
void CheckWriterFlags(const lance::table::Manifest& manifest, const std::string& path);
// Recomputes both flag words from the manifest's content, as the reference does.
void ApplyFeatureFlags(lance::table::Manifest& manifest);

}  // namespace lancelet::table
