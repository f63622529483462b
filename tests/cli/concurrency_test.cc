// Several processes append and delete on one dataset at once. Every commit must either
// land or fail with a conflict error, and every committed row must be there exactly once.
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_env.h"

namespace lancelet::testing {
namespace {

void WriteCsv(const std::string& path, int64_t first, int64_t count) {
  std::string text = "id,tag\n";
  for (int64_t i = first; i < first + count; ++i) text += std::to_string(i) + ",t" + std::to_string(i) + "\n";
  WriteStringToFile(path, text);
}

TEST(Concurrency, ParallelAppendsAndDeletesAllLandOrConflict) {
  TempDir dir;
  std::string ds = dir.Join("c.lance");
  WriteCsv(dir.Join("base.csv"), 0, 1000);
  ASSERT_EQ(RunLancelet({"create", ds, "--from", dir.Join("base.csv"), "--max-rows-per-file", "250"}).exit_code, 0);

  constexpr int kAppenders = 6, kDeleters = 4;
  // Launch every writer in the background from one shell, then wait for all.
  std::string script;
  for (int a = 0; a < kAppenders; ++a) {
    std::string csv = dir.Join("a" + std::to_string(a) + ".csv");
    WriteCsv(csv, 10000 * (a + 1), 200);
    script += ShellQuote(LanceletBinary()) + " append " + ShellQuote(ds) + " --from " + ShellQuote(csv) + " >" +
              ShellQuote(dir.Join("a" + std::to_string(a) + ".out")) + " 2>&1; echo $? >" +
              ShellQuote(dir.Join("a" + std::to_string(a) + ".rc")) + " &\n";
  }
  for (int d = 0; d < kDeleters; ++d) {
    // Deleter d removes ids [100d + 10, 100d + 60) of the base rows: all in fragment 0 or 1.
    std::string where = "id >= " + std::to_string(100 * d + 10) + " AND id < " + std::to_string(100 * d + 60);
    script += ShellQuote(LanceletBinary()) + " delete " + ShellQuote(ds) + " --where " + ShellQuote(where) + " >" +
              ShellQuote(dir.Join("d" + std::to_string(d) + ".out")) + " 2>&1; echo $? >" +
              ShellQuote(dir.Join("d" + std::to_string(d) + ".rc")) + " &\n";
  }
  script += "wait\n";
  WriteStringToFile(dir.Join("run.sh"), script);
  ASSERT_EQ(RunCommand("sh " + ShellQuote(dir.Join("run.sh"))).exit_code, 0);

  std::set<int64_t> expected;
  for (int64_t i = 0; i < 1000; ++i) expected.insert(i);
  auto outcome = [&](const std::string& name) {
    int rc = std::stoi(ReadFileToString(dir.Join(name + ".rc")));
    std::string out = ReadFileToString(dir.Join(name + ".out"));
    // A failure must be a clean conflict report, nothing else.
    if (rc != 0) {
      EXPECT_NE(out.find("conflict"), std::string::npos) << name << ": " << out;
    }
    return rc == 0;
  };
  int landed = 0;
  for (int a = 0; a < kAppenders; ++a)
    if (outcome("a" + std::to_string(a))) {
      ++landed;
      for (int64_t i = 0; i < 200; ++i) expected.insert(10000 * (a + 1) + i);
    }
  for (int d = 0; d < kDeleters; ++d)
    if (outcome("d" + std::to_string(d))) {
      ++landed;
      for (int64_t i = 100 * d + 10; i < 100 * d + 60; ++i) expected.erase(i);
    }
  EXPECT_GT(landed, 0);

  auto scan = RunLancelet({"scan", ds, "--columns", "id", "--format", "jsonl"});
  ASSERT_EQ(scan.exit_code, 0) << scan.err;
  std::multiset<int64_t> seen;
  for (const auto& line : SplitLines(scan.out)) seen.insert(nlohmann::json::parse(line)["id"].get<int64_t>());
  EXPECT_EQ(seen.size(), expected.size());
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()), expected);
  // The version count is one per landed commit plus the create.
  auto versions = RunLancelet({"versions", ds});
  EXPECT_EQ(SplitLines(versions.out).size(), size_t(landed + 1));
}

}  // namespace
}  // namespace lancelet::testing
