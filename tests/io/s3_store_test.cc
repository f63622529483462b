// The S3 store against the S3 test server (moto): whole objects and ranges, put-if-absent
// as a conditional PUT, listings of objects and prefixes over several pages, errors that
// name the object and never the credentials. These run in the S3 run only (ctest
// `s3:S3Store.*`, with the server started by the s3_server fixture); elsewhere they skip.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/object_store.h"
#include "io/s3_store.h"
#include "lancelet/error.h"
#include "support/test_env.h"

namespace lancelet::io {
namespace {

using lancelet::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

class S3Store : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!TempDir::InS3()) GTEST_SKIP() << "S3 run only (LANCELET_TEST_STORE=s3:PORT)";
    root_ = dir_.RootUri();
    store_ = OpenStore(root_).store;
  }
  std::string At(const std::string& name) const { return root_ + "/" + name; }

  TempDir dir_;
  std::string root_;
  std::shared_ptr<ObjectStore> store_;
};

TEST_F(S3Store, ObjectsArePublishedWholeAndReadByRange) {
  auto writer = store_->OpenWrite(At("d/a.bin"), /*no_overwrite=*/false);
  writer->Write("hello", 5);
  EXPECT_FALSE(store_->Exists(At("d/a.bin")));  // nothing until Finish
  writer->Write(" world", 6);
  EXPECT_EQ(writer->position(), 11u);
  writer->Finish();
  auto file = store_->OpenRead(At("d/a.bin"));
  EXPECT_EQ(file->size(), 11u);
  EXPECT_EQ(file->Read(6, 5), "world");
  EXPECT_EQ(file->ReadAll(), "hello world");
  EXPECT_EQ(store_->OpenRead(At("d/a.bin"), 11)->Read(0, 5), "hello");  // size known: no HEAD
  EXPECT_EQ(store_->Head(At("d/a.bin"))->size, 11u);
  EXPECT_GT(store_->Head(At("d/a.bin"))->modified_seconds, 1700000000);
  EXPECT_THAT([&] { file->Read(8, 5); },
              ::testing::ThrowsMessage<Error>(HasSubstr("read of 5 bytes at offset 8 is past the end")));
  store_->Put(At("d/a.bin"), "replaced");
  EXPECT_EQ(store_->OpenRead(At("d/a.bin"))->ReadAll(), "replaced");
}

TEST_F(S3Store, PutIfAbsentIsAConditionalPutThatTakesAKeyOnce) {
  EXPECT_TRUE(store_->PutIfAbsent(At("_versions/1.manifest"), "first"));
  EXPECT_FALSE(store_->PutIfAbsent(At("_versions/1.manifest"), "second"));
  EXPECT_EQ(store_->OpenRead(At("_versions/1.manifest"))->ReadAll(), "first");
  auto late = store_->OpenWrite(At("_versions/1.manifest"), /*no_overwrite=*/true);
  late->Write("third", 5);
  try {
    late->Finish();
    ADD_FAILURE() << "a no-overwrite writer replaced the object";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConflict);
    EXPECT_THAT(e.what(), HasSubstr("_versions/1.manifest' exists already"));
  }
}

TEST_F(S3Store, ListingsNameObjectsAndPrefixesOverEveryPage) {
  // 1,005 objects: ListObjectsV2 pages at 1,000 keys.
  for (int k = 0; k < 1005; ++k) store_->Put(At("many/" + std::to_string(100000 + k)), "x");
  store_->Put(At("top/a.lance"), "a");
  store_->Put(At("top/sub/b.txt"), "b");
  store_->Put(At("top/sub/deeper/c.txt"), "c");
  EXPECT_EQ(store_->List(At("many")).size(), 1005u);
  EXPECT_EQ(store_->List(At("many")).back(), "101004");
  EXPECT_EQ(store_->List(At("top")), (std::vector<std::string>{"a.lance", "sub"}));
  EXPECT_EQ(store_->List(At("top/")), (std::vector<std::string>{"a.lance", "sub"}));
  EXPECT_EQ(store_->List(At("nothing")), std::vector<std::string>{});
  // A prefix holding objects exists, as a directory does.
  EXPECT_TRUE(store_->Exists(At("top/sub")));
  EXPECT_FALSE(store_->Exists(At("top/su")));
  store_->DeleteTree(At("top"));
  EXPECT_EQ(store_->List(At("top")), std::vector<std::string>{});
  EXPECT_FALSE(store_->Exists(At("top/sub")));
  store_->Delete(At("many/100000"));
  store_->Delete(At("many/100000"));  // deleting what is gone is no error
  EXPECT_EQ(store_->List(At("many")).size(), 1004u);
}

// Small reads fetch the block around them (a footer read brings what lies before it);
// batched ranges near each other are one request; prefetched ranges cost no request when
// read; a whole object is one GET.
TEST_F(S3Store, ReadsAreMergedIntoFewRequests) {
  std::string bytes(3 << 20, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i * 7 % 251);
  store_->Put(At("big.bin"), bytes);
  auto file = store_->OpenRead(At("big.bin"), bytes.size());
  IoStats& stats = store_->stats();
  auto requests = [&, before = stats.read_calls.load()]() mutable {
    const uint64_t now = stats.read_calls.load(), n = now - before;
    before = now;
    return n;
  };
  const uint64_t end = bytes.size();
  EXPECT_EQ(file->Read(end - 40, 40), bytes.substr(end - 40));  // a footer
  EXPECT_EQ(file->Read(end - 9000, 100), bytes.substr(end - 9000, 100));  // metadata before it
  EXPECT_EQ(requests(), 1u);

  std::string a(10, '\0'), b(10, '\0'), c(10, '\0'), d(10, '\0');
  std::vector<ByteRange> ranges = {{400000, 10, b.data()}, {100, 10, a.data()}, {200000, 10, c.data()},
                                   {2900000, 10, d.data()}};
  const uint64_t bytes_before = stats.bytes_read.load();
  file->ReadRanges(ranges);  // 100 .. 400000 within the 256 KiB gap; 2900000 apart
  EXPECT_EQ(a, bytes.substr(100, 10));
  EXPECT_EQ(b, bytes.substr(400000, 10));
  EXPECT_EQ(c, bytes.substr(200000, 10));
  EXPECT_EQ(d, bytes.substr(2900000, 10));
  EXPECT_EQ(requests(), 2u);
  // Named ranges are fetched as they are, not widened to blocks.
  EXPECT_EQ(stats.bytes_read.load() - bytes_before, (400010u - 100u) + 10u);

  std::vector<ByteRange> soon = {{1200000, 300, nullptr}, {1300000, 300, nullptr}, {1500000, 300, nullptr}};
  EXPECT_TRUE(file->Prefetch(soon));
  EXPECT_EQ(requests(), 1u);
  EXPECT_EQ(file->Read(1300100, 200), bytes.substr(1300100, 200));
  EXPECT_EQ(file->Read(1200000, 300001), bytes.substr(1200000, 300001));
  EXPECT_EQ(requests(), 0u);
  // What the cache holds is not fetched again: a range reaching into the prefetched bytes
  // fetches only the part before them, and a read across both is served from the two.
  const uint64_t before_trim = stats.bytes_read.load();
  EXPECT_TRUE(file->Prefetch(std::vector<ByteRange>{{1100000, 100300, nullptr}}));
  EXPECT_EQ(requests(), 1u);
  EXPECT_EQ(stats.bytes_read.load() - before_trim, 100000u);
  EXPECT_EQ(file->Read(1150000, 100000), bytes.substr(1150000, 100000));
  EXPECT_EQ(requests(), 0u);

  EXPECT_EQ(store_->ReadObject(At("big.bin")), bytes);
  EXPECT_EQ(requests(), 1u);
  // Opened without its size: one GET of the last block gives the size and the tail, which
  // the reads after it find in the cache (an object no read has touched before).
  const std::string half = bytes.substr(0, bytes.size() / 2);
  store_->Put(At("half.bin"), half);
  requests();
  auto unsized = store_->OpenRead(At("half.bin"));
  EXPECT_EQ(unsized->size(), half.size());
  EXPECT_EQ(unsized->Read(half.size() - 1000, 1000), half.substr(half.size() - 1000));
  EXPECT_EQ(unsized->Read(half.size() - 65536, 100), half.substr(half.size() - 65536, 100));
  EXPECT_EQ(requests(), 1u);
  store_->Put(At("tiny.bin"), "abc");
  EXPECT_EQ(store_->OpenRead(At("tiny.bin"))->ReadAll(), "abc");
  EXPECT_EQ(requests(), 1u);
  store_->Put(At("empty.bin"), "");
  EXPECT_EQ(store_->OpenRead(At("empty.bin"))->size(), 0u);
  EXPECT_THROW(store_->ReadObject(At("absent.bin")), Error);
}

// A file larger than a part goes out as a multipart upload, invisible until Finish; a
// writer dropped unfinished aborts its upload, so nothing is left to clean up.
TEST_F(S3Store, LargeFilesAreMultipartUploadsPublishedByFinish) {
  const std::string uri = root_ + "/parts";
  auto store = OpenStore(uri, {{"lancelet_upload_part_size", "5MiB"}}).store;
  std::string bytes(11 << 20, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i * 13 % 253);
  {
    auto writer = store->OpenWrite(uri + "/big.lance", /*no_overwrite=*/false);
    for (size_t at = 0; at < bytes.size(); at += 1 << 20) writer->Write(bytes.data() + at, 1 << 20);
    EXPECT_EQ(writer->position(), bytes.size());
    EXPECT_FALSE(store->Head(uri + "/big.lance"));  // two parts sent, nothing visible
    writer->Finish();
  }
  EXPECT_EQ(store->Head(uri + "/big.lance")->size, bytes.size());
  EXPECT_EQ(store->ReadObject(uri + "/big.lance"), bytes);
  {
    auto writer = store->OpenWrite(uri + "/one-write.lance", /*no_overwrite=*/false);
    writer->Write(bytes);  // one write of 11 MiB: still parts of 5 MiB
    writer->Finish();
  }
  EXPECT_EQ(store->ReadObject(uri + "/one-write.lance"), bytes);
  {
    auto dropped = store->OpenWrite(uri + "/dropped.lance", /*no_overwrite=*/false);
    dropped->Write(bytes.data(), 6 << 20);  // one part sent
  }
  EXPECT_FALSE(store->Head(uri + "/dropped.lance"));
  EXPECT_EQ(store->AbortUploads(uri, INT64_MAX), 0u);  // the writer aborted its own
  EXPECT_THAT([] { S3Config::From({{"lancelet_upload_part_size", "1MiB"}}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("below S3's 5 MiB minimum part")));
}

// lancelet's own read options are read from the storage options and checked.
TEST_F(S3Store, ReadOptionsAreByteCounts) {
  StorageOptions options = {{"lancelet_read_block_size", "16KiB"},  {"lancelet_read_cache_size", "1MiB"},
                            {"lancelet_coalesce_gap", "0"},         {"lancelet_max_concurrent_reads", "4"}};
  const S3Config config = S3Config::From(options);
  EXPECT_EQ(config.read_block_bytes, 16384u);
  EXPECT_EQ(config.read_cache_bytes, 1u << 20);
  EXPECT_EQ(config.read_coalesce_gap_bytes, 0u);
  EXPECT_EQ(config.max_concurrent_reads, 4);
  EXPECT_THAT([] { S3Config::From({{"lancelet_read_block_size", "lots"}}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("'lancelet_read_block_size' = 'lots' is not a byte count")));
}

TEST_F(S3Store, ErrorsNameTheObjectAndNeverTheCredentials) {
  try {
    store_->OpenRead(At("missing.lance"));
    ADD_FAILURE() << "opened a missing object";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_THAT(e.what(), HasSubstr(At("missing.lance")));
  }
  // A server that does not answer: one line naming the request and the object, after the
  // retries the options allow, and no secret in it.
  const StorageOptions unreachable = {{"aws_endpoint", "http://127.0.0.1:9"},     {"allow_http", "true"},
                                      {"aws_access_key_id", "AKIDEXAMPLE"},       {"client_max_retries", "1"},
                                      {"aws_secret_access_key", "S3CR3T-D0-N0T-SH0W"}, {"connect_timeout", "1s"}};
  auto far = OpenStore("s3://nowhere/t.lance", unreachable).store;
  try {
    far->OpenRead("s3://nowhere/t.lance/_versions/1.manifest");
    ADD_FAILURE() << "read from a server that is not there";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_THAT(e.what(), HasSubstr("GET 's3://nowhere/t.lance/_versions/1.manifest': "));
    EXPECT_THAT(e.what(), HasSubstr("(after 2 attempts)"));
    EXPECT_THAT(e.what(), Not(HasSubstr("S3CR3T")));
    EXPECT_THAT(e.what(), Not(HasSubstr("AKIDEXAMPLE")));
  }
  // Plain HTTP only when asked for.
  EXPECT_THAT([] { OpenStore("s3://b/t.lance", {{"aws_endpoint", "http://127.0.0.1:9"}, {"allow_http", "false"}}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("set allow_http=true")));
  EXPECT_THAT([] { OpenStore("s3:///t.lance"); }, ::testing::ThrowsMessage<Error>(HasSubstr("needs a bucket")));
}

}  // namespace
}  // namespace lancelet::io
