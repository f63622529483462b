// The in-memory store answers as the local store does (whole objects, put-if-absent,
// listing of objects and directories, errors of the same kinds), and OpenStore maps
// each URI to its store.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "io/object_store.h"
#include "lancelet/error.h"

namespace lancelet::io {
namespace {

std::string ReadAll(const ObjectStore& store, const std::string& path) { return store.OpenRead(path)->ReadAll(); }

TEST(MemoryStore, ObjectsArePublishedWholeAndPutIfAbsentTakesAPathOnce) {
  auto store = MakeMemoryStore();
  auto writer = store->OpenWrite("m/a.bin", /*no_overwrite=*/true);
  writer->Write("hello", 5);
  EXPECT_FALSE(store->Exists("m/a.bin"));  // nothing until Finish
  writer->Write(" world", 6);
  EXPECT_EQ(writer->position(), 11u);
  writer->Finish();
  EXPECT_EQ(ReadAll(*store, "m/a.bin"), "hello world");
  EXPECT_EQ(store->Head("m/a.bin")->size, 11u);

  EXPECT_FALSE(store->PutIfAbsent("m/a.bin", "other"));
  EXPECT_EQ(ReadAll(*store, "m/a.bin"), "hello world");
  auto again = store->OpenWrite("m/a.bin", /*no_overwrite=*/true);
  again->Write("x", 1);
  try {
    again->Finish();
    ADD_FAILURE() << "a second no-overwrite writer replaced the object";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConflict);
  }
  store->Put("m/a.bin", "replaced");  // Put replaces
  EXPECT_EQ(ReadAll(*store, "m/a.bin"), "replaced");
}

TEST(MemoryStore, ReadsPastTheEndAndMissingObjectsAreErrorsOfTheirKind) {
  auto store = MakeMemoryStore();
  store->Put("d/f", "abc");
  auto file = store->OpenRead("d/f");
  EXPECT_EQ(file->Read(1, 2), "bc");
  EXPECT_THROW(file->Read(2, 2), Error);
  try {
    store->OpenRead("d/missing");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_STREQ(e.what(), "opening 'd/missing': no such object");
  }
  EXPECT_FALSE(store->Head("d/missing"));
  store->Delete("d/missing");  // as unlink of a missing file: nothing to do
  EXPECT_THROW(store->OpenRead("d"), Error);  // a directory
}

TEST(MemoryStore, ListsObjectsAndDirectoriesOneLevelDown) {
  auto store = MakeMemoryStore();
  store->Put("t/_versions/1.manifest", "1");
  store->Put("t/_versions/2.manifest", "2");
  store->Put("t/data/x.lance", "x");
  store->CreateDir("t/_indices/empty");
  EXPECT_EQ(store->List("t"), (std::vector<std::string>{"_indices", "_versions", "data"}));
  EXPECT_EQ(store->List("t/_versions/"), (std::vector<std::string>{"1.manifest", "2.manifest"}));
  EXPECT_EQ(store->List("t/nothing"), std::vector<std::string>{});
  EXPECT_TRUE(store->Exists("t/_indices/empty"));
  EXPECT_FALSE(store->DeleteDirIfEmpty("t/_versions"));
  EXPECT_TRUE(store->DeleteDirIfEmpty("t/_indices/empty"));
  EXPECT_FALSE(store->Exists("t/_indices"));
  store->Delete("t/data/x.lance");
  EXPECT_EQ(store->List("t"), (std::vector<std::string>{"_versions"}));
}

TEST(MemoryStore, AnExclusiveDirectoryLockWaitsForTheSharedOnes) {
  auto store = MakeMemoryStore();
  auto shared = store->LockDirectory("t/_versions", ObjectStore::LockMode::kShared);
  auto second = store->LockDirectory("t/_versions", ObjectStore::LockMode::kShared);  // shared ones coexist
  ASSERT_TRUE(shared && second);
  std::atomic<bool> exclusive_held{false};
  std::thread cleaner([&] {
    auto exclusive = store->LockDirectory("t/_versions/", ObjectStore::LockMode::kExclusive);
    exclusive_held = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(exclusive_held);
  shared.reset();
  second.reset();
  cleaner.join();
  EXPECT_TRUE(exclusive_held);
}

TEST(OpenStore, MapsEachUriToItsStoreAndPath) {
  auto local = OpenStore("/tmp/t.lance/");
  EXPECT_EQ(local.store, DefaultLocalStore());
  EXPECT_EQ(local.path, "/tmp/t.lance");
  auto file = OpenStore("file:///tmp/t.lance");
  EXPECT_EQ(file.store, DefaultLocalStore());
  EXPECT_EQ(file.path, "/tmp/t.lance");
  EXPECT_EQ(OpenStore("relative/t.lance").path, "relative/t.lance");
  auto memory = OpenStore("memory://tables/t.lance/");
  EXPECT_EQ(memory.store, DefaultMemoryStore());
  EXPECT_EQ(memory.path, "memory://tables/t.lance");
  // s3:// keeps the whole URI as the path (the store strips its bucket), one store per
  // bucket and configuration; opening it sends no request.
  auto s3 = OpenStore("s3://bucket/t.lance/", {{"aws_region", "eu-west-1"}});
  EXPECT_EQ(s3.path, "s3://bucket/t.lance");
  EXPECT_EQ(OpenStore("s3://bucket/other.lance", {{"aws_region", "eu-west-1"}}).store, s3.store);
  EXPECT_NE(OpenStore("s3://another/t.lance", {{"aws_region", "eu-west-1"}}).store, s3.store);
  try {
    OpenStore("gs://bucket/t.lance");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotSupported);
    EXPECT_STREQ(e.what(),
                 "'gs://bucket/t.lance': the gs:// scheme is not supported yet (lancelet reads local paths, file://, "
                 "memory:// and s3://)");
  }
  EXPECT_THROW(OpenStore("memory://"), Error);
  EXPECT_THROW(OpenStore(""), Error);
}

}  // namespace
}  // namespace lancelet::io
