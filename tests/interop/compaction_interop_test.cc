// Compaction and cleanup against the reference (lance 12.0.0): it reads every dataset
// lancelet merged, folded, rewrote or cleaned (without the overlay variable once no
// overlay is left), lancelet compacts what the reference wrote, and the reference's own
// optimize() and cleanup on lancelet's datasets leave lancelet reading the same rows.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "lancelet/dataset.h"
#include "lancelet/ipc.h"
#include "lancelet/overlay_writer.h"
#include "support/json_rows.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/feature_flags.h"

namespace lancelet::testing {
namespace {

const char* kOverlayEnv = "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1";

std::string Ours(const std::string& ds) { return Lancelet({"scan", ds, "--format", "jsonl"}); }

bool HasOverlayFlag(const std::string& ds) {
  return (table::StateOf(Dataset::Open(ds)).manifest.reader_feature_flags() & table::kFlagDataOverlays) != 0;
}

size_t FilesIn(const std::string& dir) {
  if (!std::filesystem::exists(dir)) return 0;
  return size_t(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()));
}

class CompactionInteropTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string version() const { return GetParam(); }
  void Gen(const std::string& out, const std::string& seed, int rows) {
    // Struct validity under overlays is a known divergence (overlay_interop_test.cc):
    // without NULL structs both sides define every value alike.
    Oracle({"gen", out, "--rows", std::to_string(rows), "--seed", seed, "--no-nan-vectors", "--no-null-structs"});
  }
  // The reference reads `ds` like lancelet: with the overlay variable only when needed.
  void ExpectReferenceReads(const std::string& ds, const std::string& context) {
    std::string env = HasOverlayFlag(ds) ? kOverlayEnv : "";
    EXPECT_EQ(DiffJsonLines(Ours(ds), Oracle({"dump", ds}, env)), "") << context;
  }
  TempDir dir_;
};

// Every type: sparse overlays over all columns, deletions, updates; then a merge, a
// fold, a row rewrite and a cleanup, each read by the reference.
TEST_P(CompactionInteropTest, TheReferenceReadsEveryCompactionAndCleanup) {
  REQUIRE_ORACLE();
  std::string ds = dir_.Join("c.lance"), a = dir_.Join("a.arrow"), b = dir_.Join("b.arrow");
  Gen(a, "51", 200);
  Gen(b, "52", 200);
  Lancelet({"create", ds, "--from", a, "--file-version", version(), "--max-rows-per-file", "60"});
  auto replacement = ReadArrowFile(b);
  auto dataset = Dataset::Open(ds);
  ASSERT_EQ(table::StateOf(dataset).manifest.fragments_size(), 4);
  OverlayWriter sparse(dataset);
  for (uint64_t frag = 0; frag < 4; ++frag) {
    uint32_t rows = frag < 3 ? 60 : 20;
    for (size_t c = 0; c < replacement->num_columns(); ++c) {
      std::vector<uint32_t> offsets;
      for (uint32_t o = 0; o < rows; ++o)
        if ((o + c) % 4 == 0) offsets.push_back(o);
      sparse.Set(frag, replacement->schema()->field(c)->name, offsets, PickRows(*replacement, c, offsets));
    }
  }
  sparse.Commit();
  Lancelet({"delete", ds, "--where", "c_int16 < -20000"});
  Lancelet({"update", ds, "--set", "c_int32 = c_int32 / 3", "--where", "c_int8 < 0"});
  Lancelet({"update", ds, "--set", "c_utf8 = 'again'", "--where", "c_int8 < -50"});
  const std::string rows = Ours(ds);

  // Overlay -> overlay: the merged overlay keeps the newest version; flag 64 stays.
  Dataset::Open(ds)->MergeOverlays(0);
  EXPECT_EQ(table::StateOf(Dataset::Open(ds)).manifest.fragments(0).overlays_size(), 1);
  EXPECT_EQ(DiffJsonLines(rows, Ours(ds)), "");
  ExpectReferenceReads(ds, "after a merge");

  // Overlay -> base: no overlay is left, so the reference reads it without the variable.
  Lancelet({"optimize", ds, "--no-rewrite"});
  EXPECT_FALSE(HasOverlayFlag(ds));
  EXPECT_EQ(DiffJsonLines(rows, Ours(ds)), "");
  EXPECT_EQ(DiffJsonLines(rows, Oracle({"dump", ds})), "") << "after a fold, read without the variable";

  // Rows move: deleted rows dropped, fragments merged, new overlays materialized.
  Lancelet({"update", ds, "--set", "c_int64 = 7", "--where", "c_int8 > 100"});
  const std::string updated = Ours(ds);
  Lancelet({"optimize", ds, "--target-rows-per-fragment", "150"});
  EXPECT_FALSE(HasOverlayFlag(ds));
  EXPECT_EQ(DiffJsonLines(updated, Ours(ds)), "");
  EXPECT_EQ(DiffJsonLines(updated, Oracle({"dump", ds})), "") << "after a rewrite";
  auto rewritten = Dataset::Open(ds);
  for (const auto& f : table::StateOf(rewritten).manifest.fragments()) EXPECT_FALSE(f.has_deletion_file());

  // Cleanup: only the latest version's files remain, and both sides read it.
  size_t before = FilesIn(ds + "/data");
  std::string out = Lancelet({"cleanup", ds, "--keep", "1", "--force"});
  EXPECT_NE(out.find("freed"), std::string::npos) << out;
  EXPECT_LT(FilesIn(ds + "/data"), before);
  size_t live = 0;
  auto cleaned = Dataset::Open(ds);
  for (const auto& f : table::StateOf(cleaned).manifest.fragments()) live += size_t(f.files_size());
  EXPECT_EQ(FilesIn(ds + "/data"), live);
  EXPECT_EQ(FilesIn(ds + "/_versions"), 1u + std::filesystem::exists(ds + "/_versions/latest_version_hint.json"));
  EXPECT_EQ(DiffJsonLines(updated, Ours(ds)), "");
  EXPECT_EQ(DiffJsonLines(updated, Oracle({"dump", ds})), "") << "after cleanup";

  // A journal an interrupted cleanup left in _versions/ (table/cleanup.cc) does not stop
  // the reference from reading, and the next cleanup removes it.
  const std::string journal = ds + "/_versions/cleanup-00000000-0000-4000-8000-000000000000.journal";
  WriteStringToFile(journal, "lancelet cleanup journal 1\ndata/gone.lance\n");
  EXPECT_EQ(DiffJsonLines(updated, Oracle({"dump", ds})), "") << "with a cleanup journal left";
  Lancelet({"cleanup", ds, "--keep", "1"});
  EXPECT_FALSE(std::filesystem::exists(journal));
}

// The reference's optimize() with an immediate cleanup on a lancelet dataset that has
// live overlays: lancelet reads the same rows after it.
TEST_P(CompactionInteropTest, TheReferencesOptimizeAndCleanupLeaveLanceletReadingTheSameRows) {
  REQUIRE_ORACLE();
  std::string ds = dir_.Join("r.lance"), a = dir_.Join("a.arrow");
  Gen(a, "61", 150);
  Lancelet({"create", ds, "--from", a, "--file-version", version(), "--max-rows-per-file", "50"});
  Lancelet({"update", ds, "--set", "c_int32 = 5", "--where", "c_int8 < 0"});
  Lancelet({"delete", ds, "--where", "c_int16 > 20000"});
  Lancelet({"optimize", ds, "--no-rewrite"});  // folded: old base files only old versions use
  Lancelet({"update", ds, "--set", "c_utf8 = 'live'", "--where", "c_int8 > 0"});  // live overlays
  const std::string rows = Ours(ds);
  Oracle({"optimize", ds, "--cleanup-now", "--delete-unverified"}, kOverlayEnv);
  EXPECT_EQ(DiffJsonLines(rows, Ours(ds)), "");
  // And lancelet's cleanup after the reference's writes keeps what the reference uses.
  Lancelet({"cleanup", ds, "--keep", "1", "--force", "--delete-unverified"});
  EXPECT_EQ(DiffJsonLines(rows, Ours(ds)), "");
  ExpectReferenceReads(ds, "after both cleanups");
}

// The reference creates, updates (rewriting rows) and deletes; lancelet overlays and
// then compacts everything; the reference reads the result without the variable.
TEST_P(CompactionInteropTest, LanceletCompactsTheReferencesDataset) {
  REQUIRE_ORACLE();
  std::string ds = dir_.Join("ref.lance"), a = dir_.Join("a.arrow");
  Gen(a, "71", 300);
  Oracle({"create", ds, "--data", a, "--file-version", version(), "--max-rows-per-file", "100"});
  Oracle({"update", ds, "--set", "c_int64=c_int64 + 1", "--where", "c_int8 < -60"});
  Oracle({"delete", ds, "--where", "c_int16 < -25000"});
  Lancelet({"update", ds, "--set", "c_utf8 = 'mine'", "--where", "c_int8 > 60"});
  const std::string rows = Ours(ds);
  EXPECT_EQ(DiffJsonLines(rows, Oracle({"dump", ds}, kOverlayEnv)), "");
  Lancelet({"optimize", ds});
  EXPECT_FALSE(HasOverlayFlag(ds));
  EXPECT_EQ(table::StateOf(Dataset::Open(ds)).manifest.fragments_size(), 1);
  std::string after = Ours(ds);
  EXPECT_EQ(SplitLines(after).size(), SplitLines(rows).size());
  EXPECT_EQ(DiffJsonLines(after, Oracle({"dump", ds})), "");
  // Same rows as before, in the order the merged fragments held them.
  EXPECT_EQ(DiffJsonLines(rows, after), "");
}

// A table the reference made has no lance.overlays.enabled: lancelet's default UPDATE
// (CLI and SQL) writes no overlay on it, says so in one line, and the reference reads the
// result without the variable. Once the user enables overlays, UPDATE writes them.
TEST_P(CompactionInteropTest, TheDefaultUpdateKeepsTheReferencesTableReadableByIt) {
  REQUIRE_ORACLE();
  std::string a = dir_.Join("a.arrow"), ds = dir_.Join("theirs.lance");
  Gen(a, "82", 160);
  Oracle({"create", ds, "--data", a, "--file-version", version()});
  auto r = RunLancelet({"update", ds, "--set", "c_int32 = 1", "--where", "c_int64 % 40 = 3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 4 of 160 rows x every column of these wide rows outweighs column c_int32: a rewrite.
  EXPECT_EQ(r.err, "note: " + ds + " was updated by rewriting columns without data overlay files, which "
                   "lance.overlays.enabled is not true for (so that readers without overlay support still read it); "
                   "`lancelet config " + ds + " --set lance.overlays.enabled=true` lets UPDATE and MERGE write them\n");
  EXPECT_FALSE(HasOverlayFlag(ds));
  EXPECT_EQ(DiffJsonLines(Ours(ds), Oracle({"dump", ds})), "");
  const std::string db = dir_.path();
  auto sql = Lancelet({"sql", "--db", db, "UPDATE theirs SET c_int32 = 2 WHERE c_int64 % 40 = 5"});
  EXPECT_NE(sql.find("\nnote: " + ds + " was updated by "), std::string::npos) << sql;
  EXPECT_NE(sql.find("`lancelet config " + ds + " --set lance.overlays.enabled=true`"), std::string::npos) << sql;
  EXPECT_FALSE(HasOverlayFlag(ds));
  EXPECT_EQ(DiffJsonLines(Ours(ds), Oracle({"dump", ds})), "");
  // MERGE too: matched rows move, with the inserts, in one version.
  WriteStringToFile(dir_.Join("staged.csv"),  // the first row's c_int64, under its header
                    Lancelet({"scan", ds, "--columns", "c_int64", "--limit", "1", "--format", "csv"}));
  const std::string merged = Lancelet(
      {"sql", "--db", db, "MERGE INTO theirs USING read_csv('" + dir_.Join("staged.csv") +
                              "') AS s ON theirs.c_int64 = s.c_int64 WHEN MATCHED THEN UPDATE SET c_int32 = 77"});
  EXPECT_NE(merged.find("MERGE 1 row updated, 0 deleted, 0 inserted"), std::string::npos) << merged;
  EXPECT_NE(merged.find("\nnote: " + ds + " was updated by moving rows"), std::string::npos) << merged;
  EXPECT_FALSE(HasOverlayFlag(ds));
  EXPECT_EQ(DiffJsonLines(Ours(ds), Oracle({"dump", ds})), "");
  EXPECT_EQ(Oracle({"count", ds, "--where", "c_int32 = 77"}), "1\n");
  Lancelet({"config", ds, "--set", "lance.overlays.enabled=true"});
  r = RunLancelet({"update", ds, "--set", "c_int32 = 3", "--where", "c_int64 % 40 = 7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(HasOverlayFlag(ds));
  ExpectReferenceReads(ds, "after enabling overlays");
}

// UPDATE as a column rewrite or as a row move writes no overlay: the reference reads the
// result without the variable, with the same rows.
TEST_P(CompactionInteropTest, UpdatesThatRewriteColumnsOrMoveRowsNeedNoOverlaySupport) {
  REQUIRE_ORACLE();
  std::string a = dir_.Join("a.arrow");
  Gen(a, "81", 160);
  for (const char* mode : {"columns", "rows"}) {
    std::string ds = dir_.Join(std::string(mode) + ".lance");
    Lancelet({"create", ds, "--from", a, "--file-version", version(), "--max-rows-per-file", "80"});
    auto r = RunLancelet({"update", ds, "--set", "c_int32 = 1", "--set", "c_utf8 = 'moved'", "--where", "c_int8 < 0",
                          "--mode", mode});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "") << "no overlay, no notice";
    EXPECT_FALSE(HasOverlayFlag(ds)) << mode;
    EXPECT_EQ(DiffJsonLines(Ours(ds), Oracle({"dump", ds})), "") << mode;
    EXPECT_EQ(Oracle({"count", ds, "--where", "c_utf8 = 'moved'"}), Lancelet({"count", ds, "--where", "c_utf8 = 'moved'"}));
  }
  // With stable row ids the moved rows keep their ids, on both sides, also after the
  // reference's own UPDATE moves some of them again.
  std::string ds = dir_.Join("ids.lance");
  Lancelet({"create", ds, "--from", a, "--file-version", version(), "--max-rows-per-file", "80", "--stable-row-ids"});
  const auto ids_before = Lancelet({"scan", ds, "--columns", "c_int64", "--with-rowid", "--format", "jsonl"});
  Lancelet({"update", ds, "--set", "c_int32 = 2", "--where", "c_int8 < 0", "--mode", "rows"});
  Oracle({"update", ds, "--set", "c_int32=3", "--where", "c_int8 < -64"});
  auto sorted = [](const std::string& jsonl) {  // rows start with integer columns: text order is row order
    auto lines = SplitLines(jsonl);
    std::sort(lines.begin(), lines.end());
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
  };
  EXPECT_EQ(sorted(Lancelet({"scan", ds, "--columns", "c_int64", "--with-rowid", "--format", "jsonl"})),
            sorted(ids_before));
  EXPECT_EQ(DiffJsonLines(sorted(Lancelet({"scan", ds, "--with-rowid", "--format", "jsonl"})),
                          sorted(Oracle({"dump", ds, "--with-rowid"}))),
            "");
}

INSTANTIATE_TEST_SUITE_P(FileVersions, CompactionInteropTest, ::testing::Values("2.0", "2.1", "2.2"),
                         [](const auto& info) { return "v" + std::string(1, info.param[0]) + "_" + info.param[2]; });

}  // namespace
}  // namespace lancelet::testing
