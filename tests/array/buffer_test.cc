// Buffer allocation: zero-filled and uninitialized allocations, the zero padding, and
// the reuse of recently freed large blocks (which must never leak old bytes into
// Allocate's zero-filled buffers).
#include <gtest/gtest.h>

#include <cstring>

#include "lancelet/array.h"
#include "lancelet/builder.h"
#include "lancelet/error.h"

namespace lancelet {
namespace {

constexpr size_t kLarge = size_t(4) << 20;  // large enough to be recycled

bool AllBytesAre(const uint8_t* data, size_t n, uint8_t value) {
  for (size_t i = 0; i < n; ++i)
    if (data[i] != value) return false;
  return true;
}

TEST(Buffer, AllocateIsZeroFilledAndAligned) {
  auto b = Buffer::Allocate(1000);
  EXPECT_EQ(b->size(), 1000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % 64, 0u);
  EXPECT_TRUE(AllBytesAre(b->data(), 1024, 0));  // with the padding to 64 bytes
}

TEST(Buffer, UninitializedAllocationStillZeroesThePadding) {
  auto b = Buffer::AllocateUninitialized(1000);
  EXPECT_EQ(b->size(), 1000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % 64, 0u);
  EXPECT_TRUE(AllBytesAre(b->data() + 1000, 24, 0));
}

TEST(Buffer, CopyHoldsTheBytesAndZeroPadding) {
  const char text[] = "lancelet";
  auto b = Buffer::Copy(text, 8);
  EXPECT_EQ(b->view(), "lancelet");
  EXPECT_TRUE(AllBytesAre(b->data() + 8, 56, 0));
}

TEST(Buffer, ViewSharesItsOwnersBytesAndKeepsThemAlive) {
  std::shared_ptr<Buffer> view;
  const uint8_t* owner_bytes;
  {
    auto owner = Buffer::Copy("0123456789", 10);
    owner_bytes = owner->data();
    view = Buffer::View(owner, 3, 4);
  }
  EXPECT_EQ(view->data(), owner_bytes + 3);
  EXPECT_EQ(view->view(), "3456");
  EXPECT_THROW(Buffer::View(view, 2, 3), Error);
}

TEST(ViewRows, ViewsFixedWidthRowsAndTheirValidityWithoutCopying) {
  // 200 int32 rows, every 3rd NULL; a bool column of row % 5 == 0.
  FixedWidthBuilder<int32_t> ints(DataType::Int32());
  BoolBuilder bools(DataType::Bool());
  for (int32_t i = 0; i < 200; ++i) {
    if (i % 3 == 0) ints.AppendNull();
    else ints.Append(i);
    bools.Append(i % 5 == 0);
  }
  ArrayPtr a = ints.Finish(), b = bools.Finish();
  ArrayPtr middle = ViewRows(a, 64, 64), tail = ViewRows(a, 128, 72), flags = ViewRows(b, 128, 72);
  EXPECT_EQ(middle->buffers[1]->data(), a->buffers[1]->data() + 64 * 4);
  EXPECT_EQ(middle->length, 64);
  EXPECT_EQ(middle->null_count, 21);  // rows 66, 69, ..., 126
  EXPECT_EQ(tail->null_count, 24);    // rows 129, ..., 198
  for (int64_t i = 0; i < 72; ++i) {
    EXPECT_TRUE(GetScalar(*tail, i).Equals(GetScalar(*a, 128 + i))) << i;
    EXPECT_TRUE(GetScalar(*flags, i).Equals(GetScalar(*b, 128 + i))) << i;
  }
  EXPECT_EQ(ViewRows(a, 0, 200), a);
  EXPECT_THROW(ViewRows(a, 10, 64), Error);   // a bitmap would not start on a byte
  EXPECT_THROW(ViewRows(a, 64, 10), Error);   // ends inside the array, off a boundary
  EXPECT_THROW(ViewRows(MakeArray(DataType::Utf8(), {Scalar{DataType::Utf8(), std::string("x")}}), 0, 1), Error);
}

TEST(Buffer, FreedLargeBlockIsReusedForTheSameSize) {
  const uint8_t* first;
  {
    auto b = Buffer::AllocateUninitialized(kLarge);
    first = b->data();
  }
  auto again = Buffer::AllocateUninitialized(kLarge);
  EXPECT_EQ(again->data(), first);
}

TEST(Buffer, ReusedBlockIsZeroFilledByAllocate) {
  {
    auto dirty = Buffer::AllocateUninitialized(kLarge);
    std::memset(dirty->mutable_data(), 0xAB, kLarge);
  }
  auto clean = Buffer::Allocate(kLarge);
  EXPECT_TRUE(AllBytesAre(clean->data(), kLarge, 0));
}

TEST(Buffer, ReusedBlockForASlightlySmallerSizeKeepsTheZeroPadding) {
  {
    auto dirty = Buffer::AllocateUninitialized(kLarge);
    std::memset(dirty->mutable_data(), 0xCD, kLarge);
  }
  const size_t size = kLarge - 1000;  // within an eighth: served by the freed block
  auto b = Buffer::AllocateUninitialized(size);
  EXPECT_EQ(b->size(), size);
  const size_t padded = (size + 63) / 64 * 64;
  EXPECT_TRUE(AllBytesAre(b->data() + size, padded - size, 0));
}

#if defined(__SANITIZE_ADDRESS__)
// A freed large block waits in the recycler, still allocated as far as malloc knows; it
// is poisoned there, so AddressSanitizer still reports a read through a stale pointer.
TEST(Buffer, UseOfAKeptBlockAfterFreeIsReportedUnderAddressSanitizer) {
  EXPECT_DEATH(
      {
        const uint8_t* stale;
        {
          auto b = Buffer::Allocate(kLarge);
          stale = b->data();
        }
        volatile uint8_t byte = stale[kLarge / 2];
        (void)byte;
      },
      "use-after-poison");
}
#endif

}  // namespace
}  // namespace lancelet
