// Datasets that old Lance releases wrote (tests/data/upstream, provenance in its
// PROVENANCE.md): lancelet reads every version of each exactly as the reference reads it.
#include <filesystem>

#include <gtest/gtest.h>

#include "support/json_rows.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

namespace fs = std::filesystem;

struct UpstreamDataset {
  const char* path;  // below tests/data/upstream
  bool legacy_files;
};

const UpstreamDataset kDatasets[] = {
    {"v0.7.5/with_deletions", true},
    {"v0.8.0/migrated_from_v0.7.5", true},
    {"v0.10.5/corrupt_schema", true},
    {"v0.13.0/0.13.0_string_encoding.lance", false},
    {"v0.15.0/v1_with_files.lance", true},
    {"v0.15.0/v1_no_files.lance", false},
    {"v0.15.0/v2_with_files.lance", false},
    {"v0.15.0/v2_no_files.lance", false},
    {"v0.16.0/wrong_data_version_can_fix.lance", false},
    {"v0.16.0/wrong_data_version_no_fix.lance", false},
    {"v0.18.2/index_no_details.lance", false},
    {"v0.20.0/old_btree_bitmap_indices.lance", false},
    {"0.27.0/legacy_fts_index", false},
    {"0.36.0/btree_in_index_pkg.lance", false},
};

void PrintTo(const UpstreamDataset& d, std::ostream* os) { *os << d.path; }

class UpstreamDatasetsTest : public ::testing::TestWithParam<UpstreamDataset> {};

TEST_P(UpstreamDatasetsTest, EveryVersionReadsAsTheReferenceReadsIt) {
  REQUIRE_ORACLE();
  TempDir tmp;
  // A copy (the reference wants a name ending in .lance; nothing may touch the originals).
  const std::string ds = tmp.Join("t.lance");
  fs::copy(std::string(LANCELET_SOURCE_DIR) + "/tests/data/upstream/" + GetParam().path, ds,
           fs::copy_options::recursive);

  const auto versions = SplitLines(Lancelet({"versions", ds}));
  EXPECT_EQ(versions.size(), SplitLines(Oracle({"versions", ds})).size());
  ASSERT_FALSE(versions.empty());
  for (const auto& line : versions) {
    const std::string v = line.substr(0, line.find('\t'));
    const std::string expected = Oracle({"dump", ds, "--version", v});
    EXPECT_EQ(DiffJsonLines(expected, Lancelet({"scan", ds, "--version", v, "--format", "jsonl"})), "")
        << "version " << v;
    EXPECT_EQ(Lancelet({"count", ds, "--version", v}), std::to_string(SplitLines(expected).size()) + "\n")
        << "version " << v;
  }
  const bool legacy = Lancelet({"inspect", ds}).find("(format 0.") != std::string::npos &&
                      Lancelet({"inspect", ds}).find("(format 0.3") == std::string::npos;
  EXPECT_EQ(legacy, GetParam().legacy_files);
}

// lance 0.20.0 wrote the BTree's pages as legacy (0.2) files: lancelet answers filters on
// the indexed column through them, with the reference's rows, as the reference does.
TEST(UpstreamIndexes, ABTreeInLegacyFilesAnswersAsTheReferenceDoes) {
  REQUIRE_ORACLE();
  TempDir tmp;
  const std::string ds = tmp.Join("t.lance");
  fs::copy(std::string(LANCELET_SOURCE_DIR) + "/tests/data/upstream/v0.20.0/old_btree_bitmap_indices.lance", ds,
           fs::copy_options::recursive);
  const std::pair<const char*, size_t> cases[] = {
      {"btree > 2", 2}, {"btree = 1", 1}, {"btree < 3", 2}, {"btree IN (2, 4)", 2}, {"btree > 2 AND bitmap < 4", 1}};
  for (const auto& [where, rows] : cases) {
    SCOPED_TRACE(where);
    const std::string expected = Oracle({"dump", ds, "--where", where});
    EXPECT_EQ(SplitLines(expected).size(), rows);
    EXPECT_EQ(DiffJsonLines(expected, Lancelet({"scan", ds, "--where", where, "--format", "jsonl"})), "");
    EXPECT_NE(Oracle({"explain", ds, "--where", where}).find("ScalarIndexQuery"), std::string::npos);
  }
  const std::string explain = Lancelet({"explain", ds, "--where", "btree > 2"});
  EXPECT_NE(explain.find("index btree_idx: btree > 2: 2 hits in 1 fragments; 0 rows changed since it was built, 0 of "
                         "them re-evaluated\n"),
            std::string::npos)
      << explain;
  EXPECT_NE(explain.find("read: 2 candidate rows in 1 fragments through indexes, 0 fragments scanned whole\n"),
            std::string::npos)
      << explain;
}

INSTANTIATE_TEST_SUITE_P(Releases, UpstreamDatasetsTest, ::testing::ValuesIn(kDatasets), [](const auto& info) {
  std::string name = info.param.path;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
});

}  // namespace
}  // namespace lancelet::testing
