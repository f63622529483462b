// Where a shallow clone's files are found: the manifest's base paths (spec: BasePath).
#include <gtest/gtest.h>

#include "lancelet/error.h"
#include "support/test_env.h"
#include "table/dataset_state.h"

namespace lancelet::table {
namespace {

// A clone's state: base 0 is the source dataset, 3 a plain directory, 4 an object store.
void MakeClone(DatasetState& state) {
  state.uri = "/work/clone.lance";
  auto* root = state.manifest.add_base_paths();
  root->set_id(0);
  root->set_path("/data/source.lance");
  root->set_is_dataset_root(true);
  auto* dir = state.manifest.add_base_paths();
  dir->set_id(3);
  dir->set_path("file:///imports");
  dir->set_is_dataset_root(false);
  auto* remote = state.manifest.add_base_paths();
  remote->set_id(4);
  remote->set_path("s3://bucket/source.lance");
  remote->set_is_dataset_root(true);
}

TEST(BasePaths, FilesResolveUnderTheirBase) {
  auto owned = LibraryAccess::NewState();
  DatasetState& state = *owned;
  MakeClone(state);
  EXPECT_EQ(state.DataPath("a.lance"), "/work/clone.lance/data/a.lance");
  EXPECT_EQ(state.DataPath("a.lance", 0), "/data/source.lance/data/a.lance");
  EXPECT_EQ(state.DataPath("a.lance", 3), "/imports/a.lance");  // a plain directory, file:// dropped
  lance::table::DeletionFile deletion;
  deletion.set_read_version(2);
  deletion.set_id(9);
  deletion.set_file_type(lance::table::DeletionFile::BITMAP);
  EXPECT_EQ(state.DeletionFilePath(5, deletion), "/work/clone.lance/_deletions/5-2-9.bin");
  deletion.set_base_id(0);
  EXPECT_EQ(state.DeletionFilePath(5, deletion), "/data/source.lance/_deletions/5-2-9.bin");
}

TEST(BasePaths, UnknownAndRemoteBasesAreRefusedByName) {
  auto owned = LibraryAccess::NewState();
  DatasetState& state = *owned;
  MakeClone(state);
  auto unknown = testing::ThrownError([&] { state.DataPath("a.lance", 7); });
  ASSERT_TRUE(unknown) << "an unknown base id must be refused";
  EXPECT_EQ(unknown->kind(), ErrorKind::kCorrupt);
  EXPECT_NE(std::string(unknown->what()).find("base path 7"), std::string::npos) << unknown->what();
  auto remote = testing::ThrownError([&] { state.DataPath("a.lance", 4); });
  ASSERT_TRUE(remote) << "an object-store base must be refused";
  EXPECT_EQ(remote->kind(), ErrorKind::kNotSupported);
  EXPECT_NE(std::string(remote->what()).find("s3://bucket/source.lance"), std::string::npos) << remote->what();
}

}  // namespace
}  // namespace lancelet::table
