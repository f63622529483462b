// The writing matrix (issue 15, proofs 2 and 3): lancelet writes every census case
// (tests/oracle/oracle.mjs gen-census) at file versions 2.1 and 2.2, and
//   - the reference reads every row of lancelet's table exactly as it reads its own table
//     of the same rows;
//   - lancelet's data files are at most 10% larger than the reference's.
// Each case prints, per column, the encoding lancelet chose next to the reference's.
#include <google/protobuf/any.pb.h>
#include <google/protobuf/text_format.h>

#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "format/reference_file_util.h"
#include "support/json_rows.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

namespace fs = std::filesystem;
namespace pb = lance::encodings21;

constexpr double kMaxSizeRatio = 1.10;

uint64_t DataBytes(const std::string& table) {
  uint64_t bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(table + "/data"))
    if (e.is_regular_file()) bytes += e.file_size();
  return bytes;
}

// A compression tree in one line: "General(InlineBitpacking)", "Rle(Flat,Flat)", ...
std::string Tree(const google::protobuf::Message& encoding) {
  const auto* reflection = encoding.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> set;
  reflection->ListFields(encoding, &set);
  if (set.empty() || set[0]->type() != google::protobuf::FieldDescriptor::TYPE_MESSAGE) return "?";
  const google::protobuf::Message& node = reflection->GetMessage(encoding, set[0]);
  std::vector<const google::protobuf::FieldDescriptor*> parts;
  node.GetReflection()->ListFields(node, &parts);
  std::vector<std::string> children;
  for (const auto* part : parts)
    if (part->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE && !part->is_repeated() &&
        part->message_type() == pb::CompressiveEncoding::descriptor())
      children.push_back(Tree(node.GetReflection()->GetMessage(node, part)));
  std::string out = set[0]->camelcase_name();
  out[0] = char(std::toupper(out[0]));
  return children.empty() ? out : out + "(" + fmt::format("{}", fmt::join(children, ",")) + ")";
}

// The first page's layout of every column of a data file, briefly.
std::vector<std::string> ColumnLayouts(const std::string& data_file) {
  std::vector<std::string> out;
  for (uint32_t column = 0;; ++column) {
    std::string pages;
    try {
      pages = format::reference_test::PageEncodings(data_file, column);
    } catch (const std::runtime_error&) {
      return out;
    }
    pb::PageLayout layout;
    google::protobuf::TextFormat::ParseFromString(pages.substr(0, pages.find('\n')), &layout);
    std::string brief;
    if (layout.has_mini_block_layout()) {
      const auto& mb = layout.mini_block_layout();
      brief = "MB " + Tree(mb.value_compression());
      if (mb.has_dictionary()) brief += " dict " + Tree(mb.dictionary());
    } else if (layout.has_full_zip_layout()) {
      brief = "FZ " + Tree(layout.full_zip_layout().value_compression());
    } else if (layout.has_constant_layout()) {
      brief = "Constant";
    } else {
      brief = "AllNull";
    }
    out.push_back(brief);
  }
}

using Param = std::tuple<std::string, std::string>;

class WriterCensusTest : public ::testing::TestWithParam<Param> {
 protected:
  TempDir dir_;
};

TEST_P(WriterCensusTest, TheReferenceReadsEveryRowAndTheFileIsNoMoreThanTenPercentLarger) {
  REQUIRE_ORACLE();
  const auto& [census_case, version] = GetParam();
  const std::string arrow = dir_.Join("in.arrow"), ours = dir_.Join("ours.lance"), theirs = dir_.Join("ref.lance");
  ExpectOk(RunOracle({"gen-census", arrow, "--case", census_case}), "oracle gen-census");
  ExpectOk(RunOracle({"create", theirs, "--data", arrow, "--file-version", version}), "oracle create");
  ExpectOk(RunLancelet({"create", ours, "--from", arrow, "--file-version", version}), "lancelet create");

  const std::string expected = ExpectOk(RunOracle({"dump", theirs}), "oracle dump of its own table");
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(DiffJsonLines(expected, ExpectOk(RunOracle({"dump", ours}), "oracle dump of lancelet's table")), "");

  const uint64_t our_bytes = DataBytes(ours), their_bytes = DataBytes(theirs);
  const auto our_layouts = ColumnLayouts(format::reference_test::OnlyDataFile(ours));
  const auto their_layouts = ColumnLayouts(format::reference_test::OnlyDataFile(theirs));
  std::string table = fmt::format("{} at {}: lancelet {} bytes, reference {} bytes ({:.3f}x)\n", census_case, version,
                                  our_bytes, their_bytes, double(our_bytes) / double(their_bytes));
  for (size_t c = 0; c < std::max(our_layouts.size(), their_layouts.size()); ++c)
    table += fmt::format("  column {:2}: lancelet {:<48} reference {}\n", c,
                         c < our_layouts.size() ? our_layouts[c] : "-",
                         c < their_layouts.size() ? their_layouts[c] : "-");
  std::cout << table;
  EXPECT_EQ(our_layouts.size(), their_layouts.size()) << "columns per file";
  EXPECT_LE(double(our_bytes), kMaxSizeRatio * double(their_bytes)) << table;
}

INSTANTIATE_TEST_SUITE_P(Census, WriterCensusTest,
                         ::testing::Combine(::testing::Values("numeric", "edges", "strings", "big_strings", "vectors",
                                                              "lists", "structs", "compression"),
                                            ::testing::Values("2.1", "2.2")),
                         [](const auto& info) {
                           const std::string& v = std::get<1>(info.param);
                           return std::get<0>(info.param) + "_v" + v[0] + "_" + v[2];
                         });

}  // namespace
}  // namespace lancelet::testing
