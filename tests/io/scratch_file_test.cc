// Scratch files and sequential mappings: what is written comes back whole, released
// ranges stay readable, nothing is left in the temporary directory, and failures name
// what was being read or written.
#include <filesystem>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "io/local_input.h"
#include "io/scratch_file.h"
#include "lancelet/error.h"
#include "support/test_env.h"

namespace lancelet::io {
namespace {

std::string Pattern(size_t n) {
  std::string bytes(n, '\0');
  for (size_t i = 0; i < n; ++i) bytes[i] = char('a' + i % 23);
  return bytes;
}

TEST(ScratchFile, WhatIsWrittenIsMappedBackAndReleasedPagesStayReadable) {
  const std::string bytes = Pattern(5 * 4096 + 123);
  ScratchFile file("a sort run");
  file.out() << bytes.substr(0, 1000);
  file.out() << bytes.substr(1000);
  MappedBytes mapped = file.MapWritten();
  ASSERT_EQ(mapped.bytes.size(), bytes.size());
  EXPECT_EQ(mapped.bytes, bytes);
  mapped.release(100, 3 * 4096);  // drops the two whole pages inside the range
  EXPECT_EQ(mapped.bytes, bytes);
}

TEST(ScratchFile, AnEmptyFileMapsToNoBytes) {
  ScratchFile file("a JOIN partition");
  MappedBytes mapped = file.MapWritten();
  EXPECT_TRUE(mapped.bytes.empty());
  EXPECT_EQ(mapped.owner, nullptr);
}

TEST(ScratchFile, LeavesNoFileInItsDirectory) {
  lancelet::testing::TempDir dir(lancelet::testing::TempDir::Use::kLocalScratch);
  const std::filesystem::path tmp = dir.Join("tmp");
  std::filesystem::create_directories(tmp);
  ASSERT_EQ(::setenv("TMPDIR", tmp.c_str(), 1), 0);
  {
    ScratchFile file("a GROUP BY partition");
    file.out() << "kept while open";
    EXPECT_TRUE(std::filesystem::is_empty(tmp));
    EXPECT_EQ(file.MapWritten().bytes, "kept while open");
  }
  ::unsetenv("TMPDIR");
  EXPECT_TRUE(std::filesystem::is_empty(tmp));
}

TEST(ScratchFile, AMissingDirectoryIsNamedInTheError) {
  ASSERT_EQ(::setenv("TMPDIR", "/nonexistent-lancelet-dir", 1), 0);
  try {
    ScratchFile file("a sort run");
    ::unsetenv("TMPDIR");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    ::unsetenv("TMPDIR");
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_EQ(std::string(e.what()),
              "cannot create a temporary file for a sort run in '/nonexistent-lancelet-dir': No such file or directory");
  }
}

TEST(LocalInput, ARegularFileIsMappedWholeAndAPipeIsNot) {
  lancelet::testing::TempDir dir(lancelet::testing::TempDir::Use::kLocalScratch);
  const std::string path = dir.Join("in.bin");
  const std::string bytes = Pattern(10000);
  std::ofstream(path, std::ios::binary) << bytes;
  auto input = LocalInput::Open(path, "in.bin");
  ASSERT_TRUE(input->mappable());
  EXPECT_EQ(input->size(), 10000u);
  EXPECT_EQ(input->Map().bytes, bytes);

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "abc", 3), 3);
  ::close(fds[1]);
  auto pipe = LocalInput::Open("/dev/fd/" + std::to_string(fds[0]), "stdin");
  ::close(fds[0]);
  EXPECT_FALSE(pipe->mappable());
  char out[8];
  EXPECT_EQ(pipe->ReadSome(out, sizeof out), 3u);
  EXPECT_EQ(std::string(out, 3), "abc");
  EXPECT_EQ(pipe->ReadSome(out, sizeof out), 0u);
}

TEST(MapForSequentialRead, AnUnmappableDescriptorIsNamed) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  try {
    MapForSequentialRead(fds[0], 100, "stdin");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_EQ(std::string(e.what()), "cannot map 'stdin': No such device");
  }
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace lancelet::io
