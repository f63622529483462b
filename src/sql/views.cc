// CREATE VIEW / DROP VIEW. A view is a name for a SELECT, kept as written: a database's
// views are the objects _lancelet_views/NAME.sql of its directory, read and written
// through its store (so a view lives beside the tables, on S3 too, and other Lance
// readers see only NAME.lance datasets); a TEMP view lives in the session. A statement
// reads a view by parsing its SELECT in place of the name (ParseStatement's lookup).
#include <algorithm>

#include <fmt/format.h>

#include "io/object_store.h"
#include "sql/exec.h"

namespace lancelet::sql {

namespace {

constexpr std::string_view kViewsDir = "_lancelet_views";

std::string ViewPathIn(const std::string& db_dir, const std::string& name) {
  return io::JoinPath(db_dir, kViewsDir, name + ".sql");
}

}  // namespace

std::optional<std::string> ReadView(const std::string& db_dir, const std::string& name,
                                    const StorageOptions& options) {
  if (name.empty() || name.find('/') != std::string::npos) return std::nullopt;
  auto [store, path] = io::OpenStore(ViewPathIn(db_dir, name), options);
  if (!store->Head(path)) return std::nullopt;
  return store->ReadObject(path);
}

std::vector<std::string> ListViews(const std::string& db_dir, const StorageOptions& options) {
  auto [store, dir] = io::OpenStore(db_dir, options);
  std::vector<std::string> names;
  for (const std::string& entry : store->List(io::JoinPath(dir, kViewsDir)))
    if (entry.size() > 4 && entry.ends_with(".sql")) names.push_back(entry.substr(0, entry.size() - 4));
  std::sort(names.begin(), names.end());
  return names;
}

void RestoreView(const std::string& db_dir, const std::string& name, const std::optional<std::string>& query,
                 const StorageOptions& options) {
  auto [store, path] = io::OpenStore(ViewPathIn(db_dir, name), options);
  if (query) store->Put(path, *query);
  else if (store->Head(path)) store->Delete(path);
}

std::string RunCreateView(const Context& ctx, const ViewStmt& stmt, std::map<std::string, std::string>& temp_views) {
  const char* what = stmt.temporary ? "TEMP VIEW" : "VIEW";
  if (TableExists(ctx, stmt.name))
    ctx.Fail(stmt.name_position, fmt::format("'{}' is a table; a view needs a name of its own", stmt.name));
  if (stmt.name.find('/') != std::string::npos)
    ctx.Fail(stmt.name_position, fmt::format("a view name cannot hold '/': '{}'", stmt.name));
  RunDescribeQuery(ctx, *stmt.select);  // binds the query: unknown tables and columns fail here, as in DuckDB
  auto exists = [&] {
    if (stmt.if_exists) return fmt::format("CREATE {}: {} already exists", what, stmt.name);
    ctx.Fail(stmt.name_position, fmt::format("view '{}' already exists (CREATE OR REPLACE VIEW replaces it)", stmt.name));
  };
  if (stmt.temporary) {
    if (temp_views.count(stmt.name) && !stmt.or_replace) return exists();
    temp_views[stmt.name] = stmt.query;
    return fmt::format("CREATE {} {}", what, stmt.name);
  }
  auto [store, path] = io::OpenStore(ViewPathIn(ctx.db_dir, stmt.name), ctx.storage_options);
  store->CreateDir(path.substr(0, path.rfind('/')));
  if (stmt.or_replace) store->Put(path, stmt.query);
  else if (!store->PutIfAbsent(path, stmt.query)) return exists();
  return fmt::format("CREATE {} {}", what, stmt.name);
}

std::string RunDropView(const Context& ctx, const ViewStmt& stmt, std::map<std::string, std::string>& temp_views) {
  if (temp_views.erase(stmt.name)) return fmt::format("DROP VIEW {}", stmt.name);
  auto [store, path] = io::OpenStore(ViewPathIn(ctx.db_dir, stmt.name), ctx.storage_options);
  if (stmt.name.find('/') == std::string::npos && store->Head(path)) {
    store->Delete(path);
    return fmt::format("DROP VIEW {}", stmt.name);
  }
  if (stmt.if_exists) return fmt::format("DROP VIEW: {} does not exist", stmt.name);
  ctx.Fail(stmt.name_position, fmt::format("view '{}' does not exist", stmt.name));
}

}  // namespace lancelet::sql
