// The index layer on its own: the RowAddrTreeMap bytes, the filter-to-leaves rewrite,
// the sort order, and BTree / Bitmap files written and searched.
#include <gtest/gtest.h>

#include "index/index_builder.h"
#include "index/index_query.h"
#include "index/row_addr_map.h"
#include "index/scalar_index.h"
#include "lancelet/builder.h"
#include "support/test_env.h"

#include <fmt/format.h>

namespace lancelet::index {
namespace {

std::string Hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

// The error message `fn` throws ("" when it throws none).
template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  auto e = testing::ThrownError(fn);
  return e ? e->what() : "";
}

// "[null, 3, 7]" for integer arrays, "[null, \"a\"]" for strings.
std::string Show(const ArrayData& a) {
  std::string out = "[";
  for (int64_t i = 0; i < a.length; ++i) {
    if (i) out += ", ";
    if (a.IsNull(i)) out += "null";
    else if (a.type->is_variable_binary()) out += "\"" + std::string(a.GetView(i)) + "\"";
    else if (a.type->id() == TypeId::kUInt32) out += std::to_string(a.values<uint32_t>()[i]);
    else if (a.type->id() == TypeId::kUInt64) out += std::to_string(a.values<uint64_t>()[i]);
    else out += std::to_string(a.values<int64_t>()[i]);
  }
  return out + "]";
}

std::vector<uint64_t> Addresses(const RowAddrMap& m) {
  std::vector<uint64_t> out;
  for (const auto& [fragment, rows] : m.fragments) {
    EXPECT_TRUE(rows.has_value()) << "fragment " << fragment << " is whole";
    if (rows) rows->ForEach([&](uint32_t o) { out.push_back(uint64_t(fragment) << 32 | o); });
  }
  return out;
}

TEST(RowAddrMap, SerializesAsTheReferenceDoes) {
  RowAddrMap m;
  m.Add(uint64_t(1) << 32 | 5);
  m.Add(3);
  m.fragments.emplace(7, std::nullopt);  // every row of fragment 7
  // count 3; fragment 0: 18-byte bitmap {3}; fragment 1: {5}; fragment 7: size 0.
  EXPECT_EQ(Hex(m.Serialize()),
            "03000000"
            "00000000" "12000000" "3a300000" "01000000" "00000000" "10000000" "0300"
            "01000000" "12000000" "3a300000" "01000000" "00000000" "10000000" "0500"
            "07000000" "00000000");
  EXPECT_EQ(RowAddrMap::Deserialize(m.Serialize(), "test"), m);
}

TEST(RowAddrMap, RefusesTruncatedOrDisorderedBytes) {
  RowAddrMap m;
  m.Add(9);
  const std::string bytes = m.Serialize();
  EXPECT_EQ(ErrorOf([&] { RowAddrMap::Deserialize(bytes.substr(0, bytes.size() - 1), "keys row 2"); }),
            "keys row 2: row address map entry 0 (fragment 0) needs 18 bytes at offset 12, but only 17 remain");
  EXPECT_EQ(ErrorOf([&] { RowAddrMap::Deserialize(bytes + "x", "k"); }),
            "k: 1 bytes follow the row address map's 1 entries");
  const std::string twice = std::string("\x02\0\0\0", 4) + bytes.substr(4) + bytes.substr(4);
  EXPECT_EQ(ErrorOf([&] { RowAddrMap::Deserialize(twice, "k"); }),
            "k: row address map fragments are not ascending (0 after 0)");
}

TEST(RowAddrMap, UnionKeepsWholeFragmentsWhole) {
  RowAddrMap a, b;
  a.Add(1);
  b.fragments.emplace(0, std::nullopt);
  b.Add(uint64_t(2) << 32 | 4);
  a |= b;
  ASSERT_EQ(a.fragments.size(), 2u);
  EXPECT_FALSE(a.fragments.at(0).has_value());
  EXPECT_EQ(a.fragments.at(2)->ToVector(), std::vector<uint32_t>{4});
}

std::string Query(const std::string& filter, const std::string& indexed = "a,b") {
  auto q = IndexQuery::FromFilter(*ParseExpression(filter), [&](const std::string& c) {
    return ("," + indexed + ",").find("," + c + ",") != std::string::npos;
  });
  std::function<std::string(const IndexQuery&)> show = [&](const IndexQuery& n) -> std::string {
    switch (n.kind) {
      case IndexQuery::Kind::kAny: return "ANY";
      case IndexQuery::Kind::kLeaf: return "[" + n.leaf.ToString() + "]";
      default: {
        std::string s = n.kind == IndexQuery::Kind::kAnd ? "AND(" : "OR(";
        for (size_t i = 0; i < n.children.size(); ++i) s += (i ? ", " : "") + show(n.children[i]);
        return s + ")";
      }
    }
  };
  return show(q);
}

TEST(IndexQuery, LeavesAreComparisonsOfIndexedColumnsWithLiterals) {
  EXPECT_EQ(Query("a = 5"), "[a = 5]");
  EXPECT_EQ(Query("5 < a"), "[a > 5]");
  EXPECT_EQ(Query("a BETWEEN 1 AND 3"), "[a BETWEEN 1 AND 3]");
  EXPECT_EQ(Query("a IN (1, 2)"), "[a IN (1, 2)]");
  EXPECT_EQ(Query("a IS NULL"), "[a IS NULL]");
  EXPECT_EQ(Query("a IS NOT NULL"), "[NOT a IS NULL]");
  EXPECT_EQ(Query("a <> 5"), "[NOT a = 5]");
  EXPECT_EQ(Query("c = 5"), "ANY");            // not indexed
  EXPECT_EQ(Query("a + 1 = 5"), "ANY");        // not a bare column
  EXPECT_EQ(Query("a = b"), "ANY");            // not a literal
  EXPECT_EQ(Query("a LIKE 'x%'"), "ANY");
}

TEST(IndexQuery, AndDropsUnanswerablePartsOrSpreadsThemAndNotIsPushedDown) {
  EXPECT_EQ(Query("a = 1 AND c = 2"), "[a = 1]");
  EXPECT_EQ(Query("a = 1 OR c = 2"), "ANY");
  EXPECT_EQ(Query("a = 1 OR b > 2"), "OR([a = 1], [b > 2])");
  EXPECT_EQ(Query("NOT (a = 1 AND b > 2)"), "OR([NOT a = 1], [NOT b > 2])");
  EXPECT_EQ(Query("NOT (a = 1 OR c = 2)"), "[NOT a = 1]");
  EXPECT_EQ(Query("NOT NOT a < 3"), "[a < 3]");
  EXPECT_EQ(Query("a NOT IN (1) AND NOT b NOT BETWEEN 1 AND 2"), "AND([NOT a IN (1)], [b BETWEEN 1 AND 2])");
}

ArrayPtr Int64s(std::vector<std::optional<int64_t>> v) {
  FixedWidthBuilder<int64_t> b(DataType::Int64());
  for (auto x : v) x ? b.Append(*x) : b.AppendNull();
  return b.Finish();
}

TEST(SortedOrder, NullsFirstThenAscendingTiesInInputOrder) {
  EXPECT_EQ(SortedOrder(*Int64s({5, std::nullopt, 2, 5, std::nullopt, -1})),
            (std::vector<int64_t>{1, 4, 5, 2, 0, 3}));
  FixedWidthBuilder<double> d(DataType::Float64());
  for (double x : {1.0, std::nan(""), -0.0, 0.0, -2.0}) d.Append(x);
  EXPECT_EQ(SortedOrder(*d.Finish()), (std::vector<int64_t>{4, 2, 3, 0, 1}));  // NaN last, -0 == 0
  BinaryBuilder s(DataType::Utf8());
  for (const char* x : {"b", "", "ab", "a"}) s.Append(x);
  EXPECT_EQ(SortedOrder(*s.Finish()), (std::vector<int64_t>{1, 3, 2, 0}));
}

class IndexFileTest : public ::testing::TestWithParam<IndexKind> {
 protected:
  // 10,000 rows: value i % 1000 (null for every 97th row), id = row << 1 | (row >= 5000) << 32.
  std::unique_ptr<ScalarIndex> Build() {
    std::vector<std::optional<int64_t>> v;
    for (int64_t i = 0; i < 10000; ++i) {
      v.push_back(i % 97 == 0 ? std::nullopt : std::optional<int64_t>(i % 1000));
      ids_.push_back(Id(i));
    }
    auto files = WriteIndex(*store_, dir_.path(), GetParam(), format::FileVersion{2, 2}, *Int64s(v), ids_);
    if (GetParam() == IndexKind::kBTree) {
      EXPECT_EQ(files.size(), 2u);
      EXPECT_EQ(files[0].name, "page_data.lance");
      EXPECT_EQ(files[1].name, "page_lookup.lance");
    } else {
      EXPECT_EQ(files.size(), 1u);
      EXPECT_EQ(files[0].name, "bitmap_page_lookup.lance");
    }
    return ScalarIndex::Open(*store_, dir_.path(), GetParam());
  }
  static uint64_t Id(int64_t row) { return uint64_t(row >= 5000) << 32 | uint64_t(row); }
  std::vector<uint64_t> Expected(const std::function<bool(int64_t, bool)>& match) {
    std::vector<uint64_t> out;
    for (int64_t i = 0; i < 10000; ++i)
      if (match(i % 1000, i % 97 == 0)) out.push_back(Id(i));
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<uint64_t> Search(const ScalarIndex& index, const std::string& filter) {
    auto q = IndexQuery::FromFilter(*ParseExpression(filter), [](const std::string&) { return true; });
    EXPECT_EQ(q.kind, IndexQuery::Kind::kLeaf) << filter;
    return Addresses(index.Search(q.leaf));
  }
  std::shared_ptr<io::ObjectStore> store_ = io::MakeLocalStore();
  testing::TempDir dir_;
  std::vector<uint64_t> ids_;
};

TEST_P(IndexFileTest, EveryLeafKindFindsExactlyItsRows) {
  auto index = Build();
  EXPECT_EQ(index->num_rows(), 10000u);
  EXPECT_EQ(Search(*index, "v = 37"), Expected([](int64_t v, bool null) { return !null && v == 37; }));
  EXPECT_EQ(Search(*index, "v < 3"), Expected([](int64_t v, bool null) { return !null && v < 3; }));
  EXPECT_EQ(Search(*index, "v <= 3"), Expected([](int64_t v, bool null) { return !null && v <= 3; }));
  EXPECT_EQ(Search(*index, "v > 996"), Expected([](int64_t v, bool null) { return !null && v > 996; }));
  EXPECT_EQ(Search(*index, "v >= 996"), Expected([](int64_t v, bool null) { return !null && v >= 996; }));
  EXPECT_EQ(Search(*index, "v BETWEEN 400 AND 402"),
            Expected([](int64_t v, bool null) { return !null && v >= 400 && v <= 402; }));
  EXPECT_EQ(Search(*index, "v IN (0, 999, 5000)"),
            Expected([](int64_t v, bool null) { return !null && (v == 0 || v == 999); }));
  EXPECT_EQ(Search(*index, "v IS NULL"), Expected([](int64_t, bool null) { return null; }));
  EXPECT_EQ(Search(*index, "v IS NOT NULL"), Expected([](int64_t, bool null) { return !null; }));
  EXPECT_EQ(Search(*index, "v <> 5"), Expected([](int64_t v, bool null) { return !null && v != 5; }));
  EXPECT_EQ(Search(*index, "v = 1000"), std::vector<uint64_t>{});
}

TEST_P(IndexFileTest, RowsAddedInMemoryAreSearchedWithTheSegment) {
  std::shared_ptr<const ScalarIndex> index = Build();
  // 600 more rows (ids in fragment 7): value 2 * i (null for every 50th), in pages of 4;
  // values below, inside and past the segment's range.
  std::vector<std::optional<int64_t>> v;
  std::vector<uint64_t> more;
  for (int64_t i = 0; i < 600; ++i) {
    v.push_back(i % 50 == 0 ? std::nullopt : std::optional<int64_t>(2 * i - 100));
    more.push_back(uint64_t(7) << 32 | uint64_t(i));
  }
  std::shared_ptr<const ScalarIndex> own = InMemoryBTree(*Int64s(v), more, 4);
  auto both = WithRows(index, own);
  EXPECT_EQ(both->num_rows(), 10600u);
  for (const char* filter : {"v = 37", "v = 38", "v = -100", "v = -98", "v < 3", "v >= 996", "v > 1098",
                             "v BETWEEN 400 AND 402", "v IN (0, 999, 1000, -2)", "v IS NULL", "v <> 5"}) {
    SCOPED_TRACE(filter);
    std::vector<uint64_t> expected = Search(*index, filter);
    for (uint64_t id : Search(*own, filter)) expected.push_back(id);
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(Search(*both, filter), expected);
  }
  // The added rows alone, for a few exact answers.
  EXPECT_EQ(Search(*own, "v = 38"), std::vector<uint64_t>{uint64_t(7) << 32 | 69});
  EXPECT_EQ(Search(*own, "v IS NULL").size(), 12u);
  const std::vector<uint64_t> last_two{uint64_t(7) << 32 | 598, uint64_t(7) << 32 | 599};
  EXPECT_EQ(Search(*own, "v > 1094"), last_two);
}

TEST_P(IndexFileTest, SpilledRunsMergeIntoTheSameFiles) {
  // 10,000 rows with nulls and many equal values, added 1,000 at a time: in memory, and
  // with a 16 KiB budget (a sorted run spilled about every 1,000 rows).
  std::vector<std::optional<int64_t>> v;
  std::vector<uint64_t> ids;
  for (int64_t i = 0; i < 10000; ++i) {
    v.push_back(i % 89 == 0 ? std::nullopt : std::optional<int64_t>((i * 7) % 300));
    ids.push_back(Id(i));
  }
  ArrayPtr all = Int64s(v);
  testing::TempDir spilled_dir;
  IndexBuilder spilled(*store_, spilled_dir.path(), GetParam(), format::FileVersion{2, 1}, DataType::Int64(), 16 << 10);
  for (int64_t first = 0; first < 10000; first += 1000)
    spilled.Add(Slice(*all, first, 1000), std::span(ids).subspan(size_t(first), 1000));
  EXPECT_GE(spilled.runs(), 5u);
  auto files = spilled.Finish();
  EXPECT_TRUE(store_->List(spilled_dir.path()).size() == files.size()) << "spilled runs were left behind";
  WriteIndex(*store_, dir_.path(), GetParam(), format::FileVersion{2, 1}, *all, ids);
  for (const auto& f : files)
    EXPECT_EQ(testing::ReadFileToString(spilled_dir.Join(f.name)), testing::ReadFileToString(dir_.Join(f.name)))
        << f.name << " differs after spilling";
}

TEST(IndexBuilder, AFailedBuildRemovesItsRuns) {
  auto store = io::MakeLocalStore();
  testing::TempDir dir;
  {
    IndexBuilder builder(*store, dir.path(), IndexKind::kBTree, format::FileVersion{2, 2}, DataType::Int64(), 16);
    builder.Add(Int64s({3, 1, 2}), std::vector<uint64_t>{0, 1, 2});
    builder.Add(Int64s({5, 4}), std::vector<uint64_t>{3, 4});
    EXPECT_EQ(builder.runs(), 2u);
    EXPECT_EQ(store->List(dir.path()).size(), 2u);
  }  // destroyed before Finish
  EXPECT_TRUE(store->List(dir.path()).empty());
}

TEST(SortKey, OrdersAsTheValuesSort) {
  FixedWidthBuilder<double> d(DataType::Float64());
  for (double x : std::initializer_list<double>{-HUGE_VAL, -2.5, -0.0, 0.0, 1e-300, 3.0, HUGE_VAL, std::nan("")})
    d.Append(x);
  auto doubles = d.Finish();
  for (int64_t i = 0; i + 1 < doubles->length; ++i) {
    if (i == 2) EXPECT_EQ(SortKey(*doubles, i), SortKey(*doubles, i + 1)) << "-0.0 and 0.0 are equal";
    else EXPECT_LT(SortKey(*doubles, i), SortKey(*doubles, i + 1)) << i;
  }
  auto ints = Int64s({INT64_MIN, -1, 0, 1, INT64_MAX});
  for (int64_t i = 0; i + 1 < ints->length; ++i) EXPECT_LT(SortKey(*ints, i), SortKey(*ints, i + 1)) << i;
  BinaryBuilder s(DataType::Utf8());
  for (const char* x : {"", "a", "ab", "b", "\xc3\xa9"}) s.Append(x);
  auto strings = s.Finish();
  for (int64_t i = 0; i + 1 < strings->length; ++i) EXPECT_LT(SortKey(*strings, i), SortKey(*strings, i + 1)) << i;
}

INSTANTIATE_TEST_SUITE_P(Kinds, IndexFileTest, ::testing::Values(IndexKind::kBTree, IndexKind::kBitmap),
                         [](const auto& info) { return std::string(KindName(info.param)); });

TEST(BTreeFile, PagesHold4096RowsWithMinMaxAndNullCounts) {
  auto store = io::MakeLocalStore();
  testing::TempDir dir;
  std::vector<std::optional<int64_t>> v;
  std::vector<uint64_t> ids;
  for (int64_t i = 0; i < 9000; ++i) {
    v.push_back(i < 5000 ? std::nullopt : std::optional<int64_t>(9000 - i));
    ids.push_back(uint64_t(i));
  }
  WriteIndex(*store, dir.path(), IndexKind::kBTree, format::FileVersion{2, 0}, *Int64s(v), ids);
  auto lookup = format::LanceFileReader::Open(*store, dir.Join("page_lookup.lance"));
  EXPECT_EQ(lookup->version().ToString(), "2.0");
  EXPECT_EQ(lookup->schema().ToArrow()->ToString(), "min:int64, max:int64, null_count:uint32 not null, page_idx:uint32 not null");
  EXPECT_EQ(lookup->schema().metadata().at("batch_size"), "4096");
  EXPECT_EQ(lookup->schema().metadata().at("range_partitioned"), "false");
  // Sorted: 5000 nulls, then 1..4000. Pages [0,4096) [4096,8192) [8192,9000).
  EXPECT_EQ(Show(*lookup->ReadField(0, 0, 3)), "[null, null, 3193]");
  EXPECT_EQ(Show(*lookup->ReadField(1, 0, 3)), "[null, 3192, 4000]");
  EXPECT_EQ(Show(*lookup->ReadField(2, 0, 3)), "[4096, 904, 0]");
  EXPECT_EQ(Show(*lookup->ReadField(3, 0, 3)), "[0, 1, 2]");
  auto data = format::LanceFileReader::Open(*store, dir.Join("page_data.lance"));
  EXPECT_EQ(data->schema().ToArrow()->ToString(), "values:int64, ids:uint64 not null");
  EXPECT_EQ(Show(*data->ReadField(1, 5000, 2)), "[8999, 8998]");  // value 1, then 2
}

TEST(BitmapFile, OneRowPerDistinctValueNullFirstWithStats) {
  auto store = io::MakeLocalStore();
  testing::TempDir dir;
  BinaryBuilder b(DataType::Utf8());
  std::vector<uint64_t> ids;
  const char* cats[] = {"b", "a", nullptr, "b"};
  for (int i = 0; i < 4; ++i) {
    cats[i] ? b.Append(cats[i]) : b.AppendNull();
    ids.push_back(uint64_t(i));
  }
  WriteIndex(*store, dir.path(), IndexKind::kBitmap, format::FileVersion{2, 2}, *b.Finish(), ids);
  auto file = format::LanceFileReader::Open(*store, dir.Join("bitmap_page_lookup.lance"));
  EXPECT_EQ(file->schema().ToArrow()->ToString(), "keys:utf8, bitmaps:binary");
  EXPECT_EQ(file->schema().metadata().at("lance:index_stats"), "{\"num_bitmaps\":3}");
  EXPECT_EQ(Show(*file->ReadField(0, 0, 3)), "[null, \"a\", \"b\"]");
  auto bitmaps = file->ReadField(1, 0, 3);
  EXPECT_EQ(Addresses(RowAddrMap::Deserialize(bitmaps->GetView(2), "b")), (std::vector<uint64_t>{0, 3}));
}

}  // namespace
}  // namespace lancelet::index
