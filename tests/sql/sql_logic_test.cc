// Runs the SQL logic tests: every tests/sql/*.test file, in the spirit of DuckDB's
// sqllogictest, each in a fresh database directory.
//
// File format (records separated by blank lines; '#' starts a comment line):
//   statement ok                      the statement (next lines) must succeed
//   statement error <substring>       it must fail, and its one-line message contain <substring>
//   query [rowsort]                   the statement, then a line "----", then the
//                                     expected rows: cells joined by " | " in the table
//                                     format's style (NULL, shortened lists), a header
//                                     line first; rowsort compares the rows sorted.
//                                     Floating-point cells match within a relative 1e-12
//                                     (a parallel aggregate sums in another order). A
//                                     statement without rows (EXPLAIN) gives its message's
//                                     lines instead
//   file <name>                       the following lines are written to <db>/<name>
// In statements, __TEST_DIR__ stands for the database directory (as in DuckDB's tests),
// for files a statement writes.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "io/object_store.h"
#include "lancelet/sql.h"
#include "lancelet/text.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

struct Record {
  int line = 0;
  std::string kind;     // statement ok | statement error | query | file
  std::string arg;      // error substring, rowsort, file name
  std::string text;     // statement or file contents
  std::vector<std::string> expected;
};

std::vector<Record> ParseTestFile(const std::string& path) {
  std::vector<std::string> lines = SplitLines(ReadFileToString(path));
  std::vector<Record> records;
  size_t i = 0;
  auto blank = [&](size_t k) { return k >= lines.size() || lines[k].find_first_not_of(" \t\r") == std::string::npos; };
  while (i < lines.size()) {
    if (blank(i) || lines[i][0] == '#') {
      ++i;
      continue;
    }
    Record r;
    r.line = int(i + 1);
    const std::string& head = lines[i++];
    if (head.rfind("statement ok", 0) == 0) {
      r.kind = "statement ok";
    } else if (head.rfind("statement error", 0) == 0) {
      r.kind = "statement error";
      r.arg = head.size() > 16 ? head.substr(16) : "";
    } else if (head.rfind("query", 0) == 0) {
      r.kind = "query";
      r.arg = head.size() > 6 ? head.substr(6) : "";
    } else if (head.rfind("file ", 0) == 0) {
      r.kind = "file";
      r.arg = head.substr(5);
    } else {
      ADD_FAILURE() << path << ":" << r.line << ": unknown record '" << head << "'";
      return records;
    }
    bool in_expected = false;
    for (; !blank(i); ++i) {
      if (r.kind == "query" && lines[i] == "----") {
        in_expected = true;
        continue;
      }
      if (in_expected) r.expected.push_back(lines[i]);
      else r.text += lines[i] + "\n";
    }
    records.push_back(r);
  }
  return records;
}

std::vector<std::string> RenderRows(const RecordBatch& rows) {
  std::vector<std::string> out;
  std::string header;
  for (size_t c = 0; c < rows.num_columns(); ++c) header += (c ? " | " : "") + rows.schema()->field(c)->name;
  out.push_back(header);
  for (int64_t r = 0; r < rows.num_rows(); ++r) {
    std::string line;
    for (size_t c = 0; c < rows.num_columns(); ++c)
      line += (c ? " | " : "") + FormatValue(*rows.column(c), r, ValueStyle::kTable);
    out.push_back(line);
  }
  return out;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// Whether two rendered rows match: equal, or with cells equal but for floating-point
// numbers (a '.' or an exponent) within a relative 1e-12.
bool RowsMatch(const std::string& got, const std::string& expected) {
  if (got == expected) return true;
  auto cells = [](const std::string& row) {
    std::vector<std::string> out;
    for (size_t start = 0;;) {
      const size_t bar = row.find(" | ", start);
      out.push_back(row.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
      if (bar == std::string::npos) return out;
      start = bar + 3;
    }
  };
  const auto a = cells(got), b = cells(expected);
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    if (a[i].find_first_of(".eE") == std::string::npos) return false;
    char *end_a, *end_b;
    const double x = std::strtod(a[i].c_str(), &end_a), y = std::strtod(b[i].c_str(), &end_b);
    if (*end_a || *end_b || a[i].empty() || b[i].empty()) return false;
    if (std::abs(x - y) > 1e-12 * std::max(std::abs(x), std::abs(y))) return false;
  }
  return true;
}

class SqlLogicTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SqlLogicTest, Passes) {
  std::string path = GetParam();
  TempDir dir;
  SqlSession session(dir.RootUri());
  for (const auto& r : ParseTestFile(path)) {
    std::string where = std::filesystem::path(path).filename().string() + ":" + std::to_string(r.line);
    if (r.kind == "file") {
      auto [store, file] = io::OpenStore(dir.Uri(r.arg));  // beside the tables, wherever they are
      store->Put(file, r.text);
      continue;
    }
    std::string text = r.text;
    for (size_t at; (at = text.find("__TEST_DIR__")) != std::string::npos;) text.replace(at, 12, dir.RootUri());
    try {
      SqlResult result = session.Execute(text);
      if (r.kind == "statement error") {
        ADD_FAILURE() << where << ": expected an error containing '" << r.arg << "', but it succeeded";
      } else if (r.kind == "query") {
        if (!result.rows && result.message.empty()) {
          ADD_FAILURE() << where << ": a query must return rows or a message";
          continue;
        }
        // A statement that returns no rows (EXPLAIN) is compared by its message's lines.
        std::vector<std::string> got;
        if (result.rows) {
          got = RenderRows(*result.rows);
        } else {
          std::istringstream lines(result.message);
          for (std::string line; std::getline(lines, line);) got.push_back(line);
        }
        auto expected = r.expected;
        if (r.arg == "rowsort") {
          std::sort(got.begin() + 1, got.end());
          if (!expected.empty()) std::sort(expected.begin() + 1, expected.end());
        }
        const bool match = got.size() == expected.size() &&
                           std::equal(got.begin(), got.end(), expected.begin(), RowsMatch);
        if (!match) {
          EXPECT_EQ(Join(got), Join(expected)) << where << ": " << r.text;
        }
      }
    } catch (const SqlError& e) {
      if (r.kind != "statement error") {
        ADD_FAILURE() << where << ": " << e.Render();
      } else {
        EXPECT_NE(std::string(e.what()).find(r.arg), std::string::npos)
            << where << ": expected an error containing '" << r.arg << "', got: " << e.what();
      }
    }
  }
}

std::vector<std::string> TestFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(LANCELET_SOURCE_DIR) + "/tests/sql"))
    if (entry.path().extension() == ".test") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

INSTANTIATE_TEST_SUITE_P(Files, SqlLogicTest, ::testing::ValuesIn(TestFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return std::filesystem::path(info.param).stem().string();
                         });

// The error format: one line, then the statement and a caret under the failing token.
TEST(SqlErrorTest, RendersACaretUnderThePosition) {
  TempDir dir;
  SqlSession session(dir.RootUri());
  try {
    session.Execute("SELECT 1 +  FROM t");
    FAIL() << "expected an error";
  } catch (const SqlError& e) {
    EXPECT_EQ(e.Render(),
              "expected an expression at position 13\n"
              "  SELECT 1 +  FROM t\n"
              "              ^");
  }
}

TEST(SqlErrorTest, SplitsStatementsOutsideStringsAndComments) {
  EXPECT_EQ(SqlSession::SplitStatements("SELECT ';'; -- a ; comment\nSELECT 2;;  "),
            (std::vector<std::string>{"SELECT ';'", "-- a ; comment\nSELECT 2"}));
  EXPECT_EQ(SqlSession::SplitStatements("SELECT /* a; b */ 1; /* open ; to the end"),
            (std::vector<std::string>{"SELECT /* a; b */ 1", "/* open ; to the end"}));
}

}  // namespace
}  // namespace lancelet::testing
