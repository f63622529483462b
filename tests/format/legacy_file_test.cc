// Legacy (0.1/0.2) data files built byte by byte as docs/legacy_file_format.md describes
// them: reads across batches, takes, the NULL rule of strings, a file read alone with its
// own schema, and a clear refusal of every kind of damage. The reference's own legacy
// datasets are read in tests/interop (matrix_test, storage_version_test,
// upstream_datasets_test).
#include <gtest/gtest.h>

#include "file.pb.h"
#include "format/lance_file.h"
#include "format/little_endian.h"
#include "lancelet/error.h"
#include "support/test_env.h"
#include "table.pb.h"

namespace lancelet::format {
namespace {

void PutI64(std::string& out, int64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
void PutI32(std::string& out, int32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

// Field ids 3 (int32 "n"), 4 (utf8 "s"), 5 (list<int32> "l"; its item is id 6), in two
// batches of 3 and 2 rows: n = 1..5, s = "a", "", "ccc" | "", "ee", l = [1], [], [2, 3] |
// [4], [5, 6]. The page table covers ids 3 to 6.
struct LegacyFile {
  std::string bytes;
  uint64_t table_at = 0, metadata_at = 0;
  std::vector<std::pair<int64_t, int64_t>> pages;  // [(id - 3) * 2 + batch]

  LegacyFile() {
    pages.resize(8);
    const std::vector<std::vector<int32_t>> n = {{1, 2, 3}, {4, 5}};
    const std::vector<std::vector<std::string>> s = {{"a", "", "ccc"}, {"", "ee"}};
    const std::vector<std::vector<std::vector<int32_t>>> l = {{{1}, {}, {2, 3}}, {{4}, {5, 6}}};
    for (int b = 0; b < 2; ++b) {
      pages[0 * 2 + b] = {int64_t(bytes.size()), int64_t(n[b].size())};
      for (int32_t v : n[b]) PutI32(bytes, v);
      std::vector<int64_t> positions = {int64_t(bytes.size())};
      for (const auto& v : s[b]) bytes += v, positions.push_back(int64_t(bytes.size()));
      pages[1 * 2 + b] = {int64_t(bytes.size()), int64_t(s[b].size())};
      for (int64_t p : positions) PutI64(bytes, p);
      pages[2 * 2 + b] = {int64_t(bytes.size()), int64_t(l[b].size() + 1)};
      int32_t offset = 0;
      PutI32(bytes, 0);
      for (const auto& list : l[b]) PutI32(bytes, offset += int32_t(list.size()));
      pages[3 * 2 + b] = {int64_t(bytes.size()), offset};
      for (const auto& list : l[b])
        for (int32_t v : list) PutI32(bytes, v);
    }
    Finish();
  }

  // With `own_schema`, the file keeps a schema of its own (Schema() below) before its
  // metadata, as a file written outside a dataset does.
  void Finish(uint16_t minor = 2, const LanceSchema* own_schema = nullptr) {
    table_at = bytes.size();
    for (const auto& [position, length] : pages) PutI64(bytes, position), PutI64(bytes, length);
    lance::file::Metadata metadata;
    metadata.set_page_table_position(table_at);
    if (own_schema) {
      lance::table::Manifest manifest;
      own_schema->ToProto(manifest.mutable_fields());
      manifest.set_version(1);
      metadata.set_manifest_position(bytes.size());
      const std::string encoded = manifest.SerializeAsString();
      PutI32(bytes, int32_t(encoded.size()));
      bytes += encoded;
    }
    for (int32_t offset : {0, 3, 5}) metadata.add_batch_offsets(offset);
    metadata_at = bytes.size();
    const std::string encoded = metadata.SerializeAsString();
    PutI32(bytes, int32_t(encoded.size()));
    bytes += encoded;
    PutI64(bytes, int64_t(metadata_at));
    const uint16_t version[2] = {0, minor};
    bytes.append(reinterpret_cast<const char*>(version), 4);
    bytes += "LANC";
  }
};

LanceField Node(int32_t id, const std::string& name, TypePtr type) {
  LanceField f;
  f.id = id;
  f.name = name;
  f.type = std::move(type);
  return f;
}

LanceSchema Schema(bool strings_nullable = true) {
  LanceField s = Node(4, "s", DataType::Utf8());
  s.nullable = strings_nullable;
  LanceField l = Node(5, "l", DataType::List(DataType::Int32()));
  l.children = {Node(6, "item", DataType::Int32())};
  return LanceSchema({Node(3, "n", DataType::Int32()), s, l}, {});
}

template <typename F>
void ExpectCorrupt(const std::string& needle, F&& f) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

class LegacyFileTest : public ::testing::Test {
 protected:
  std::string Put(const std::string& name, const std::string& bytes) {
    const std::string path = dir_.Join(name);
    testing::WriteStringToFile(path, bytes);
    return path;
  }
  std::unique_ptr<LanceFileReader> Open(const std::string& path, bool strings_nullable = true) {
    return LanceFileReader::OpenLegacy(*store_, path, Schema(strings_nullable), 3, 6);
  }
  std::shared_ptr<io::ObjectStore> store_ = io::MakeLocalStore();
  testing::TempDir dir_;
};

std::vector<std::string> Strings(const ArrayData& a) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < a.length; ++i) out.push_back(a.IsNull(i) ? "NULL" : std::string(a.GetView(i)));
  return out;
}

std::vector<std::vector<int32_t>> Lists(const ArrayData& a) {
  std::vector<std::vector<int32_t>> out;
  for (int64_t i = 0; i < a.length; ++i) {
    out.emplace_back();
    for (int64_t k = a.offset(i); k < a.offset(i + 1); ++k) out.back().push_back(a.child(0)->values<int32_t>()[k]);
  }
  return out;
}

TEST_F(LegacyFileTest, ReadsAcrossBatchesAndTakesInAnyOrder) {
  auto reader = Open(Put("t.lance", LegacyFile().bytes));
  EXPECT_EQ(reader->version().ToString(), "0.2");
  EXPECT_EQ(reader->num_rows(), 5u);
  auto n = reader->ReadField(0, 1, 4);
  ASSERT_EQ(n->length, 4);
  EXPECT_EQ(std::vector<int32_t>(n->values<int32_t>(), n->values<int32_t>() + 4), (std::vector<int32_t>{2, 3, 4, 5}));
  EXPECT_EQ(n->null_count, 0);
  // A nullable string reads its empty values as NULL: the file cannot tell "" from NULL.
  EXPECT_EQ(Strings(*reader->ReadField(1, 0, 5)), (std::vector<std::string>{"a", "NULL", "ccc", "NULL", "ee"}));
  EXPECT_EQ(Lists(*reader->ReadField(2, 1, 4)), (std::vector<std::vector<int32_t>>{{}, {2, 3}, {4}, {5, 6}}));
  const std::vector<uint64_t> rows = {4, 0, 3, 4, 2};
  EXPECT_EQ(Strings(*reader->TakeField(1, rows)), (std::vector<std::string>{"ee", "a", "NULL", "ee", "ccc"}));
  EXPECT_EQ(Lists(*reader->TakeField(2, rows)), (std::vector<std::vector<int32_t>>{{5, 6}, {1}, {4}, {5, 6}, {2, 3}}));
  EXPECT_EQ(reader->ReadField(0, 5, 0)->length, 0);

  // A string column declared non-nullable keeps its empty values.
  auto strict = Open(Put("strict.lance", LegacyFile().bytes), false);
  EXPECT_EQ(Strings(*strict->ReadField(1, 0, 5)), (std::vector<std::string>{"a", "", "ccc", "", "ee"}));
}

TEST_F(LegacyFileTest, DamageIsRefusedWithWhereItIs) {
  {  // a 2.0 file the manifest calls legacy
    LegacyFile f;
    f.bytes[f.bytes.size() - 6] = 3;
    auto path = Put("v03.lance", f.bytes);
    ExpectCorrupt("its footer says version 0.3", [&] { Open(path); });
  }
  {  // metadata position past the footer
    LegacyFile f;
    uint64_t far = f.bytes.size();
    std::memcpy(&f.bytes[f.bytes.size() - 16], &far, 8);
    auto path = Put("metadata.lance", f.bytes);
    ExpectCorrupt(path + ": the footer puts the metadata at byte", [&] { Open(path); });
  }
  {  // a page table for more fields than fit before the metadata
    auto path = Put("table.lance", LegacyFile().bytes);
    ExpectCorrupt("a page table of 11 fields x 2 batches", [&] {
      LanceFileReader::OpenLegacy(*store_, path, Schema(), 3, 13);
    });
  }
  {  // a page shorter than its batch
    LegacyFile f;
    f.bytes.resize(f.table_at);
    f.pages[0 * 2 + 1].second = 1;
    f.Finish();
    auto path = Put("short.lance", f.bytes);
    ExpectCorrupt("field 'n' (id 3) has 1 values in batch 1, but 2 are needed", [&] { Open(path)->ReadField(0, 0, 5); });
  }
  {  // string positions out of order
    LegacyFile f;
    const uint64_t positions = uint64_t(f.pages[1 * 2 + 0].first);
    int64_t back = 0;
    std::memcpy(&f.bytes[positions + 16], &back, 8);
    auto path = Put("positions.lance", f.bytes);
    ExpectCorrupt("field 's' (id 4) batch 0: offset 2 is 0", [&] { Open(path)->ReadField(1, 0, 3); });
  }
  {  // a page past the end of the file
    LegacyFile f;
    f.bytes.resize(f.table_at);
    f.pages[0 * 2 + 0].first = 1 << 20;
    f.Finish();
    auto path = Put("far.lance", f.bytes);
    ExpectCorrupt("beyond the end", [&] { Open(path)->ReadField(0, 0, 3); });
  }
}

// Outside a dataset (an index's pages, as lance before 0.21 wrote them) a legacy file
// is read with the schema it keeps, its ids counted from the lowest.
TEST_F(LegacyFileTest, AFileOpenedAloneIsReadWithItsOwnSchema) {
  LegacyFile f;
  f.bytes.resize(f.table_at);
  const LanceSchema schema = Schema();
  f.Finish(2, &schema);
  const std::string path = Put("alone.lance", f.bytes);
  auto reader = LanceFileReader::OpenAlone(*store_, path);
  EXPECT_EQ(reader->version().ToString(), "0.2");
  EXPECT_EQ(reader->num_rows(), 5u);
  ASSERT_EQ(reader->schema().fields().size(), 3u);
  EXPECT_EQ(reader->schema().fields()[1].name, "s");
  EXPECT_EQ(reader->schema().fields()[1].id, 4);
  EXPECT_EQ(reader->schema().fields()[2].type->ToString(), DataType::List(DataType::Int32())->ToString());
  auto n = reader->ReadField(0, 0, 5);
  EXPECT_EQ(std::vector<int32_t>(n->values<int32_t>(), n->values<int32_t>() + 5), (std::vector<int32_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(Strings(*reader->ReadField(1, 0, 5)), (std::vector<std::string>{"a", "NULL", "ccc", "NULL", "ee"}));
  EXPECT_EQ(Lists(*reader->ReadField(2, 0, 5)), (std::vector<std::vector<int32_t>>{{1}, {}, {2, 3}, {4}, {5, 6}}));

  // Open, which a dataset's files that record a 2.x version go through, refuses it.
  try {
    LanceFileReader::Open(*store_, path);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotSupported);
    EXPECT_EQ(std::string(e.what()), path + ": a legacy Lance data file (format 0.2), which lancelet reads only "
                                            "through its dataset (the dataset's schema describes its columns)");
  }
}

TEST_F(LegacyFileTest, AFileOpenedAloneWithoutAUsableSchemaIsRefused) {
  {  // written for a dataset: no schema of its own
    auto path = Put("no_schema.lance", LegacyFile().bytes);
    ExpectCorrupt(path + ": a legacy (0.1/0.2) Lance file with no schema of its own (manifest position 0)",
                  [&] { LanceFileReader::OpenAlone(*store_, path); });
  }
  const LanceSchema schema = Schema();
  {  // a schema whose length runs into the metadata
    LegacyFile f;
    f.bytes.resize(f.table_at);
    f.Finish(2, &schema);
    const uint64_t at = f.table_at + 8 * 16;  // the schema follows the page table
    const int32_t huge = 1 << 20;
    std::memcpy(&f.bytes[at], &huge, 4);
    auto path = Put("long_schema.lance", f.bytes);
    ExpectCorrupt(fmt::format("{}: the schema at byte {} claims 1048576 bytes, past the metadata at", path, at),
                  [&] { LanceFileReader::OpenAlone(*store_, path); });
  }
  {  // a dictionary field, whose values the reader would have to find in the file
    LanceSchema dict = schema;
    dict.mutable_fields()[1].dictionary_index = DataType::Int32();
    LegacyFile f;
    f.bytes.resize(f.table_at);
    f.Finish(2, &dict);
    auto path = Put("dict.lance", f.bytes);
    try {
      LanceFileReader::OpenAlone(*store_, path);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kNotSupported);
      EXPECT_EQ(std::string(e.what()), path + ": field 's' is dictionary-encoded, which lancelet does not read from a "
                                              "legacy file outside a dataset");
    }
  }
}

}  // namespace
}  // namespace lancelet::format
