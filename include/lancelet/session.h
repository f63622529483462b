// A Session keeps what datasets opened through it decode from immutable files: dataset
// versions (the manifest decoded, with the index segments, fragment overlay metadata and
// overlay layers that version's reads opened), opened data files (footer and column
// metadata; small files whole) and decoded overlay columns. Lance never rewrites a file
// under the same name, so what one dataset version decoded serves every version and
// every dataset opened through the same session. A manifest name can come back (a table
// dropped and created again): a version is kept under its manifest's bytes, not its name.
//
//   auto session = std::make_shared<lancelet::Session>();
//   auto a = lancelet::Dataset::Open("/data/a.lance", std::nullopt, {.session = session});
//
// Datasets opened without one share Session::Default(). A session is thread-safe; its
// caches are bounded by SessionOptions and evict the least recently used entry. Datasets
// outlive their session safely (they keep what they opened), but once it is gone no
// version they open again is kept.
#pragma once

#include <cstdint>
#include <memory>

namespace lancelet {

struct SessionOptions {
  uint64_t versions = 8;                     // dataset versions kept, with what each opened
  uint64_t data_files = 256;                 // opened data files kept
  uint64_t overlay_column_bytes = 64 << 20;  // decoded overlay columns kept, in bytes
};

struct SessionStats {
  uint64_t versions = 0;         // kept now
  uint64_t data_files = 0;       // kept now
  uint64_t overlay_columns = 0;  // kept now
};

class Session {
 public:
  explicit Session(const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The session of every dataset opened without one.
  static const std::shared_ptr<Session>& Default();

  SessionStats Stats() const;
  // Drops everything kept (the next read opens and decodes its files again).
  void Clear();

  // What the session keeps, as lancelet's table layer uses it (src/table/session.h). The
  // datasets opened through the session share it; the versions it keeps hold it too, so
  // the Session itself is what lets them go (its destructor).
  class Caches;
  const std::shared_ptr<Caches>& caches() const { return caches_; }

 private:
  std::shared_ptr<Caches> caches_;
};

}  // namespace lancelet
