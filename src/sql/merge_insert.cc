// MergeInsert (lancelet/merge_insert.h): the clauses become a MERGE statement over the
// dataset ("target") and the rows in memory ("source"), run by the SQL MERGE machinery
// (sql/merge.cc) in one commit. Nothing is written beside the dataset: the source is a
// batch, never a table.
#include "lancelet/merge_insert.h"

#include <algorithm>

#include <fmt/format.h>

#include "sql/exec.h"

namespace lancelet {

namespace {

std::string Quoted(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    out.push_back(c);
    if (c == '"') out.push_back('"');
  }
  return out + "\"";
}

// The source as one batch of the dataset's types; a column the dataset lacks, a missing
// key or a type that does not convert exactly is refused naming the column.
RecordBatchPtr SourceAsTarget(const Schema& target, RecordBatchReader& reader, const MergeInsertOptions& options) {
  auto all = sql::ReadAll(reader);
  std::vector<FieldPtr> fields;
  std::vector<ArrayPtr> columns;
  for (size_t i = 0; i < all->schema()->num_fields(); ++i) {
    const auto& name = all->schema()->field(i)->name;
    int t = target.FieldIndex(name);
    if (t < 0) ThrowInvalid("merge_insert: the source's column '{}' is not a column of the dataset", name);
    const FieldPtr& field = target.field(size_t(t));
    fields.push_back(Field::Make(name, field->type));
    try {
      columns.push_back(sql::AssignColumn(all->column(i), *field));
    } catch (const Error& e) {
      ThrowInvalid("merge_insert: the source's {}", e.what());
    }
  }
  for (const auto& key : options.on) {
    if (target.FieldIndex(key) < 0) ThrowInvalid("merge_insert: key column '{}' is not a column of the dataset", key);
    if (all->schema()->FieldIndex(key) < 0) ThrowInvalid("merge_insert: key column '{}' is not in the source", key);
  }
  return std::make_shared<RecordBatch>(std::make_shared<Schema>(fields), columns, all->num_rows());
}

// The MERGE statement the options describe, over the source's columns.
std::string MergeStatement(const Schema& source, const MergeInsertOptions& o) {
  std::vector<std::string> on, set, names, values;
  for (const auto& k : o.on) on.push_back(fmt::format("target.{0} = source.{0}", Quoted(k)));
  for (const auto& f : source.fields()) {
    names.push_back(Quoted(f->name));
    values.push_back("source." + Quoted(f->name));
    if (std::find(o.on.begin(), o.on.end(), f->name) == o.on.end())
      set.push_back(fmt::format("{0} = source.{0}", Quoted(f->name)));
  }
  auto condition = [](const std::string& c) { return c.empty() ? std::string() : " AND (" + c + ")"; };
  std::string text = fmt::format("MERGE INTO target USING source ON {}", fmt::join(on, " AND "));
  // With no column but the keys, an update changes nothing: the clause is left out.
  if (o.when_matched_update_all && !set.empty())
    text += fmt::format(" WHEN MATCHED{} THEN UPDATE SET {}", condition(o.matched_condition), fmt::join(set, ", "));
  if (o.when_not_matched_insert_all)
    text += fmt::format(" WHEN NOT MATCHED THEN INSERT ({}) VALUES ({})", fmt::join(names, ", "), fmt::join(values, ", "));
  if (o.when_not_matched_by_source_delete)
    text += fmt::format(" WHEN NOT MATCHED BY SOURCE{} THEN DELETE", condition(o.by_source_condition));
  return text;
}

}  // namespace

MergeInsertResult MergeInsert(const DatasetPtr& target, RecordBatchReader& source, const MergeInsertOptions& options) {
  if (options.on.empty()) ThrowInvalid("merge_insert: no key column (on)");
  if (!options.when_matched_update_all && !options.when_not_matched_insert_all &&
      !options.when_not_matched_by_source_delete)
    ThrowInvalid(
        "merge_insert: no clause: ask for when_matched_update_all, when_not_matched_insert_all or "
        "when_not_matched_by_source_delete");
  auto rows = SourceAsTarget(*target->schema(), source, options);
  MergeInsertResult result;
  result.dataset = target;
  const std::string text = MergeStatement(*rows->schema(), options);
  if (text.find(" WHEN ") == std::string::npos) return result;  // an update of keys only
  sql::Context ctx;
  ctx.text = std::make_shared<const std::string>(text);
  try {
    auto stmt = sql::ParseStatement(text);
    auto out = sql::MergeInto(ctx, *stmt.merge, target, rows);
    result.dataset = out.dataset;
    result.inserted = out.counts.inserted;
    result.updated = out.counts.updated;
    result.deleted = out.counts.deleted;
  } catch (const ParseError& e) {
    // Positions point into a statement the caller never wrote: the detail alone.
    throw Error(e.kind(), "merge_insert: " + e.detail());
  }
  return result;
}

MergeInsertResult MergeInsert(const DatasetPtr& target, const std::vector<RecordBatchPtr>& source,
                              const MergeInsertOptions& options) {
  // No batch: no row, in the dataset's columns (so that the keys are there).
  SchemaPtr schema = source.empty() ? target->schema() : source.front()->schema();
  auto reader = sql::BatchesReader(schema, source);
  return MergeInsert(target, *reader, options);
}

}  // namespace lancelet
