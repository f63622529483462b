// LocalStore's reads: after enough small reads a file is served from a read-only mapping
// (local_store.cc). These tests pin that every route returns the file's bytes, that the
// mapping appears only after the threshold and goes with the file, and that reads past the
// end are refused on both routes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "io/object_store.h"
#include "lancelet/error.h"
#include "support/test_env.h"

namespace lancelet::io {
namespace {

// Bytes that differ at every offset a test reads.
std::string Pattern(size_t n) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) out[i] = char((i * 131 + i / 251) & 0xFF);
  return out;
}

bool Mapped(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find(path) != std::string::npos;
}

class LocalStoreReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = MakeLocalStore();
    path_ = dir_.Join("data.bin");
    bytes_ = Pattern(1 << 20);
    store_->Put(path_, bytes_);
  }

  testing::TempDir dir_;
  std::shared_ptr<ObjectStore> store_;
  std::string path_;
  std::string bytes_;
};

TEST_F(LocalStoreReadTest, ManySmallReadsMapTheFileAndReturnItsBytes) {
  auto file = store_->OpenRead(path_);
  const uint64_t calls_before = store_->stats().read_calls;
  for (uint64_t k = 0; k < 63; ++k) EXPECT_EQ(file->Read(k * 3001, 3000), bytes_.substr(k * 3001, 3000));
  EXPECT_FALSE(Mapped(path_));
  for (uint64_t k = 0; k < 200; ++k) {
    const uint64_t offset = (k * 7919 * 13) % (bytes_.size() - 4096);
    ASSERT_EQ(file->Read(offset, 1 + k % 4096), bytes_.substr(offset, 1 + k % 4096)) << "read " << k;
  }
  EXPECT_TRUE(Mapped(path_));
  EXPECT_EQ(store_->stats().read_calls - calls_before, 263u);
  EXPECT_EQ(file->ReadAll(), bytes_);  // a large read, after the mapping
  EXPECT_EQ(file->Read(bytes_.size() - 5, 5), bytes_.substr(bytes_.size() - 5));
  file.reset();
  EXPECT_FALSE(Mapped(path_));
}

TEST_F(LocalStoreReadTest, ReadsPastTheEndAreRefusedBeforeAndAfterMapping) {
  auto file = store_->OpenRead(path_);
  for (int pass = 0; pass < 2; ++pass) {
    SCOPED_TRACE(pass ? "mapped" : "not mapped");
    try {
      file->Read(bytes_.size() - 10, 11);
      FAIL() << "a read past the end succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
      EXPECT_NE(std::string(e.what()).find(path_ + "': read of 11 bytes at offset 1048566 is past the end"),
                std::string::npos)
          << e.what();
    }
    for (int k = 0; k < 64; ++k) file->Read(uint64_t(k) * 100, 100);
    EXPECT_TRUE(Mapped(path_));
  }
}

// A size taken on trust (a manifest's) spares the stat. When it claims more than the
// file holds, a read into the missing bytes is refused on pread, and the file is never
// mapped (a mapped page past the end would raise SIGBUS).
TEST_F(LocalStoreReadTest, ASizeTakenOnTrustThatIsTooLargeFailsReadsInsteadOfMapping) {
  auto exact = store_->OpenRead(path_, bytes_.size());
  EXPECT_EQ(exact->size(), bytes_.size());
  for (int k = 0; k < 100; ++k) exact->Read(uint64_t(k) * 100, 100);
  EXPECT_TRUE(Mapped(path_));
  exact.reset();

  auto claimed = store_->OpenRead(path_, bytes_.size() + 4096);
  EXPECT_EQ(claimed->size(), bytes_.size() + 4096);
  for (int k = 0; k < 100; ++k) EXPECT_EQ(claimed->Read(uint64_t(k) * 100, 100), bytes_.substr(uint64_t(k) * 100, 100));
  EXPECT_FALSE(Mapped(path_));
  try {
    claimed->Read(bytes_.size() + 10, 100);
    FAIL() << "a read beyond the real end succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("file ended at offset 1048586 while reading"), std::string::npos) << e.what();
  }
}

TEST_F(LocalStoreReadTest, EmptyFileIsNeverMapped) {
  store_->Put(path_, "");
  auto file = store_->OpenRead(path_);
  for (int k = 0; k < 100; ++k) EXPECT_EQ(file->Read(0, 0), "");
  EXPECT_FALSE(Mapped(path_));
}

}  // namespace
}  // namespace lancelet::io
