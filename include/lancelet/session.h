// A Session keeps what datasets opened through it decode from immutable files: opened
// data files (footer and column metadata; small files whole) and decoded overlay
// columns. Lance never rewrites a file under the same name, so what one dataset version
// decoded serves every version and every dataset opened through the same session.
//
//   auto session = std::make_shared<lancelet::Session>();
//   auto a = lancelet::Dataset::Open("/data/a.lance", std::nullopt, {.session = session});
//
// Datasets opened without one share Session::Default(). A session is thread-safe; its
// caches are bounded by SessionOptions and evict the least recently used entry.
#pragma once

#include <cstdint>
#include <memory>

namespace lancelet {

struct SessionOptions {
  uint64_t data_files = 256;                 // opened data files kept
  uint64_t overlay_column_bytes = 64 << 20;  // decoded overlay columns kept, in bytes
};

struct SessionStats {
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

  // What the session keeps, as lancelet's table layer uses it (src/table/session.h).
  class Caches;
  Caches& caches() const { return *caches_; }

 private:
  std::unique_ptr<Caches> caches_;
};

}  // namespace lancelet
