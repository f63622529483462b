// The manifest builder: fragment ids never one an existing fragment holds; what a new
// manifest keeps of the one it follows.
#include <google/protobuf/unknown_field_set.h>
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

google::protobuf::UnknownFieldSet& Unknown(google::protobuf::Message& m) {
  return *m.GetReflection()->MutableUnknownFields(&m);
}
const google::protobuf::UnknownFieldSet& UnknownOf(const google::protobuf::Message& m) {
  return m.GetReflection()->GetUnknownFields(m);
}

// pylance 14.0.2 writes the transaction section's file offset in Manifest field 23, which
// lancelet's proto does not name. Carried into the next manifest file it would point at
// other bytes (pylance 14 panicked opening such a manifest): a new manifest keeps none of
// the fields lancelet does not know, and its own (config, fragments) as before.
TEST(ManifestBuilderTest, FieldsLanceletDoesNotKnowAreNotCarriedIntoTheNextManifest) {
  lance::table::Manifest old;
  old.set_version(2);
  old.add_fragments()->set_id(0);
  (*old.mutable_config())["lance.example"] = "kept";
  Unknown(old).AddVarint(23, 411);
  Unknown(*old.mutable_fragments(0)).AddVarint(99, 5);
  lance::table::Manifest reparsed;
  ASSERT_TRUE(reparsed.ParseFromString(old.SerializeAsString()));
  ASSERT_EQ(UnknownOf(reparsed).field_count(), 1);
  EXPECT_EQ(UnknownOf(reparsed).field(0).number(), 23);

  const auto next = BuildManifest(&reparsed, AppendOf(1), CommitOptions());
  EXPECT_EQ(next.version(), 3u);
  EXPECT_EQ(UnknownOf(next).field_count(), 0);
  EXPECT_EQ(next.config().at("lance.example"), "kept");
  ASSERT_EQ(next.fragments_size(), 2);
  // Inside a fragment nothing is a file position of the manifest: its fields stay.
  EXPECT_EQ(UnknownOf(next.fragments(0)).field_count(), 1);
}

}  // namespace
}  // namespace lancelet::table
