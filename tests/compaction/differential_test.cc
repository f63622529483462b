// A differential test of the overlay lifecycle: random sequences of UPDATE, MERGE,
// DELETE, append, the three compactions (merge overlays, fold, rewrite), index builds
// and cleanup, at Lance 2.0, 2.1 and 2.2. After every step the dataset must hold exactly
// the rows of an independent model, and index answers must equal the flat scan's; at a
// few points, and at the end, the reference must read the same rows.
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/sql.h"
#include "lancelet/text.h"
#include "support/json_rows.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/feature_flags.h"

namespace lancelet::testing {
namespace {

struct Row {
  std::optional<int64_t> v;
  std::optional<std::string> s;
  bool operator==(const Row&) const = default;
};
using Model = std::map<int64_t, Row>;

std::string JsonLines(RecordBatchReader& reader) {
  std::ostringstream out;
  auto writer = MakeJsonLinesWriter(out, reader.schema());
  WriteAll(reader, *writer);
  return out.str();
}

Model ReadModel(const std::string& jsonl) {
  Model out;
  for (const auto& line : SplitLines(jsonl)) {
    auto j = nlohmann::json::parse(line);
    Row r;
    if (!j["v"].is_null()) r.v = j["v"].get<int64_t>();
    if (!j["s"].is_null()) r.s = j["s"].get<std::string>();
    out[j["id"].get<int64_t>()] = r;
  }
  return out;
}

std::string Describe(const Model& m) {
  std::string out;
  for (const auto& [id, r] : m)
    out += fmt::format("{}:{}:{} ", id, r.v ? std::to_string(*r.v) : "null", r.s ? *r.s : "null");
  return out;
}

class CompactionDifferentialTest : public ::testing::TestWithParam<std::string> {
 protected:
  RecordBatchPtr Batch(int64_t first, int64_t n, Model& model) {
    FixedWidthBuilder<int64_t> id(DataType::Int64()), v(DataType::Int64());
    BinaryBuilder s(DataType::Utf8());
    for (int64_t i = first; i < first + n; ++i) {
      Row r;
      if (rng_() % 10) r.v = int64_t(rng_() % 100);
      if (rng_() % 10) r.s = fmt::format("s{}", rng_() % 5);
      id.Append(i);
      r.v ? v.Append(*r.v) : v.AppendNull();
      r.s ? s.Append(*r.s) : s.AppendNull();
      model[i] = r;
    }
    auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
        Field::Make("id", DataType::Int64()), Field::Make("v", DataType::Int64()), Field::Make("s", DataType::Utf8())});
    return std::make_shared<RecordBatch>(schema, std::vector<ArrayPtr>{id.Finish(), v.Finish(), s.Finish()}, n);
  }

  std::string Scan(const Dataset& ds, const std::string& where = "", bool use_index = true) {
    auto builder = ds.NewScan().Columns({"id", "v", "s"}).UseIndex(use_index);
    if (!where.empty()) builder.Filter(where);
    auto reader = builder.Open();
    return JsonLines(*reader);
  }

  std::mt19937_64 rng_{std::hash<std::string>()(GetParam()) ^ 20261201};
  TempDir dir_;
};

TEST_P(CompactionDifferentialTest, EveryStepHoldsTheModelsRows) {
  const std::string db = dir_.Join("db"), uri = db + "/t.lance";
  std::filesystem::create_directories(db);
  Model model;
  WriteOptions options;
  options.file_version = GetParam();
  options.max_rows_per_file = 60;
  options.enable_stable_row_ids = GetParam() == "2.1";
  DatasetPtr ds = Dataset::Write(uri, {Batch(0, 240, model)}, options);
  int64_t next_id = 240;
  SqlSession sql(db);
  std::map<std::string, int> counts;
  auto check_reference = [&](const std::string& context) {
    if (!OracleAvailable()) return;
    bool overlays = (table::StateOf(Dataset::Open(uri)).manifest.reader_feature_flags() & table::kFlagDataOverlays) != 0;
    std::string theirs = Oracle({"dump", uri}, overlays ? "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1" : "");
    EXPECT_EQ(Describe(ReadModel(theirs)), Describe(model)) << context;
  };

  const int kSteps = 36;
  for (int step = 0; step < kSteps; ++step) {
    const int64_t m = 2 + int64_t(rng_() % 6), r = int64_t(rng_() % uint64_t(m));
    const std::string sel = fmt::format("id % {} = {}", m, r);
    auto selected = [&](int64_t id) { return id % m == r; };
    std::string op;
    switch (rng_() % 10) {
      case 0: case 1: {
        op = "update v";
        int64_t k = int64_t(rng_() % 9) - 4;
        ds = ds->Update({{"v", fmt::format("v + {}", k)}}, sel);
        for (auto& [id, row] : model)
          if (selected(id) && row.v) *row.v += k;
        break;
      }
      case 2: {
        op = "update s/v";
        std::string text = fmt::format("u{}", step);
        bool null_v = rng_() % 2;
        ds = ds->Update({{"s", "'" + text + "'"}, {"v", null_v ? "NULL" : "v"}}, sel + " AND v IS NOT NULL");
        for (auto& [id, row] : model)
          if (selected(id) && row.v) {
            row.s = text;
            if (null_v) row.v.reset();
          }
        break;
      }
      case 3: {
        op = "merge";
        std::string csv = dir_.Join(fmt::format("m{}.csv", step)), text = "id,v\n";
        std::map<int64_t, int64_t> staged;
        for (int j = 0; j < 6; ++j) staged[int64_t(rng_() % uint64_t(next_id + 3))] = int64_t(rng_() % 50);
        for (const auto& [id, v] : staged) text += fmt::format("{},{}\n", id, v);
        WriteStringToFile(csv, text);
        sql.Execute("MERGE INTO t USING read_csv('" + csv + "') AS m ON t.id = m.id WHEN MATCHED THEN UPDATE SET v = "
                    "m.v WHEN NOT MATCHED THEN INSERT (id, v, s) VALUES (m.id, m.v, 'new')");
        for (const auto& [id, v] : staged) {
          auto it = model.find(id);
          if (it != model.end()) it->second.v = v;
          else model[id] = Row{v, std::string("new")};
        }
        next_id = std::max(next_id, model.rbegin()->first + 1);
        ds = Dataset::Open(uri);
        break;
      }
      case 4: {
        op = "delete";
        ds = ds->Delete(fmt::format("id % {} = {}", m * 5, r));
        std::erase_if(model, [&](const auto& kv) { return kv.first % (m * 5) == r; });
        break;
      }
      case 5: {
        op = "append";
        ds = ds->Append({Batch(next_id, 30, model)});
        next_id += 30;
        break;
      }
      case 6: {
        op = "merge overlays";
        const auto& fragments = table::StateOf(ds).manifest.fragments();
        ds = ds->MergeOverlays(fragments.Get(int(rng_() % uint64_t(fragments.size()))).id());
        break;
      }
      case 7: {
        op = "fold";
        OptimizeOptions o;
        o.rewrite_rows = false;
        o.optimize_indices = rng_() % 2;
        ds = ds->Optimize(o);
        break;
      }
      case 8: {
        op = "rewrite";
        OptimizeOptions o;
        o.target_rows_per_fragment = 40 + rng_() % 120;
        o.merge_overlays_instead_of_fold = rng_() % 2;
        ds = ds->Optimize(o);
        break;
      }
      default: {
        if (rng_() % 2) {
          op = "index";
          std::string column = rng_() % 2 ? "v" : "s";
          if (ds->ListIndices().size() < 2) {
            bool exists = false;
            for (const auto& i : ds->ListIndices()) exists |= i.name == column + "_idx";
            ds = exists ? ds->OptimizeIndices()
                        : ds->CreateIndex(column, column == "v" ? IndexType::kBTree : IndexType::kBitmap);
          }
        } else {
          op = "cleanup";
          CleanupOptions o;
          o.keep_versions = 1 + rng_() % 3;
          o.force = true;
          ds->Cleanup(o);
          ds = Dataset::Open(uri);
        }
        break;
      }
    }
    ++counts[op];
    const std::string context = fmt::format("step {} ({}) at version {}", step, op, ds->version());
    ASSERT_EQ(Describe(ReadModel(Scan(*ds))), Describe(model)) << context;
    for (const std::string& where : {fmt::format("v = {}", rng_() % 60), fmt::format("v < {}", rng_() % 60),
                                     fmt::format("s = 's{}'", rng_() % 5), std::string("s = 'new'")})
      ASSERT_EQ(Scan(*ds, where), Scan(*ds, where, false)) << context << ": " << where;
    if (step % 12 == 11) check_reference(context);
  }
  OptimizeOptions all;
  ds = ds->Optimize(all);
  EXPECT_EQ(table::StateOf(ds).manifest.reader_feature_flags() & table::kFlagDataOverlays, 0u);
  EXPECT_EQ(Describe(ReadModel(Scan(*ds))), Describe(model));
  check_reference("after a final optimize");
  std::string tally;
  for (const auto& [op, n] : counts) tally += fmt::format("{} {}, ", op, n);
  std::cout << "[figures] compaction differential " << GetParam() << ": " << tally << model.size() << " rows\n";
}

INSTANTIATE_TEST_SUITE_P(FileVersions, CompactionDifferentialTest, ::testing::Values("2.0", "2.1", "2.2"),
                         [](const auto& info) { return "v" + std::string(1, info.param[0]) + "_" + info.param[2]; });

}  // namespace
}  // namespace lancelet::testing
