#include "format/deletion_file.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/object_store.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"
#include "lancelet/record_batch.h"
#include "support/test_env.h"

namespace lancelet::format {
namespace {

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

// A fragment size that admits every u32 offset, for tests about the encoding alone.
constexpr uint64_t kAnyRows = uint64_t{1} << 32;

std::vector<uint32_t> Range(uint32_t start, uint32_t end, uint32_t step = 1) {
  std::vector<uint32_t> v;
  for (uint32_t i = start; i < end; i += step) v.push_back(i);
  return v;
}

// _deletions/0-1-*.arrow written by lance 12.0.0 after `delete("id < 5")`: offsets
// 4, 3, 1, 2, 0 (hash-set order), ZSTD-tagged body with raw (-1 length) buffers.
const char* kReferenceArrow =
    "4152524f57310000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000ffffffff780000001000000000000a000c000a0009000400"
    "0a00000010000000000104000800080000000400080000000400000001000000140000001000160010000000"
    "0f0004000000080010000000180000001c000000000000021800000000000600080004000600000020000000"
    "0000000006000000726f775f69640000ffffffffb8000000100000000c00140012001100040008000c000000"
    "1c0000008000000000000000000304000c001c0010000c00080004000c0000005c0000002c00000010000000"
    "0500000000000000000000000100000005000000000000000000000000000000000000000200000000000000"
    "00000000090000000000000040000000000000001c0000000000000000000600080007000600000000000001"
    "0000000000000000000000000000000000000000000000000000000000000000ffffffffffffffffff000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000ffffffffffffffff04000000030000000100000002000000000000000000000000000000"
    "00000000000000000000000000000000000000000000000000000000ffffffff000000001400000000000000"
    "0c00140012000c00080004000c0000006c000000880000001000000000000400080008000000040008000000"
    "04000000010000001400000010001600100000000f0004000000080010000000180000001c00000000000002"
    "18000000000006000800040006000000200000000000000006000000726f775f6964000001000000c0000000"
    "00000000c00000000000000080000000000000000000000000000000a80000004152524f5731";

TEST(DeletionFileTest, PathsAndSuffixes) {
  EXPECT_EQ(DeletionFilePath(3, 7, 12345, DeletionFileType::kArrowArray),
            "_deletions/3-7-12345.arrow");
  EXPECT_EQ(DeletionFilePath(0, 1, 18446744073709551615ull, DeletionFileType::kBitmap),
            "_deletions/0-1-18446744073709551615.bin");
  EXPECT_EQ(static_cast<int>(DeletionFileType::kArrowArray), 0);
  EXPECT_EQ(static_cast<int>(DeletionFileType::kBitmap), 1);
}

TEST(DeletionFileTest, ThresholdFollowsTheReference) {
  EXPECT_EQ(ChooseDeletionFileType(1), DeletionFileType::kArrowArray);
  EXPECT_EQ(ChooseDeletionFileType(4999), DeletionFileType::kArrowArray);
  EXPECT_EQ(ChooseDeletionFileType(5000), DeletionFileType::kBitmap);
  EXPECT_EQ(ChooseDeletionFileType(5001), DeletionFileType::kBitmap);
}

TEST(DeletionFileTest, SmallVectorWritesArrowAndReadsBack) {
  std::vector<uint32_t> offsets{4, 3, 1, 2, 0, 4242};
  DeletionVector dv = DeletionVector::FromOffsets(offsets);
  DeletionVector::Encoded file = dv.Write();
  EXPECT_EQ(file.type, DeletionFileType::kArrowArray);
  EXPECT_EQ(file.bytes.substr(0, 6), "ARROW1");
  DeletionVector back = DeletionVector::Decode(file.bytes, file.type, kAnyRows, "t");
  EXPECT_EQ(back.ToVector(), (std::vector<uint32_t>{0, 1, 2, 3, 4, 4242}));

  // The column is row_id: uint32, not nullable, offsets ascending.
  auto reader = ReadIpc(file.bytes, "t");
  ASSERT_EQ(reader->schema()->num_fields(), 1u);
  EXPECT_EQ(reader->schema()->field(0)->name, "row_id");
  EXPECT_EQ(reader->schema()->field(0)->type->id(), TypeId::kUInt32);
  EXPECT_FALSE(reader->schema()->field(0)->nullable);
  RecordBatchPtr batch = reader->Next();
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->num_rows(), 6);
  EXPECT_EQ(batch->column(0)->values<uint32_t>()[5], 4242u);
  EXPECT_EQ(reader->Next(), nullptr);
}

TEST(DeletionFileTest, LargeVectorWritesBitmapIdenticalToReference) {
  // The reference's file for offsets 0..6999 is exactly these 8208 bytes.
  DeletionVector dv = DeletionVector::FromOffsets(Range(0, 7000));
  DeletionVector::Encoded file = dv.Write();
  EXPECT_EQ(file.type, DeletionFileType::kBitmap);
  ASSERT_EQ(file.bytes.size(), 8208u);
  EXPECT_EQ(file.bytes.substr(0, 16), Unhex("3a300000010000000000571b10000000"));
  EXPECT_EQ(file.bytes.substr(16, 875), std::string(875, '\xff'));
  EXPECT_EQ(file.bytes.substr(16 + 875), std::string(8192 - 875, '\0'));
  EXPECT_EQ(DeletionVector::Decode(file.bytes, file.type, kAnyRows, "t"), dv);

  DeletionVector sparse = DeletionVector::FromOffsets(Range(0, 20000, 3));
  DeletionVector::Encoded sparse_file = sparse.Write();
  EXPECT_EQ(sparse_file.type, DeletionFileType::kBitmap);
  EXPECT_EQ(sparse_file.bytes.substr(0, 4), Unhex("3a300000"));  // no run containers
  DeletionVector back = DeletionVector::Decode(sparse_file.bytes, sparse_file.type, kAnyRows, "t");
  EXPECT_EQ(back.size(), 6667u);
  EXPECT_TRUE(back.Contains(19998));
  EXPECT_FALSE(back.Contains(19997));
}

TEST(DeletionFileTest, EmptyVectorHasNoFile) {
  try {
    DeletionVector().Write();
    FAIL() << "wrote a file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
}

TEST(DeletionFileTest, ReadsReferenceArrowFile) {
  std::string bytes = Unhex(kReferenceArrow);
  ASSERT_EQ(bytes.size(), 698u);
  // The batch carries BodyCompression ZSTD with every buffer stored raw (length -1).
  DeletionVector dv = DeletionVector::Decode(bytes, DeletionFileType::kArrowArray, kAnyRows, "ref");
  EXPECT_EQ(dv.ToVector(), (std::vector<uint32_t>{0, 1, 2, 3, 4}));
}

TEST(DeletionFileTest, ReadThroughStoreNamesPathOnCorruption) {
  testing::TempDir dir;
  std::shared_ptr<io::ObjectStore> store = io::MakeLocalStore();
  std::string good = io::JoinPath(dir.path(), DeletionFilePath(2, 5, 99, DeletionFileType::kBitmap));
  store->CreateDir(io::JoinPath(dir.path(), "_deletions"));
  DeletionVector dv = DeletionVector::FromOffsets(Range(10, 20));
  store->Put(good, dv.Encode(DeletionFileType::kBitmap));
  EXPECT_EQ(DeletionVector::Read(*store, good, DeletionFileType::kBitmap, 2, 20), dv);

  std::string bad = io::JoinPath(dir.path(), DeletionFilePath(2, 5, 100, DeletionFileType::kBitmap));
  store->Put(bad, "not a bitmap");
  try {
    DeletionVector::Read(*store, bad, DeletionFileType::kBitmap, 2, 20);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("fragment 2"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("2-5-100.bin"), std::string::npos);
  }
}

TEST(DeletionFileTest, ArrowWithWrongSchemaIsCorrupt) {
  auto column = std::make_shared<ArrayData>();
  column->type = DataType::Int32();
  column->length = 1;
  int32_t value = 7;
  column->buffers = {nullptr, Buffer::Copy(&value, sizeof(value))};
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("row_id", DataType::Int32(), false)});
  std::string bytes = WriteIpcFile(*schema, {RecordBatch::Make(schema, {column})});
  try {
    DeletionVector::Decode(bytes, DeletionFileType::kArrowArray, kAnyRows, "_deletions/0-1-2.arrow");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("_deletions/0-1-2.arrow"), std::string::npos);
  }
}

TEST(DeletionFileTest, ArrowWithTwoBatchesIsCorrupt) {
  auto column = std::make_shared<ArrayData>();
  column->type = DataType::UInt32();
  column->length = 1;
  uint32_t value = 7;
  column->buffers = {nullptr, Buffer::Copy(&value, sizeof(value))};
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("row_id", DataType::UInt32(), false)});
  RecordBatchPtr batch = RecordBatch::Make(schema, {column});
  std::string bytes = WriteIpcFile(*schema, {batch, batch});
  try {
    DeletionVector::Decode(bytes, DeletionFileType::kArrowArray, kAnyRows, "t");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("more than one record batch"), std::string::npos);
  }
}

// An Arrow deletion file holding `values` as written (any order, repeats allowed).
std::string ArrowFileOf(const std::vector<uint32_t>& values) {
  auto column = std::make_shared<ArrayData>();
  column->type = DataType::UInt32();
  column->length = int64_t(values.size());
  column->buffers = {nullptr, Buffer::Copy(values.data(), values.size() * sizeof(uint32_t))};
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("row_id", DataType::UInt32(), false)});
  return WriteIpcFile(*schema, {RecordBatch::Make(schema, {column})});
}

std::string CorruptMessage(const std::string& bytes, DeletionFileType type, uint64_t rows) {
  try {
    DeletionVector::Decode(bytes, type, rows, "deletion file '_deletions/0-3-123.arrow' of fragment 0");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
    return e.what();
  }
  return "accepted";
}

TEST(DeletionFileTest, ArrowOffsetBeyondFragmentIsCorrupt) {
  std::vector<uint32_t> values = Range(0, 20);
  values[17] = 4294901760u;
  EXPECT_EQ(CorruptMessage(ArrowFileOf(values), DeletionFileType::kArrowArray, 20000),
            "deletion file '_deletions/0-3-123.arrow' of fragment 0: offset 4294901760 at position 17 is beyond "
            "the fragment's 20000 rows");
  // The last valid offset is physical_rows - 1.
  EXPECT_EQ(CorruptMessage(ArrowFileOf({3, 20000}), DeletionFileType::kArrowArray, 20000),
            "deletion file '_deletions/0-3-123.arrow' of fragment 0: offset 20000 at position 1 is beyond "
            "the fragment's 20000 rows");
  EXPECT_EQ(DeletionVector::Decode(ArrowFileOf({19999, 3}), DeletionFileType::kArrowArray, 20000, "t").ToVector(),
            (std::vector<uint32_t>{3, 19999}));
}

TEST(DeletionFileTest, ArrowRepeatedOffsetIsCorrupt) {
  EXPECT_EQ(CorruptMessage(ArrowFileOf({5, 9, 7, 9}), DeletionFileType::kArrowArray, 20),
            "deletion file '_deletions/0-3-123.arrow' of fragment 0: offset 9 at position 3 appears twice");
}

TEST(DeletionFileTest, ArrowNullOffsetIsCorrupt) {
  auto column = std::make_shared<ArrayData>();
  column->type = DataType::UInt32();
  column->length = 2;
  column->null_count = 1;
  uint8_t validity = 0b01;
  uint32_t values[2] = {1, 0};
  column->buffers = {Buffer::Copy(&validity, 1), Buffer::Copy(values, sizeof(values))};
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("row_id", DataType::UInt32(), true)});
  std::string bytes = WriteIpcFile(*schema, {RecordBatch::Make(schema, {column})});
  EXPECT_EQ(CorruptMessage(bytes, DeletionFileType::kArrowArray, 20),
            "deletion file '_deletions/0-3-123.arrow' of fragment 0: 1 of its offsets are null");
}

TEST(DeletionFileTest, BitmapBeyondFragmentIsCorrupt) {
  std::string bytes = DeletionVector::FromOffsets(Range(0, 6000)).Encode(DeletionFileType::kBitmap);
  EXPECT_EQ(DeletionVector::Decode(bytes, DeletionFileType::kBitmap, 6000, "t").size(), 6000u);
  EXPECT_EQ(CorruptMessage(bytes, DeletionFileType::kBitmap, 5999),
            "deletion file '_deletions/0-3-123.arrow' of fragment 0: offset 5999 is beyond the fragment's 5999 rows");
  std::string garbage = CorruptMessage("\x3a\x30\x00\x00\xff\xff", DeletionFileType::kBitmap, 100);
  EXPECT_EQ(garbage.rfind("deletion file '_deletions/0-3-123.arrow' of fragment 0: ", 0), 0u) << garbage;
}

}  // namespace
}  // namespace lancelet::format
