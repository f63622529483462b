// The Lance file container with the 2.0 encodings: round trips, paging, different field
// lengths, take, corrupt files, hand-built reference encodings and the reference itself.
#include <google/protobuf/any.pb.h>
#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <utility>

#include "encodings_v2_0.pb.h"
#include "file.pb.h"
#include "file2.pb.h"
#include "format/lance_file.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"
#include "lancelet/scalar.h"
#include "support/test_env.h"

namespace lancelet::format {
namespace {

namespace fs = std::filesystem;
namespace enc = lance::encodings;
using testing::TempDir;

// --- random data ---------------------------------------------------------------------

Scalar RandomScalar(const TypePtr& type, std::mt19937_64& rng, double null_rate, bool allow_null = true) {
  std::uniform_real_distribution<double> u(0, 1);
  // 2.0 files cannot hold null structs (SimpleStruct has no validity).
  if (allow_null && type->id() != TypeId::kStruct && u(rng) < null_rate) return Scalar::Null(type);
  auto small = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  auto text = [&](int64_t max_len) {
    std::string s(size_t(small(0, max_len)), ' ');
    for (auto& c : s) c = char('a' + small(0, 25));
    return s;
  };
  switch (type->id()) {
    case TypeId::kBool: return Scalar{type, small(0, 1) == 1};
    case TypeId::kInt8: return Scalar{type, small(-128, 127)};
    case TypeId::kInt16: return Scalar{type, small(-30000, 30000)};
    case TypeId::kInt32: return Scalar{type, small(INT32_MIN, INT32_MAX)};
    case TypeId::kInt64:
    case TypeId::kDate64:
    case TypeId::kTimestamp:
    case TypeId::kTime64:
    case TypeId::kDuration: return Scalar{type, int64_t(rng() >> 2)};
    case TypeId::kTime32: return Scalar{type, small(0, 86399999)};
    case TypeId::kNull: return Scalar::Null(type);
    case TypeId::kDate32: return Scalar{type, small(-100000, 100000)};
    case TypeId::kUInt8: return Scalar{type, uint64_t(small(0, 255))};
    case TypeId::kUInt16: return Scalar{type, uint64_t(small(0, 65535))};
    case TypeId::kUInt32: return Scalar{type, uint64_t(small(0, UINT32_MAX))};
    case TypeId::kUInt64: return Scalar{type, uint64_t(rng())};
    case TypeId::kFloat16: return Scalar{type, double(small(-1000, 1000)) / 4};
    case TypeId::kFloat32:
    case TypeId::kFloat64: return Scalar{type, double(small(-1000000, 1000000)) / 8};
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
    case TypeId::kBinary:
    case TypeId::kLargeBinary: return Scalar{type, text(12)};
    case TypeId::kFixedSizeBinary:
    case TypeId::kDecimal128:
    case TypeId::kDecimal256: {
      std::string s(size_t(type->byte_width()), ' ');
      for (auto& c : s) c = char(small(0, 255));
      return Scalar{type, s};
    }
    case TypeId::kFixedSizeList: {
      std::vector<Scalar> items;
      for (int i = 0; i < type->fixed_size(); ++i) items.push_back(RandomScalar(type->child(0)->type, rng, null_rate / 2));
      return Scalar{type, items};
    }
    case TypeId::kList:
    case TypeId::kLargeList: {
      std::vector<Scalar> items;
      for (int64_t i = small(0, 4); i > 0; --i) items.push_back(RandomScalar(type->child(0)->type, rng, null_rate / 2));
      return Scalar{type, items};
    }
    case TypeId::kMap: {  // entries and keys are never NULL
      const TypePtr& entries = type->child(0)->type;
      std::vector<Scalar> items;
      for (int64_t i = small(0, 4); i > 0; --i)
        items.push_back(Scalar{entries, std::vector<Scalar>{RandomScalar(entries->child(0)->type, rng, 0, false),
                                                            RandomScalar(entries->child(1)->type, rng, null_rate)}});
      return Scalar{type, items};
    }
    case TypeId::kStruct: {
      std::vector<Scalar> fields;
      for (const auto& f : type->children()) fields.push_back(RandomScalar(f->type, rng, null_rate));
      return Scalar{type, fields};
    }
  }
  return Scalar::Null(type);
}

ArrayPtr RandomArray(const TypePtr& type, int64_t n, uint64_t seed, double null_rate, bool allow_null = true) {
  std::mt19937_64 rng(seed);
  std::vector<Scalar> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(RandomScalar(type, rng, null_rate, allow_null));
  return MakeArray(type, v);
}

std::vector<FieldPtr> EveryTypeFields() {
  auto ab = DataType::Struct({Field::Make("a", DataType::Int32()), Field::Make("b", DataType::Utf8())});
  return {
      Field::Make("bool", DataType::Bool()),
      Field::Make("i8", DataType::Int8()),
      Field::Make("i16", DataType::Int16()),
      Field::Make("i32", DataType::Int32()),
      Field::Make("i64", DataType::Int64(), false),
      Field::Make("u8", DataType::UInt8()),
      Field::Make("u16", DataType::UInt16()),
      Field::Make("u32", DataType::UInt32()),
      Field::Make("u64", DataType::UInt64()),
      Field::Make("f16", DataType::Float16()),
      Field::Make("f32", DataType::Float32()),
      Field::Make("f64", DataType::Float64()),
      Field::Make("utf8", DataType::Utf8()),
      Field::Make("large_utf8", DataType::LargeUtf8()),
      Field::Make("binary", DataType::Binary()),
      Field::Make("large_binary", DataType::LargeBinary()),
      Field::Make("fsb", DataType::FixedSizeBinary(3)),
      Field::Make("fsl", DataType::FixedSizeList(DataType::Float32(), 3)),
      Field::Make("fsl_fsl", DataType::FixedSizeList(DataType::FixedSizeList(DataType::Int16(), 2), 2)),
      Field::Make("list", DataType::List(DataType::Int32())),
      Field::Make("large_list_utf8", DataType::LargeList(DataType::Utf8())),
      Field::Make("list_list", DataType::List(DataType::List(DataType::Int64()))),
      Field::Make("list_struct", DataType::List(ab)),
      Field::Make("struct", DataType::Struct({Field::Make("a", DataType::Int32()), Field::Make("b", DataType::Utf8()),
                                              Field::Make("inner", ab)})),
      Field::Make("date32", DataType::Date32()),
      Field::Make("date64", DataType::Date64()),
      Field::Make("ts", DataType::Timestamp(TimeUnit::kMicro, "UTC")),
  };
}

// Columns for `fields`; top-level structs get no null rows (2.0 cannot store them).
std::vector<ArrayPtr> RandomColumns(const std::vector<FieldPtr>& fields, int64_t n, uint64_t seed, double null_rate) {
  std::vector<ArrayPtr> cols;
  for (size_t i = 0; i < fields.size(); ++i) {
    bool nulls = fields[i]->nullable && fields[i]->type->id() != TypeId::kStruct;
    cols.push_back(RandomArray(fields[i]->type, n, seed + i, null_rate, nulls));
  }
  return cols;
}

// --- file helpers --------------------------------------------------------------------

FileWriterOptions V20(uint64_t page_size = 8 << 20) {
  FileWriterOptions o;
  o.version = FileVersion{2, 0};
  o.page_size_bytes = page_size;
  return o;
}

uint64_t WriteFile(io::ObjectStore& store, const std::string& path, const std::vector<FieldPtr>& fields,
                   const std::vector<ArrayPtr>& cols, FileWriterOptions options, int64_t batch_rows = 0) {
  auto schema = std::make_shared<Schema>(fields);
  LanceFileWriter writer(store, path, LanceSchema::FromArrow(*schema), options);
  int64_t n = cols.empty() ? 0 : cols[0]->length;
  if (batch_rows <= 0) batch_rows = std::max<int64_t>(n, 1);
  for (int64_t start = 0; start < n; start += batch_rows) {
    int64_t len = std::min(batch_rows, n - start);
    std::vector<ArrayPtr> part;
    for (const auto& c : cols) part.push_back(Slice(*c, start, len));
    writer.Write(RecordBatch(schema, part, len));
  }
  return writer.Finish();
}

struct ParsedFile {
  uint16_t major = 0, minor = 0;
  std::vector<lance::file::v2::ColumnMetadata> columns;
  lance::file::FileDescriptor descriptor;
};

ParsedFile Parse(const std::string& bytes) {
  ParsedFile p;
  const char* f = bytes.data() + bytes.size() - 40;
  uint64_t cmo, gbo;
  uint32_t ncols;
  std::memcpy(&cmo, f + 8, 8);
  std::memcpy(&gbo, f + 16, 8);
  std::memcpy(&ncols, f + 28, 4);
  std::memcpy(&p.major, f + 32, 2);
  std::memcpy(&p.minor, f + 34, 2);
  for (uint32_t c = 0; c < ncols; ++c) {
    uint64_t pos, len;
    std::memcpy(&pos, bytes.data() + cmo + 16 * c, 8);
    std::memcpy(&len, bytes.data() + cmo + 16 * c + 8, 8);
    p.columns.emplace_back();
    EXPECT_TRUE(p.columns.back().ParseFromArray(bytes.data() + pos, int(len)));
  }
  uint64_t pos, len;
  std::memcpy(&pos, bytes.data() + gbo, 8);
  std::memcpy(&len, bytes.data() + gbo + 8, 8);
  EXPECT_TRUE(p.descriptor.ParseFromArray(bytes.data() + pos, int(len)));
  return p;
}

enc::ArrayEncoding PageEncoding(const lance::file::v2::ColumnMetadata::Page& page) {
  google::protobuf::Any any;
  EXPECT_TRUE(any.ParseFromString(page.encoding().direct().encoding()));
  EXPECT_EQ(any.type_url(), "/lance.encodings.ArrayEncoding");
  enc::ArrayEncoding e;
  EXPECT_TRUE(e.ParseFromString(any.value()));
  return e;
}

template <typename F>
void ExpectError(ErrorKind kind, const std::string& needle, F&& f) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

class LanceFileV20 : public ::testing::Test {
 protected:
  std::shared_ptr<io::ObjectStore> store_ = io::MakeLocalStore();
  TempDir dir_;
  std::string Path(const std::string& name) const { return dir_.Join(name); }
};

// --- round trips ---------------------------------------------------------------------

TEST_F(LanceFileV20, RoundTripsEveryTypeWithNulls) {
  auto fields = EveryTypeFields();
  auto cols = RandomColumns(fields, 500, 1, 0.2);
  auto path = Path("every.lance");
  WriteFile(*store_, path, fields, cols, V20());

  auto reader = LanceFileReader::Open(*store_, path);
  EXPECT_EQ(reader->version(), (FileVersion{2, 0}));
  EXPECT_EQ(reader->num_rows(), 500u);
  EXPECT_TRUE(reader->schema().ToArrow()->Equals(Schema(fields))) << reader->schema().ToArrow()->ToString();
  for (size_t i = 0; i < fields.size(); ++i) {
    SCOPED_TRACE(fields[i]->name);
    EXPECT_EQ(reader->num_rows(i), 500u);
    auto got = reader->ReadField(i, 0, 500);
    ValidateArray(*got, "read");
    EXPECT_TRUE(ArraysEqual(*got, *cols[i]));
    auto part = reader->ReadField(i, 123, 77);
    EXPECT_TRUE(ArraysEqual(*part, *Slice(*cols[i], 123, 77)));
  }
}

TEST_F(LanceFileV20, WritesTheReferenceContainerLayout) {
  auto fields = EveryTypeFields();
  auto cols = RandomColumns(fields, 50, 2, 0.2);
  auto path = Path("layout.lance");
  uint64_t size = WriteFile(*store_, path, fields, cols, V20());
  std::string bytes = testing::ReadFileToString(path);
  ASSERT_EQ(bytes.size(), size);
  EXPECT_EQ(bytes.substr(bytes.size() - 4), "LANC");
  ParsedFile p = Parse(bytes);
  EXPECT_EQ(p.major, 0);  // 2.0 is stored as 0.3
  EXPECT_EQ(p.minor, 3);
  EXPECT_EQ(p.descriptor.length(), 50u);
  EXPECT_EQ(p.descriptor.schema().fields(0).logical_type(), "bool");
  // One column per schema node: list parents and struct headers included.
  int nodes = p.descriptor.schema().fields_size();
  EXPECT_EQ(int(p.columns.size()), nodes);
  for (const auto& col : p.columns) {
    google::protobuf::Any any;
    ASSERT_TRUE(any.ParseFromString(col.encoding().direct().encoding()));
    EXPECT_EQ(any.type_url(), "/lance.encodings.ColumnEncoding");
    enc::ColumnEncoding ce;
    ASSERT_TRUE(ce.ParseFromString(any.value()));
    EXPECT_TRUE(ce.has_values());
    for (const auto& page : col.pages()) {
      for (uint64_t off : page.buffer_offsets()) EXPECT_EQ(off % 64, 0u);
    }
  }
  // Column 3 is "i32": Nullable(SomeNull(validity Flat1 = buffer 0, values Flat32 = buffer 1)).
  auto e = PageEncoding(p.columns[3].pages(0));
  ASSERT_TRUE(e.nullable().has_some_nulls());
  EXPECT_EQ(e.nullable().some_nulls().validity().flat().bits_per_value(), 1u);
  EXPECT_EQ(e.nullable().some_nulls().validity().flat().buffer().buffer_index(), 0u);
  EXPECT_EQ(e.nullable().some_nulls().values().flat().bits_per_value(), 32u);
  EXPECT_EQ(e.nullable().some_nulls().values().flat().buffer().buffer_index(), 1u);
  // Column 4 is the non-nullable "i64": Nullable(NoNull(Flat64)).
  e = PageEncoding(p.columns[4].pages(0));
  EXPECT_EQ(e.nullable().no_nulls().values().flat().bits_per_value(), 64u);
  // Column 12 is "utf8": Binary(indices Nullable(NoNull(Flat64)), bytes Flat8).
  e = PageEncoding(p.columns[12].pages(0));
  ASSERT_TRUE(e.has_binary());
  EXPECT_EQ(e.binary().indices().nullable().no_nulls().values().flat().bits_per_value(), 64u);
  EXPECT_EQ(e.binary().bytes().flat().bits_per_value(), 8u);
  EXPECT_EQ(e.binary().null_adjustment(), p.columns[12].pages(0).buffer_sizes(1) + 1);
  // Column 17 is "fsl": Nullable(...(FixedSizeList(3, Nullable(...Flat32)))).
  e = PageEncoding(p.columns[17].pages(0));
  const auto& n = e.nullable();
  const auto& fsl = n.has_some_nulls() ? n.some_nulls().values() : n.no_nulls().values();
  ASSERT_TRUE(fsl.has_fixed_size_list());
  EXPECT_EQ(fsl.fixed_size_list().dimension(), 3u);
  // Column 19 is "list": List offsets page; column 20 its items.
  e = PageEncoding(p.columns[19].pages(0));
  ASSERT_TRUE(e.has_list());
  EXPECT_EQ(e.list().null_offset_adjustment(), e.list().num_items() + 1);
  EXPECT_EQ(p.columns[20].pages(0).length(), e.list().num_items());
  // The struct header: one SimpleStruct page with every row and no buffers.
  int struct_col = 0;
  for (int i = 0; i < nodes; ++i) {
    if (p.descriptor.schema().fields(i).name() == "struct") struct_col = i;
  }
  ASSERT_EQ(p.columns[struct_col].pages_size(), 1);
  EXPECT_TRUE(PageEncoding(p.columns[struct_col].pages(0)).has_struct_());
  EXPECT_EQ(p.columns[struct_col].pages(0).length(), 50u);
  EXPECT_EQ(p.columns[struct_col].pages(0).buffer_offsets_size(), 0);
}

TEST_F(LanceFileV20, SplitsPagesAndReadsAcrossThem) {
  std::vector<FieldPtr> fields = {Field::Make("i64", DataType::Int64()), Field::Make("s", DataType::Utf8()),
                                  Field::Make("b", DataType::Bool()),
                                  Field::Make("l", DataType::List(DataType::Int32())),
                                  Field::Make("v", DataType::FixedSizeList(DataType::Float32(), 4))};
  auto cols = RandomColumns(fields, 5000, 3, 0.1);
  auto path = Path("pages.lance");
  WriteFile(*store_, path, fields, cols, V20(1024), /*batch_rows=*/700);
  ParsedFile p = Parse(testing::ReadFileToString(path));
  EXPECT_GE(p.columns[0].pages_size(), 30);  // 40,000 bytes of int64 in ~1 KiB pages
  EXPECT_GE(p.columns[1].pages_size(), 10);
  // A list emits one offsets page once its buffered offsets fill a page (it does not split
  // a written batch), here once per 700-row batch.
  EXPECT_EQ(p.columns[3].pages_size(), 8);
  uint64_t rows = 0, priority = 0;
  for (const auto& page : p.columns[0].pages()) {
    EXPECT_EQ(page.priority(), priority);
    EXPECT_LE(page.length() * 8, 1024u);
    rows += page.length();
    priority += page.length();
  }
  EXPECT_EQ(rows, 5000u);

  auto reader = LanceFileReader::Open(*store_, path);
  std::mt19937_64 rng(9);
  for (size_t i = 0; i < fields.size(); ++i) {
    SCOPED_TRACE(fields[i]->name);
    EXPECT_TRUE(ArraysEqual(*reader->ReadField(i, 0, 5000), *cols[i]));
    for (int k = 0; k < 20; ++k) {
      uint64_t start = rng() % 5000, count = rng() % (5000 - start + 1);
      EXPECT_TRUE(ArraysEqual(*reader->ReadField(i, start, count), *Slice(*cols[i], int64_t(start), int64_t(count))));
    }
  }
}

TEST_F(LanceFileV20, TakesRandomRowsWithDuplicatesInAnyOrder) {
  auto fields = EveryTypeFields();
  auto cols = RandomColumns(fields, 3000, 4, 0.15);
  auto path = Path("take.lance");
  WriteFile(*store_, path, fields, cols, V20(4096), 1000);
  auto reader = LanceFileReader::Open(*store_, path);
  std::mt19937_64 rng(5);
  std::vector<uint64_t> rows;
  for (int i = 0; i < 300; ++i) rows.push_back(rng() % 3000);
  rows.push_back(rows[7]);
  rows.push_back(0);
  rows.push_back(2999);
  std::vector<int64_t> signed_rows(rows.begin(), rows.end());
  for (size_t i = 0; i < fields.size(); ++i) {
    SCOPED_TRACE(fields[i]->name);
    auto got = reader->TakeField(i, rows);
    ValidateArray(*got, "take");
    EXPECT_TRUE(ArraysEqual(*got, *Take(*cols[i], signed_rows)));
    EXPECT_EQ(reader->TakeField(i, {})->length, 0);
  }
  ExpectError(ErrorKind::kInvalidArgument, "row 3000", [&] {
    std::vector<uint64_t> bad = {1, 3000};
    reader->TakeField(0, bad);
  });
  ExpectError(ErrorKind::kInvalidArgument, path, [&] { reader->ReadField(0, 2990, 11); });
}

TEST_F(LanceFileV20, FieldsMayEndWithDifferentLengths) {
  std::vector<FieldPtr> fields = {Field::Make("a", DataType::Int32()), Field::Make("b", DataType::Utf8()),
                                  Field::Make("c", DataType::List(DataType::Int32())),
                                  Field::Make("d", DataType::Struct({Field::Make("x", DataType::Int32())}))};
  auto a = RandomArray(fields[0]->type, 100, 1, 0.1);
  auto b = RandomArray(fields[1]->type, 30, 2, 0.1);
  auto c = RandomArray(fields[2]->type, 7, 3, 0.1);
  auto path = Path("lengths.lance");
  {
    LanceFileWriter writer(*store_, path, LanceSchema::FromArrow(Schema(fields)), V20());
    writer.WriteField(0, *Slice(*a, 0, 60));
    writer.WriteField(1, *b);
    writer.WriteField(0, *Slice(*a, 60, 40));
    writer.WriteField(2, *c);
    writer.Finish();
  }
  auto reader = LanceFileReader::Open(*store_, path);
  EXPECT_EQ(reader->num_rows(), 100u);  // the longest field
  EXPECT_EQ(reader->num_rows(0), 100u);
  EXPECT_EQ(reader->num_rows(1), 30u);
  EXPECT_EQ(reader->num_rows(2), 7u);
  EXPECT_EQ(reader->num_rows(3), 0u);
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 0, 100), *a));
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(1, 0, 30), *b));
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(2, 0, 7), *c));
  EXPECT_EQ(reader->ReadField(3, 0, 0)->length, 0);
  ExpectError(ErrorKind::kInvalidArgument, "'b'", [&] { reader->ReadField(1, 0, 31); });
}

TEST_F(LanceFileV20, ReportsColumnIndicesAndFieldIds) {
  auto ab = DataType::Struct({Field::Make("a", DataType::Int32()), Field::Make("b", DataType::Utf8())});
  Schema schema({Field::Make("x", DataType::Int32()), Field::Make("l", DataType::List(ab)),
                 Field::Make("v", DataType::FixedSizeList(DataType::Float32(), 2))});
  auto lance = LanceSchema::FromArrow(schema, 5);
  LanceFileWriter writer(*store_, Path("ids.lance"), lance, V20());
  EXPECT_EQ(writer.FieldIds(), (std::vector<int32_t>{5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(writer.ColumnIndices(), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  writer.Finish();
  auto reader = LanceFileReader::Open(*store_, Path("ids.lance"));
  EXPECT_EQ(reader->num_rows(), 0u);
  EXPECT_EQ(reader->schema().fields()[1].children[0].children[1].id, 9);
}

// A file read whole when opened keeps no descriptor: a version with hundreds of small
// overlays open must not run a process out of file descriptors. A file read by its tail
// keeps one, for its pages.
TEST_F(LanceFileV20, AFileReadWholeHoldsNoDescriptor) {
  std::vector<FieldPtr> fields = {Field::Make("x", DataType::Int64())};
  WriteFile(*store_, Path("small.lance"), fields, RandomColumns(fields, 100, 1, 0.0), V20(), 100);
  WriteFile(*store_, Path("large.lance"), fields, RandomColumns(fields, 20000, 2, 0.0), V20(), 20000);
  auto open_descriptors = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator{});
  };
  const auto before = open_descriptors();
  std::vector<std::unique_ptr<LanceFileReader>> readers;
  for (int i = 0; i < 20; ++i) readers.push_back(LanceFileReader::Open(*store_, Path("small.lance")));
  EXPECT_EQ(open_descriptors(), before);
  EXPECT_EQ(readers.back()->num_rows(), 100u);
  EXPECT_EQ(readers.back()->ReadField(0, 0, 100)->length, 100);
  readers.push_back(LanceFileReader::Open(*store_, Path("large.lance")));  // 160 KB: its tail
  EXPECT_EQ(open_descriptors(), before + 1);
  EXPECT_EQ(readers.back()->ReadField(0, 19990, 10)->length, 10);
  readers.push_back(LanceFileReader::Open(*store_, Path("large.lance"), 0, /*whole_up_to=*/1 << 20));
  EXPECT_EQ(open_descriptors(), before + 1);
  EXPECT_EQ(readers.back()->ReadField(0, 19990, 10)->length, 10);
}

// Opening a file too large to read whole reads its metadata, not a fixed 64 KiB tail:
// one read of the last kMetadataGuessBytes when the metadata fits there (a few hundred
// bytes per column), and exactly one more when it starts earlier (a wide file).
TEST_F(LanceFileV20, OpeningALargeFileReadsItsMetadataNotAWideTail) {
  std::vector<FieldPtr> narrow = {Field::Make("x", DataType::Int64())};
  WriteFile(*store_, Path("narrow.lance"), narrow, RandomColumns(narrow, 20000, 2, 0.0), V20(), 20000);
  std::vector<FieldPtr> wide;
  for (int i = 0; i < 400; ++i) wide.push_back(Field::Make("column_" + std::to_string(i), DataType::Int64()));
  WriteFile(*store_, Path("wide.lance"), wide, RandomColumns(wide, 100, 3, 0.0), V20(), 100);
  const uint64_t wide_size = std::filesystem::file_size(Path("wide.lance"));
  ASSERT_GT(wide_size, LanceFileReader::kTailBytes);
  const io::IoStats& stats = store_->stats();
  auto reads_of = [&](const std::string& name) {
    const uint64_t calls = stats.read_calls, bytes = stats.bytes_read;
    auto reader = LanceFileReader::Open(*store_, Path(name));
    return std::tuple(std::move(reader), stats.read_calls - calls, stats.bytes_read - bytes);
  };

  auto [narrow_reader, narrow_calls, narrow_bytes] = reads_of("narrow.lance");
  EXPECT_EQ(narrow_calls, 1u);
  EXPECT_EQ(narrow_bytes, LanceFileReader::kMetadataGuessBytes);
  EXPECT_EQ(narrow_reader->ReadField(0, 19990, 10)->length, 10);

  auto [wide_reader, wide_calls, wide_bytes] = reads_of("wide.lance");
  EXPECT_EQ(wide_calls, 2u);
  EXPECT_GT(wide_bytes, LanceFileReader::kMetadataGuessBytes);
  EXPECT_LT(wide_bytes, wide_size / 2);  // the metadata, not the pages before it
  ASSERT_EQ(wide_reader->schema().fields().size(), 400u);
  EXPECT_EQ(wide_reader->ReadField(399, 0, 100)->length, 100);
}

TEST_F(LanceFileV20, RejectsWhatTheReferenceRejects) {
  auto st = DataType::Struct({Field::Make("a", DataType::Int32())});
  Schema schema({Field::Make("req", DataType::Int32(), false), Field::Make("st", st)});
  LanceFileWriter writer(*store_, Path("bad.lance"), LanceSchema::FromArrow(schema), V20());
  ExpectError(ErrorKind::kInvalidArgument, "'req'", [&] {
    writer.WriteField(0, *MakeArray(DataType::Int32(), {Scalar{DataType::Int32(), int64_t(1)},
                                                        Scalar::Null(DataType::Int32())}));
  });
  ExpectError(ErrorKind::kNotSupported, "null struct rows", [&] {
    writer.WriteField(1, *MakeArray(st, {Scalar::Null(st)}));
  });
  ExpectError(ErrorKind::kInvalidArgument, "type", [&] { writer.WriteField(0, *MakeEmptyArray(DataType::Int64())); });
}

TEST_F(LanceFileV20, AllNullAndEmptyColumns) {
  std::vector<FieldPtr> fields = {Field::Make("n", DataType::Int32()), Field::Make("s", DataType::Utf8()),
                                  Field::Make("l", DataType::List(DataType::Int32())),
                                  Field::Make("v", DataType::FixedSizeList(DataType::Int8(), 2))};
  std::vector<ArrayPtr> cols;
  for (const auto& f : fields) cols.push_back(MakeNullArray(f->type, 10));
  auto path = Path("nulls.lance");
  WriteFile(*store_, path, fields, cols, V20());
  ParsedFile p = Parse(testing::ReadFileToString(path));
  EXPECT_TRUE(PageEncoding(p.columns[0].pages(0)).nullable().has_all_nulls());
  auto reader = LanceFileReader::Open(*store_, path);
  for (size_t i = 0; i < fields.size(); ++i) {
    SCOPED_TRACE(fields[i]->name);
    auto got = reader->ReadField(i, 0, 10);
    EXPECT_EQ(got->null_count, 10);
    EXPECT_TRUE(ArraysEqual(*got, *cols[i]));
  }
}

TEST_F(LanceFileV20, DictionaryEncodesLowCardinalityStringsLikeTheReference) {
  auto t = DataType::Utf8();
  std::vector<FieldPtr> fields = {Field::Make("low", t), Field::Make("none", t), Field::Make("high", t),
                                  Field::Make("short", t), Field::Make("large", DataType::LargeUtf8())};
  std::vector<Scalar> low, high, large;
  for (int i = 0; i < 300; ++i) {
    low.push_back(i % 13 == 0 ? Scalar::Null(t) : Scalar{t, "v" + std::to_string(i % 99)});
    high.push_back(Scalar{t, "v" + std::to_string(i % 100)});
    large.push_back(Scalar{DataType::LargeUtf8(), std::string("same")});
  }
  std::vector<ArrayPtr> cols = {MakeArray(t, low), MakeNullArray(t, 300), MakeArray(t, high),
                                Slice(*MakeArray(t, low), 0, 300), MakeArray(DataType::LargeUtf8(), large)};
  auto path = Path("dict.lance");
  {
    LanceFileWriter writer(*store_, path, LanceSchema::FromArrow(Schema(fields)), V20());
    for (size_t i = 0; i < 3; ++i) writer.WriteField(i, *cols[i]);
    writer.WriteField(3, *Slice(*cols[3], 0, 99));  // below 100 values: plain
    writer.WriteField(4, *cols[4]);                 // only utf8 is dictionary-encoded
    writer.Finish();
  }
  ParsedFile p = Parse(testing::ReadFileToString(path));
  auto low_enc = PageEncoding(p.columns[0].pages(0));
  ASSERT_TRUE(low_enc.has_dictionary());
  EXPECT_EQ(low_enc.dictionary().num_dictionary_items(), 99u);
  EXPECT_EQ(low_enc.dictionary().indices().nullable().no_nulls().values().flat().bits_per_value(), 8u);
  EXPECT_EQ(p.columns[0].pages(0).buffer_sizes(0), 300u);
  auto none_enc = PageEncoding(p.columns[1].pages(0));
  ASSERT_TRUE(none_enc.has_dictionary());
  EXPECT_EQ(none_enc.dictionary().num_dictionary_items(), 1u);
  EXPECT_TRUE(PageEncoding(p.columns[2].pages(0)).has_binary());
  EXPECT_TRUE(PageEncoding(p.columns[3].pages(0)).has_binary());
  EXPECT_TRUE(PageEncoding(p.columns[4].pages(0)).has_binary());
  auto reader = LanceFileReader::Open(*store_, path);
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 0, 300), *cols[0]));
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(1, 0, 300), *cols[1]));
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(2, 0, 300), *cols[2]));
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(3, 0, 99), *Slice(*cols[3], 0, 99)));
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(4, 0, 300), *cols[4]));
}

TEST_F(LanceFileV20, WritesAndReadsPackedStructs) {
  auto st = DataType::Struct({Field::Make("a", DataType::Int32()), Field::Make("b", DataType::Float64())});
  std::vector<FieldPtr> fields = {Field::Make("p", st, true, {{"packed", "true"}})};
  auto col = RandomArray(st, 200, 8, 0.0, false);
  auto path = Path("packed.lance");
  WriteFile(*store_, path, fields, {col}, V20());
  ParsedFile p = Parse(testing::ReadFileToString(path));
  ASSERT_EQ(p.columns.size(), 1u);
  auto e = PageEncoding(p.columns[0].pages(0));
  ASSERT_TRUE(e.has_packed_struct());
  EXPECT_EQ(e.packed_struct().inner_size(), 2);
  EXPECT_EQ(p.columns[0].pages(0).buffer_sizes(0), 200u * 12);
  auto reader = LanceFileReader::Open(*store_, path);
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 0, 200), *col));
  std::vector<uint64_t> rows = {199, 3, 3};
  EXPECT_TRUE(ArraysEqual(*reader->TakeField(0, rows), *Take(*col, std::vector<int64_t>{199, 3, 3})));
}

// --- corrupt files -------------------------------------------------------------------

class CorruptFiles : public LanceFileV20 {
 protected:
  std::string Good() {
    std::vector<FieldPtr> fields = {Field::Make("a", DataType::Int32())};
    auto path = Path("good.lance");
    WriteFile(*store_, path, fields, {RandomArray(fields[0]->type, 10, 1, 0)}, V20());
    return testing::ReadFileToString(path);
  }
  std::string Put(const std::string& name, const std::string& bytes) {
    testing::WriteStringToFile(Path(name), bytes);
    return Path(name);
  }
};

TEST_F(CorruptFiles, BadMagic) {
  std::string bytes = Good();
  bytes.back() = 'X';
  auto path = Put("magic.lance", bytes);
  ExpectError(ErrorKind::kCorrupt, path, [&] { LanceFileReader::Open(*store_, path); });
  ExpectError(ErrorKind::kCorrupt, "LANC", [&] { LanceFileReader::Open(*store_, path); });
}

TEST_F(CorruptFiles, TruncatedFile) {
  std::string bytes = Good();
  auto path = Put("trunc.lance", bytes.substr(0, bytes.size() - 7));
  ExpectError(ErrorKind::kCorrupt, path, [&] { LanceFileReader::Open(*store_, path); });
  auto tiny = Put("tiny.lance", "LANC");
  ExpectError(ErrorKind::kCorrupt, "too small", [&] { LanceFileReader::Open(*store_, tiny); });
}

TEST_F(CorruptFiles, InconsistentFooter) {
  std::string bytes = Good();
  uint64_t huge = 1ull << 50;
  std::memcpy(&bytes[bytes.size() - 40 + 8], &huge, 8);  // column metadata offsets start
  auto path = Put("footer.lance", bytes);
  ExpectError(ErrorKind::kCorrupt, path, [&] { LanceFileReader::Open(*store_, path); });
}

TEST_F(CorruptFiles, GarbageDescriptor) {
  std::string bytes = Good();
  uint64_t gbo;
  std::memcpy(&gbo, &bytes[bytes.size() - 40 + 16], 8);
  uint64_t pos, len;
  std::memcpy(&pos, &bytes[gbo], 8);
  std::memcpy(&len, &bytes[gbo + 8], 8);
  for (uint64_t i = 0; i < len; ++i) bytes[pos + i] = char(0xFF);
  auto path = Put("descriptor.lance", bytes);
  ExpectError(ErrorKind::kCorrupt, path, [&] { LanceFileReader::Open(*store_, path); });
}

// A page buffer moved (one flipped bit in its offset) onto the schema's global buffer or
// past the data pages is refused when the file opens, before any value is decoded.
TEST_F(CorruptFiles, PageBuffersLieInTheDataPages) {
  const std::string good = Good();
  auto load = [&](size_t pos) {
    uint64_t v;
    std::memcpy(&v, &good[pos], 8);
    return v;
  };
  const size_t footer = good.size() - 40;
  const uint64_t column_meta = load(footer), offsets = load(footer + 8), globals = load(footer + 16);
  const uint64_t schema_at = load(globals), schema_end = schema_at + load(globals + 8);
  // Good() has one column: its metadata is all of [column_meta, offsets).
  auto with_first_buffer_at = [&](uint64_t offset) {
    lance::file::v2::ColumnMetadata meta;
    EXPECT_TRUE(meta.ParseFromString(good.substr(column_meta, offsets - column_meta)));
    meta.mutable_pages(0)->set_buffer_offsets(0, offset);
    const std::string edited = meta.SerializeAsString();
    std::string out = good.substr(0, column_meta) + edited;
    const uint64_t new_offsets = out.size(), new_globals = new_offsets + 16, size = edited.size();
    out.append(reinterpret_cast<const char*>(&column_meta), 8).append(reinterpret_cast<const char*>(&size), 8);
    out += good.substr(globals, footer - globals);
    out += good.substr(footer, 8);
    out.append(reinterpret_cast<const char*>(&new_offsets), 8).append(reinterpret_cast<const char*>(&new_globals), 8);
    out += good.substr(footer + 24);
    return Put("moved.lance", out);
  };
  lance::file::v2::ColumnMetadata meta;
  ASSERT_TRUE(meta.ParseFromString(good.substr(column_meta, offsets - column_meta)));
  const uint64_t bytes = meta.pages(0).buffer_sizes(0);
  ASSERT_LT(column_meta - bytes, schema_end);
  auto path = with_first_buffer_at(column_meta - bytes);  // ends where the metadata starts, over the schema
  ExpectError(ErrorKind::kCorrupt,
              fmt::format("{}: a page buffer of column 0 at [{}, {}) overlaps global buffer 0 at [{}, {})", path,
                          column_meta - bytes, column_meta, schema_at, schema_end),
              [&] { LanceFileReader::Open(*store_, path); });
  path = with_first_buffer_at(column_meta);
  ExpectError(ErrorKind::kCorrupt,
              fmt::format("{}: a page buffer of column 0 at [{}, {}) lies outside the data pages, which end where the "
                          "column metadata starts, at {}",
                          path, column_meta, column_meta + bytes, column_meta),
              [&] { LanceFileReader::Open(*store_, path); });
  // Where the page really is, the file reads.
  path = with_first_buffer_at(meta.pages(0).buffer_offsets(0));
  EXPECT_EQ(LanceFileReader::Open(*store_, path)->ReadField(0, 0, 10)->length, 10);
}

TEST_F(CorruptFiles, LegacyAndFutureVersionsAreNotSupported) {
  std::string bytes = Good();
  uint16_t v[2] = {0, 2};
  std::memcpy(&bytes[bytes.size() - 8], v, 4);
  auto legacy = Put("legacy.lance", bytes);
  ExpectError(ErrorKind::kNotSupported, "legacy", [&] { LanceFileReader::Open(*store_, legacy); });
  ExpectError(ErrorKind::kNotSupported, legacy, [&] { LanceFileReader::Open(*store_, legacy); });
  v[0] = 3;
  v[1] = 0;
  std::memcpy(&bytes[bytes.size() - 8], v, 4);
  auto future = Put("future.lance", bytes);
  ExpectError(ErrorKind::kNotSupported, "3.0", [&] { LanceFileReader::Open(*store_, future); });
}

// --- hand-built files with encodings the reference writes ----------------------------

// Assembles a file of one field from raw page buffers and encodings.
class HandBuilt : public LanceFileV20 {
 protected:
  struct PageSpec {
    uint64_t rows;
    std::vector<std::string> buffers;
    enc::ArrayEncoding encoding;
  };

  std::string Build(const std::string& name, const Field& field, const std::vector<std::vector<PageSpec>>& columns,
                    uint64_t rows) {
    std::string out;
    std::vector<lance::file::v2::ColumnMetadata> metas(columns.size());
    for (size_t c = 0; c < columns.size(); ++c) {
      for (const auto& spec : columns[c]) {
        auto* page = metas[c].add_pages();
        for (const auto& b : spec.buffers) {
          page->add_buffer_offsets(out.size());
          page->add_buffer_sizes(b.size());
          out += b;
          out.resize((out.size() + 63) / 64 * 64, 'H');
        }
        page->set_length(spec.rows);
        google::protobuf::Any any;
        any.set_type_url("/lance.encodings.ArrayEncoding");
        any.set_value(spec.encoding.SerializeAsString());
        page->mutable_encoding()->mutable_direct()->set_encoding(any.SerializeAsString());
      }
    }
    lance::file::FileDescriptor fd;
    LanceSchema::FromArrow(Schema({std::make_shared<Field>(field)})).ToProto(fd.mutable_schema()->mutable_fields());
    fd.set_length(rows);
    uint64_t fd_pos = out.size();
    out += fd.SerializeAsString();
    uint64_t fd_len = out.size() - fd_pos;
    uint64_t cm_start = out.size();
    std::vector<std::pair<uint64_t, uint64_t>> pos;
    for (auto& m : metas) {
      auto s = m.SerializeAsString();
      pos.emplace_back(out.size(), s.size());
      out += s;
    }
    auto put64 = [&](uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); };
    uint64_t cmo = out.size();
    for (auto [p, l] : pos) {
      put64(p);
      put64(l);
    }
    uint64_t gbo = out.size();
    put64(fd_pos);
    put64(fd_len);
    put64(cm_start);
    put64(cmo);
    put64(gbo);
    uint32_t ng = 1, nc = uint32_t(columns.size());
    out.append(reinterpret_cast<const char*>(&ng), 4);
    out.append(reinterpret_cast<const char*>(&nc), 4);
    uint16_t v[2] = {0, 3};
    out.append(reinterpret_cast<const char*>(v), 4);
    out += "LANC";
    testing::WriteStringToFile(Path(name), out);
    return Path(name);
  }

  static void Flat(enc::ArrayEncoding* e, uint64_t bits, uint32_t buffer) {
    e->mutable_flat()->set_bits_per_value(bits);
    e->mutable_flat()->mutable_buffer()->set_buffer_index(buffer);
  }
  template <typename T>
  static std::string Raw(std::vector<T> v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
};

TEST_F(HandBuilt, DictionaryOfStrings) {
  // indices u8 (0 = null, k = item k-1), items Binary(["x", "yy"]).
  PageSpec page{5, {Raw<uint8_t>({1, 0, 2, 2, 1}), Raw<uint64_t>({1, 3}), "xyy"}, {}};
  auto* d = page.encoding.mutable_dictionary();
  Flat(d->mutable_indices()->mutable_nullable()->mutable_no_nulls()->mutable_values(), 8, 0);
  Flat(d->mutable_items()->mutable_binary()->mutable_indices()->mutable_nullable()->mutable_no_nulls()->mutable_values(),
       64, 1);
  Flat(d->mutable_items()->mutable_binary()->mutable_bytes(), 8, 2);
  d->mutable_items()->mutable_binary()->set_null_adjustment(4);
  d->set_num_dictionary_items(2);
  auto path = Build("dict.lance", *Field::Make("s", DataType::Utf8()), {{page}}, 5);
  auto reader = LanceFileReader::Open(*store_, path);
  auto t = DataType::Utf8();
  auto expected = MakeArray(t, {Scalar{t, std::string("x")}, Scalar::Null(t), Scalar{t, std::string("yy")},
                                Scalar{t, std::string("yy")}, Scalar{t, std::string("x")}});
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 0, 5), *expected));
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 2, 2), *Slice(*expected, 2, 2)));
}

// A page holds just the buffers its encoding names. One flipped bit that turns
// Nullable.no_nulls into all_nulls, or the tag of Flat.buffer into an unknown field (a
// Flat without a buffer reads buffer 0), leaves a buffer unnamed: that page is refused
// when read, and the other pages still read.
TEST_F(HandBuilt, EveryPageBufferIsNamedByTheEncoding) {
  auto t = DataType::Utf8();
  auto strings = [&](const std::string& bytes_flat) {
    PageSpec page{2, {Raw<uint64_t>({2, 5}), "abcde"}, {}};
    auto* b = page.encoding.mutable_binary();
    Flat(b->mutable_indices()->mutable_nullable()->mutable_no_nulls()->mutable_values(), 64, 0);
    b->mutable_bytes()->mutable_flat()->set_bits_per_value(8);
    if (!bytes_flat.empty()) b->mutable_bytes()->mutable_flat()->ParseFromString(bytes_flat);
    else b->mutable_bytes()->mutable_flat()->mutable_buffer()->set_buffer_index(1);
    b->set_null_adjustment(6);
    return page;
  };
  PageSpec good = strings("");
  // Flat{bits_per_value: 8, buffer: {buffer_index: 1}} with the buffer's tag 0x12 flipped to 0x32.
  PageSpec lost = strings(std::string("\x08\x08\x32\x02\x08\x01", 6));
  PageSpec all_null = good;
  all_null.encoding.Clear();
  all_null.encoding.mutable_nullable()->mutable_all_nulls();
  auto path = Build("unnamed.lance", *Field::Make("s", t), {{good, lost, all_null}}, 6);
  auto reader = LanceFileReader::Open(*store_, path);
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 0, 2),
                          *MakeArray(t, {Scalar{t, std::string("ab")}, Scalar{t, std::string("cde")}})));
  ExpectError(ErrorKind::kCorrupt,
              path + ": column 0 page 1: page buffer 1 of 2 is not used by the page's encoding (binary)",
              [&] { reader->ReadField(0, 2, 2); });
  ExpectError(ErrorKind::kCorrupt,
              path + ": column 0 page 2: page buffer 0 of 2 is not used by the page's encoding (nullable)",
              [&] { reader->ReadField(0, 4, 2); });
  std::vector<uint64_t> rows = {5};
  ExpectError(ErrorKind::kCorrupt, "column 0 page 2: page buffer 0 of 2", [&] { reader->TakeField(0, rows); });
}

TEST_F(HandBuilt, ZstdAndLz4CompressedBinaryBytes) {
  std::string text = "hello world, hello lance";
  std::string zstd_buf(8 + ZSTD_compressBound(text.size()), '\0');
  uint64_t len = text.size();
  std::memcpy(zstd_buf.data(), &len, 8);
  zstd_buf.resize(8 + ZSTD_compress(zstd_buf.data() + 8, zstd_buf.size() - 8, text.data(), text.size(), 3));
  PageSpec page{3, {Raw<uint64_t>({5, 5 + 100, 24}), zstd_buf}, {}};  // row 1 is null: 5 + adjustment (100)
  auto* b = page.encoding.mutable_binary();
  Flat(b->mutable_indices()->mutable_nullable()->mutable_no_nulls()->mutable_values(), 64, 0);
  Flat(b->mutable_bytes(), 8, 1);
  b->mutable_bytes()->mutable_flat()->mutable_compression()->set_scheme("zstd");
  b->set_null_adjustment(100);
  auto path = Build("zstd.lance", *Field::Make("s", DataType::LargeUtf8()), {{page}}, 3);
  auto reader = LanceFileReader::Open(*store_, path);
  auto t = DataType::LargeUtf8();
  auto expected = MakeArray(t, {Scalar{t, std::string("hello")}, Scalar::Null(t), Scalar{t, text.substr(5)}});
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 0, 3), *expected));
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 2, 1), *Slice(*expected, 2, 1)));

  // A corrupt frame is reported with the page.
  page.buffers[1][12] ^= 0x55;
  page.buffers[1].resize(page.buffers[1].size() - 3);
  auto bad = Build("zstd_bad.lance", *Field::Make("s", DataType::LargeUtf8()), {{page}}, 3);
  auto bad_reader = LanceFileReader::Open(*store_, bad);
  ExpectError(ErrorKind::kCorrupt, "column 0 page 0", [&] { bad_reader->ReadField(0, 0, 3); });
}

TEST_F(HandBuilt, UnknownEncodingsNameFileColumnAndPage) {
  PageSpec good{4, {Raw<int32_t>({1, 2, 3, 4})}, {}};
  Flat(good.encoding.mutable_nullable()->mutable_no_nulls()->mutable_values(), 32, 0);
  PageSpec odd{4, {}, {}};
  odd.encoding.mutable_constant()->set_value("\x01");  // the reference's 2.0 reader has no Constant either
  auto path = Build("odd.lance", *Field::Make("a", DataType::Int32()), {{good, odd}}, 8);
  auto reader = LanceFileReader::Open(*store_, path);
  EXPECT_EQ(reader->ReadField(0, 0, 4)->length, 4);  // the first page is fine
  ExpectError(ErrorKind::kNotSupported, path + ": column 0 page 1", [&] { reader->ReadField(0, 2, 4); });
  ExpectError(ErrorKind::kNotSupported, "constant", [&] { reader->ReadField(0, 4, 1); });
}

TEST_F(HandBuilt, ListPagesWithNullsAcrossItemPages) {
  // Two offsets pages: [[1,2], null, []] and [[3], [4,5,6]]; items split into pages of 2, 4.
  PageSpec o1{3, {Raw<uint64_t>({2, 2 + 3, 2})}, {}};
  auto* l1 = o1.encoding.mutable_list();
  Flat(l1->mutable_offsets()->mutable_nullable()->mutable_no_nulls()->mutable_values(), 64, 0);
  l1->set_null_offset_adjustment(3);
  l1->set_num_items(2);
  PageSpec o2{2, {Raw<uint64_t>({1, 4})}, {}};
  auto* l2 = o2.encoding.mutable_list();
  Flat(l2->mutable_offsets()->mutable_nullable()->mutable_no_nulls()->mutable_values(), 64, 0);
  l2->set_null_offset_adjustment(5);
  l2->set_num_items(4);
  PageSpec i1{2, {Raw<int32_t>({1, 2})}, {}};
  Flat(i1.encoding.mutable_nullable()->mutable_no_nulls()->mutable_values(), 32, 0);
  PageSpec i2{4, {Raw<int32_t>({3, 4, 5, 6})}, {}};
  Flat(i2.encoding.mutable_nullable()->mutable_no_nulls()->mutable_values(), 32, 0);
  auto lt = DataType::List(DataType::Int32());
  auto path = Build("list.lance", *Field::Make("l", lt), {{o1, o2}, {i1, i2}}, 5);
  auto reader = LanceFileReader::Open(*store_, path);
  auto i32 = DataType::Int32();
  auto item = [&](int64_t v) { return Scalar{i32, v}; };
  auto expected = MakeArray(lt, {Scalar{lt, std::vector<Scalar>{item(1), item(2)}}, Scalar::Null(lt),
                                 Scalar{lt, std::vector<Scalar>{}}, Scalar{lt, std::vector<Scalar>{item(3)}},
                                 Scalar{lt, std::vector<Scalar>{item(4), item(5), item(6)}}});
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 0, 5), *expected));
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 1, 4), *Slice(*expected, 1, 4)));
  std::vector<uint64_t> rows = {4, 1, 0};
  EXPECT_TRUE(ArraysEqual(*reader->TakeField(0, rows), *Take(*expected, std::vector<int64_t>{4, 1, 0})));
}

// lance 0.13 and earlier wrote a string as a list of u8: List offsets pages in one
// column, the bytes (Flat, 8 bits, no validity) in the next.
TEST_F(HandBuilt, StringsStoredAsListsOfBytes) {
  // Two offsets pages: ["ab", null, ""] and ["c", "de"]; bytes in pages of 2 and 3.
  PageSpec o1{3, {Raw<uint64_t>({2, 2 + 3, 2})}, {}};
  auto* l1 = o1.encoding.mutable_list();
  Flat(l1->mutable_offsets()->mutable_nullable()->mutable_no_nulls()->mutable_values(), 64, 0);
  l1->set_null_offset_adjustment(3);
  l1->set_num_items(2);
  PageSpec o2{2, {Raw<uint64_t>({1, 3})}, {}};
  auto* l2 = o2.encoding.mutable_list();
  Flat(l2->mutable_offsets()->mutable_nullable()->mutable_no_nulls()->mutable_values(), 64, 0);
  l2->set_null_offset_adjustment(4);
  l2->set_num_items(3);
  PageSpec b1{2, {"ab"}, {}};
  Flat(&b1.encoding, 8, 0);
  PageSpec b2{3, {"cde"}, {}};
  Flat(&b2.encoding, 8, 0);
  auto t = DataType::Utf8();
  auto path = Build("bytes_list.lance", *Field::Make("s", t), {{o1, o2}, {b1, b2}}, 5);
  auto reader = LanceFileReader::Open(*store_, path);
  auto expected = MakeArray(t, {Scalar{t, std::string("ab")}, Scalar::Null(t), Scalar{t, std::string("")},
                                Scalar{t, std::string("c")}, Scalar{t, std::string("de")}});
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 0, 5), *expected));
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 2, 3), *Slice(*expected, 2, 3)));
  std::vector<uint64_t> rows = {4, 1, 0};
  EXPECT_TRUE(ArraysEqual(*reader->TakeField(0, rows), *Take(*expected, std::vector<int64_t>{4, 1, 0})));

  // Without the bytes column the file is short of a column.
  auto short_path = Build("bytes_list_short.lance", *Field::Make("s", t), {{o1, o2}}, 5);
  ExpectError(ErrorKind::kCorrupt,
              short_path + ": the schema's 1 fields need 2 columns at version 2.0 but the file has 1",
              [&] { LanceFileReader::Open(*store_, short_path); });
}

// The one data file of upstream's historical dataset written by lance 0.13.0
// (tests/data/upstream/PROVENANCE.md): numbers, strings, bins, more_numbers in columns
// 0, 1-2, 3-4 and 5, as its manifest's column_indices [0, 1, 3, 5] say.
TEST_F(LanceFileV20, ReadsStringsAndBinaryThatLance013WroteAsListsOfBytes) {
  auto reader = LanceFileReader::Open(*store_, std::string(LANCELET_SOURCE_DIR) +
                                                  "/tests/data/upstream/v0.13.0/0.13.0_string_encoding.lance/data/"
                                                  "19080b7e-4202-4f18-906c-5b64d17d43b5.lance");
  ASSERT_EQ(reader->schema().fields().size(), 4u);
  auto s = DataType::Utf8(), b = DataType::Binary(), i64 = DataType::Int64();
  auto text = [](const TypePtr& type, const char* v) { return Scalar{type, std::string(v)}; };
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 0, 3), *MakeArray(i64, {Scalar{i64, int64_t{1}}, Scalar{i64, int64_t{2}},
                                                                         Scalar{i64, int64_t{3}}})));
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(1, 0, 3), *MakeArray(s, {text(s, "foo"), text(s, "bar"), text(s, "baz")})));
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(2, 0, 3), *MakeArray(b, {text(b, "foo"), text(b, "bar"), text(b, "baz")})));
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(3, 0, 3), *MakeArray(i64, {Scalar{i64, int64_t{4}}, Scalar{i64, int64_t{5}},
                                                                         Scalar{i64, int64_t{6}}})));
  std::vector<uint64_t> rows = {2, 0};
  EXPECT_TRUE(ArraysEqual(*reader->TakeField(1, rows), *MakeArray(s, {text(s, "baz"), text(s, "foo")})));
}

// --- the reference implementation ----------------------------------------------------

TEST_F(LanceFileV20, ReadsFilesTheReferenceWroteAtVersion20) {
  if (!testing::OracleAvailable()) GTEST_SKIP() << "node or tests/oracle/node_modules/@lancedb/lancedb is missing";
  auto ab = DataType::Struct({Field::Make("a", DataType::Int32()), Field::Make("b", DataType::Utf8())});
  std::vector<FieldPtr> fields = {
      Field::Make("i32", DataType::Int32()),
      Field::Make("i64", DataType::Int64()),
      Field::Make("f64", DataType::Float64()),
      Field::Make("b", DataType::Bool()),
      Field::Make("s", DataType::Utf8()),
      Field::Make("s_lowcard", DataType::Utf8()),
      Field::Make("s_allnull", DataType::Utf8()),
      Field::Make("ls", DataType::LargeUtf8()),
      Field::Make("bin", DataType::Binary()),
      Field::Make("fsb", DataType::FixedSizeBinary(4)),
      Field::Make("vec", DataType::FixedSizeList(DataType::Float32(), 8)),
      Field::Make("list", DataType::List(DataType::Int32())),
      Field::Make("list_s", DataType::List(DataType::Utf8())),
      Field::Make("st", ab),
      Field::Make("d", DataType::Date32()),
      Field::Make("ts", DataType::Timestamp(TimeUnit::kMicro)),
  };
  const int64_t n = 3000;
  auto cols = RandomColumns(fields, n, 11, 0.1);
  {  // few distinct values, so the reference dictionary-encodes them
    std::vector<Scalar> v;
    auto t = DataType::Utf8();
    for (int64_t i = 0; i < n; ++i) {
      v.push_back(i % 11 == 3 ? Scalar::Null(t) : Scalar{t, std::string("value-") + std::to_string(i % 7)});
    }
    cols[5] = MakeArray(t, v);
    cols[6] = MakeNullArray(t, n);
  }
  auto schema = std::make_shared<Schema>(fields);
  auto batch = RecordBatch::Make(schema, cols);
  auto arrow_path = Path("input.arrow");
  testing::WriteStringToFile(arrow_path, WriteIpcFile(*schema, {batch}));
  auto dataset = Path("ref.lance");
  auto r = testing::RunOracle({"create", dataset, "--data", arrow_path, "--file-version", "2.0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  int files = 0;
  for (const auto& entry : fs::directory_iterator(dataset + "/data")) {
    if (entry.path().extension() != ".lance") continue;
    ++files;
    ParsedFile parsed = Parse(testing::ReadFileToString(entry.path().string()));
    EXPECT_EQ(parsed.major, 0);
    EXPECT_EQ(parsed.minor, 3);
    // Columns 0-6 are the first seven fields; the low-cardinality and all-null strings are
    // dictionary-encoded by the reference, the others plain.
    EXPECT_TRUE(PageEncoding(parsed.columns[0].pages(0)).nullable().has_some_nulls());
    EXPECT_TRUE(PageEncoding(parsed.columns[4].pages(0)).has_binary());
    EXPECT_TRUE(PageEncoding(parsed.columns[5].pages(0)).has_dictionary());
    EXPECT_TRUE(PageEncoding(parsed.columns[6].pages(0)).has_dictionary());
    auto reader = LanceFileReader::Open(*store_, entry.path().string());
    EXPECT_EQ(reader->version(), (FileVersion{2, 0}));
    ASSERT_EQ(reader->num_rows(), uint64_t(n));
    ASSERT_EQ(reader->schema().fields().size(), fields.size());
    std::mt19937_64 rng(3);
    std::vector<uint64_t> rows;
    for (int i = 0; i < 100; ++i) rows.push_back(rng() % n);
    std::vector<int64_t> signed_rows(rows.begin(), rows.end());
    for (size_t i = 0; i < fields.size(); ++i) {
      SCOPED_TRACE(fields[i]->name);
      EXPECT_EQ(reader->schema().fields()[i].name, fields[i]->name);
      auto got = reader->ReadField(i, 0, n);
      ValidateArray(*got, "reference file");
      EXPECT_TRUE(ArraysEqual(*got, *cols[i])) << got->type->ToString() << " vs " << cols[i]->type->ToString();
      EXPECT_TRUE(ArraysEqual(*reader->ReadField(i, 1001, 999), *Slice(*cols[i], 1001, 999)));
      EXPECT_TRUE(ArraysEqual(*reader->TakeField(i, rows), *Take(*cols[i], signed_rows)));
    }
  }
  EXPECT_EQ(files, 1);
}

}  // namespace
}  // namespace lancelet::format
