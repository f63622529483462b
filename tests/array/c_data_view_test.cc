// Arrow string_view / binary_view columns (polars' strings) through an Arrow C stream:
// hand-built views, inline (up to 12 bytes) and out of line in two variadic buffers,
// NULLs and offsets, taken as large_utf8 / large_binary.
#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "lancelet/array.h"
#include "lancelet/c_data.h"
#include "lancelet/error.h"
#include "lancelet/record_batch.h"

namespace lancelet {
namespace {

void ReleaseSchema(ArrowSchema* s) { s->release = nullptr; }
void ReleaseArray(ArrowArray* a) { a->release = nullptr; }

using View = std::array<uint8_t, 16>;

View Inline(std::string_view value) {
  View v{};
  int32_t size = int32_t(value.size());
  std::memcpy(v.data(), &size, 4);
  std::memcpy(v.data() + 4, value.data(), value.size());
  return v;
}

View OutOfLine(std::string_view value, int32_t buffer, int32_t offset) {
  View v{};
  int32_t size = int32_t(value.size());
  std::memcpy(v.data(), &size, 4);
  std::memcpy(v.data() + 4, value.data(), 4);  // the prefix
  std::memcpy(v.data() + 8, &buffer, 4);
  std::memcpy(v.data() + 12, &offset, 4);
  return v;
}

// A stream of one batch: s string_view (child offset 1, six views), b binary_view (no variadic
// buffers), n int64; five rows.
struct ViewStream {
  std::array<ArrowSchema, 3> columns{};
  std::array<ArrowSchema*, 3> column_ptrs{};
  ArrowSchema root{};
  std::vector<View> s_views, b_views;
  std::string data0 = "thirteen-byte", data1 = "xyzthis one is out of line";
  std::array<int64_t, 2> sizes{int64_t(13), int64_t(26)};
  uint8_t s_validity = 0b1111011;  // slot 2 is NULL
  std::array<int64_t, 5> n_values{10, 11, 12, 13, 14};
  std::array<const void*, 5> s_buffers{};
  std::array<const void*, 3> b_buffers{};
  std::array<const void*, 2> n_buffers{};
  std::array<ArrowArray, 3> arrays{};
  std::array<ArrowArray*, 3> array_ptrs{};
  const void* root_buffers[1] = {nullptr};
  ArrowArray batch{};
  bool sent = false;

  ViewStream() {
    const char* formats[] = {"vu", "vz", "l"};
    const char* names[] = {"s", "b", "n"};
    for (int i = 0; i < 3; ++i) {
      columns[size_t(i)] = ArrowSchema{formats[i], names[i], nullptr, ARROW_FLAG_NULLABLE, 0, nullptr, nullptr,
                                       ReleaseSchema, nullptr};
      column_ptrs[size_t(i)] = &columns[size_t(i)];
    }
    root = ArrowSchema{"+s", "", nullptr, 0, 3, column_ptrs.data(), nullptr, ReleaseSchema, nullptr};
    s_views = {Inline("zero"), Inline("short"), Inline(""), Inline("exactly12byt"),
               OutOfLine("this one is out of line", 1, 3), OutOfLine("thirteen-byte", 0, 0)};
    b_views = {Inline(std::string_view("\x00\x01", 2)), Inline(""), Inline("abc"), Inline(std::string(12, '\xff')),
               Inline("x")};
    s_buffers = {&s_validity, s_views.data(), data0.data(), data1.data(), sizes.data()};
    b_buffers = {nullptr, b_views.data(), nullptr};
    n_buffers = {nullptr, n_values.data()};
    arrays[0] = ArrowArray{5, 1, 1, 5, 0, nullptr, nullptr, nullptr, ReleaseArray, nullptr};
    arrays[0].buffers = s_buffers.data();
    arrays[1] = ArrowArray{5, 0, 0, 3, 0, nullptr, nullptr, nullptr, ReleaseArray, nullptr};
    arrays[1].buffers = b_buffers.data();
    arrays[2] = ArrowArray{5, 0, 0, 2, 0, nullptr, nullptr, nullptr, ReleaseArray, nullptr};
    arrays[2].buffers = n_buffers.data();
    for (size_t i = 0; i < 3; ++i) array_ptrs[i] = &arrays[i];
    batch = ArrowArray{5, 0, 0, 1, 3, root_buffers, array_ptrs.data(), nullptr, ReleaseArray, nullptr};
  }

  ArrowArrayStream Stream() {
    ArrowArrayStream stream{};
    stream.get_schema = [](ArrowArrayStream* st, ArrowSchema* out) {
      *out = static_cast<ViewStream*>(st->private_data)->root;
      return 0;
    };
    stream.get_next = [](ArrowArrayStream* st, ArrowArray* out) {
      auto* self = static_cast<ViewStream*>(st->private_data);
      if (self->sent) {
        std::memset(out, 0, sizeof(*out));
      } else {
        *out = self->batch;
        self->sent = true;
      }
      return 0;
    };
    stream.get_last_error = [](ArrowArrayStream*) -> const char* { return nullptr; };
    stream.release = [](ArrowArrayStream* st) { st->release = nullptr; };
    stream.private_data = this;
    return stream;
  }
};

std::vector<std::optional<std::string>> Values(const ArrayData& a) {
  std::vector<std::optional<std::string>> out;
  for (int64_t i = 0; i < a.length; ++i)
    out.push_back(a.IsNull(i) ? std::nullopt : std::optional<std::string>(a.GetView(i)));
  return out;
}

TEST(CDataViews, AStreamsViewColumnsArriveAsLargeStringsAndBinaries) {
  ViewStream views;
  ArrowArrayStream stream = views.Stream();
  auto reader = ImportArrayStream(&stream);
  EXPECT_EQ(reader->schema()->ToString(), "s:large_utf8, b:large_binary, n:int64");
  auto batch = reader->Next();
  ASSERT_NE(batch, nullptr);
  ASSERT_EQ(batch->num_rows(), 5);
  using S = std::vector<std::optional<std::string>>;
  EXPECT_EQ(Values(*batch->column(0)),
            (S{"short", std::nullopt, "exactly12byt", "this one is out of line", "thirteen-byte"}));
  EXPECT_EQ(batch->column(0)->null_count, 1);
  EXPECT_EQ(Values(*batch->column(1)),
            (S{std::string("\x00\x01", 2), "", "abc", std::string(12, '\xff'), "x"}));
  EXPECT_EQ(batch->column(2)->values<int64_t>()[4], 14);
  EXPECT_EQ(reader->Next(), nullptr);
}

TEST(CDataViews, TheBatchOffsetAppliesToEveryColumn) {
  ViewStream views;
  views.batch.offset = 1;
  views.batch.length = 4;
  ArrowArrayStream stream = views.Stream();
  auto batch = ImportArrayStream(&stream)->Next();
  using S = std::vector<std::optional<std::string>>;
  EXPECT_EQ(Values(*batch->column(0)), (S{std::nullopt, "exactly12byt", "this one is out of line", "thirteen-byte"}));
  EXPECT_EQ(Values(*batch->column(1)), (S{"", "abc", std::string(12, '\xff'), "x"}));
  EXPECT_EQ(batch->column(2)->values<int64_t>()[0], 11);
}

TEST(CDataViews, AViewPastItsBufferIsRefusedInOneLine) {
  ViewStream views;
  views.s_views[4] = OutOfLine("this one is out of line", 1, 4);  // 4 + 23 > 26
  ArrowArrayStream stream = views.Stream();
  auto reader = ImportArrayStream(&stream);
  try {
    reader->Next();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_STREQ(e.what(),
                 "Arrow C data: large_utf8 array (a view) slot 4 points at bytes [4, +23) of variadic buffer 1, "
                 "which holds 26 bytes");
  }
  views.s_views[4] = OutOfLine("this one is out of line", 2, 0);
  views.sent = false;
  ArrowArrayStream again = views.Stream();
  EXPECT_THROW(ImportArrayStream(&again)->Next(), Error);
}

TEST(CDataViews, ViewsOutsideAStreamsTopLevelAreNotSupported) {
  ViewStream views;
  try {
    ImportSchema(&views.root);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotSupported);
    EXPECT_STREQ(e.what(), "Arrow C data: field 's' has format 'vu' (a string view), which lancelet imports only as "
                           "a top-level column of an Arrow C stream");
  }
}

}  // namespace
}  // namespace lancelet
