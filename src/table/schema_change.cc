// Dataset::DropColumns and AlterColumns: a new list of fields over the same fragments,
// committed as a Project (table/manifest_builder.cc applies it). Names resolve against the
// version each attempt reads, so a retry after a concurrent schema change sees its result.
#include <set>

#include <fmt/format.h>

#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "table/commit.h"
#include "table/dataset_state.h"

namespace lancelet {
namespace {

using Fields = google::protobuf::RepeatedPtrField<lance::file::Field>;
using table::DatasetState;

int32_t IdOf(const DatasetState& s, const std::string& column) {
  const auto path = s.schema.StructPathNamed(column);
  if (!path) ThrowNotFound("no column '{}' in dataset '{}' (columns: {})", column, s.uri, s.arrow_schema->ToString());
  return path->ids.back();
}

// "a"."b" for a.b: a column reference whatever characters the names hold.
std::string QuotedPath(const std::string& dotted) {
  std::string out = "\"";
  for (char c : dotted) {
    if (c == '.') out += "\".\"";
    else if (c == '"') out += "\"\"";
    else out += c;
  }
  return out + "\"";
}

// `id` and every field below it (the list holds parents before their children).
std::set<int32_t> Subtree(const Fields& fields, int32_t id) {
  std::set<int32_t> out{id};
  for (const auto& f : fields)
    if (out.count(f.parent_id())) out.insert(f.id());
  return out;
}

DatasetPtr CommitFields(std::shared_ptr<const DatasetState> state, const char* operation,
                        const std::function<Fields(const std::shared_ptr<const DatasetState>&)>& fields_of) {
  return table::MakeDataset(table::UntilCommitted(state, operation, [&](const std::shared_ptr<const DatasetState>& s) {
    lance::table::Transaction t;
    *t.mutable_project()->mutable_schema() = fields_of(s);
    return table::Commit(s->store, s->uri, s, t, table::CommitOptions{});
  }));
}

}  // namespace

DatasetPtr Dataset::DropColumns(const std::vector<std::string>& columns) const {
  if (columns.empty()) return shared_from_this();
  return CommitFields(state_, "drop columns", [&](const std::shared_ptr<const DatasetState>& s) {
    std::set<int32_t> dropped;
    for (const auto& column : columns)
      for (int32_t id : Subtree(s->manifest.fields(), IdOf(*s, column))) dropped.insert(id);
    Fields kept;
    bool any_top_level = false;
    for (const auto& f : s->manifest.fields()) {
      if (dropped.count(f.id())) continue;
      *kept.Add() = f;
      any_top_level |= f.parent_id() == -1;
    }
    if (!any_top_level) ThrowInvalid("cannot drop every column of '{}' (drop the dataset instead)", s->uri);
    return kept;
  });
}

DatasetPtr Dataset::AlterColumns(const std::vector<ColumnAlteration>& alterations) const {
  if (alterations.empty()) return shared_from_this();
  return CommitFields(state_, "alter columns", [&](const std::shared_ptr<const DatasetState>& s) {
    Fields fields = s->manifest.fields();
    for (const auto& a : alterations) {
      const int32_t id = IdOf(*s, a.column);
      auto* field = &*std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return f.id() == id; });
      if (a.rename) {
        if (a.rename->empty() || a.rename->find('.') != std::string::npos)
          ThrowInvalid("cannot rename column '{}' to '{}': a name must be non-empty and hold no '.'", a.column,
                       *a.rename);
        for (const auto& sibling : fields)
          if (sibling.parent_id() == field->parent_id() && sibling.id() != id && sibling.name() == *a.rename)
            ThrowInvalid("cannot rename column '{}' to '{}': a column of that name exists", a.column, *a.rename);
        field->set_name(*a.rename);
      }
      if (a.nullable) {
        if (!*a.nullable && field->nullable()) {
          const uint64_t nulls = table::MakeDataset(s)->CountRows(QuotedPath(a.column) + " IS NULL");
          if (nulls > 0)
            ThrowInvalid("cannot make column '{}' NOT NULL: {} row{} hold{} NULL", a.column, nulls,
                         nulls == 1 ? "" : "s", nulls == 1 ? "s" : "");
        }
        field->set_nullable(*a.nullable);
      }
    }
    return fields;
  });
}

}  // namespace lancelet
