// FSST-compressed strings written by the reference (skipped without the oracle):
// - 2.1 / 2.2 mini-block Fsst(Variable) for short strings (with nulls, in lists, in
//   structs) and full-zip Fsst(Variable) for strings of 1 KB and more;
// - 2.0 Fsst(Binary), which the reference writes when a field asks for it with
//   "lance-encoding:compression" = "fsst".
// lancelet's reading of each column must print the rows the reference dumps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "format/reference_file_util.h"
#include "format/v21_test_util.h"
#include "format/v21_value_codecs.h"
#include "lancelet/error.h"
#include "support/json_rows.h"

namespace lancelet::format::reference_test {
namespace {

using lancelet::testing::DiffJsonLines;
using lancelet::testing::OracleAvailable;
using lancelet::testing::RunOracle;
using lancelet::testing::TempDir;
using v21_test::RandomData;

std::string Dump(const std::string& table, const std::vector<std::string>& columns) {
  auto r = RunOracle({"dump", table, "--columns", Join(columns)});
  if (r.exit_code != 0) throw std::runtime_error("oracle dump failed: " + r.err);
  return r.out;
}

std::string SymbolTable(uint64_t header, const std::vector<std::string>& symbols) {
  std::string table(8 + 256 * 8 + 256, '\0');
  for (size_t b = 0; b < 8; ++b) table[b] = char((header >> (8 * b)) & 0xFF);
  for (size_t k = 0; k < symbols.size(); ++k) {
    std::memcpy(&table[8 + k * 8], symbols[k].data(), symbols[k].size());
    table[8 + symbols.size() * 8 + k] = char(symbols[k].size());
  }
  return table;
}

TEST(FsstTable, ExpandsCodesAndEscapes) {
  const uint64_t header = (uint64_t(0x46535354) << 32) | (1u << 24) | 3;
  const auto table = v21::FsstTable::Parse(SymbolTable(header, {"ab", "cdefghij", "x"}), "test");
  std::string out;
  table.Expand(std::string("\x00\x02\xff" "Z" "\x01\x00", 6), out, "test");
  EXPECT_EQ(out, "abxZcdefghijab");
  // An unknown code, an escape at the end and a bad table are corrupt data.
  EXPECT_THROW(table.Expand(std::string("\x03", 1), out, "test"), Error);
  EXPECT_THROW(table.Expand(std::string("\x00\xff", 2), out, "test"), Error);
  EXPECT_THROW(v21::FsstTable::Parse(std::string(100, '\0'), "test"), Error);
  EXPECT_THROW(v21::FsstTable::Parse(SymbolTable(3, {"a", "b", "c"}), "test"), Error);
}

// A block expands in one pass over its codes; a bad code or an escape that ends its value
// still throws, naming the fault, whichever value holds it.
TEST(FsstTable, ExpandsABlockAndRefusesItsBadCodes) {
  const uint64_t header = (uint64_t(0x46535354) << 32) | (1u << 24) | 3;
  const auto table = v21::FsstTable::Parse(SymbolTable(header, {"ab", "cdefghij", "x"}), "test");
  auto block_of = [](std::string data, std::vector<uint64_t> offsets) {
    v21::ValueBlock block;
    block.variable = true;
    block.count = offsets.size() - 1;
    block.data = std::move(data);
    block.offsets = std::move(offsets);
    return block;
  };
  // Three values: "abxZ", "" and "cdefghijcdefghij" (each code may write 8 bytes).
  auto block = block_of(std::string("\x00\x02\xff" "Z" "\x01\x01", 6), {0, 4, 4, 6});
  table.ExpandBlock(block, "test");
  EXPECT_EQ(block.data, "abxZcdefghijcdefghij");
  EXPECT_EQ(block.offsets, (std::vector<uint64_t>{0, 4, 4, 20}));

  auto bad_code = block_of(std::string("\x00\x03\x01", 3), {0, 1, 3});
  EXPECT_THAT([&] { table.ExpandBlock(bad_code, "page 7"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("page 7: FSST code 3 but the table has 3 symbols")));
  // The escape ends the first value: its literal byte would be the second value's.
  auto cut_escape = block_of(std::string("\x00\xff\x01", 3), {0, 2, 3});
  EXPECT_THAT([&] { table.ExpandBlock(cut_escape, "page 7"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("page 7: FSST value ends inside an escape")));
  auto outside = block_of(std::string("\x00", 1), {0, 2});
  EXPECT_THAT([&] { table.ExpandBlock(outside, "page 7"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("page 7: FSST value 0 is outside its buffer")));
}

TEST(FsstTable, InactiveTableKeepsBytes) {
  const uint64_t header = (uint64_t(0x46535354) << 32) | 2;  // compression bit not set
  const auto table = v21::FsstTable::Parse(SymbolTable(header, {"ab", "c"}), "test");
  v21::ValueBlock block;
  block.variable = true;
  block.count = 2;
  block.data = std::string("\x00\x01zz", 4);
  block.offsets = {0, 2, 4};
  table.ExpandBlock(block, "test");
  EXPECT_EQ(block.data, std::string("\x00\x01zz", 4));
}

class FsstReference : public ::testing::TestWithParam<std::string> {};

// Mini-block Fsst(Variable) strings. `with_levels` adds columns with nulls and lists,
// whose rep/def levels the reference compresses with OutOfLineBitpacking / Rle.
void CheckShortStrings(const std::string& version, bool with_levels) {
  const int64_t n = 5000;
  RandomData plain(41, 0.0, 0.0);
  plain.set_lengths(5, 24);
  RandomData nulls(42, 0.1, 0.05);
  nulls.set_lengths(5, 24);
  const auto list_type = DataType::List(DataType::Utf8());
  const auto struct_type = DataType::Struct({Field::Make("b", DataType::Utf8()), Field::Make("c", DataType::Float32())});
  std::vector<FieldPtr> fields = {Field::Make("s", DataType::Utf8()), Field::Make("s_struct", struct_type),
                                  Field::Make("bin", DataType::Binary())};
  std::vector<ArrayPtr> columns = {plain.Array(DataType::Utf8(), n), plain.Array(struct_type, n),
                                   plain.Array(DataType::Binary(), n)};
  if (with_levels) {
    fields = {Field::Make("s_nulls", DataType::Utf8()), Field::Make("s_list", list_type),
              Field::Make("s_struct_nulls", struct_type)};
    columns = {nulls.Array(DataType::Utf8(), n), nulls.Array(list_type, n), nulls.Array(struct_type, n)};
  }
  auto schema = std::make_shared<Schema>(fields);
  TempDir dir;
  const std::string table = CreateReferenceTable(dir, "short", schema, columns, version);
  const std::string file = OnlyDataFile(table);
  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, file);
  std::vector<std::string> names;
  for (const auto& f : fields) names.push_back(f->name);
  // The data makes the reference choose FSST for every string column.
  for (const auto& name : names) {
    if (name == "bin") continue;
    const std::string enc = PageEncodings(file, FirstColumnOf(*reader, name, false));
    EXPECT_NE(enc.find("fsst"), std::string::npos) << name << ": " << enc;
    EXPECT_NE(enc.find("mini_block_layout"), std::string::npos) << name << ": " << enc;
  }
  EXPECT_EQ(DiffJsonLines(Dump(table, names), ReadAsJsonLines(*reader, names)), "");
  for (size_t c = 0; c < names.size(); ++c) {
    SCOPED_TRACE(names[c]);
    EXPECT_TRUE(ArraysEqual(*reader->ReadField(FieldIndex(*reader, names[c]), 0, uint64_t(n)), *columns[c]));
    std::vector<uint64_t> rows = {4999, 3, 2048, 1024, 1023, 3};
    std::vector<int64_t> idx(rows.begin(), rows.end());
    EXPECT_TRUE(ArraysEqual(*reader->TakeField(FieldIndex(*reader, names[c]), rows), *Take(*columns[c], idx)));
  }
}

TEST_P(FsstReference, MiniBlockStrings) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  CheckShortStrings(GetParam(), false);
}

TEST_P(FsstReference, MiniBlockStringsWithNullsAndLists) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  try {
    CheckShortStrings(GetParam(), true);
  } catch (const Error& e) {
    // Compressed rep/def levels are another change's work; until it lands, only that may fail.
    const std::string m = e.what();
    if (e.kind() != ErrorKind::kNotSupported ||
        (m.find("repetition compression") == std::string::npos && m.find("definition compression") == std::string::npos))
      throw;
    GTEST_SKIP() << e.what();
  }
}

TEST_P(FsstReference, FullZipLongStrings) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  const std::string version = GetParam();
  const int64_t n = 600;
  RandomData plain(44, 0.0, 0.0);
  plain.set_lengths(1000, 4000);
  RandomData nulls(45, 0.1, 0.0);
  nulls.set_lengths(1000, 4000);
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("long", DataType::Utf8()), Field::Make("long_nulls", DataType::Utf8())});
  std::vector<ArrayPtr> columns = {plain.Array(DataType::Utf8(), n), nulls.Array(DataType::Utf8(), n)};
  TempDir dir;
  const std::string table = CreateReferenceTable(dir, "long", schema, columns, version);
  const std::string file = OnlyDataFile(table);
  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, file);
  for (const std::string name : {"long", "long_nulls"}) {
    const std::string enc = PageEncodings(file, FirstColumnOf(*reader, name, false));
    EXPECT_NE(enc.find("full_zip_layout"), std::string::npos) << enc;
    EXPECT_NE(enc.find("fsst"), std::string::npos) << enc;
  }
  const std::vector<std::string> names = {"long", "long_nulls"};
  EXPECT_EQ(DiffJsonLines(Dump(table, names), ReadAsJsonLines(*reader, names)), "");
  std::vector<uint64_t> rows = {599, 0, 300, 17};
  std::vector<int64_t> idx(rows.begin(), rows.end());
  EXPECT_TRUE(ArraysEqual(*reader->TakeField(1, rows), *Take(*columns[1], idx)));
}

INSTANTIATE_TEST_SUITE_P(Versions, FsstReference, ::testing::Values("2.1", "2.2"));

// 2.0: FSST only when the field asks for it.
TEST(FsstReference20, OptInFsstBinary) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  const int64_t n = 5000;
  RandomData gen(46, 0.1, 0.05);
  gen.set_lengths(5, 40);
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("s", DataType::Utf8(), true, {{"lance-encoding:compression", "fsst"}})});
  std::vector<ArrayPtr> columns = {gen.Array(DataType::Utf8(), n)};
  TempDir dir;
  const std::string table = CreateReferenceTable(dir, "fsst20", schema, columns, "2.0");
  const std::string file = OnlyDataFile(table);
  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, file);
  EXPECT_NE(PageEncodings(file, 0).find("fsst"), std::string::npos) << PageEncodings(file, 0);
  EXPECT_EQ(DiffJsonLines(Dump(table, {"s"}), ReadAsJsonLines(*reader, {"s"})), "");
  std::vector<uint64_t> rows = {4999, 1, 2500};
  std::vector<int64_t> idx(rows.begin(), rows.end());
  EXPECT_TRUE(ArraysEqual(*reader->TakeField(0, rows), *Take(*columns[0], idx)));
}

}  // namespace
}  // namespace lancelet::format::reference_test
