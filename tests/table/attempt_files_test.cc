// AttemptFiles: the files of a failed attempt go, those of a published one stay.
#include "table/attempt_files.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "io/object_store.h"
#include "support/test_env.h"

namespace lancelet::table {
namespace {

using lancelet::testing::TempDir;

TEST(AttemptFilesTest, AnUnpublishedAttemptRemovesItsFilesAndTheDirectoriesItMade) {
  TempDir tmp;
  auto store = io::OpenStore(tmp.RootUri()).store;
  store->Put(tmp.Uri("kept"), "other");
  try {
    AttemptFiles attempt(*store);
    attempt.AddDirectory(tmp.Uri("made"));
    store->CreateDir(tmp.Uri("made"));
    attempt.Add(tmp.Uri("made/a"));
    store->Put(tmp.Uri("made/a"), "a");
    attempt.Add(tmp.Uri("never_written"));  // recorded before a write that failed
    throw std::runtime_error("the attempt fails");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(store->Exists(tmp.Uri("made/a")));
  EXPECT_FALSE(store->Exists(tmp.Uri("made")));
  EXPECT_TRUE(store->Exists(tmp.Uri("kept")));
}

TEST(AttemptFilesTest, APublishedAttemptKeepsEverything) {
  TempDir tmp;
  auto store = io::OpenStore(tmp.RootUri()).store;
  {
    AttemptFiles attempt(*store);
    attempt.AddDirectory(tmp.Uri("made"));
    store->CreateDir(tmp.Uri("made"));
    attempt.Add(tmp.Uri("made/a"));
    store->Put(tmp.Uri("made/a"), "a");
    attempt.Published();
  }
  EXPECT_TRUE(store->Exists(tmp.Uri("made/a")));
}

TEST(AttemptFilesTest, ADirectoryKeepsFilesOthersPutThereUnlessItIsTheAttemptsOwn) {
  TempDir tmp;
  auto store = io::OpenStore(tmp.RootUri()).store;
  {
    AttemptFiles attempt(*store);
    attempt.AddDirectory(tmp.Uri("shared"));
    store->CreateDir(tmp.Uri("shared"));
    store->Put(tmp.Uri("shared/theirs"), "t");  // another writer's file
    attempt.AddOwnDirectory(tmp.Uri("shared/segment"));
    store->CreateDir(tmp.Uri("shared/segment"));
    store->Put(tmp.Uri("shared/segment/run-0"), "r");  // written without being recorded
  }
  EXPECT_FALSE(store->Exists(tmp.Uri("shared/segment")));
  EXPECT_TRUE(store->Exists(tmp.Uri("shared/theirs")));
  EXPECT_EQ(store->List(tmp.Uri("shared")), std::vector<std::string>{"theirs"});
}

}  // namespace
}  // namespace lancelet::table
