// Writers killed with SIGKILL at random points. After every kill the dataset must open,
// be at a committed version (the one before, or the killed writer's), and hold exactly
// the rows of a model of the committed operations; the reference must read it the same.
// What interrupted writers leave behind (orphan files) is counted here; `cleanup` removes
// them once they are 7 days old, or at once with --delete-unverified.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <random>
#include <thread>

#include "reliability/harness.h"
#include "support/json_rows.h"

extern char** environ;

namespace lancelet::testing::reliability {
namespace {

// Starts `lancelet ARGS...` with output discarded; returns its pid.
pid_t Spawn(const std::vector<std::string>& args) {
  std::vector<std::string> all = {LanceletBinary()};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "cannot start " << argv[0];
  return pid;
}

// Runs the command to its end; returns the seconds it took and whether it exited 0.
std::pair<double, bool> RunTimed(const std::vector<std::string>& args) {
  auto start = std::chrono::steady_clock::now();
  pid_t pid = Spawn(args);
  int status = 0;
  waitpid(pid, &status, 0);
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
          WIFEXITED(status) && WEXITSTATUS(status) == 0};
}

// The writing commands under test, each a function of a fresh parameter; `apply`
// changes the model the way the command would.
struct Writer {
  std::string name;
  std::function<std::vector<std::string>(int64_t)> args;
  std::function<void(int64_t, std::map<int64_t, int64_t>&)> apply;
};

// Starts `lancelet ARGS...` and kills it with SIGKILL at a random moment within 1.2 times
// `seconds` (how long the command takes when left alone).
void KillWithin(const std::vector<std::string>& args, double seconds, std::mt19937_64& rng) {
  pid_t pid = Spawn(args);
  std::this_thread::sleep_for(std::chrono::microseconds(rng() % uint64_t(seconds * 1.2e6 + 1)));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
}

// A dataset at `ds` of 4,000 rows (id, val = id % 100) in fragments of 1,000, and the
// model of its rows.
std::map<int64_t, int64_t> CreateIdVal(const TempDir& dir, const std::string& ds) {
  std::vector<std::pair<int64_t, int64_t>> base;
  for (int64_t i = 0; i < 4000; ++i) base.push_back({i, i % 100});
  WriteIdValCsv(dir.Join("base.csv"), base);
  Lancelet({"create", ds, "--from", dir.Join("base.csv"), "--schema", "id:int64,val:int64", "--max-rows-per-file",
            "1000"});
  return {base.begin(), base.end()};
}

TEST(CrashInjection, KilledWritersLeaveACommittedVersionWithTheModelsRows) {
  TempDir dir;
  std::string db = dir.Join("db");
  std::filesystem::create_directories(db);
  std::string ds = db + "/t.lance";
  const int64_t kRows = 4000;
  std::map<int64_t, int64_t> model = CreateIdVal(dir, ds);

  // Appends and merges stage their rows in a CSV named by the parameter.
  // New ids, and for a MERGE (`matched`) also one id of the base rows (matched unless
  // deleted), in staged<n>.csv and staged<n>m.csv.
  auto staged = [&](int64_t n, bool matched) {
    return dir.Join("staged" + std::to_string(n) + (matched ? "m" : "") + ".csv");
  };
  auto staged_rows = [&](int64_t n, bool matched) {
    std::vector<std::pair<int64_t, int64_t>> rows;
    if (matched) rows.push_back({n % kRows, 5});
    for (int64_t j = 0; j < 20; ++j) rows.push_back({100000 + n * 100 + j, j});
    return rows;
  };
  // The rows of every version committed so far, for restores.
  std::map<uint64_t, std::map<int64_t, int64_t>> models = {{LatestVersion(ds), model}};
  auto restored = [&](int64_t n) { return std::next(models.begin(), n % int64_t(models.size()))->first; };
  std::vector<Writer> writers = {
      {"append", [&](int64_t n) { return std::vector<std::string>{"append", ds, "--from", staged(n, false)}; },
       [&](int64_t n, auto& m) {
         for (auto [id, val] : staged_rows(n, false)) m[id] = val;
       }},
      {"delete",
       [&](int64_t n) {
         return std::vector<std::string>{"delete", ds, "--where", "id % 97 = " + std::to_string(n % 97)};
       },
       [&](int64_t n, auto& m) { std::erase_if(m, [&](const auto& kv) { return kv.first % 97 == n % 97; }); }},
      {"update",
       [&](int64_t n) {
         return std::vector<std::string>{"update", ds, "--set", "val = val + " + std::to_string(n), "--where",
                                         "id % 5 = " + std::to_string(n % 5)};
       },
       [&](int64_t n, auto& m) {
         for (auto& [id, val] : m)
           if (id % 5 == n % 5) val += n;
       }},
      {"sql update",
       [&](int64_t n) {
         return std::vector<std::string>{"sql", "--db", db,
                                         "UPDATE t SET val = val * 2 WHERE id % 7 = " + std::to_string(n % 7)};
       },
       [&](int64_t n, auto& m) {
         for (auto& [id, val] : m)
           if (id % 7 == n % 7) val *= 2;
       }},
      {"sql merge",
       [&](int64_t n) {
         return std::vector<std::string>{
             "sql", "--db", db,
             "MERGE INTO t USING read_csv('" + staged(n, true) +
                 "') AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET val = s.val WHEN NOT MATCHED THEN INSERT "
                 "(id, val) VALUES (s.id, s.val)"};
       },
       [&](int64_t n, auto& m) {
         for (auto [id, val] : staged_rows(n, true)) m[id] = val;
       }},
      {"merge-insert",
       [&](int64_t n) {
         return std::vector<std::string>{"merge-insert", ds, "--from", staged(n, true), "--on", "id",
                                         "--when-matched-update-all", "--when-not-matched-insert-all",
                                         "--when-not-matched-by-source-delete", "--by-source-condition",
                                         "id % 101 = " + std::to_string(n % 101)};
       },
       [&](int64_t n, auto& m) {
         const auto rows = staged_rows(n, true);
         std::erase_if(m, [&](const auto& kv) {
           return kv.first % 101 == n % 101 &&
                  std::none_of(rows.begin(), rows.end(), [&](const auto& r) { return r.first == kv.first; });
         });
         for (auto [id, val] : rows) m[id] = val;
       }},
      // A version committed earlier, chosen by the parameter, made the latest again.
      {"restore", [&](int64_t n) { return std::vector<std::string>{"restore", ds, "--version", std::to_string(restored(n))}; },
       [&](int64_t n, auto& m) { m = models.at(restored(n)); }},
      // A computed column: the rows' ids and values stay.
      {"add-columns",
       [&](int64_t n) {
         return std::vector<std::string>{"add-columns", ds, "--expr", fmt::format("c{} = val * {}", n, n)};
       },
       [](int64_t, auto&) {}},
  };

  auto stage = [&](int64_t n) {
    for (bool matched : {false, true}) WriteIdValCsv(staged(n, matched), staged_rows(n, matched));
  };
  const int kKillsEach = Scaled(4, 60);
  std::mt19937_64 rng(7);
  int64_t next_param = 1;
  int kills = 0, committed = 0, openable = 0, equal = 0;
  for (const auto& w : writers) {
    // One unkilled run measures how long the command takes; kills land within it.
    int64_t n = next_param++;
    stage(n);
    auto [seconds, ok] = RunTimed(w.args(n));
    ASSERT_TRUE(ok) << w.name;
    w.apply(n, model);
    models[LatestVersion(ds)] = model;
    for (int k = 0; k < kKillsEach; ++k) {
      n = next_param++;
      stage(n);
      uint64_t before = LatestVersion(ds);
      KillWithin(w.args(n), seconds, rng);
      ++kills;
      uint64_t after = LatestVersion(ds);
      // An UPDATE or MERGE that leaves a fragment over the overlay-layer bound merges
      // its layers in a second commit.
      ASSERT_TRUE(after >= before && after <= before + 2)
          << w.name << " kill " << k << ": version " << before << " became " << after;
      if (after > before) {
        w.apply(n, model);
        models[after] = model;
        ++committed;
      }
      std::string error;
      auto rows = ReadIdVal(ds, &error);
      ASSERT_TRUE(error.empty()) << w.name << " kill " << k << " left a dataset that does not open: " << error;
      ++openable;
      ASSERT_EQ(rows, model) << w.name << " kill " << k << " (version " << after << ")";
      ++equal;
    }
  }
  auto orphans = OrphanFiles(ds);
  Figures(fmt::format("crash injection: {} kills over {} writers, {} committed before the kill, {} datasets "
                      "openable, {} equal to the model, {} orphan files",
                      kills, writers.size(), committed, openable, equal, orphans.size()));
  if (OracleAvailable()) {
    std::string ours = Lancelet({"scan", ds, "--format", "jsonl"});
    std::string theirs = Oracle({"dump", ds}, "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1");
    EXPECT_EQ(DiffJsonLines(ours, theirs), "");
  }
}

// Compactions and cleanups killed at random points. An optimize commits up to three
// versions (rewrite, fold, index), each whole: after a kill the dataset is at one of
// them and holds the model's rows. A cleanup killed midway leaves every kept version
// readable.
TEST(CrashInjection, KilledCompactionsAndCleanupsLeaveReadableVersionsWithTheModelsRows) {
  TempDir dir;
  std::string ds = dir.Join("c.lance");
  std::map<int64_t, int64_t> model = CreateIdVal(dir, ds);
  Lancelet({"index", "create", ds, "val"});
  // An update and a delete (not killed) give each compaction overlays to fold and
  // deleted rows to drop.
  auto prepare = [&](int k) {
    Lancelet({"update", ds, "--set", "val = val + 1", "--where", "id % 5 = " + std::to_string(k % 5)});
    for (auto& [id, val] : model)
      if (id % 5 == k % 5) val += 1;
    Lancelet({"delete", ds, "--where", "id % 101 = " + std::to_string(k % 101)});
    std::erase_if(model, [&](const auto& kv) { return kv.first % 101 == k % 101; });
  };
  const std::vector<std::string> optimize = {"optimize", ds, "--materialize-deletions-threshold", "0.0001",
                                             "--target-rows-per-fragment", "1500"};
  prepare(0);
  auto [seconds, ok] = RunTimed(optimize);
  ASSERT_TRUE(ok);
  ASSERT_EQ(ReadIdVal(ds), model);
  const int kKills = Scaled(6, 60);
  std::mt19937_64 rng(12);
  int landed_versions = 0;
  for (int k = 1; k <= kKills; ++k) {
    prepare(k);
    uint64_t before = LatestVersion(ds);
    KillWithin(optimize, seconds, rng);
    uint64_t after = LatestVersion(ds);
    ASSERT_LE(after, before + 3) << "kill " << k;
    landed_versions += int(after - before);
    std::string error;
    auto rows = ReadIdVal(ds, &error);
    ASSERT_TRUE(error.empty()) << "kill " << k << " left a dataset that does not open: " << error;
    ASSERT_EQ(rows, model) << "optimize kill " << k << " (version " << after << ")";
    // Through the index on val (its coverage narrowed or rebuilt by each commit).
    auto sevens = std::count_if(model.begin(), model.end(), [](const auto& kv) { return kv.second == 7; });
    ASSERT_EQ(Lancelet({"count", ds, "--where", "val = 7"}), std::to_string(sevens) + "\n") << "kill " << k;
  }
  // Cleanup: each round adds versions, then a cleanup keeping 3 is killed.
  auto [cleanup_seconds, cleanup_ok] = RunTimed({"cleanup", ds, "--keep", "3", "--force"});
  ASSERT_TRUE(cleanup_ok);
  for (int k = 0; k < kKills; ++k) {
    prepare(1000 + k);
    Lancelet({"optimize", ds, "--no-rewrite"});
    KillWithin({"cleanup", ds, "--keep", "3", "--force", "--delete-unverified"}, cleanup_seconds, rng);
    uint64_t latest = LatestVersion(ds);
    ASSERT_EQ(ReadIdVal(ds), model) << "cleanup kill " << k;
    for (uint64_t v = latest - 2; v <= latest; ++v) {
      auto scan = RunLancelet({"scan", ds, "--version", std::to_string(v), "--format", "csv"});
      ASSERT_EQ(scan.exit_code, 0) << "cleanup kill " << k << ": kept version " << v << ": " << scan.err;
    }
  }
  Figures(fmt::format("compaction crash injection: {} optimize kills ({} versions landed before them), {} cleanup "
                      "kills, {} orphan files left",
                      kKills, landed_versions, kKills, OrphanFiles(ds).size()));
  if (OracleAvailable()) {
    std::string ours = Lancelet({"scan", ds, "--format", "jsonl"});
    std::string theirs = Oracle({"dump", ds}, "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1");
    EXPECT_EQ(DiffJsonLines(ours, theirs), "");
  }
}

}  // namespace
}  // namespace lancelet::testing::reliability
