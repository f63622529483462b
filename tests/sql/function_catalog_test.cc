// The function catalog is the one list of what SQL can call: every scalar in it resolves,
// its aggregates are the SQL layer's, and docs/sql.md's function reference and dot
// command list are what lancelet prints for them today.
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "expr/function_catalog.h"
#include "expr/functions.h"
#include "lancelet/sql.h"
#include "sql/aggregate.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

int KindOrder(std::string_view kind) {
  const std::string_view kinds[] = {"scalar", "aggregate", "window", "table"};
  return int(std::find(std::begin(kinds), std::end(kinds), kind) - std::begin(kinds));
}

TEST(FunctionCatalogTest, SortedByKindThenNameWithoutRepeats) {
  const auto catalog = FunctionCatalog();
  ASSERT_GT(catalog.size(), 100u);
  for (size_t i = 0; i < catalog.size(); ++i) {
    EXPECT_LT(KindOrder(catalog[i].kind), 4) << catalog[i].name;
    EXPECT_FALSE(catalog[i].description.empty()) << catalog[i].name;
    if (i == 0) continue;
    const auto before = std::make_pair(KindOrder(catalog[i - 1].kind), catalog[i - 1].name);
    const auto here = std::make_pair(KindOrder(catalog[i].kind), catalog[i].name);
    EXPECT_LT(before, here) << catalog[i].name;
  }
}

TEST(FunctionCatalogTest, EveryScalarResolvesAndEveryAggregateIsTheSqlLayers) {
  std::set<std::string> aggregates;
  for (const FunctionDoc& f : FunctionCatalog()) {
    if (f.kind == "aggregate") aggregates.insert(std::string(f.name));
    if (f.kind != "scalar") continue;
    std::vector<TypePtr> none;
    try {
      ResolveFunction(std::string(f.name), &none, nullptr);
    } catch (const Error& e) {  // too few arguments, but known
      EXPECT_EQ(std::string(e.what()).find("unknown function"), std::string::npos) << e.what();
    }
  }
  const auto& sql = sql::AggregateNames();
  EXPECT_EQ(aggregates, std::set<std::string>(sql.begin(), sql.end()));
}

// The text between "<!-- NAME:begin -->\n" and "<!-- NAME:end -->" in docs/sql.md.
std::string DocsBlock(const std::string& name) {
  std::ifstream file(std::string(LANCELET_SOURCE_DIR) + "/docs/sql.md");
  std::stringstream text;
  text << file.rdbuf();
  const std::string all = text.str(), begin = "<!-- " + name + ":begin -->\n", end = "<!-- " + name + ":end -->";
  const size_t from = all.find(begin), to = all.find(end);
  if (from == std::string::npos || to == std::string::npos || to < from) return "(no " + name + " block)";
  return all.substr(from + begin.size(), to - from - begin.size());
}

std::string Shell(const std::string& script, const std::string& format) {
  TempDir dir;
  std::istringstream in(script);
  std::ostringstream out, err;
  SqlShellOptions options;
  options.format = format;
  EXPECT_EQ(RunSqlShell(dir.RootUri(), "", in, out, err, options), 0) << err.str();
  return out.str();
}

TEST(FunctionCatalogTest, TheDocsListWhatLanceletPrints) {
  EXPECT_EQ(DocsBlock("functions"),
            Shell("SELECT function_name AS name, function_type AS kind, arguments, description "
                  "FROM lancelet_functions();\n",
                  "markdown"))
      << "regenerate docs/sql.md's blocks: python3 scripts/sql_docs.py build/release/lancelet";
  EXPECT_EQ(DocsBlock("dot-commands"), "```\n" + Shell(".help\n", "table") + "```\n")
      << "regenerate docs/sql.md's blocks: python3 scripts/sql_docs.py build/release/lancelet";
}

TEST(FunctionCatalogTest, DuckDbsNameForTheCatalogAndItsColumns) {
  SqlSession session(TempDir().RootUri());
  const SqlResult r = session.Execute(
      "SELECT function_name, arguments FROM duckdb_functions() WHERE function_type = 'aggregate' AND "
      "function_name LIKE 'arg%' ORDER BY 1");
  ASSERT_EQ(r.rows->num_rows(), 2);
  EXPECT_EQ(GetScalar(*r.rows->column(0), 0).as_string(), "arg_max");
  EXPECT_EQ(GetScalar(*r.rows->column(1), 1).as_string(), "(arg, val)");
  EXPECT_THROW(session.Execute("SELECT * FROM lancelet_functions(1)"), SqlError);
}

}  // namespace
}  // namespace lancelet::testing
