// The manifest builder's fragment ids: never one an existing fragment holds.
#include <gtest/gtest.h>

#include "table/commit.h"
#include "table/manifest_builder.h"

namespace lancelet::table {
namespace {

lance::table::Transaction AppendOf(int fragments) {
  lance::table::Transaction t;
  for (int i = 0; i < fragments; ++i) t.mutable_append()->add_fragments()->set_physical_rows(1);
  return t;
}

// Writers before lance 0.2x left max_fragment_id out when it was 0 (a proto3 default):
// such a manifest's next id is one past its highest fragment, as the reference reads it.
TEST(ManifestBuilderTest, AManifestWithoutMaxFragmentIdContinuesAfterItsHighestFragment) {
  lance::table::Manifest old;
  old.set_version(3);
  old.add_fragments()->set_id(0);
  EXPECT_EQ(NextFragmentId(old), 1u);
  const auto next = BuildManifest(&old, AppendOf(2), CommitOptions());
  ASSERT_EQ(next.fragments_size(), 3);
  EXPECT_EQ(next.fragments(1).id(), 1u);
  EXPECT_EQ(next.fragments(2).id(), 2u);
  EXPECT_EQ(next.max_fragment_id(), 2u);

  old.set_max_fragment_id(7);  // ids above the fragments present were given and removed
  EXPECT_EQ(NextFragmentId(old), 8u);
  EXPECT_EQ(NextFragmentId(lance::table::Manifest()), 0u);
}

}  // namespace
}  // namespace lancelet::table
