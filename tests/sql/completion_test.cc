// The shell's tab candidates, from the statement typed so far and the database's tables.
#include <gtest/gtest.h>

#include "sql/completion.h"

namespace lancelet::sql {
namespace {

CompletionSource Source() {
  CompletionSource source;
  source.tables = {"orders", "people", "places"};
  source.columns = [](const std::string& table) -> std::vector<std::string> {
    if (table == "people") return {"id", "name", "score"};
    if (table == "orders") return {"id", "person", "total"};
    return {"id", "city"};
  };
  return source;
}

// The candidates for the word that ends the text.
std::vector<std::string> AtEnd(const std::string& text) {
  size_t start = text.size();
  while (start > 0 && std::string(" (,;=<>").find(text[start - 1]) == std::string::npos) --start;
  return CompleteWord(text, start, text.size(), Source());
}

using Words = std::vector<std::string>;

TEST(CompletionTest, TablesAfterFromJoinIntoUpdateAndTableFunctionsAfterFrom) {
  EXPECT_EQ(AtEnd("SELECT * FROM p"), (Words{"people", "places"}));
  EXPECT_EQ(AtEnd("SELECT * FROM people JOIN o"), (Words{"orders"}));
  EXPECT_EQ(AtEnd("INSERT INTO pe"), (Words{"people"}));
  EXPECT_EQ(AtEnd("update o"), (Words{"orders"}));
  EXPECT_EQ(AtEnd("SELECT * FROM r"), (Words{"range", "read_csv", "read_csv_auto", "read_json", "read_json_auto"}));
}

TEST(CompletionTest, ColumnsOfTheNamedTablesFunctionsAndKeywordsInTheWordsCase) {
  // Only people is named: its columns, not orders' person / total.
  EXPECT_EQ(CompleteWord("SELECT n FROM people", 7, 8, Source()),
            (Words{"name", "not", "now", "nth_value", "ntile", "null", "nullif", "nulls"}));
  EXPECT_EQ(CompleteWord("SELECT N FROM people", 7, 8, Source()),
            (Words{"NOT", "NULL", "NULLS", "name", "now", "nth_value", "ntile", "nullif"}));
  // No table named yet: every table's columns (few tables).
  EXPECT_EQ(AtEnd("SELECT pe"), (Words{"percent_rank", "person"}));
  EXPECT_EQ(AtEnd("SELECT name FROM people WH"), (Words{"WHEN", "WHERE"}));
  EXPECT_EQ(AtEnd("SELECT arg_"), (Words{"arg_max", "arg_min"}));
}

TEST(CompletionTest, QualifiedColumnsByTableOrAlias) {
  EXPECT_EQ(CompleteWord("SELECT o.t FROM orders o", 7, 10, Source()), (Words{"o.total"}));
  EXPECT_EQ(CompleteWord("SELECT people.s FROM people", 7, 15, Source()), (Words{"people.score"}));
  EXPECT_EQ(CompleteWord("SELECT x.s FROM people AS x JOIN orders ON", 7, 10, Source()), (Words{"x.score"}));
  EXPECT_EQ(CompleteWord("SELECT nope.s FROM people", 7, 13, Source()), Words{});
}

TEST(CompletionTest, DotCommandsAndTheirTables) {
  EXPECT_EQ(AtEnd(".s"), (Words{".schema"}));
  EXPECT_EQ(AtEnd(".m"), (Words{".maxrows", ".mode"}));
  EXPECT_EQ(AtEnd(".schema pl"), (Words{"places"}));
  EXPECT_EQ(AtEnd(".import f.csv o"), (Words{"orders"}));
  EXPECT_EQ(AtEnd(".mode b"), Words{});
}

}  // namespace
}  // namespace lancelet::sql
