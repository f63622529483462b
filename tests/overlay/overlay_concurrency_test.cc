// Several processes update overlapping cells, append and delete at once. The final state
// must equal a serial replay, in version order, of the commits that landed, computed by
// an independent model here.
#include <map>
#include <optional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_env.h"

namespace lancelet::testing {
namespace {

struct Op {
  enum Kind { kUpdate, kDelete, kAppend } kind;
  int a = 0, b = 0;  // update: rows with id % a == b get val = value; delete: id % a == b; append: ids [a, b)
  int value = 0;
  std::string name;
};

TEST(OverlayConcurrency, ConcurrentUpdatesAppendsAndDeletesReplaySerially) {
  TempDir dir;
  std::string ds = dir.Join("c.lance");
  std::string base = "id,val\n";
  for (int i = 0; i < 600; ++i) base += std::to_string(i) + ",0\n";
  WriteStringToFile(dir.Join("base.csv"), base);
  ASSERT_EQ(RunLancelet({"create", ds, "--from", dir.Join("base.csv"), "--max-rows-per-file", "200"}).exit_code, 0);

  std::vector<Op> ops;
  for (int u = 0; u < 6; ++u) ops.push_back({Op::kUpdate, 2 + u % 3, u % 2, 100 + u, "u" + std::to_string(u)});
  for (int d = 0; d < 2; ++d) ops.push_back({Op::kDelete, 11, 3 + 4 * d, 0, "d" + std::to_string(d)});
  for (int a = 0; a < 2; ++a) ops.push_back({Op::kAppend, 10000 + 100 * a, 10050 + 100 * a, 0, "a" + std::to_string(a)});

  std::string script;
  for (const auto& op : ops) {
    std::string cmd;
    if (op.kind == Op::kUpdate) {
      cmd = "update " + ShellQuote(ds) + " --set " + ShellQuote("val = " + std::to_string(op.value)) + " --where " +
            ShellQuote("id < 1000 AND id % " + std::to_string(op.a) + " = " + std::to_string(op.b));
    } else if (op.kind == Op::kDelete) {
      cmd = "delete " + ShellQuote(ds) + " --where " +
            ShellQuote("id < 1000 AND id % " + std::to_string(op.a) + " = " + std::to_string(op.b));
    } else {
      std::string csv = "id,val\n";
      for (int i = op.a; i < op.b; ++i) csv += std::to_string(i) + ",7\n";
      WriteStringToFile(dir.Join(op.name + ".csv"), csv);
      cmd = "append " + ShellQuote(ds) + " --from " + ShellQuote(dir.Join(op.name + ".csv"));
    }
    script += ShellQuote(LanceletBinary()) + " " + cmd + " >" + ShellQuote(dir.Join(op.name + ".out")) + " 2>&1; echo $? >" +
              ShellQuote(dir.Join(op.name + ".rc")) + " &\n";
  }
  script += "wait\n";
  WriteStringToFile(dir.Join("run.sh"), script);
  ASSERT_EQ(RunCommand("sh " + ShellQuote(dir.Join("run.sh"))).exit_code, 0);

  // Which commits landed, at which version.
  std::map<uint64_t, const Op*> landed;
  // The version a successful command reports: "... now version N".
  auto reported_version = [](const std::string& out) -> std::optional<uint64_t> {
    size_t at = out.rfind("now version ");
    if (at == std::string::npos) return std::nullopt;
    return std::stoull(out.substr(at + 12));
  };
  for (const auto& op : ops) {
    int rc = std::stoi(ReadFileToString(dir.Join(op.name + ".rc")));
    std::string out = ReadFileToString(dir.Join(op.name + ".out"));
    if (rc != 0) {
      EXPECT_NE(out.find("conflict"), std::string::npos) << op.name << ": " << out;
      continue;
    }
    auto version = reported_version(out);
    ASSERT_TRUE(version.has_value()) << op.name << ": " << out;
    uint64_t v = *version;
    EXPECT_EQ(landed.count(v), 0u) << "two commits claim version " << v;
    landed[v] = &op;
  }
  ASSERT_FALSE(landed.empty());

  // The model: replay in version order.
  std::map<int, int> model;  // id -> val
  for (int i = 0; i < 600; ++i) model[i] = 0;
  for (const auto& [version, op] : landed) {
    if (op->kind == Op::kUpdate) {
      for (auto& [id, val] : model)
        if (id < 1000 && id % op->a == op->b) val = op->value;
    } else if (op->kind == Op::kDelete) {
      for (auto it = model.begin(); it != model.end();)
        it = (it->first < 1000 && it->first % op->a == op->b) ? model.erase(it) : std::next(it);
    } else {
      for (int i = op->a; i < op->b; ++i) model[i] = 7;
    }
  }
  auto scan = RunLancelet({"scan", ds, "--format", "jsonl"});
  ASSERT_EQ(scan.exit_code, 0) << scan.err;
  std::map<int, int> actual;
  for (const auto& line : SplitLines(scan.out)) {
    auto j = nlohmann::json::parse(line);
    EXPECT_EQ(actual.count(j["id"].get<int>()), 0u) << "row " << j["id"] << " appears twice";
    actual[j["id"].get<int>()] = j["val"].get<int>();
  }
  EXPECT_EQ(actual, model);
}

}  // namespace
}  // namespace lancelet::testing
