// Many processes commit to one dataset at once. Read-modify-writes (UPDATE, DELETE and
// MERGE with predicates or expressions over current values) must behave as if they ran
// one after another in version order: the final rows equal an independent model that
// replays every landed commit in that order, and no commit is lost.
#include <algorithm>
#include <random>

#include "reliability/harness.h"

namespace lancelet::testing::reliability {
namespace {

// A dataset t.lance under `db` with ids 0..rows-1, all val 0, in fragments of 5000 rows.
std::string MakeIdValDataset(const TempDir& dir, const std::string& db, int64_t rows) {
  std::filesystem::create_directories(db);
  std::vector<std::pair<int64_t, int64_t>> data;
  for (int64_t i = 0; i < rows; ++i) data.push_back({i, 0});
  WriteIdValCsv(dir.Join("base.csv"), data);
  std::string ds = db + "/t.lance";
  Lancelet({"create", ds, "--from", dir.Join("base.csv"), "--schema", "id:int64,val:int64", "--max-rows-per-file",
            "5000"});
  return ds;
}

// The same under dir/db, with a BTree index on val: what compactions and cleanups race.
std::string MakeIndexedIdValDataset(const TempDir& dir, int64_t rows) {
  std::string ds = MakeIdValDataset(dir, dir.Join("db"), rows);
  Lancelet({"index", "create", ds, "val"});
  return ds;
}

struct Outcome {
  int exit_code = 0;
  std::string out, err;
};
Outcome ReadOutcome(const std::string& stem) {
  return {std::stoi(ReadFileToString(stem + ".rc")), ReadFileToString(stem + ".out"), ReadFileToString(stem + ".err")};
}

TEST(LostUpdates, ConcurrentIncrementsAllLand) {
  TempDir dir;
  std::string ds = MakeIdValDataset(dir, dir.Join("db"), 10000);
  const int kProcesses = 8;
  std::vector<std::string> scripts;
  for (int p = 0; p < kProcesses; ++p)
    scripts.push_back(LoggedLancelet({"update", ds, "--set", "val = val + 1"}, dir.Join("u" + std::to_string(p))));
  RunAtOnce(dir, scripts);
  std::set<uint64_t> versions;
  for (int p = 0; p < kProcesses; ++p) {
    Outcome o = ReadOutcome(dir.Join("u" + std::to_string(p)));
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.out.rfind("updated 10000 rows of ", 0), 0u) << o.out;
    versions.insert(CommittedVersion(o.out));
  }
  EXPECT_EQ(versions, (std::set<uint64_t>{2, 3, 4, 5, 6, 7, 8, 9}));
  auto rows = ReadIdVal(ds);
  ASSERT_EQ(rows.size(), 10000u);
  size_t wrong = 0;
  for (const auto& [id, val] : rows) wrong += val != kProcesses;
  EXPECT_EQ(wrong, 0u) << "val of row 0 is " << rows[0];
}

TEST(LostUpdates, ConcurrentSqlIncrementsAllLand) {
  TempDir dir;
  std::string db = dir.Join("db");
  std::string ds = MakeIdValDataset(dir, db, 10000);
  const int kProcesses = 4;
  std::vector<std::string> scripts;
  for (int p = 0; p < kProcesses; ++p)
    scripts.push_back(
        LoggedLancelet({"sql", "--db", db, "UPDATE t SET val = val + 1"}, dir.Join("s" + std::to_string(p))));
  RunAtOnce(dir, scripts);
  for (int p = 0; p < kProcesses; ++p) {
    Outcome o = ReadOutcome(dir.Join("s" + std::to_string(p)));
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.out.rfind("UPDATE 10000 rows; t is now at version ", 0), 0u) << o.out;
  }
  auto rows = ReadIdVal(ds);
  ASSERT_EQ(rows.size(), 10000u);
  EXPECT_EQ(rows.begin()->second, kProcesses);
  EXPECT_EQ(rows.rbegin()->second, kProcesses);
}

// One commit of the mixed workload: the command and what it does to the model.
struct Op {
  enum Kind { kIncrement, kAssign, kDelete, kSqlScale, kAppend, kMerge, kMergeInsert } kind;
  int64_t m = 1, r = 0, c = 0;
  std::vector<std::pair<int64_t, int64_t>> rows;  // appended (kAppend) or merged (kMerge, kMergeInsert)

  bool Selects(int64_t id) const { return ((id % m) + m) % m == r; }
  void Apply(std::map<int64_t, int64_t>& model) const {
    switch (kind) {
      case kIncrement:
        for (auto& [id, val] : model)
          if (Selects(id)) val += c;
        break;
      case kAssign:
        for (auto& [id, val] : model)
          if (Selects(id)) val = c;
        break;
      case kDelete:
        for (auto it = model.begin(); it != model.end();) it = Selects(it->first) && it->second > c ? model.erase(it) : std::next(it);
        break;
      case kSqlScale:
        for (auto& [id, val] : model)
          if (Selects(id)) val = (val * 3 + c) % 1000;
        break;
      case kAppend:
        for (const auto& [id, val] : rows) model[id] = val;
        break;
      case kMerge:
        // Matched rows take val + the staged val; unmatched staged rows are inserted.
        for (const auto& [id, val] : rows) {
          auto it = model.find(id);
          if (it != model.end()) it->second += val;
          else model[id] = val;
        }
        break;
      case kMergeInsert:
        // Rows the file lacks that are selected with val > c go; matched rows take the
        // staged val; unmatched staged rows are inserted.
        for (auto it = model.begin(); it != model.end();) {
          const bool staged = std::any_of(rows.begin(), rows.end(), [&](const auto& r) { return r.first == it->first; });
          it = !staged && Selects(it->first) && it->second > c ? model.erase(it) : std::next(it);
        }
        for (const auto& [id, val] : rows) model[id] = val;
        break;
    }
  }
  std::vector<std::string> Args(const std::string& db, const std::string& csv) const {
    std::string ds = db + "/t.lance", sel = "id % " + std::to_string(m) + " = " + std::to_string(r);
    switch (kind) {
      case kIncrement: return {"update", ds, "--set", "val = val + " + std::to_string(c), "--where", sel};
      case kAssign: return {"update", ds, "--set", "val = " + std::to_string(c), "--where", sel};
      case kDelete: return {"delete", ds, "--where", sel + " AND val > " + std::to_string(c)};
      case kSqlScale:
        return {"sql", "--db", db, "UPDATE t SET val = (val * 3 + " + std::to_string(c) + ") % 1000 WHERE " + sel};
      case kAppend: return {"append", ds, "--from", csv};
      case kMerge:
        return {"sql", "--db", db,
                "MERGE INTO t USING read_csv('" + csv + "') AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET val = "
                "t.val + s.val WHEN NOT MATCHED THEN INSERT (id, val) VALUES (s.id, s.val)"};
      case kMergeInsert:
        return {"merge-insert", ds, "--from", csv, "--on", "id", "--when-matched-update-all",
                "--when-not-matched-insert-all", "--when-not-matched-by-source-delete", "--by-source-condition",
                sel + " AND val > " + std::to_string(c)};
    }
    return {};
  }
};

// Process p's k-th op, from a seeded generator; appended and merged ids are unique.
Op MakeOp(std::mt19937_64& rng, int p, int k, int64_t base_rows) {
  Op op;
  op.kind = Op::Kind(rng() % 7);
  op.m = 3 + int64_t(rng() % 9);
  op.r = int64_t(rng() % uint64_t(op.m));
  op.c = 1 + int64_t(rng() % 20);
  if (op.kind == Op::kDelete || op.kind == Op::kMergeInsert) op.m *= 10;  // deletes take few rows
  int64_t fresh = 1000000 + int64_t(p) * 100000 + int64_t(k) * 100;
  if (op.kind == Op::kAppend)
    for (int64_t j = 0; j < 5; ++j) op.rows.push_back({fresh + j, j});
  if (op.kind == Op::kMerge || op.kind == Op::kMergeInsert) {
    for (int64_t j = 0; j < 3; ++j) op.rows.push_back({int64_t(rng() % uint64_t(base_rows)), 1 + j});
    op.rows.push_back({fresh, 7});
    std::sort(op.rows.begin(), op.rows.end());
    op.rows.erase(std::unique(op.rows.begin(), op.rows.end(),
                              [](const auto& a, const auto& b) { return a.first == b.first; }),
                  op.rows.end());
  }
  return op;
}

TEST(MixedCommits, FinalRowsEqualASerialReplayInVersionOrder) {
  TempDir dir;
  std::string db = dir.Join("db");
  const int64_t kBaseRows = Scaled(2000, 10000);
  std::string ds = MakeIdValDataset(dir, db, kBaseRows);
  // Every version must be one of the ops: no merge of overlay layers in between (the
  // bound has its own tests, compaction among writers below).
  Lancelet({"config", ds, "--set", "lance.compaction.max_overlays_per_fragment=none"});
  const int kProcesses = 4, kOpsEach = Scaled(6, 50);
  std::mt19937_64 rng(20261201);
  std::vector<std::vector<Op>> ops(kProcesses);
  std::vector<std::string> scripts(kProcesses);
  for (int p = 0; p < kProcesses; ++p)
    for (int k = 0; k < kOpsEach; ++k) {
      ops[p].push_back(MakeOp(rng, p, k, kBaseRows));
      std::string stem = dir.Join("p" + std::to_string(p) + "_" + std::to_string(k));
      WriteIdValCsv(stem + ".csv", ops[p][k].rows);
      scripts[p] += "LANCELET_TRACE_CONFLICTS=1 " + LoggedLancelet(ops[p][k].Args(db, stem + ".csv"), stem);
    }
  RunAtOnce(dir, scripts);

  std::map<uint64_t, const Op*> by_version;
  int attempted = 0, landed = 0, unchanged = 0, conflicts = 0, recomputed = 0;
  for (int p = 0; p < kProcesses; ++p)
    for (int k = 0; k < kOpsEach; ++k) {
      ++attempted;
      Outcome o = ReadOutcome(dir.Join("p" + std::to_string(p) + "_" + std::to_string(k)));
      for (size_t at = o.err.find(" recomputes: "); at != std::string::npos; at = o.err.find(" recomputes: ", at + 1))
        ++recomputed;
      if (o.exit_code != 0) {
        // Only a clean conflict report may fail a commit.
        EXPECT_NE(o.err.find("conflict"), std::string::npos) << o.err;
        ++conflicts;
        continue;
      }
      uint64_t v = CommittedVersion(o.out);
      if (v == 0) {
        ++unchanged;
        continue;
      }
      EXPECT_EQ(by_version.count(v), 0u) << "two commits claim version " << v;
      // Counts are this commit's own, whatever else landed meanwhile.
      if (ops[p][k].kind == Op::kAppend) {
        EXPECT_EQ(o.out.rfind("appended 5 rows to ", 0), 0u) << o.out;
      }
      by_version[v] = &ops[p][k];
      ++landed;
    }
  std::map<int64_t, int64_t> model;
  for (int64_t i = 0; i < kBaseRows; ++i) model[i] = 0;
  uint64_t expected_version = 3;
  for (const auto& [v, op] : by_version) {
    EXPECT_EQ(v, expected_version++) << "versions must be consecutive";
    op->Apply(model);
  }
  const RowsDiff diff = DiffRows(model, ReadIdVal(ds));
  const size_t wrong = diff.count;
  EXPECT_EQ(wrong, 0u) << diff.sample << " in " << ds;
  // A commit that kept losing to others may give up with a clean conflict (checked
  // above); the figures report how many did.
  Figures(fmt::format("mixed commits: {} processes x {} ops: {} attempted, {} landed, {} matched nothing, {} "
                      "recomputations, {} failed with a conflict, {} rows wrong of {}",
                      kProcesses, kOpsEach, attempted, landed, unchanged, recomputed, conflicts, wrong, model.size()));
}

// Compactions run while other processes update and delete. A compaction that loses to
// a write on a fragment it rewrites or folds re-plans on the new version, so no write is
// lost: the final rows equal the model of every write that landed (increments and
// deletions by id commute, and compactions change no value).
TEST(MixedCommits, CompactionsNeverLoseConcurrentWrites) {
  TempDir dir;
  const int64_t kBaseRows = 8000;
  std::string ds = MakeIndexedIdValDataset(dir, kBaseRows);
  const int kWriters = 3, kOpsEach = Scaled(6, 40), kCompactions = Scaled(5, 30);
  std::vector<std::string> scripts(kWriters + 1);
  struct Write {
    bool increment;
    int64_t m, r;
  };
  std::vector<std::vector<Write>> writes(kWriters);
  std::mt19937_64 rng(4242);
  for (int p = 0; p < kWriters; ++p)
    for (int k = 0; k < kOpsEach; ++k) {
      Write w{rng() % 4 != 0, 2 + int64_t(rng() % 7), 0};
      if (!w.increment) w.m *= 50;
      w.r = int64_t(rng() % uint64_t(w.m));
      writes[p].push_back(w);
      std::string sel = "id % " + std::to_string(w.m) + " = " + std::to_string(w.r);
      std::vector<std::string> args = w.increment ? std::vector<std::string>{"update", ds, "--set", "val = val + 1", "--where", sel}
                                                  : std::vector<std::string>{"delete", ds, "--where", sel};
      scripts[size_t(p)] += LoggedLancelet(args, dir.Join("w" + std::to_string(p) + "_" + std::to_string(k)));
    }
  for (int k = 0; k < kCompactions; ++k) {
    std::vector<std::string> args = {"optimize", ds, "--materialize-deletions-threshold", "0.0001",
                                     "--target-rows-per-fragment", std::to_string(3000 + 2000 * (k % 3))};
    if (k % 2) args.push_back("--merge-overlays");
    scripts[kWriters] += LoggedLancelet(args, dir.Join("c" + std::to_string(k)));
  }
  RunAtOnce(dir, scripts);

  std::map<int64_t, int64_t> model;
  for (int64_t i = 0; i < kBaseRows; ++i) model[i] = 0;
  int landed = 0, failed = 0, compacted = 0;
  for (int p = 0; p < kWriters; ++p)
    for (int k = 0; k < kOpsEach; ++k) {
      Outcome o = ReadOutcome(dir.Join("w" + std::to_string(p) + "_" + std::to_string(k)));
      if (o.exit_code != 0) {
        EXPECT_NE(o.err.find("conflict"), std::string::npos) << o.err;
        ++failed;
        continue;
      }
      const Write& w = writes[size_t(p)][size_t(k)];
      if (CommittedVersion(o.out) == 0) continue;
      ++landed;
      for (auto it = model.begin(); it != model.end();) {
        if (it->first % w.m != w.r) {
          ++it;
        } else if (w.increment) {
          ++(it++)->second;
        } else {
          it = model.erase(it);
        }
      }
    }
  for (int k = 0; k < kCompactions; ++k) {
    Outcome o = ReadOutcome(dir.Join("c" + std::to_string(k)));
    if (o.exit_code != 0) {
      EXPECT_NE(o.err.find("conflict"), std::string::npos) << o.err;
      continue;
    }
    compacted += o.out.find("nothing to compact") == std::string::npos;
  }
  EXPECT_EQ(ReadIdVal(ds), model);
  auto ones = std::count_if(model.begin(), model.end(), [](const auto& kv) { return kv.second == 1; });
  EXPECT_EQ(Lancelet({"count", ds, "--where", "val = 1"}), std::to_string(ones) + "\n");
  Figures(fmt::format("compactions among writers: {} writes landed, {} gave up with a conflict, {} of {} "
                      "compactions changed the dataset",
                      landed, failed, compacted, kCompactions));
}

// Cleanups with every retention rule, forced, race writers, compactions and index
// builds. A writer whose read version (and the versions after it) a cleanup removed must
// never publish into a freed version number: every commit a writer reports must be in
// the final rows, at a version at or below the latest, each version once; the hint
// names the latest; every version left reads whole. The model replays every landed
// write in version order (an increment's predicate sees the rows appended before it).
TEST(MixedCommits, CleanupsNeverLoseConcurrentCommits) {
  TempDir dir;
  const int64_t kBaseRows = 20000;
  std::string ds = MakeIndexedIdValDataset(dir, kBaseRows);
  const int kWriters = 3, kOpsEach = Scaled(8, 60), kCleanups = Scaled(30, 240), kUpkeep = Scaled(4, 30);
  struct Write {
    enum Kind { kIncrement, kDelete, kAppend } kind;
    int64_t m, r;
  };
  std::vector<std::vector<Write>> writes(kWriters);
  std::vector<std::string> scripts(kWriters + 2);
  std::mt19937_64 rng(50);
  for (int p = 0; p < kWriters; ++p)
    for (int k = 0; k < kOpsEach; ++k) {
      Write w{Write::Kind(rng() % 3), 2 + int64_t(rng() % 7), 0};
      if (w.kind == Write::kDelete) w.m *= 50;
      w.r = int64_t(rng() % uint64_t(w.m));
      writes[size_t(p)].push_back(w);
      std::string stem = dir.Join("w" + std::to_string(p) + "_" + std::to_string(k));
      std::string sel = "id % " + std::to_string(w.m) + " = " + std::to_string(w.r);
      std::vector<std::string> args;
      if (w.kind == Write::kIncrement) args = {"update", ds, "--set", "val = val + 1", "--where", sel};
      if (w.kind == Write::kDelete) args = {"delete", ds, "--where", sel};
      if (w.kind == Write::kAppend) {
        const int64_t fresh = 1000000 + int64_t(p) * 100000 + int64_t(k) * 10;
        WriteIdValCsv(stem + ".csv", {{fresh, 0}, {fresh + 1, 0}, {fresh + 2, 0}});
        args = {"append", ds, "--from", stem + ".csv"};
      }
      scripts[size_t(p)] += "LANCELET_TRACE_CONFLICTS=1 " + LoggedLancelet(args, stem);
    }
  const std::vector<std::vector<std::string>> rules = {
      {"--keep", "1"}, {"--keep", "2"}, {"--keep", "3"}, {"--keep", "5"}, {"--older-than", "0s"},
      {"--older-than", "1s"}, {"--older-than", "2s"}};
  for (int k = 0; k < kCleanups; ++k) {
    std::vector<std::string> args = {"cleanup", ds, "--force"};
    args.insert(args.end(), rules[size_t(k) % rules.size()].begin(), rules[size_t(k) % rules.size()].end());
    scripts[kWriters] += LoggedLancelet(args, dir.Join("c" + std::to_string(k)));
  }
  for (int k = 0; k < kUpkeep; ++k) {
    const std::vector<std::vector<std::string>> upkeep = {
        {"optimize", ds, "--merge-overlays", "--no-rewrite", "--no-index"},
        {"index", "optimize", ds},
        {"optimize", ds, "--materialize-deletions-threshold", "0.0001", "--target-rows-per-fragment", "6000"},
        {"index", "create", ds, "val", "--replace"}};
    scripts[kWriters + 1] += LoggedLancelet(upkeep[size_t(k) % upkeep.size()], dir.Join("u" + std::to_string(k)));
  }
  RunAtOnce(dir, scripts);

  std::map<int64_t, int64_t> model;
  for (int64_t i = 0; i < kBaseRows; ++i) model[i] = 0;
  std::map<uint64_t, std::pair<int, int>> by_version;  // -> (process, op)
  int attempted = 0, landed = 0, failed = 0, recomputed_for_cleanup = 0, cleanups_removing = 0, upkeep_failed = 0;
  for (int p = 0; p < kWriters; ++p)
    for (int k = 0; k < kOpsEach; ++k) {
      ++attempted;
      Outcome o = ReadOutcome(dir.Join("w" + std::to_string(p) + "_" + std::to_string(k)));
      for (size_t at = o.err.find("concurrent cleanup"); at != std::string::npos;
           at = o.err.find("concurrent cleanup", at + 1))
        ++recomputed_for_cleanup;
      if (o.exit_code != 0) {
        // Never a raw missing file: one that a cleanup removed names the cleanup.
        EXPECT_NE(o.err.find("conflict"), std::string::npos) << o.err;
        if (o.err.find("no such file") != std::string::npos) {
          EXPECT_NE(o.err.find("concurrent cleanup"), std::string::npos) << o.err;
        }
        ++failed;
        continue;
      }
      const uint64_t v = CommittedVersion(o.out);
      if (v == 0) continue;
      EXPECT_TRUE(by_version.emplace(v, std::make_pair(p, k)).second) << "two commits claim version " << v;
      ++landed;
    }
  // An append and an update commute only in version order (the update's predicate sees
  // the rows appended before it).
  for (const auto& [v, at] : by_version) {
    const auto [p, k] = at;
    const Write& w = writes[size_t(p)][size_t(k)];
    if (w.kind == Write::kAppend) {
      const int64_t fresh = 1000000 + int64_t(p) * 100000 + int64_t(k) * 10;
      for (int64_t j = 0; j < 3; ++j) model[fresh + j] = 0;
      continue;
    }
    for (auto it = model.begin(); it != model.end();) {
      if (it->first % w.m != w.r) ++it;
      else if (w.kind == Write::kIncrement) ++(it++)->second;
      else it = model.erase(it);
    }
  }
  for (int k = 0; k < kCleanups; ++k) {
    Outcome o = ReadOutcome(dir.Join("c" + std::to_string(k)));
    EXPECT_EQ(o.exit_code, 0) << o.err;
    cleanups_removing += o.out.find("freed 0 versions") == std::string::npos;
  }
  for (int k = 0; k < kUpkeep; ++k) {
    Outcome o = ReadOutcome(dir.Join("u" + std::to_string(k)));
    if (o.exit_code != 0 && o.err.find("no such file") != std::string::npos) {
      EXPECT_NE(o.err.find("concurrent cleanup"), std::string::npos) << o.err;
    }
    if (o.exit_code != 0) {
      EXPECT_NE(o.err.find("conflict"), std::string::npos) << o.err;
      ++upkeep_failed;
    }
  }
  const uint64_t latest = LatestVersion(ds);
  if (!by_version.empty()) {
    EXPECT_LE(by_version.rbegin()->first, latest);
  }
  EXPECT_EQ(ReadFileToString(ds + "/_versions/latest_version_hint.json"), fmt::format("{{\"version\":{}}}", latest));
  for (const auto& loc : table::ListManifests(*io::MakeLocalStore(), ds)) {
    auto scan = RunLancelet({"count", ds, "--version", std::to_string(loc.version)});
    EXPECT_EQ(scan.exit_code, 0) << "version " << loc.version << ": " << scan.err;
  }
  const RowsDiff diff = DiffRows(model, ReadIdVal(ds));
  const size_t lost = diff.count;
  EXPECT_EQ(lost, 0u) << diff.sample << " in " << ds;
  auto ones = std::count_if(model.begin(), model.end(), [](const auto& kv) { return kv.second == 1; });
  EXPECT_EQ(Lancelet({"count", ds, "--where", "val = 1"}), std::to_string(ones) + "\n");
  Figures(fmt::format("cleanups among writers: {} commits attempted, {} landed, {} lost, {} failed with a clean "
                      "conflict, {} recomputations after a cleanup; {} of {} forced cleanups removed versions; {} of "
                      "{} compactions and index builds gave up with a conflict",
                      attempted, landed, lost, failed, recomputed_for_cleanup, cleanups_removing, kCleanups,
                      upkeep_failed, kUpkeep));
}

}  // namespace
}  // namespace lancelet::testing::reliability
