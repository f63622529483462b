// BEGIN ... COMMIT / ROLLBACK over a directory of Lance tables. Lance commits one table
// version per write, and has no commit across tables or statements; so a transaction
// here is undo, not isolation: each statement commits as it runs, and ROLLBACK (or a
// failing statement inside the transaction) restores every table and view the
// transaction wrote to what it was at BEGIN: a table by a Restore commit of its version
// then (the versions in between stay in its history), a table it made by dropping it, a
// view by its old query. Other readers see each statement's commit as it happens, and a
// commit another writer makes to such a table meanwhile is undone with the rest. A read
// that fails leaves the transaction open; a write that fails rolls it back.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "lancelet/storage_options.h"
#include "sql/ast.h"

namespace lancelet::sql {

class Transaction {
 public:
  // Before `statement` runs inside the transaction: notes what it will write, as it is
  // now, and returns whether it writes (false for reads, SET and COPY ... TO). Throws for
  // statements a rollback could not undo (DROP TABLE).
  bool Before(const Statement& statement, const std::string& db_dir, const StorageOptions& options,
              const std::map<std::string, std::string>& temp_views);
  // Puts back every table and view noted; returns what it did, one line
  // ("ROLLBACK: t restored to version 3, u dropped").
  std::string Rollback(const std::string& db_dir, const StorageOptions& options,
                       std::map<std::string, std::string>& temp_views) const;

 private:
  void NoteTable(const std::string& name, const std::string& db_dir, const StorageOptions& options);

  std::map<std::string, std::optional<uint64_t>> tables_;  // version at BEGIN; nullopt: none then
  std::map<std::string, std::optional<std::string>> views_, temp_views_;  // query at BEGIN
};

}  // namespace lancelet::sql
