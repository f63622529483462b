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
  auto store = io::MakeLocalStore();
  store->Put(tmp.Join("kept"), "other");
  try {
    AttemptFiles attempt(*store);
    attempt.AddDirectory(tmp.Join("made"));
    store->CreateDir(tmp.Join("made"));
    attempt.Add(tmp.Join("made/a"));
    store->Put(tmp.Join("made/a"), "a");
    attempt.Add(tmp.Join("never_written"));  // recorded before a write that failed
    throw std::runtime_error("the attempt fails");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(store->Exists(tmp.Join("made/a")));
  EXPECT_FALSE(store->Exists(tmp.Join("made")));
  EXPECT_TRUE(store->Exists(tmp.Join("kept")));
}

TEST(AttemptFilesTest, APublishedAttemptKeepsEverything) {
  TempDir tmp;
  auto store = io::MakeLocalStore();
  {
    AttemptFiles attempt(*store);
    attempt.AddDirectory(tmp.Join("made"));
    store->CreateDir(tmp.Join("made"));
    attempt.Add(tmp.Join("made/a"));
    store->Put(tmp.Join("made/a"), "a");
    attempt.Published();
  }
  EXPECT_TRUE(store->Exists(tmp.Join("made/a")));
}

TEST(AttemptFilesTest, ADirectoryKeepsFilesOthersPutThereUnlessItIsTheAttemptsOwn) {
  TempDir tmp;
  auto store = io::MakeLocalStore();
  {
    AttemptFiles attempt(*store);
    attempt.AddDirectory(tmp.Join("shared"));
    store->CreateDir(tmp.Join("shared"));
    store->Put(tmp.Join("shared/theirs"), "t");  // another writer's file
    attempt.AddOwnDirectory(tmp.Join("shared/segment"));
    store->CreateDir(tmp.Join("shared/segment"));
    store->Put(tmp.Join("shared/segment/run-0"), "r");  // written without being recorded
  }
  EXPECT_FALSE(store->Exists(tmp.Join("shared/segment")));
  EXPECT_TRUE(store->Exists(tmp.Join("shared/theirs")));
  EXPECT_EQ(store->List(tmp.Join("shared")), std::vector<std::string>{"theirs"});
}

}  // namespace
}  // namespace lancelet::table
