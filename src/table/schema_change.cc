// Dataset::DropColumns and AlterColumns: a new list of fields over the same fragments,
// committed as a Project (table/manifest_builder.cc applies it); Dataset::AddColumns: a
// data file of new columns per fragment, committed as a Merge. Names resolve against the
// version each attempt reads, so a retry after a concurrent schema change sees its result.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "array/ascii_case.h"
#include "table/commit.h"
#include "table/dataset_state.h"
#include "table/fragment_reader.h"
#include "table/fragment_writer.h"

namespace lancelet {
namespace {

using Fields = google::protobuf::RepeatedPtrField<lance::file::Field>;
using table::DatasetState;

format::StructPath PathOf(const DatasetState& s, const std::string& column) {
  auto path = s.schema.StructPathNamed(column);
  if (!path) ThrowNotFound("no column '{}' in dataset '{}' (columns: {})", column, s.uri, s.arrow_schema->ToString());
  return *path;
}

int32_t IdOf(const DatasetState& s, const std::string& column) { return PathOf(s, column).ids.back(); }

// A reference to the node at `path`, each name quoted, so that any characters (a top-level
// name holding a '.', a quote) read back as that node.
std::string QuotedPath(const DatasetState& s, const format::StructPath& path) {
  auto quoted = [](const std::string& name) {
    std::string out = "\"";
    for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  const format::LanceField* node = &s.schema.fields()[path.top];
  std::string out = quoted(node->name);
  for (int child : path.children) {
    node = &node->children[size_t(child)];
    out += "." + quoted(node->name);
  }
  return out;
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

// Rows of a fragment evaluated at once while columns are added.
constexpr uint64_t kAddChunkRows = 65536;

// The highest field id the version uses anywhere: its schema, and the files of its
// fragments and overlays (a dropped column's id stays in its files, so it is never reused).
int32_t MaxFieldId(const DatasetState& s) {
  int32_t out = s.schema.MaxId();
  auto each = [&](const auto& ids) {
    for (int32_t id : ids) out = std::max(out, id);
  };
  for (const auto& fragment : s.manifest.fragments()) {
    for (const auto& file : fragment.files()) each(file.fields());
    for (const auto& overlay : fragment.overlays()) each(overlay.data_file().fields());
  }
  return out;
}

// The new columns' expressions bound to the top-level columns they read.
struct AddPlan {
  std::vector<size_t> read;  // schema indices
  SchemaPtr read_schema;
  std::vector<BoundExprPtr> values;
  SchemaPtr added;
};

AddPlan PlanAdd(const DatasetState& s, const std::vector<Dataset::NewColumn>& columns) {
  const Schema& table = *s.arrow_schema;
  std::vector<ExprPtr> exprs;
  std::set<std::string> wanted, names;
  for (const auto& c : columns) {
    if (c.name.empty() || c.name.find('.') != std::string::npos)
      ThrowInvalid("cannot add column '{}': a name must be non-empty and hold no '.'", c.name);
    if (table.FieldIndex(c.name) >= 0 || !names.insert(c.name).second)
      ThrowInvalid("cannot add column '{}': a column of that name exists", c.name);
    exprs.push_back(c.expr ? c.expr : ParseExpression(c.expression));
    Bind(*exprs.back(), table);  // errors name the expression's columns against the table
    for (const auto& name : ReferencedColumns(*exprs.back())) wanted.insert(AsciiLower(name.substr(0, name.find('.'))));
  }
  AddPlan plan;
  std::vector<FieldPtr> read_fields, added;
  for (size_t i = 0; i < table.fields().size(); ++i)
    if (wanted.count(AsciiLower(table.field(int(i))->name))) {
      plan.read.push_back(i);
      read_fields.push_back(table.field(int(i)));
    }
  plan.read_schema = std::make_shared<Schema>(read_fields);
  for (size_t k = 0; k < exprs.size(); ++k) {
    plan.values.push_back(Bind(*exprs[k], *plan.read_schema, table));
    added.push_back(Field::Make(columns[k].name, plan.values.back()->type, true));
  }
  plan.added = std::make_shared<Schema>(added);
  return plan;
}

// `fragment` with a data file of the new columns over all its physical rows.
lance::table::DataFragment WithAddedColumns(const DatasetState& s, const lance::table::DataFragment& fragment,
                                            const AddPlan& plan, const format::LanceSchema& added,
                                            table::AttemptFiles& attempt) {
  table::FragmentReader reader(s, fragment);
  table::FragmentWriter writer(*s.store, attempt, s.uri, added, s.WriteVersion(), int64_t(kMaxRowsPerFile));
  for (uint64_t start = 0; start < fragment.physical_rows(); start += kAddChunkRows) {
    const uint64_t count = std::min(kAddChunkRows, fragment.physical_rows() - start);
    const RecordBatch rows(plan.read_schema, reader.ReadRange(plan.read, start, count), int64_t(count));
    std::vector<ArrayPtr> values;
    for (const auto& v : plan.values) values.push_back(Evaluate(*v, rows));
    writer.Write(RecordBatch(plan.added, std::move(values), int64_t(count)));
  }
  lance::table::DataFragment out = fragment;
  for (const auto& written : writer.Finish())
    for (const auto& file : written.files()) *out.add_files() = file;
  return out;
}

}  // namespace

DatasetPtr Dataset::AddColumns(const std::vector<NewColumn>& columns) const {
  if (columns.empty()) return shared_from_this();
  std::shared_ptr<const DatasetState> state = state_;
  return table::MakeDataset(table::UntilCommitted(state, "add columns", [&](const std::shared_ptr<const DatasetState>& s) {
    return table::BuildAndCommit(s, table::CommitOptions{}, [&](lance::table::Transaction& t,
                                                                 table::AttemptFiles& attempt) {
      const AddPlan plan = PlanAdd(*s, columns);
      const format::LanceSchema added = format::LanceSchema::FromArrow(*plan.added, MaxFieldId(*s) + 1);
      auto* merge = t.mutable_merge();
      *merge->mutable_schema() = s->manifest.fields();
      added.ToProto(merge->mutable_schema());
      for (const auto& [k, v] : s->manifest.schema_metadata()) (*merge->mutable_schema_metadata())[k] = v;
      for (const auto& fragment : s->manifest.fragments())
        *merge->add_fragments() = WithAddedColumns(*s, fragment, plan, added, attempt);
      return true;
    });
  }));
}

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
      const format::StructPath path = PathOf(*s, a.column);
      const int32_t id = path.ids.back();
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
          const uint64_t nulls = table::MakeDataset(s)->CountRows(QuotedPath(*s, path) + " IS NULL");
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
