// Bad input, one row of a table per case: damaged manifests, data, deletion and overlay
// files; malformed CSV, JSON and SQL; a full disk; a file the user may not read. Each
// must be refused with one clean line on stderr ("lancelet: ...", valid UTF-8, naming
// what was wrong), never wrong rows, and a refused write leaves the dataset exactly as
// it was.
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>

#include "reliability/harness.h"

namespace lancelet::testing::reliability {
namespace {

void Truncate(const std::string& path, size_t keep) {
  std::string bytes = ReadFileToString(path);
  ASSERT_LT(keep, bytes.size()) << path;
  WriteStringToFile(path, bytes.substr(0, keep));
}

// Inverts `count` bytes starting `from` bytes into the file (negative: from its end).
void Flip(const std::string& path, int64_t from, size_t count) {
  std::string bytes = ReadFileToString(path);
  size_t start = from >= 0 ? size_t(from) : bytes.size() - size_t(-from);
  ASSERT_LE(start + count, bytes.size()) << path;
  for (size_t i = start; i < start + count; ++i) bytes[i] = char(~bytes[i]);
  WriteStringToFile(path, bytes);
}

bool ValidUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    i += n;
  }
  return true;
}

// A dataset with three fragments, an .arrow deletion file in fragment 0 and an overlay
// on fragment 1, at file version `version`: a copy of one made once per version.
struct Fixture {
  TempDir dir;
  std::string db = dir.Join("db");
  std::string ds = db + "/t.lance";
  lance::table::Manifest manifest;

  explicit Fixture(const std::string& version) {
    static std::map<std::string, std::unique_ptr<TempDir>> templates;
    auto& made = templates[version];
    if (!made) {
      made = std::make_unique<TempDir>();
      std::string t = made->Join("t.lance");
      std::vector<std::pair<int64_t, int64_t>> rows;
      for (int64_t i = 0; i < 3000; ++i) rows.push_back({i, i * 10});
      WriteIdValCsv(made->Join("base.csv"), rows);
      Lancelet({"create", t, "--from", made->Join("base.csv"), "--schema", "id:int64,val:int64",
                "--max-rows-per-file", "1000", "--file-version", version});
      Lancelet({"delete", t, "--where", "id < 100 AND id % 3 = 0"});
      Lancelet({"update", t, "--set", "val = -1", "--where", "id >= 1000 AND id < 1010"});
    }
    std::filesystem::create_directories(db);
    std::filesystem::copy(made->Join("t.lance"), ds, std::filesystem::copy_options::recursive);
    auto store = io::MakeLocalStore();
    manifest = table::ReadManifest(*store, table::LatestManifest(*store, ds)->path);
  }
  std::string DataFile(int fragment) const { return ds + "/data/" + manifest.fragments(fragment).files(0).path(); }
  std::string DeletionFile(int fragment) const {
    const auto& f = manifest.fragments(fragment);
    return ds + "/_deletions/" + table::DeletionFileName(f.id(), f.deletion_file());
  }
  std::string OverlayFile(int fragment) const {
    return ds + "/data/" + manifest.fragments(fragment).overlays(0).data_file().path();
  }
  std::string LatestManifestPath() const { return table::LatestManifest(*io::MakeLocalStore(), ds)->path; }
};

// The one clean line a refused command must print.
// A SQL error adds the statement and a caret line under the problem (`lines` = 3).
bool ExpectCleanRefusal(const CommandResult& r, const std::string& expected, const std::string& what,
                        int lines = 1) {
  bool refused = r.exit_code != 0, prefixed = r.err.rfind("lancelet: ", 0) == 0,
       one_line = std::count(r.err.begin(), r.err.end(), '\n') == lines,
       named = r.err.find(expected) != std::string::npos, utf8 = ValidUtf8(r.err);
  EXPECT_TRUE(refused) << what << " was not refused; stdout: " << r.out.substr(0, 300);
  EXPECT_TRUE(prefixed && one_line) << what << ": " << r.err;
  EXPECT_TRUE(named) << what << ": expected '" << expected << "' in " << r.err;
  EXPECT_TRUE(utf8) << what;
  return refused && prefixed && one_line && named && utf8;
}

// Runs `lancelet ARGS...` with its file size limited to `bytes`: writes past it fail as
// on a full disk (EFBIG; SIGXFSZ is ignored so the write returns the error).
CommandResult RunWithFileSizeLimit(const std::vector<std::string>& args, size_t kib) {
  std::string cmd = "trap '' XFSZ; ulimit -f " + std::to_string(kib) + "; exec " + ShellQuote(LanceletBinary());
  for (const auto& a : args) cmd += " " + ShellQuote(a);
  return RunCommand(cmd);
}

class BadInputTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BadInputTest, DamagedFilesAreRefusedByName) {
  struct Case {
    std::string what;
    std::function<std::string(Fixture&)> damage;  // returns the damaged file's name
    std::vector<std::string> command;             // "DS" stands for the dataset
  };
  std::vector<Case> cases = {
      {"truncated manifest", [](Fixture& f) { auto p = f.LatestManifestPath(); Truncate(p, 40); return p; },
       {"count", "DS"}},
      {"manifest footer flipped", [](Fixture& f) { auto p = f.LatestManifestPath(); Flip(p, -12, 12); return p; },
       {"count", "DS"}},
      {"truncated data file", [](Fixture& f) { auto p = f.DataFile(2); Truncate(p, 100); return p; },
       {"scan", "DS", "--format", "jsonl"}},
      {"data file footer flipped", [](Fixture& f) { auto p = f.DataFile(2); Flip(p, -40, 16); return p; },
       {"scan", "DS", "--format", "jsonl"}},
      {"deletion file flipped", [](Fixture& f) { auto p = f.DeletionFile(0); Flip(p, -80, 16); return p; },
       {"scan", "DS", "--format", "jsonl"}},
      {"deletion file flipped (count)", [](Fixture& f) { auto p = f.DeletionFile(0); Flip(p, -80, 16); return p; },
       {"count", "DS", "--where", "val >= 0"}},
      {"truncated overlay file", [](Fixture& f) { auto p = f.OverlayFile(1); Truncate(p, 64); return p; },
       {"scan", "DS", "--format", "jsonl"}},
  };
  int refused = 0;
  for (const auto& c : cases) {
    Fixture f(GetParam());
    std::string damaged = c.damage(f);
    std::vector<std::string> args = c.command;
    for (auto& a : args)
      if (a == "DS") a = f.ds;
    // The file is named by its name (paths may be shown relative to the dataset).
    refused += ExpectCleanRefusal(RunLancelet(args), std::filesystem::path(damaged).filename().string(), c.what);
  }
  Figures(fmt::format("bad input (damaged files, {}): {} cases, {} refused cleanly", GetParam(), cases.size(), refused));
}

TEST_P(BadInputTest, RefusedWritesLeaveTheDatasetAsItWas) {
  struct Case {
    std::string what;
    std::string input_name, input;          // written next to the dataset when not empty
    std::vector<std::string> command;       // "DS", "DB" and "INPUT" are replaced
    std::string expected;
    size_t file_size_kib = 0;               // > 0: run with writes limited to this size
    int error_lines = 1;
  };
  std::string big_csv = "id,val\n";
  for (int i = 0; i < 100000; ++i) big_csv += std::to_string(100000 + i) + "," + std::to_string(i) + "\n";
  std::vector<Case> cases = {
      {"unterminated CSV quote", "bad.csv", "id,val\n5000,1\n\"5001,2\n", {"append", "DS", "--from", "INPUT"}, "bad.csv"},
      {"malformed JSON line", "bad.jsonl", "{\"id\": 5000, \"val\": 1}\n{\"id\": 5001, \"val\": \n",
       {"append", "DS", "--from", "INPUT"}, "bad.jsonl"},
      {"binary garbage as CSV", "garbage.csv", std::string("id,val\n\xff\xfe\x01,\x80\x81\n", 14),
       {"append", "DS", "--from", "INPUT"}, "garbage.csv"},
      {"SQL syntax error after an UPDATE", "", "", {"sql", "--db", "DB", "UPDATE t SET val = 1 WHERE id < 5; SELEC 1"},
       "SELEC", 0, 3},
      {"unknown column in a predicate", "", "", {"delete", "DS", "--where", "nope = 1 AND id = 2"}, "nope"},
      {"lossy SET", "", "", {"update", "DS", "--set", "val = 'abc'"}, "val"},
      {"append on a full disk", "big.csv", big_csv, {"append", "DS", "--from", "INPUT"}, "File too large", 512},
      {"update on a full disk", "", "", {"update", "DS", "--set", "val = val + 1"}, "File too large", 1},
      {"delete on a full disk", "", "", {"delete", "DS", "--where", "id % 2 = 0"}, "File too large", 1},
  };
  int unchanged = 0;
  for (const auto& c : cases) {
    Fixture f(GetParam());
    std::string input = f.dir.Join(c.input_name);
    if (!c.input_name.empty()) WriteStringToFile(input, c.input);
    std::vector<std::string> args = c.command;
    for (auto& a : args) {
      if (a == "DS") a = f.ds;
      if (a == "DB") a = f.db;
      if (a == "INPUT") a = input;
    }
    auto before = Snapshot(f.ds);
    auto r = c.file_size_kib ? RunWithFileSizeLimit(args, c.file_size_kib) : RunLancelet(args);
    ExpectCleanRefusal(r, c.expected, c.what, c.error_lines);
    EXPECT_EQ(Snapshot(f.ds), before) << c.what << " changed the dataset";
    unchanged += Snapshot(f.ds) == before;
  }
  Figures(fmt::format("bad input (refused writes, {}): {} cases, {} left the dataset unchanged", GetParam(),
                      cases.size(), unchanged));
}

TEST(BadInput, CreateOnAFullDiskLeavesNothing) {
  TempDir dir;
  std::string csv = "id,val\n";
  for (int i = 0; i < 100000; ++i) csv += std::to_string(i) + "," + std::to_string(i) + "\n";
  WriteStringToFile(dir.Join("big.csv"), csv);
  auto r = RunWithFileSizeLimit({"create", dir.Join("new.lance"), "--from", dir.Join("big.csv")}, 512);
  ExpectCleanRefusal(r, "File too large", "create on a full disk");
  EXPECT_FALSE(std::filesystem::exists(dir.Join("new.lance")));
}

// A real full disk: a small tmpfs mounted for one test, filled until `free_bytes` are
// left. Mounting needs CAP_SYS_ADMIN; without it the tests using it are skipped.
class SmallTmpfs {
 public:
  explicit SmallTmpfs(std::string where) : where_(std::move(where)) {
    std::filesystem::create_directories(where_);
    mounted_ = ::mount("tmpfs", where_.c_str(), "tmpfs", 0, "size=16m") == 0;
    if (!mounted_) why_ = strerror(errno);
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(where_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& why_not() const { return why_; }
  const std::string& path() const { return where_; }
  void FillLeaving(size_t free_bytes) {
    struct statvfs st {};
    ASSERT_EQ(::statvfs(where_.c_str(), &st), 0);
    size_t available = size_t(st.f_bavail) * st.f_frsize;
    ASSERT_GT(available, free_bytes + 4096);
    WriteStringToFile(where_ + "/filler", std::string(available - free_bytes - 4096, '\0'));
  }

 private:
  std::string where_;
  bool mounted_ = false;
  std::string why_;
};

TEST(BadInput, WritesOnAFullTmpfsAreRefusedAndChangeNothing) {
  struct Case {
    std::string what;
    std::vector<std::string> command;  // "DS", "DB", "NEW" and "INPUT" are replaced
    size_t free_bytes;                 // one page: the first file fails; more: one fails midway
  };
  std::vector<Case> cases = {
      {"append", {"append", "DS", "--from", "INPUT"}, 4096},
      {"append (midway)", {"append", "DS", "--from", "INPUT"}, 64 << 10},
      {"update", {"update", "DS", "--set", "val = val + 1"}, 4096},
      {"delete", {"delete", "DS", "--where", "id % 2 = 0"}, 4096},
      {"SQL UPDATE", {"sql", "--db", "DB", "UPDATE t SET val = 0 WHERE id < 2500"}, 4096},
      {"create", {"create", "NEW", "--from", "INPUT"}, 4096},
      {"create (midway)", {"create", "NEW", "--from", "INPUT"}, 64 << 10},
      {"index create", {"index", "create", "DS", "val"}, 4096},
      {"SQL CREATE INDEX", {"sql", "--db", "DB", "CREATE INDEX b ON t (val) USING BITMAP"}, 4096},
  };
  int unchanged = 0;
  for (const auto& c : cases) {
    Fixture f("2.2");
    SmallTmpfs disk(f.dir.Join("disk"));
    if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs CAP_SYS_ADMIN): " << disk.why_not();
    std::string db = disk.path() + "/db", ds = db + "/t.lance", input = f.dir.Join("rows.csv");
    std::filesystem::copy(f.db, db, std::filesystem::copy_options::recursive);
    std::string csv = "id,val\n";
    for (int i = 0; i < 20000; ++i) csv += std::to_string(10000 + i) + "," + std::to_string(i) + "\n";
    WriteStringToFile(input, csv);
    disk.FillLeaving(c.free_bytes);
    std::vector<std::string> args = c.command;
    for (auto& a : args) {
      if (a == "DS") a = ds;
      if (a == "DB") a = db;
      if (a == "NEW") a = db + "/new.lance";
      if (a == "INPUT") a = input;
    }
    auto before = Snapshot(ds);
    ExpectCleanRefusal(RunLancelet(args), "No space left on device", c.what + " on a full tmpfs");
    EXPECT_EQ(Snapshot(ds), before) << c.what << " changed the dataset";
    EXPECT_FALSE(std::filesystem::exists(db + "/new.lance")) << c.what;
    unchanged += Snapshot(ds) == before && !std::filesystem::exists(db + "/new.lance");
  }
  Figures(fmt::format("bad input (full tmpfs): {} writes refused, {} left the dataset unchanged", cases.size(),
                      unchanged));
}

TEST(BadInput, UnreadableFileIsNamed) {
  Fixture f("2.0");
  std::string file = f.DataFile(0);
  std::filesystem::permissions(file, std::filesystem::perms::owner_write);  // no read bit for anyone
  // root reads any file: run as nobody then (the dataset's directories stay readable).
  std::vector<std::string> args = {"scan", f.ds, "--format", "jsonl"};
  CommandResult r;
  if (geteuid() == 0) {
    std::string cmd = "setpriv --reuid=65534 --regid=65534 --clear-groups " + ShellQuote(LanceletBinary());
    for (const auto& a : args) cmd += " " + ShellQuote(a);
    r = RunCommand(cmd);
  } else {
    r = RunLancelet(args);
  }
  ExpectCleanRefusal(r, "ermission denied", "unreadable data file");
  ExpectCleanRefusal(r, std::filesystem::path(file).filename().string(), "unreadable data file");
}

INSTANTIATE_TEST_SUITE_P(FileVersions, BadInputTest, ::testing::Values("2.0", "2.2"));

}  // namespace
}  // namespace lancelet::testing::reliability
