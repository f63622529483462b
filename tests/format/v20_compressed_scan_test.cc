// Compressed 2.0 Flat buffers (zstd / lz4, opted into with "lance-encoding:compression")
// are decompressed once per page during a scan, however small its batches: a hand-built
// file whose every read is logged, and a file the reference wrote read through a store
// that counts bytes.
#include <gtest/gtest.h>
#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "format/reference_file_util.h"
#include "format/v20_internal.h"
#include "format/v20_test_util.h"
#include "format/v21_test_util.h"
#include "io/object_store.h"
#include "lancelet/scalar.h"

namespace lancelet::format::v20 {
namespace {

namespace pb = lance::encodings;
using v21_test::MakeLanceField;
using v21_test::MemoryFile;
using test::Page;

// ---------------------------------------------------------------------------- helpers

// The reference's framings: zstd as u64 LE length + frame, lz4 as u32 LE length + block.
std::string ZstdBuffer(const std::string& raw) {
  std::string out(8 + ZSTD_compressBound(raw.size()), '\0');
  const uint64_t size = raw.size();
  std::memcpy(out.data(), &size, 8);
  out.resize(8 + ZSTD_compress(out.data() + 8, out.size() - 8, raw.data(), raw.size(), 3));
  return out;
}

std::string Lz4Buffer(const std::string& raw) {
  std::string out(4 + LZ4_compressBound(int(raw.size())), '\0');
  const uint32_t size = uint32_t(raw.size());
  std::memcpy(out.data(), &size, 4);
  out.resize(4 + LZ4_compress_default(raw.data(), out.data() + 4, int(raw.size()), int(out.size() - 4)));
  return out;
}

pb::ArrayEncoding Flat(uint64_t bits, uint32_t buffer, const std::string& scheme = "") {
  pb::ArrayEncoding e;
  e.mutable_flat()->set_bits_per_value(bits);
  e.mutable_flat()->mutable_buffer()->set_buffer_index(buffer);
  if (!scheme.empty()) e.mutable_flat()->mutable_compression()->set_scheme(scheme);
  return e;
}

// A page of strings: Binary with u64 ends and compressed bytes.
EncodedPage StringPage(const std::vector<std::string>& values, const std::string& scheme) {
  std::string ends, bytes;
  for (const auto& v : values) {
    bytes += v;
    const uint64_t end = bytes.size();
    ends.append(reinterpret_cast<const char*>(&end), 8);
  }
  pb::ArrayEncoding e;
  *e.mutable_binary()->mutable_indices()->mutable_nullable()->mutable_no_nulls()->mutable_values() = Flat(64, 0);
  *e.mutable_binary()->mutable_bytes() = Flat(8, 1, scheme);
  e.mutable_binary()->set_null_adjustment(bytes.size() + 1);
  return Page(values.size(), {ends, scheme == "zstd" ? ZstdBuffer(bytes) : Lz4Buffer(bytes)}, e);
}

std::vector<std::string> Words(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (size_t k = 0; k < n; ++k) out.push_back("word-" + std::to_string(rng() % 500) + std::string(rng() % 9, 'x'));
  return out;
}

ArrayPtr Strings(const TypePtr& type, const std::vector<std::string>& values) {
  std::vector<Scalar> scalars;
  for (const auto& v : values) scalars.push_back(Scalar{type, v});
  return MakeArray(type, scalars);
}

// The same bytes as `file`, logging the offset of every read.
class ReadLog final : public ByteSource {
 public:
  explicit ReadLog(const MemoryFile& file) : file_(file) {}
  std::string Read(uint64_t offset, uint64_t length) const override {
    offsets_.push_back(offset);
    return file_.Read(offset, length);
  }
  const std::string& path() const override { return file_.path(); }
  // Reads that started at `offset`.
  size_t ReadsAt(uint64_t offset) const { return size_t(std::count(offsets_.begin(), offsets_.end(), offset)); }

 private:
  const MemoryFile& file_;
  mutable std::vector<uint64_t> offsets_;
};

// Rows [0, n) of a decoder, read `batch` rows at a time, concatenated.
ArrayPtr ScanInBatches(const FieldDecoder& decoder, uint64_t batch) {
  std::vector<ArrayPtr> pieces;
  for (uint64_t start = 0; start < decoder.num_rows(); start += batch)
    pieces.push_back(decoder.Read(start, std::min(batch, decoder.num_rows() - start)));
  return Concatenate(pieces);
}

// --------------------------------------------------------------------- hand-built pages

TEST(V20CompressedScan, EachCompressedPageIsDecompressedOncePerScan) {
  const auto page0 = Words(1000, 1), page1 = Words(700, 2);
  MemoryFile file(1);
  file.WritePage(0, StringPage(page0, "zstd"));
  file.WritePage(0, StringPage(page1, "lz4"));
  const uint64_t compressed0 = file.column(0).pages(0).buffer_offsets(1);
  const uint64_t compressed1 = file.column(0).pages(1).buffer_offsets(1);
  ReadLog log(file);
  auto utf8 = DataType::Utf8();
  auto decoder = MakeDecoder(MakeLanceField("s", utf8), file.Columns(), log);

  std::vector<std::string> all = page0;
  all.insert(all.end(), page1.begin(), page1.end());
  const ArrayPtr expected = Strings(utf8, all);
  // 64-row batches: 16 of them touch page 0, 12 touch page 1 (one touches both).
  EXPECT_TRUE(ArraysEqual(*ScanInBatches(*decoder, 64), *expected));
  EXPECT_EQ(log.ReadsAt(compressed0), 1u);
  EXPECT_EQ(log.ReadsAt(compressed1), 1u);

  // Only the current page is kept: going back to page 0 decompresses it again, once.
  EXPECT_TRUE(ArraysEqual(*decoder->Read(10, 5), *Slice(*expected, 10, 5)));
  EXPECT_TRUE(ArraysEqual(*decoder->Read(900, 50), *Slice(*expected, 900, 50)));
  EXPECT_EQ(log.ReadsAt(compressed0), 2u);
  // Take reads its runs through the same cache (rows 3 to 999 are one run).
  std::vector<uint64_t> rows = {999, 3, 500};
  EXPECT_TRUE(ArraysEqual(*decoder->Take(rows), *Take(*expected, std::vector<int64_t>{999, 3, 500})));
  EXPECT_EQ(log.ReadsAt(compressed0), 2u);
  EXPECT_EQ(log.ReadsAt(compressed1), 1u);
  // That run reached page 0's last row, and the scan page 1's: neither is held any more.
  EXPECT_TRUE(ArraysEqual(*decoder->Read(0, 1), *Slice(*expected, 0, 1)));
  EXPECT_TRUE(ArraysEqual(*decoder->Read(1690, 2), *Slice(*expected, 1690, 2)));
  EXPECT_EQ(log.ReadsAt(compressed0), 3u);
  EXPECT_EQ(log.ReadsAt(compressed1), 2u);
}

TEST(V20CompressedScan, CompressedFixedWidthValues) {
  // Int64 values in two zstd pages and one lz4 page, read 100 rows at a time.
  std::vector<int64_t> values(2500);
  for (size_t k = 0; k < values.size(); ++k) values[k] = int64_t(k * k) - 1000000;
  auto raw = [&](size_t from, size_t n) {
    return std::string(reinterpret_cast<const char*>(values.data() + from), n * 8);
  };
  MemoryFile file(1);
  file.WritePage(0, Page(1000, {ZstdBuffer(raw(0, 1000))}, Flat(64, 0, "zstd")));
  file.WritePage(0, Page(1000, {ZstdBuffer(raw(1000, 1000))}, Flat(64, 0, "zstd")));
  file.WritePage(0, Page(500, {Lz4Buffer(raw(2000, 500))}, Flat(64, 0, "lz4")));
  ReadLog log(file);
  auto i64 = DataType::Int64();
  auto decoder = MakeDecoder(MakeLanceField("v", i64), file.Columns(), log);
  auto expected = std::make_shared<ArrayData>();
  expected->type = i64;
  expected->length = int64_t(values.size());
  expected->buffers = {nullptr, Buffer::Copy(values.data(), values.size() * 8)};
  EXPECT_TRUE(ArraysEqual(*ScanInBatches(*decoder, 100), *expected));
  for (int p = 0; p < 3; ++p) EXPECT_EQ(log.ReadsAt(file.column(0).pages(p).buffer_offsets(0)), 1u) << "page " << p;
}

// ------------------------------------------------------------- the reference's output

TEST(V20CompressedScan, ReferenceZstdAndLz4StringsAreReadOncePerPage) {
  if (!lancelet::testing::OracleAvailable()) GTEST_SKIP() << "the oracle (node + @lancedb/lancedb) is missing";
  lancelet::testing::TempDir dir;
  const size_t n = 20000;
  auto utf8 = DataType::Utf8();
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("z", utf8, true, {{"lance-encoding:compression", "zstd"}}),
                            Field::Make("l", utf8, true, {{"lance-encoding:compression", "lz4"}})});
  const std::vector<ArrayPtr> columns = {Strings(utf8, Words(n, 3)), Strings(utf8, Words(n, 4))};
  const std::string arrow = dir.Join("in.arrow");
  lancelet::testing::WriteStringToFile(arrow, WriteIpcFile(*schema, {RecordBatch::Make(schema, columns)}));
  const std::string table = dir.Join("t.lance");
  // Small pages, so that the scan crosses pages as well as batches.
  auto r = lancelet::testing::RunOracle({"create", table, "--data", arrow, "--file-version", "2.0"},
                                        "LANCE_FILE_WRITER_MAX_PAGE_BYTES=65536");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string data_file = reference_test::OnlyDataFile(table);

  // What the reference wrote: Binary pages whose bytes are compressed.
  const std::string bytes = lancelet::testing::ReadFileToString(data_file);
  const uint64_t offsets_start = reference_test::LoadLE(bytes, bytes.size() - 40 + 8, 8);
  for (uint32_t column : {0u, 1u}) {
    SCOPED_TRACE(column == 0 ? "zstd" : "lz4");
    const std::string encodings = reference_test::PageEncodings(data_file, column);
    ASSERT_NE(encodings.find(column == 0 ? "scheme: \"zstd\"" : "scheme: \"lz4\""), std::string::npos) << encodings;
    lance::file::v2::ColumnMetadata meta;
    ASSERT_TRUE(meta.ParseFromString(bytes.substr(reference_test::LoadLE(bytes, offsets_start + 16 * column, 8),
                                                  reference_test::LoadLE(bytes, offsets_start + 16 * column + 8, 8))));
    ASSERT_GE(meta.pages_size(), 2) << "the test wants several pages";
    // Every byte of every page: the ends (read in part per batch) and the compressed bytes.
    uint64_t page_bytes = 0, batch_pieces = 0;
    for (const auto& page : meta.pages()) {
      ASSERT_EQ(page.buffer_sizes_size(), 2);
      page_bytes += page.buffer_sizes(0) + page.buffer_sizes(1);
      batch_pieces += page.length() / 256 + 2;
    }

    auto store = io::MakeLocalStore();
    auto reader = LanceFileReader::Open(*store, data_file);
    const uint64_t before = store->stats().bytes_read;
    std::vector<ArrayPtr> pieces;
    for (uint64_t start = 0; start < n; start += 256)
      pieces.push_back(reader->ReadField(column, start, std::min<uint64_t>(256, n - start)));
    EXPECT_TRUE(ArraysEqual(*Concatenate(pieces), *columns[column]));
    const uint64_t read = store->stats().bytes_read - before;
    // Each batch re-reads at most one end (the one before its first row) besides its own;
    // decompressing per batch would read each compressed buffer about page.length()/256 times.
    EXPECT_LE(read, page_bytes + 8 * batch_pieces);
  }
}

}  // namespace
}  // namespace lancelet::format::v20
