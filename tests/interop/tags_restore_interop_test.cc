// restore() and tags across implementations: the reference reads a version lancelet
// restored, lists lancelet's tags and checks out by them; lancelet reads a version the
// reference restored and its tags; a cleanup by lancelet keeps the reference's tagged
// versions.
#include <gtest/gtest.h>

#include "support/json_rows.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

const char* kOverlayEnv = "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1";

std::string Scan(const std::string& ds, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"scan", ds, "--format", "jsonl"};
  args.insert(args.end(), extra.begin(), extra.end());
  return Lancelet(args);
}

TEST(TagsRestoreInterop, TheReferenceReadsWhatLanceletRestoredAndTagged) {
  REQUIRE_ORACLE();
  TempDir dir(TempDir::Use::kLocalScratch);
  const std::string arrow = dir.Join("b.arrow"), more = dir.Join("more.arrow"), ds = dir.Join("t.lance");
  Oracle({"gen", arrow, "--rows", "30", "--seed", "3", "--types", "int64,utf8"});
  Oracle({"gen", more, "--rows", "7", "--seed", "4", "--types", "int64,utf8"});
  Lancelet({"create", ds, "--from", arrow, "--max-rows-per-file", "10"});
  Lancelet({"delete", ds, "--where", "c_int64 > 0"});                                   // v2
  Lancelet({"update", ds, "--set", "c_utf8 = 'changed'", "--where", "c_int64 < 0"});    // v3: an overlay
  Lancelet({"append", ds, "--from", more});                                             // v4
  const std::string v3 = Scan(ds, {"--version", "3"});
  EXPECT_NE(v3.find("\"changed\""), std::string::npos);
  EXPECT_EQ(Lancelet({"restore", ds, "--version", "3"}), "restored version 3 of " + ds + "; now version 5\n");
  EXPECT_EQ(Scan(ds), v3);
  EXPECT_EQ(DiffJsonLines(v3, Oracle({"dump", ds}, kOverlayEnv)), "");

  Lancelet({"tag", "create", ds, "before-append", "--version", "3"});
  Lancelet({"tag", "create", ds, "appended", "--version", "4"});
  const std::string listed = Oracle({"tags", ds, "list"}, kOverlayEnv);
  EXPECT_EQ(listed.find("{\"appended\":{\"version\":4,\"manifestSize\":"), 0u) << listed;
  EXPECT_NE(listed.find("\"before-append\":{\"version\":3,"), std::string::npos) << listed;
  EXPECT_EQ(DiffJsonLines(Scan(ds, {"--tag", "appended"}), Oracle({"dump-tag", ds, "appended"}, kOverlayEnv)), "");
  EXPECT_EQ(SplitLines(Scan(ds, {"--tag", "appended"})).size(), SplitLines(v3).size() + 7);
  // Each side edits the other's tags.
  Oracle({"tags", ds, "update", "appended", "2"}, kOverlayEnv);
  EXPECT_EQ(Lancelet({"tag", "list", ds}).substr(0, 11), "appended\t2\t");
  Oracle({"tags", ds, "delete", "before-append"}, kOverlayEnv);
  Lancelet({"tag", "delete", ds, "appended"});
  EXPECT_EQ(Oracle({"tags", ds, "list"}, kOverlayEnv), "{}\n");
}

TEST(TagsRestoreInterop, LanceletReadsWhatTheReferenceRestoredAndTagged) {
  REQUIRE_ORACLE();
  TempDir dir(TempDir::Use::kLocalScratch);
  const std::string arrow = dir.Join("b.arrow"), more = dir.Join("more.arrow"), ds = dir.Join("t.lance");
  Oracle({"gen", arrow, "--rows", "30", "--seed", "5", "--types", "int64,utf8"});
  Oracle({"gen", more, "--rows", "6", "--seed", "6", "--types", "int64,utf8"});
  Oracle({"create", ds, "--data", arrow});
  Oracle({"delete", ds, "--where", "c_int64 > 0"});  // v2
  Oracle({"append", ds, "--data", more});            // v3
  Oracle({"tags", ds, "create", "deleted", "2"});
  Oracle({"tags", ds, "create", "first", "1"});
  const std::string v1 = Oracle({"dump", ds, "--version", "1"}), v2 = Oracle({"dump", ds, "--version", "2"});
  EXPECT_EQ(Oracle({"restore", ds, "--tag", "deleted"}), "{\"version\":4}\n");
  EXPECT_EQ(DiffJsonLines(v2, Scan(ds)), "");
  const std::string versions = Lancelet({"versions", ds});
  EXPECT_NE(versions.find("4\t"), std::string::npos);
  EXPECT_EQ(versions.substr(versions.rfind('\t') + 1), "Restore\n");
  const std::string tags = Lancelet({"tag", "list", ds});
  EXPECT_EQ(tags.substr(0, 10), "deleted\t2\t") << tags;
  EXPECT_NE(tags.find("\nfirst\t1\t"), std::string::npos) << tags;
  EXPECT_EQ(DiffJsonLines(v1, Scan(ds, {"--tag", "first"})), "");
  EXPECT_EQ(Lancelet({"count", ds, "--tag", "first"}), "30\n");
  // Tagged versions survive lancelet's cleanup; the others go.
  Lancelet({"cleanup", ds, "--keep", "1", "--force"});
  EXPECT_EQ(DiffJsonLines(v1, Oracle({"dump-tag", ds, "first"})), "");
  EXPECT_EQ(DiffJsonLines(v2, Oracle({"dump-tag", ds, "deleted"})), "");
  EXPECT_EQ(Oracle({"versions", ds}), "{\"version\":1}\n{\"version\":2}\n{\"version\":4}\n");
  // lancelet restores a version the reference tagged; the reference reads it.
  Lancelet({"restore", ds, "--tag", "first"});
  EXPECT_EQ(DiffJsonLines(v1, Oracle({"dump", ds})), "");
}

}  // namespace
}  // namespace lancelet::testing
