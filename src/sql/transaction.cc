#include "sql/transaction.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "io/object_store.h"
#include "lancelet/dataset.h"
#include "sql/exec.h"

namespace lancelet::sql {

void Transaction::NoteTable(const std::string& name, const std::string& db_dir, const StorageOptions& options) {
  if (tables_.count(name)) return;  // its state at BEGIN is noted already
  std::optional<uint64_t> version;
  if (TableExistsIn(db_dir, name, options)) {
    OpenOptions open;
    open.storage_options = options;
    version = Dataset::Open(TablePathIn(db_dir, name), std::nullopt, open)->version();
  }
  tables_[name] = version;
}

bool Transaction::Before(const Statement& s, const std::string& db_dir, const StorageOptions& options,
                         const std::map<std::string, std::string>& temp_views) {
  using Kind = Statement::Kind;
  auto table = [&](const std::string& name) { NoteTable(name, db_dir, options); };
  switch (s.kind) {
    case Kind::kInsert: table(s.insert->table.name); return true;
    case Kind::kUpdate: table(s.update->table.name); return true;
    case Kind::kDelete: table(s.del->table.name); return true;
    case Kind::kMerge: table(s.merge->target.name); return true;
    case Kind::kCreateTable: table(s.create->table.name); return true;
    case Kind::kAlterTable: table(s.alter->table.name); return true;
    case Kind::kCreateIndex: table(s.create_index->table.name); return true;
    case Kind::kDropIndex: table(s.drop_index->table.name); return true;
    case Kind::kOptimize: table(s.optimize->table.name); return true;
    case Kind::kDropTable:
      ThrowNotSupported("DROP TABLE cannot run inside a transaction: a rollback could not bring the table back "
                           "(COMMIT first)");
    case Kind::kCreateView:
    case Kind::kDropView: {
      const std::string& name = s.view->name;
      const auto temp = temp_views.find(name);
      // DROP VIEW drops a TEMP view first; CREATE TEMP VIEW makes one.
      const bool temporary = s.kind == Kind::kCreateView ? s.view->temporary : temp != temp_views.end();
      auto& noted = temporary ? temp_views_ : views_;
      if (noted.count(name)) return true;
      if (temporary) noted[name] = temp != temp_views.end() ? std::optional<std::string>(temp->second) : std::nullopt;
      else noted[name] = ReadView(db_dir, name, options);
      return true;
    }
    default: return false;  // reads, SET, COPY ... TO (a file outside the database)
  }
}

std::string Transaction::Rollback(const std::string& db_dir, const StorageOptions& options,
                                  std::map<std::string, std::string>& temp_views) const {
  std::vector<std::string> done;
  OpenOptions open;
  open.storage_options = options;
  for (const auto& [name, version] : tables_) {
    const bool exists = TableExistsIn(db_dir, name, options);
    if (!version) {
      if (!exists) continue;
      auto [store, path] = io::OpenStore(TablePathIn(db_dir, name), options);
      store->DeleteTree(path);
      done.push_back(name + " dropped");
      continue;
    }
    const DatasetPtr latest = Dataset::Open(TablePathIn(db_dir, name), std::nullopt, open);
    if (latest->version() == *version) continue;
    const DatasetPtr restored = latest->Checkout(*version)->Restore();
    done.push_back(fmt::format("{} restored to version {} (as version {})", name, *version, restored->version()));
  }
  for (const auto& [name, query] : views_) {
    RestoreView(db_dir, name, query, options);
    done.push_back("view " + name + (query ? " restored" : " dropped"));
  }
  for (const auto& [name, query] : temp_views_) {
    if (query) temp_views[name] = *query;
    else temp_views.erase(name);
  }
  return done.empty() ? "ROLLBACK" : fmt::format("ROLLBACK: {}", fmt::join(done, ", "));
}

}  // namespace lancelet::sql
