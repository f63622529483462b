// Helpers for tests that read data files the reference implementation wrote: create a
// table through the oracle, find its data file, print the page encodings of a column (to
// check that the data made the reference choose the encoding under test), and print what
// lancelet reads in the oracle's canonical JSON-lines form.
#pragma once

#include <google/protobuf/any.pb.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "encodings_v2_0.pb.h"
#include "encodings_v2_1.pb.h"
#include "file2.pb.h"
#include "format/field_codec.h"
#include "format/lance_file.h"
#include "lancelet/ipc.h"
#include "lancelet/record_batch.h"
#include "lancelet/text.h"
#include "support/test_env.h"

namespace lancelet::format::reference_test {

namespace fs = std::filesystem;

inline std::string OnlyDataFile(const std::string& table) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(table + "/data"))
    if (e.path().extension() == ".lance") files.push_back(e.path().string());
  if (files.size() != 1) throw std::runtime_error("expected one data file in " + table);
  return files[0];
}

// Writes the rows as an Arrow file and has the reference create table `name` from it.
inline std::string CreateReferenceTable(const lancelet::testing::TempDir& dir, const std::string& name,
                                        const SchemaPtr& schema, const std::vector<ArrayPtr>& columns,
                                        const std::string& version) {
  const std::string arrow = dir.Join(name + ".arrow");
  lancelet::testing::WriteStringToFile(arrow, WriteIpcFile(*schema, {RecordBatch::Make(schema, columns)}));
  const std::string table = dir.Join(name + ".lance");
  auto r = lancelet::testing::RunOracle({"create", table, "--data", arrow, "--file-version", version});
  if (r.exit_code != 0) throw std::runtime_error("oracle create failed: " + r.err);
  return table;
}

inline uint64_t LoadLE(const std::string& s, size_t pos, size_t width) {
  uint64_t v = 0;
  for (size_t k = 0; k < width; ++k) v |= uint64_t(uint8_t(s.at(pos + k))) << (8 * k);
  return v;
}

// Every page encoding of file column `column`, as protobuf text, one page per line.
inline std::string PageEncodings(const std::string& data_file, uint32_t column) {
  const std::string bytes = lancelet::testing::ReadFileToString(data_file);
  const size_t footer = bytes.size() - 40;
  const uint64_t offsets_start = LoadLE(bytes, footer + 8, 8);
  const uint32_t num_columns = uint32_t(LoadLE(bytes, footer + 28, 4));
  if (column >= num_columns) throw std::runtime_error("no column " + std::to_string(column));
  const uint64_t pos = LoadLE(bytes, offsets_start + column * 16, 8);
  const uint64_t size = LoadLE(bytes, offsets_start + column * 16 + 8, 8);
  lance::file::v2::ColumnMetadata meta;
  if (!meta.ParseFromString(bytes.substr(pos, size))) throw std::runtime_error("bad column metadata");
  std::string out;
  for (const auto& page : meta.pages()) {
    google::protobuf::Any any;
    any.ParseFromString(page.encoding().direct().encoding());
    if (any.type_url().find("encodings21") != std::string::npos) {
      lance::encodings21::PageLayout layout;
      layout.ParseFromString(any.value());
      out += layout.ShortDebugString();
    } else {
      lance::encodings::ArrayEncoding encoding;
      encoding.ParseFromString(any.value());
      out += encoding.ShortDebugString();
    }
    out += "\n";
  }
  return out;
}

inline size_t FieldIndex(const LanceFileReader& reader, const std::string& name) {
  const auto& fields = reader.schema().fields();
  for (size_t k = 0; k < fields.size(); ++k)
    if (fields[k].name == name) return k;
  throw std::runtime_error("no field " + name);
}

// The file column of top-level field `name` (its first column).
inline uint32_t FirstColumnOf(const LanceFileReader& reader, const std::string& name, bool v20) {
  uint32_t column = 0;
  for (const auto& field : reader.schema().fields()) {
    if (field.name == name) return column;
    if (v20) {
      field.ForEach([&](const LanceField&) { ++column; });
    } else {
      column += NumColumns(reader.version(), field);
    }
  }
  throw std::runtime_error("no field " + name);
}

// Rows [0, n) of the named fields as lancelet reads them, in canonical JSON lines.
inline std::string ReadAsJsonLines(const LanceFileReader& reader, const std::vector<std::string>& names) {
  std::vector<FieldPtr> fields;
  std::vector<ArrayPtr> columns;
  for (const auto& name : names) {
    const size_t index = FieldIndex(reader, name);
    ArrayPtr array = reader.ReadField(index, 0, reader.num_rows(index));
    fields.push_back(Field::Make(name, array->type));
    columns.push_back(array);
  }
  auto schema = std::make_shared<Schema>(fields);
  std::ostringstream out;
  auto writer = MakeJsonLinesWriter(out, schema);
  writer->Write(*RecordBatch::Make(schema, columns));
  writer->Finish();
  return out.str();
}

inline std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

}  // namespace lancelet::format::reference_test
