// AttemptFiles: the files of a failed attempt go, those of a published one stay.
#include "table/attempt_files.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "io/object_store.h"
#include "lancelet/error.h"
#include "support/faulty_store.h"
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

// The local store dressed as a remote one: requests count as costly, and each write takes
// 50 ms, long enough for puts that run together to be seen doing so.
class SlowRemoteStore : public lancelet::testing::FaultyStore {
 public:
  explicit SlowRemoteStore(const TempDir& tmp) : FaultyStore(io::OpenStore(tmp.RootUri()).store) {}
  bool costly_requests() const override { return true; }
  std::unique_ptr<io::WritableFile> OpenWrite(const std::string& path, bool no_overwrite) override {
    const int now = ++in_flight_;
    for (int seen = most_; now > seen && !most_.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    --in_flight_;
    return FaultyStore::OpenWrite(path, no_overwrite);
  }
  std::atomic<int> in_flight_{0}, most_{0};
};

TEST(AttemptFilesTest, PutsToARemoteStoreRunTogetherAndWaitJoinsThem) {
  TempDir tmp;
  SlowRemoteStore store(tmp);
  {
    AttemptFiles attempt(store);
    for (int i = 0; i < 6; ++i) attempt.Put(tmp.Uri("f" + std::to_string(i)), std::string(10, char('a' + i)));
    attempt.Wait();
    for (int i = 0; i < 6; ++i) EXPECT_EQ(store.ReadObject(tmp.Uri("f" + std::to_string(i))), std::string(10, char('a' + i)));
    attempt.Published();
  }
  EXPECT_GE(store.most_.load(), 2);
  EXPECT_TRUE(store.Exists(tmp.Uri("f5")));
}

TEST(AttemptFilesTest, AFailedBackgroundPutFailsWaitAndTheAttemptLeavesNothing) {
  TempDir tmp;
  SlowRemoteStore store(tmp);
  store.FailWritesUnder("no_space");
  try {
    AttemptFiles attempt(store);
    attempt.Put(tmp.Uri("good"), "g");
    attempt.Put(tmp.Uri("no_space"), "b");
    attempt.Put(tmp.Uri("later"), "l");
    EXPECT_THROW(attempt.Wait(), Error);
    throw std::runtime_error("the attempt fails");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(store.Exists(tmp.Uri("good")));
  EXPECT_FALSE(store.Exists(tmp.Uri("no_space")));
  EXPECT_FALSE(store.Exists(tmp.Uri("later")));
}

TEST(AttemptFilesTest, AnAttemptDroppedWithPutsRunningWaitsForThemBeforeRemoving) {
  TempDir tmp;
  SlowRemoteStore store(tmp);
  {
    AttemptFiles attempt(store);
    for (int i = 0; i < 4; ++i) attempt.Put(tmp.Uri("f" + std::to_string(i)), "x");
  }  // not published, never waited for
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(store.Exists(tmp.Uri("f" + std::to_string(i))));
}

}  // namespace
}  // namespace lancelet::table
