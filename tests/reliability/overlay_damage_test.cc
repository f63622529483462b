// The overlay-damage sweep: every Nth bit of each overlay data file flipped in turn (and a
// few truncations), and every Nth bit of each overlay's DataOverlayFile message in the
// manifest, one at a time, in process. After each, a scan, two filtered counts (one
// through a BTree index), a take and an UPDATE (on a copy) must give the undamaged answer
// or fail with a lancelet::Error, except for damage no reader can detect
// (docs/format_validation.md, "Overlays"), which is counted by class and must stay within
// the cells the damaged overlay supplies:
//   - a flip among a page's values (a value, a validity bit, a string offset or byte, a
//     bit-packed value, compressed dictionary bytes), or in a constant page's inline value;
//   - a page buffer's offset moved to where the buffer still lies among the data pages;
//   - a coverage bitmap that stays well-formed, inside the fragment and of the same size
//     (a covered offset moved: the file has no offset column to say otherwise);
//   - data_file.fields naming other ids (reads of a field it no longer names see no overlay).
// `./run soak` flips 4,000 bits of each file and every bit of each message.
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <set>

#include <google/protobuf/any.pb.h>

#include "encodings_v2_1.pb.h"
#include "file2.pb.h"
#include "format/roaring_bitmap.h"
#include "lancelet/dataset.h"
#include "lancelet/overlay_writer.h"
#include "lancelet/text.h"
#include "reliability/harness.h"
#include "support/sample_batches.h"
#include "table/dataset_state.h"
#include "table/session.h"

namespace lancelet::testing::reliability {
namespace {

constexpr int64_t kRowsPerFragment = 1000;
const std::vector<std::string> kColumns = {"id", "val", "name", "mark"};

// 3 fragments of 1,000 rows: id, val = 10 * id, name = "n<id>", mark = 0. Version 2: a
// dense overlay of val and name on fragment 0 (every 7th row; -offset, and "d<offset>"
// or NULL), a sparse one on fragment 1 (val over [200, 700) as 5000 + offset, name at
// every 11th row). Version 3: a BTree index on val. Version 4: val at every 50th row of
// fragment 1 (-1) and at every row of fragment 2 (offset % 7), which the index excludes.
DatasetPtr MakeOverlaid(const std::string& uri, const std::string& file_version) {
  std::vector<std::optional<int64_t>> ids, vals, marks;
  std::vector<std::optional<std::string>> names;
  for (int64_t i = 0; i < 3 * kRowsPerFragment; ++i) {
    ids.push_back(i), vals.push_back(10 * i), marks.push_back(0);
    names.push_back("n" + std::to_string(i));
  }
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("id", DataType::Int64()), Field::Make("val", DataType::Int64()),
                            Field::Make("name", DataType::Utf8()), Field::Make("mark", DataType::Int64())});
  WriteOptions options;
  options.file_version = file_version;
  options.max_rows_per_file = kRowsPerFragment;
  auto ds = Dataset::Write(uri, {RecordBatch::Make(schema, {Int64s(ids), Int64s(vals), Strings(names), Int64s(marks)})},
                           options);
  auto offsets = [](uint32_t from, uint32_t to, uint32_t step) {
    std::vector<uint32_t> out;
    for (uint32_t o = from; o < to; o += step) out.push_back(o);
    return out;
  };
  auto values = [](const std::vector<uint32_t>& at, const std::function<std::optional<int64_t>(uint32_t)>& f) {
    std::vector<std::optional<int64_t>> out;
    for (uint32_t o : at) out.push_back(f(o));
    return Int64s(out);
  };
  auto texts = [](const std::vector<uint32_t>& at, const std::function<std::optional<std::string>(uint32_t)>& f) {
    std::vector<std::optional<std::string>> out;
    for (uint32_t o : at) out.push_back(f(o));
    return Strings(out);
  };
  const auto every7 = offsets(0, 1000, 7), run = offsets(200, 700, 1), every11 = offsets(0, 1000, 11),
             every50 = offsets(0, 1000, 50), all = offsets(0, 1000, 1);
  ds = OverlayWriter(ds)
           .Set(0, "val", every7, values(every7, [](uint32_t o) { return -int64_t(o); }))
           .Set(0, "name", every7,
                texts(every7, [](uint32_t o) {
                  return o % 5 == 0 ? std::nullopt : std::optional<std::string>("d" + std::to_string(o));
                }))
           .Set(1, "val", run, values(run, [](uint32_t o) { return 5000 + int64_t(o); }))
           .Set(1, "name", every11, texts(every11, [](uint32_t o) { return "s" + std::to_string(o); }))
           .Commit();
  ds = ds->CreateIndex("val", IndexType::kBTree);
  return OverlayWriter(ds)
      .Set(1, "val", every50, values(every50, [](uint32_t) { return -1; }))
      .Set(2, "val", all, values(all, [](uint32_t o) { return int64_t(o % 7); }))
      .Commit();
}

// What one operation answered: its rows as text, or nullopt when it threw a lancelet::Error.
using Answer = std::optional<std::vector<std::string>>;

std::vector<std::string> Rows(const RecordBatch& batch) {
  std::vector<std::string> rows;
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    std::string row;
    for (size_t c = 0; c < batch.num_columns(); ++c)
      row += (c ? "|" : "") + (batch.column(c)->IsNull(r) ? std::string("NULL")
                                                          : FormatValue(*batch.column(c), r, ValueStyle::kCsv));
    rows.push_back(std::move(row));
  }
  return rows;
}

const std::vector<uint64_t> kTakeOffsets = {3, 7, 14, 700, 1200, 1250, 1650, 1700, 2000, 2500, 2999};

// Every file under `dir` by its path and inode: a write adds or replaces files.
std::map<std::string, ino_t> Files(const std::string& dir) {
  std::map<std::string, ino_t> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    struct stat st {};
    if (e.is_regular_file() && ::stat(e.path().c_str(), &st) == 0) out[e.path().string()] = st.st_ino;
  }
  return out;
}

struct Operation {
  std::string name;
  std::function<std::vector<std::string>(const std::string& ds, const std::string& scratch)> run;
};

// The scan first and the take second: their answers locate a wrong value (Cells).
const std::vector<Operation>& Operations() {
  static const std::vector<Operation> ops = {
      {"scan", [](const std::string& ds, const std::string&) {
         return Rows(*Dataset::Open(ds)->NewScan().Columns({"id", "val", "name"}).ToBatch());
       }},
      {"take", [](const std::string& ds, const std::string&) {
         return Rows(*Dataset::Open(ds)->Take(kTakeOffsets, {"id", "val", "name"}));
       }},
      {"count val < 100", [](const std::string& ds, const std::string&) {
         return std::vector<std::string>{std::to_string(Dataset::Open(ds)->CountRows("val < 100"))};
       }},
      {"count name LIKE 'd%'", [](const std::string& ds, const std::string&) {
         return std::vector<std::string>{std::to_string(Dataset::Open(ds)->CountRows("name LIKE 'd%'"))};
       }},
      // A write through the overlays, on a copy: the rows it changes. A refused write
      // must leave the copy as it was. The copy links the files (lancelet replaces a file,
      // never writes into one), so it holds the damage and costs no bytes.
      {"UPDATE mark = 1 WHERE val < 100", [](const std::string& ds, const std::string& scratch) {
         std::filesystem::remove_all(scratch);
         namespace fs = std::filesystem;
         fs::copy(ds, scratch, fs::copy_options::recursive | fs::copy_options::create_hard_links);
         auto before = Files(scratch);
         try {
           Dataset::Open(scratch)->Update({{"mark", "1"}}, "val < 100");
         } catch (const Error&) {
           EXPECT_EQ(Files(scratch), before) << "a refused UPDATE changed the dataset";
           throw;
         }
         return Rows(*Dataset::Open(scratch)->NewScan().Columns({"id"}).Filter("mark = 1").UseIndex(false).ToBatch());
       }},
  };
  return ops;
}

std::vector<Answer> RunAll(const std::string& ds, const std::string& scratch) {
  std::vector<Answer> out;
  for (const auto& op : Operations()) {
    try {
      out.push_back(op.run(ds, scratch));
    } catch (const Error&) {
      out.push_back(std::nullopt);
    }
  }
  return out;
}

// (row id, column) cells at which two answers of the scan or the take differ.
std::set<std::pair<int64_t, std::string>> Cells(const Answer& a, const Answer& b) {
  std::set<std::pair<int64_t, std::string>> out;
  if (!a || !b) return out;
  for (size_t r = 0; r < std::max(a->size(), b->size()); ++r) {
    if (r >= a->size() || r >= b->size()) {
      out.insert({-1, "row count"});
      break;
    }
    auto split = [](const std::string& row) {
      std::vector<std::string> parts;
      size_t start = 0;
      for (size_t bar; (bar = row.find('|', start)) != std::string::npos; start = bar + 1)
        parts.push_back(row.substr(start, bar - start));
      parts.push_back(row.substr(start));
      return parts;
    };
    auto x = split((*a)[r]), y = split((*b)[r]);
    for (size_t c = 0; c < x.size() && c < y.size(); ++c)
      if (x[c] != y[c]) out.insert({c == 0 ? -1 : std::stoll(x[0]), c == 0 ? "id" : kColumns[c]});
  }
  return out;
}

// By column, the row ids of the cells an overlay covers.
using Covered = std::map<std::string, std::set<int64_t>>;
void AddCoverage(const lance::table::DataFragment& fragment, const lance::table::DataOverlayFile& overlay,
                 Covered& out) {
  for (int f = 0; f < overlay.data_file().fields_size(); ++f) {
    const int32_t id = overlay.data_file().fields(f);
    if (id < 0 || id >= int32_t(kColumns.size())) continue;
    if (overlay.has_field_coverage() && f >= overlay.field_coverage().offset_bitmaps_size()) continue;
    const std::string& bytes = overlay.has_field_coverage() ? overlay.field_coverage().offset_bitmaps(f)
                                                            : overlay.shared_offset_bitmap();
    try {
      format::RoaringBitmap::DeserializePortable(bytes, "").ForEach([&](uint32_t o) {
        out[kColumns[size_t(id)]].insert(int64_t(fragment.id()) * kRowsPerFragment + o);
      });
    } catch (const Error&) {
    }
  }
}

struct Tally {
  int damages = 0, operations = 0, same = 0, errors = 0, wrong = 0, undetectable = 0;
  std::map<std::string, int> undetectable_by_class;
  std::vector<std::string> failures;

  std::string Summary() const {
    std::string classes;
    for (const auto& [c, n] : undetectable_by_class)
      classes += fmt::format("{}{}: {}", classes.empty() ? "" : ", ", c, n);
    return fmt::format("{} damages, {} queries and writes: {} same, {} errors, {} wrong ({} in classes no reader "
                       "can detect{}{})",
                       damages, operations, same, errors, wrong, undetectable, classes.empty() ? "" : ": ", classes);
  }
};

// Runs every operation on the damaged dataset (`what` names the damage) and tallies it
// against `clean`. `undetectable_class` names the damage when no reader can detect it
// (empty: the format lets a reader detect it), and `cells` the cells it may change.
void Judge(const std::string& ds, const std::string& scratch, const std::vector<Answer>& clean,
           const std::string& what, const std::string& undetectable_class, const Covered& cells, Tally& t) {
  ++t.damages;
  Session::Default()->Clear();  // files changed in place: read them as a new process would
  const std::vector<Answer> got = RunAll(ds, scratch);
  std::string wrong;  // the operations that answered wrong
  int wrong_here = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    ++t.operations;
    if (!got[i]) {
      ++t.errors;
    } else if (*got[i] == *clean[i]) {
      ++t.same;
    } else {
      ++t.wrong, ++wrong_here;
      wrong += (wrong.empty() ? "" : ", ") + Operations()[i].name;
    }
  }
  if (wrong_here == 0) return;
  // Wrong answers are allowed only for an undetectable class, and only where the scan
  // and the take, when they answer, show the wrong cells among those the damaged overlay
  // may change.
  std::string outside;
  for (size_t op : {0, 1})
    for (const auto& [row, column] : Cells(clean[op], got[op]))
      if (row < 0 || !cells.count(column) || !cells.at(column).count(row))
        outside = fmt::format("; wrong cell outside the overlay: {} row {} column {}", Operations()[op].name, row,
                              column);
  if (!undetectable_class.empty() && outside.empty()) {
    t.undetectable += wrong_here;
    t.undetectable_by_class[undetectable_class] += wrong_here;
    return;
  }
  std::string example;
  for (size_t op : {0, 1})
    for (size_t r = 0; got[op] && example.empty() && r < std::min(got[op]->size(), clean[op]->size()); ++r)
      if ((*got[op])[r] != (*clean[op])[r])
        example =
            fmt::format("; {} row {}: {} for {}", Operations()[op].name, r, (*got[op])[r], (*clean[op])[r]);
  const std::string named = undetectable_class.empty() ? "" : " (" + undetectable_class + ")";
  t.failures.push_back(fmt::format("{}: wrong {}{}{}{}", what, wrong, named, outside, example));
}

void FlipBit(std::string& bytes, uint64_t bit) { bytes[bit / 8] = char(bytes[bit / 8] ^ (1 << (bit % 8))); }

// Flips `target` bits of `bits` spread evenly (an odd stride: every bit position of a
// byte in turn), or every bit when there are fewer.
uint64_t Stride(uint64_t bits, int target) { return std::max<uint64_t>(1, bits / uint64_t(target)) | 1; }

// Where a Lance file's footer puts things.
struct Footer {
  uint64_t column_meta = 0, offsets = 0, globals = 0;
  uint32_t num_globals = 0, num_columns = 0;
  const std::string* bytes = nullptr;

  explicit Footer(const std::string& file) : bytes(&file) {
    const size_t at = file.size() - 40;
    column_meta = Load(at), offsets = Load(at + 8), globals = Load(at + 16);
    num_globals = uint32_t(Load(at + 24)), num_columns = uint32_t(Load(at + 28));
  }
  uint64_t Load(size_t pos) const {  // little-endian u64 (the low half of one for a u32)
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= uint64_t(uint8_t(bytes->at(pos + size_t(k)))) << (8 * k);
    return v;
  }
  // Column c's metadata as (position, size); global buffer g as [begin, end).
  std::pair<uint64_t, uint64_t> Column(uint32_t c) const {
    return {Load(offsets + 16 * c), Load(offsets + 16 * c + 8)};
  }
  std::pair<uint64_t, uint64_t> Global(uint32_t g) const {
    return {Load(globals + 16 * g), Load(globals + 16 * g) + Load(globals + 16 * g + 8)};
  }
};

// The byte ranges of a Lance file that hold values with no redundancy, and what they are:
// page and column buffers, and the inline value of a constant page (2.1+), which lives in
// the column metadata.
struct Region {
  uint64_t begin, end;
  std::string what;
};
std::vector<Region> ValueRegions(const std::string& bytes) {
  const Footer footer(bytes);
  std::vector<Region> out;
  for (uint32_t c = 0; c < footer.num_columns; ++c) {
    const auto [pos, size] = footer.Column(c);
    const std::string meta_bytes = bytes.substr(pos, size);
    lance::file::v2::ColumnMetadata meta;
    EXPECT_TRUE(meta.ParseFromString(meta_bytes));
    const std::string buffer = fmt::format("a value in a page buffer of column {}", c);
    for (int b = 0; b < meta.buffer_offsets_size(); ++b)
      out.push_back({meta.buffer_offsets(b), meta.buffer_offsets(b) + meta.buffer_sizes(b), buffer});
    for (const auto& page : meta.pages()) {
      for (int b = 0; b < page.buffer_offsets_size(); ++b)
        out.push_back({page.buffer_offsets(b), page.buffer_offsets(b) + page.buffer_sizes(b), buffer});
      google::protobuf::Any any;
      lance::encodings21::PageLayout layout;
      if (!any.ParseFromString(page.encoding().direct().encoding()) || !layout.ParseFromString(any.value()) ||
          !layout.has_constant_layout() || !layout.constant_layout().has_inline_value())
        continue;
      const std::string& value = layout.constant_layout().inline_value();
      const size_t at = meta_bytes.find(value);
      EXPECT_NE(at, std::string::npos);
      EXPECT_EQ(meta_bytes.find(value, at + 1), std::string::npos) << "the inline value is not unique";
      out.push_back({pos + at, pos + at + value.size(), fmt::format("a constant page's inline value of column {}", c)});
    }
  }
  return out;
}

// When flipping the byte at `at` only moved page buffers, each to where it still lies
// among the data pages, clear of the global buffers: that class, else empty. The format
// asks no alignment or order of buffers, so a reader cannot tell it from a real position.
std::string MovedBuffer(const std::string& clean, const std::string& damaged, uint64_t at) {
  const Footer footer(clean);
  for (uint32_t c = 0; c < footer.num_columns; ++c) {
    const auto [pos, size] = footer.Column(c);
    if (at < pos || at >= pos + size) continue;
    lance::file::v2::ColumnMetadata before, after;
    if (!before.ParseFromString(clean.substr(pos, size)) || !after.ParseFromString(damaged.substr(pos, size)) ||
        before.pages_size() != after.pages_size())
      return "";
    lance::file::v2::ColumnMetadata restored = after;
    for (int p = 0; p < after.pages_size(); ++p) {
      const auto& page = after.pages(p);
      if (page.buffer_offsets_size() != before.pages(p).buffer_offsets_size() ||
          page.buffer_sizes_size() != page.buffer_offsets_size())
        return "";
      for (int b = 0; b < page.buffer_offsets_size(); ++b) {
        const uint64_t from = page.buffer_offsets(b), to = from + page.buffer_sizes(b);
        if (to > footer.column_meta) return "";
        for (uint32_t g = 0; g < footer.num_globals; ++g)
          if (from < footer.Global(g).second && footer.Global(g).first < to) return "";
        restored.mutable_pages(p)->set_buffer_offsets(b, before.pages(p).buffer_offsets(b));
      }
    }
    return restored.SerializeAsString() == before.SerializeAsString()
               ? fmt::format("a page buffer of column {} moved within the data pages", c)
               : "";
  }
  return "";
}

struct Sweep {
  TempDir dir;
  std::string version;
  std::string ds = dir.Join("t.lance"), scratch = dir.Join("scratch.lance");
  lance::table::Manifest manifest;
  std::vector<Answer> clean;

  explicit Sweep(std::string file_version) : version(std::move(file_version)) {
    manifest = table::StateOf(MakeOverlaid(ds, version)).manifest;
    clean = RunAll(ds, scratch);
    for (size_t i = 0; i < clean.size(); ++i) EXPECT_TRUE(clean[i]) << Operations()[i].name;
    // The overlays are in the answers: fragment 0's row 7, fragment 1's rows 251 (the
    // sparse run) and 300 (every 50th row, newer), fragment 2's row 9.
    EXPECT_EQ((*clean[0])[7], "7|-7|d7");
    EXPECT_EQ((*clean[0])[1251], "1251|5251|n1251");
    EXPECT_EQ((*clean[0])[1300], "1300|-1|n1300");
    EXPECT_EQ((*clean[0])[2009], "2009|2|n2009");
    EXPECT_EQ((*clean[2])[0], "1171");  // fragment 0: 143 overlaid, 8 more; fragment 1: 20; fragment 2: all
  }

  void Files() {
    for (const auto& fragment : manifest.fragments())
      for (const auto& overlay : fragment.overlays()) {
        const std::string path = ds + "/data/" + overlay.data_file().path();
        const std::string bytes = ReadFileToString(path);
        const auto regions = ValueRegions(bytes);
        Covered cells;
        AddCoverage(fragment, overlay, cells);
        Tally t;
        const uint64_t bits = bytes.size() * 8, stride = Stride(bits, Scaled(64, 4000));
        for (uint64_t bit = stride / 2; bit < bits; bit += stride) {
          std::string damaged = bytes;
          FlipBit(damaged, bit);
          WriteStringToFile(path, damaged);
          std::string value = MovedBuffer(bytes, damaged, bit / 8);
          for (const auto& region : regions)
            if (bit / 8 >= region.begin && bit / 8 < region.end) value = region.what;
          Judge(ds, scratch, clean,
                fmt::format("fragment {} overlay file bit {} (byte {})", fragment.id(), bit, bit / 8), value, cells,
                t);
        }
        for (uint64_t keep : {uint64_t(0), uint64_t(40), bytes.size() / 2, bytes.size() - 1}) {
          WriteStringToFile(path, bytes.substr(0, keep));
          Judge(ds, scratch, clean, fmt::format("fragment {} overlay file truncated to {} bytes", fragment.id(), keep),
                "", cells, t);
        }
        WriteStringToFile(path, bytes);
        Figures(fmt::format("overlay damage ({}, fragment {} overlay file, {} bytes): {}", version, fragment.id(),
                            bytes.size(), t.Summary()));
        for (const auto& f : t.failures) ADD_FAILURE() << version << " " << f;
      }
  }

  // What a damaged DataOverlayFile message changed, when no reader can detect it: its
  // class, or empty.
  static std::string UndetectableClass(const lance::table::DataFragment& fragment,
                                       const lance::table::DataOverlayFile& clean_overlay,
                                       const lance::table::DataOverlayFile& damaged) {
    lance::table::DataOverlayFile a = clean_overlay, b = damaged;
    // The coverage: well-formed, in the fragment, as many cells: a moved cell.
    auto same_size_in_range = [&](const std::string& x, const std::string& y) {
      try {
        const auto bx = format::RoaringBitmap::DeserializePortable(x, "");
        const auto by = format::RoaringBitmap::DeserializePortable(y, "");
        return bx.Cardinality() == by.Cardinality() && (by.IsEmpty() || by.Max() < fragment.physical_rows());
      } catch (const Error&) {
        return false;
      }
    };
    if (a.shared_offset_bitmap() != b.shared_offset_bitmap()) {
      if (!same_size_in_range(a.shared_offset_bitmap(), b.shared_offset_bitmap())) return "";
      a.clear_shared_offset_bitmap(), b.clear_shared_offset_bitmap();
      return a.SerializeAsString() == b.SerializeAsString() ? "coverage cell moved" : "";
    }
    if (a.has_field_coverage() && b.has_field_coverage() &&
        a.field_coverage().offset_bitmaps_size() == b.field_coverage().offset_bitmaps_size()) {
      for (int i = 0; i < a.field_coverage().offset_bitmaps_size(); ++i)
        if (a.field_coverage().offset_bitmaps(i) != b.field_coverage().offset_bitmaps(i)) {
          if (!same_size_in_range(a.field_coverage().offset_bitmaps(i), b.field_coverage().offset_bitmaps(i)))
            return "";
          a.clear_field_coverage(), b.clear_field_coverage();
          return a.SerializeAsString() == b.SerializeAsString() ? "coverage cell moved" : "";
        }
    }
    // data_file.fields lists other ids, none twice (a dropped field's id is valid in a
    // manifest, so any id is): reads of a field it no longer lists see no overlay and
    // open no file.
    const auto& fa = a.data_file().fields();
    const auto& fb = b.data_file().fields();
    if (!std::equal(fa.begin(), fa.end(), fb.begin(), fb.end())) {
      std::set<int32_t> ids(fb.begin(), fb.end());
      const bool dropped = std::any_of(fa.begin(), fa.end(), [&](int32_t id) { return !ids.count(id); });
      const bool valid = !fb.empty() && ids.size() == size_t(fb.size());
      a.mutable_data_file()->clear_fields(), b.mutable_data_file()->clear_fields();
      a.mutable_data_file()->clear_column_indices(), b.mutable_data_file()->clear_column_indices();
      return dropped && valid && a.SerializeAsString() == b.SerializeAsString() ? "field id changed" : "";
    }
    return "";
  }

  void Manifest() {
    auto store = io::MakeLocalStore();
    const std::string path = table::LatestManifest(*store, ds)->path;
    const std::string bytes = ReadFileToString(path);
    for (const auto& fragment : manifest.fragments())
      for (int o = 0; o < fragment.overlays_size(); ++o) {
        const auto& overlay = fragment.overlays(o);
        // The message's bytes as the manifest holds them (the last copy: the transaction
        // before it holds the overlays too, unstamped).
        const std::string message = overlay.SerializeAsString();
        const size_t at = bytes.rfind(message);
        ASSERT_NE(at, std::string::npos);
        Tally t;
        const uint64_t bits = message.size() * 8, stride = Stride(bits, Scaled(40, 1 << 30));
        for (uint64_t bit = stride / 2; bit < bits; bit += stride) {
          std::string damaged_message = message;
          FlipBit(damaged_message, bit);
          lance::table::DataOverlayFile damaged;
          std::string undetectable;
          Covered cells;
          AddCoverage(fragment, overlay, cells);
          if (damaged.ParseFromString(damaged_message)) {
            undetectable = UndetectableClass(fragment, overlay, damaged);
            AddCoverage(fragment, damaged, cells);
            // A field it now names may take any of the overlay's cells.
            const Covered covered = cells;
            for (int32_t id : damaged.data_file().fields())
              if (id >= 0 && id < int32_t(kColumns.size()))
                for (const auto& [column, rows] : covered) cells[kColumns[size_t(id)]].insert(rows.begin(), rows.end());
          }
          std::string damaged_bytes = bytes;
          damaged_bytes.replace(at, message.size(), damaged_message);
          WriteStringToFile(path, damaged_bytes);
          Judge(ds, scratch, clean,
                fmt::format("fragment {} overlay {} message bit {} (byte {})", fragment.id(), o, bit, bit / 8),
                undetectable, cells, t);
        }
        WriteStringToFile(path, bytes);
        Figures(fmt::format("overlay damage ({}, fragment {} overlay {} in the manifest, {} bytes): {}", version,
                            fragment.id(), o, message.size(), t.Summary()));
        for (const auto& f : t.failures) ADD_FAILURE() << version << " " << f;
      }
  }
};

class OverlayDamageTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OverlayDamageTest, FlippedOverlayFileBitsGiveTheSameAnswerOrAnError) { Sweep(GetParam()).Files(); }

TEST_P(OverlayDamageTest, FlippedOverlayManifestBitsGiveTheSameAnswerOrAnError) { Sweep(GetParam()).Manifest(); }

INSTANTIATE_TEST_SUITE_P(FileVersions, OverlayDamageTest, ::testing::Values("2.0", "2.2"),
                         [](const auto& info) { return "v" + std::string(1, info.param[0]) + info.param.substr(2); });

}  // namespace
}  // namespace lancelet::testing::reliability
