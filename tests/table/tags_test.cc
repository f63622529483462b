// Tags: the reference's `_refs/tags/<name>.json` files, and cleanup keeping what they name.

#include <gtest/gtest.h>

#include <cctype>

#include "io/object_store.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/manifest_store.h"
#include "table/tags.h"

namespace lancelet {
namespace {

using lancelet::testing::ThrownKind;

using testing::IdNameBatch;
using testing::TempDir;

class TagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ds_ = Dataset::Write(uri_, {IdNameBatch(0, 10)});
    ds_ = ds_->Append({IdNameBatch(10, 5)});
    ds_ = ds_->Delete("id < 2");  // version 3: 13 rows
  }
  // The tag file's bytes, through the dataset's store.
  std::string TagFile(const std::string& name) {
    auto [store, path] = io::OpenStore(uri_, {});
    return store->OpenRead(path + "/_refs/tags/" + name + ".json")->ReadAll();
  }
  uint64_t ManifestSize(uint64_t version) {
    auto [store, path] = io::OpenStore(uri_, {});
    return store->Head(table::FindManifest(*store, path, version)->path)->size;
  }
  TempDir dir_;
  std::string uri_ = dir_.Uri("ds.lance");
  DatasetPtr ds_;
};

TEST_F(TagsTest, CreateListCheckoutUpdateDelete) {
  ds_->CreateTag("v1.0", 1);
  ds_->CreateTag("latest-ish", 2);
  auto tags = ds_->ListTags();
  ASSERT_EQ(tags.size(), 2u);
  EXPECT_EQ(tags[0].name, "latest-ish");
  EXPECT_EQ(tags[0].version, 2u);
  EXPECT_EQ(tags[1].name, "v1.0");
  EXPECT_EQ(tags[1].version, 1u);
  EXPECT_EQ(tags[1].manifest_size, ManifestSize(1));
  // The reference's keys in its order (its serde struct's), times in RFC 3339 UTC.
  const std::string file = TagFile("v1.0");
  // (std::regex is avoided: gcc 12 warns inside it under the sanitizers, and warnings fail the build.)
  const std::string when = file.substr(file.find("\"createdAt\": \"") + 14, 30);
  EXPECT_EQ(file, "{\n  \"branch\": null,\n  \"version\": 1,\n  \"createdAt\": \"" + when + "\",\n  \"updatedAt\": \"" +
                      when + "\",\n  \"manifestSize\": " + std::to_string(ManifestSize(1)) + ",\n  \"metadata\": {}\n}");
  const std::string shape = "dddd-dd-ddTdd:dd:dd.dddddddddZ";  // d: a digit
  ASSERT_EQ(when.size(), shape.size()) << file;
  for (size_t i = 0; i < shape.size(); ++i)
    EXPECT_TRUE(shape[i] == 'd' ? std::isdigit(static_cast<unsigned char>(when[i])) != 0 : when[i] == shape[i]) << when;
  EXPECT_EQ(ds_->CheckoutTag("v1.0")->CountRows(), 10u);
  EXPECT_EQ(Dataset::OpenTag(uri_, "latest-ish")->version(), 2u);
  EXPECT_EQ(Dataset::OpenTag(uri_, "latest-ish")->CountRows(), 15u);
  const std::string created = file.substr(file.find("createdAt"), 48);
  ds_->UpdateTag("v1.0", 3);
  EXPECT_EQ(TagFile("v1.0").substr(file.find("createdAt"), 48), created);  // updatedAt moves, createdAt stays
  EXPECT_EQ(ds_->CheckoutTag("v1.0")->CountRows(), 13u);
  ds_->DeleteTag("latest-ish");
  ASSERT_EQ(ds_->ListTags().size(), 1u);
  EXPECT_EQ(ds_->ListTags()[0].name, "v1.0");
}

TEST_F(TagsTest, RefusalsFollowTheReference) {
  ds_->CreateTag("a", 1);
  EXPECT_EQ(ThrownKind([&] { ds_->CreateTag("a", 2); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(ds_->CheckoutTag("a")->version(), 1u);  // the existing tag is untouched
  EXPECT_EQ(ThrownKind([&] { ds_->DeleteTag("missing"); }), ErrorKind::kNotFound);
  EXPECT_EQ(ThrownKind([&] { ds_->UpdateTag("missing", 1); }), ErrorKind::kNotFound);
  EXPECT_EQ(ThrownKind([&] { ds_->CheckoutTag("missing"); }), ErrorKind::kNotFound);
  EXPECT_EQ(ThrownKind([&] { Dataset::OpenTag(uri_, "missing"); }), ErrorKind::kNotFound);
  EXPECT_EQ(ThrownKind([&] { ds_->CreateTag("b", 9); }), ErrorKind::kNotFound);
  EXPECT_EQ(ThrownKind([&] { ds_->UpdateTag("a", 9); }), ErrorKind::kNotFound);
  for (const char* bad : {"", ".a", "a.", "a..b", "a.lock", "a/b", "../x", "a b", "t@1", "ref*"})
    EXPECT_EQ(ThrownKind([&] { ds_->CreateTag(bad, 1); }), ErrorKind::kInvalidArgument) << bad;
  for (const char* good : {"ref", "ref-with-dashes", "ref.extension", "ref_with_underscores", "v1.2.3-rc4"})
    ds_->CreateTag(good, 2);
  EXPECT_EQ(ds_->ListTags().size(), 6u);
}

TEST_F(TagsTest, ReadsTheReferencesSpellingAndRefusesAFileWithoutAVersion) {
  auto [store, path] = io::OpenStore(uri_, {});
  store->CreateDir(path + "/_refs/tags");
  store->Put(path + "/_refs/tags/theirs.json",
             R"({"branch":null,"version":2,"createdAt":"2026-01-01T00:00:00Z","manifestSize":77,"metadata":{}})");
  auto tag = table::GetTag(*store, path, "theirs");
  EXPECT_EQ(tag.version, 2u);
  EXPECT_EQ(tag.manifest_size, 77u);
  store->Put(path + "/_refs/tags/broken.json", R"({"manifestSize":77})");
  try {
    ds_->ListTags();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("broken.json' names no version"), std::string::npos) << e.what();
  }
}

TEST_F(TagsTest, CleanupKeepsTaggedVersionsAndTheirFiles) {
  ds_->CreateTag("keep", 1);
  CleanupOptions o;
  o.keep_versions = 1;
  o.force = true;
  auto stats = ds_->Cleanup(o);
  EXPECT_EQ(stats.versions_removed, 1u);  // version 2 only
  EXPECT_EQ(Dataset::OpenTag(uri_, "keep")->CountRows(), 10u);
  EXPECT_EQ(Dataset::OpenTag(uri_, "keep")->NewScan().ToBatch()->num_rows(), 10);
  ds_->DeleteTag("keep");
  EXPECT_EQ(ds_->Cleanup(o).versions_removed, 1u);
}

}  // namespace
}  // namespace lancelet
