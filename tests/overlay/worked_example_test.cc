// The worked example of the data overlay spec (steps 1, 2, 4 and 5), through the C++ API
// and through the CLI, with exact values.
#include <gtest/gtest.h>

#include "format/row_id_sequence.h"
#include "lancelet/dataset.h"
#include "lancelet/overlay_writer.h"
#include "lancelet/scalar.h"
#include "lancelet/text.h"
#include "support/test_env.h"
#include "table/dataset_state.h"

namespace lancelet {
namespace {

using testing::RunLancelet;
using testing::TempDir;

const char* kUsersCsv =
    "id,name,age,embedding\n"
    "1,Alice,30,\"[0.1, 0.2, 0.3, 0.4]\"\n"
    "2,Bob,25,\"[0.5, 0.6, 0.7, 0.8]\"\n"
    "3,Carol,40,\"[0.9, 1.0, 1.1, 1.2]\"\n"
    "4,Dave,22,\"[1.3, 1.4, 1.5, 1.6]\"\n";
const char* kSchema = "id:int32,name:utf8,age:int32,embedding:fixed_size_list<float32,4>";

std::string Jsonl(const DatasetPtr& ds, const std::vector<std::string>& columns) {
  std::ostringstream out;
  auto reader = ds->NewScan().Columns(columns).Open();
  auto writer = MakeJsonLinesWriter(out, reader->schema());
  WriteAll(*reader, *writer);
  return out.str();
}

DatasetPtr CreateUsers(const TempDir& dir) {
  testing::WriteStringToFile(dir.Join("users.csv"), kUsersCsv);
  TextReadOptions options;
  options.schema = Schema::Parse(kSchema);
  auto input = OpenCsv(dir.Join("users.csv"), options);
  WriteOptions w;
  w.enable_stable_row_ids = true;
  return Dataset::Write(dir.Join("users.lance"), *input, w);
}

TEST(WorkedExample, ThroughTheApi) {
  TempDir dir;
  auto ds = CreateUsers(dir);
  // Step 1: UPDATE users SET age = age + 1 WHERE id IN (2, 4).
  ds = ds->Update({{"age", "age + 1"}}, "id IN (2, 4)");
  ASSERT_EQ(ds->version(), 2u);
  const auto& frag = table::StateOf(ds).manifest.fragments(0);
  ASSERT_EQ(frag.overlays_size(), 1);
  const auto& dense = frag.overlays(0);
  EXPECT_EQ(dense.committed_version(), 2u);
  ASSERT_TRUE(dense.has_shared_offset_bitmap());
  EXPECT_EQ(dense.shared_offset_bitmap(), format::RoaringBitmap::FromValues(std::vector<uint32_t>{1, 3}).SerializePortable());
  EXPECT_EQ(std::vector<int32_t>(dense.data_file().fields().begin(), dense.data_file().fields().end()),
            std::vector<int32_t>{2});  // age (lancelet numbers fields from 0)
  auto versions = format::VersionSequence::Decode(frag.inline_last_updated_at_versions(), "test").ToVector();
  EXPECT_EQ(versions, (std::vector<uint64_t>{1, 2, 1, 2}));
  // Step 2: SELECT id, age FROM users.
  EXPECT_EQ(Jsonl(ds, {"id", "age"}),
            "{\"id\":1,\"age\":30}\n{\"id\":2,\"age\":26}\n{\"id\":3,\"age\":40}\n{\"id\":4,\"age\":23}\n");
  // Step 4: one sparse overlay: name over {2, 3}, embedding over {1}.
  auto emb_type = ds->schema()->field(3)->type;
  auto f32 = [](double v) { return Scalar{DataType::Float32(), v}; };
  auto embedding = MakeArray(emb_type, {Scalar{emb_type, std::vector<Scalar>{f32(9), f32(8), f32(7), f32(6)}}});
  auto names = MakeArray(DataType::Utf8(), {Scalar{DataType::Utf8(), std::string("Caroline")},
                                            Scalar{DataType::Utf8(), std::string("David")}});
  ds = OverlayWriter(ds).Set(0, "name", {2, 3}, names).Set(0, "embedding", {1}, embedding).Commit();
  const auto& sparse = table::StateOf(ds).manifest.fragments(0).overlays(1);
  EXPECT_EQ(sparse.committed_version(), 3u);
  ASSERT_TRUE(sparse.has_field_coverage());
  EXPECT_EQ(sparse.field_coverage().offset_bitmaps(0),
            format::RoaringBitmap::FromValues(std::vector<uint32_t>{2, 3}).SerializePortable());
  EXPECT_EQ(sparse.field_coverage().offset_bitmaps(1),
            format::RoaringBitmap::FromValues(std::vector<uint32_t>{1}).SerializePortable());
  // Step 5: SELECT name, age, embedding FROM users.
  EXPECT_EQ(Jsonl(ds, {"name", "age", "embedding"}),
            "{\"name\":\"Alice\",\"age\":30,\"embedding\":[0.1,0.2,0.3,0.4]}\n"
            "{\"name\":\"Bob\",\"age\":26,\"embedding\":[9,8,7,6]}\n"
            "{\"name\":\"Caroline\",\"age\":40,\"embedding\":[0.9,1,1.1,1.2]}\n"
            "{\"name\":\"David\",\"age\":23,\"embedding\":[1.3,1.4,1.5,1.6]}\n");
  EXPECT_EQ(format::VersionSequence::Decode(table::StateOf(ds).manifest.fragments(0).inline_last_updated_at_versions(), "t")
                .ToVector(),
            (std::vector<uint64_t>{1, 3, 3, 3}));
}

TEST(WorkedExample, ThroughTheCli) {
  TempDir dir;
  testing::WriteStringToFile(dir.Join("users.csv"), kUsersCsv);
  std::string ds = dir.Join("users.lance");
  ASSERT_EQ(RunLancelet({"create", ds, "--from", dir.Join("users.csv"), "--schema", kSchema, "--stable-row-ids"}).exit_code, 0);
  auto r = RunLancelet({"update", ds, "--set", "age = age + 1", "--where", "id IN (2, 4)"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "updated 2 rows of " + ds + "; now version 2\n");
  EXPECT_EQ(RunLancelet({"scan", ds, "--columns", "id,age", "--format", "csv"}).out, "id,age\n1,30\n2,26\n3,40\n4,23\n");
  auto inspect = RunLancelet({"inspect", ds}).out;
  EXPECT_NE(inspect.find("overlay 0: committed_version 2, dense, data file overlay-"), std::string::npos) << inspect;
  EXPECT_NE(inspect.find("      field age [id 2]: 2 cells\n"), std::string::npos) << inspect;
  EXPECT_NE(inspect.find("reader feature flags: 66 (stable_row_ids, data_overlays)"), std::string::npos) << inspect;
}

}  // namespace
}  // namespace lancelet
