// The append-only directory's manifest (persistence/log/manifest.h) as Redis 7.0 writes and
// reads it: a manifest redis-server wrote parses, names and lines come out as Redis's, quoting
// of names, and every error Redis reports for a bad manifest.
#include "persistence/log/manifest.h"

#include <gtest/gtest.h>

namespace gigakv::persistence::log {
namespace {

TEST(ManifestTest, ParsesWhatRedisWrites) {
  // redis-server 7.0 after one BGREWRITEAOF: base 2, incr 2.
  absl::StatusOr<Manifest> manifest = ParseManifest(
      "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n");
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  ASSERT_TRUE(manifest->base.has_value());
  EXPECT_EQ(manifest->base->name, "appendonly.aof.2.base.rdb");
  EXPECT_EQ(manifest->base_seq, 2);
  ASSERT_EQ(manifest->incrs.size(), 1u);
  EXPECT_EQ(manifest->incrs[0], (ManifestFile{"appendonly.aof.2.incr.aof", 2, 'i'}));
  EXPECT_EQ(manifest->incr_seq, 2);
  EXPECT_EQ(FormatManifest(*manifest),
            "file appendonly.aof.2.base.rdb seq 2 type b\n"
            "file appendonly.aof.2.incr.aof seq 2 type i\n");
}

TEST(ManifestTest, NamesAndOrder) {
  Manifest manifest;
  EXPECT_EQ(AddBase(&manifest, "appendonly.aof"), "appendonly.aof.1.base.rdb");
  EXPECT_EQ(AddIncr(&manifest, "appendonly.aof"), "appendonly.aof.1.incr.gkv");
  // A rewrite: the old base and log become history, listed after the base.
  RetireIncrs(&manifest);
  EXPECT_EQ(AddBase(&manifest, "appendonly.aof"), "appendonly.aof.2.base.rdb");
  EXPECT_EQ(AddIncr(&manifest, "appendonly.aof"), "appendonly.aof.2.incr.gkv");
  const std::string text = FormatManifest(manifest);
  EXPECT_EQ(text,
            "file appendonly.aof.2.base.rdb seq 2 type b\n"
            "file appendonly.aof.1.base.rdb seq 1 type h\n"
            "file appendonly.aof.1.incr.gkv seq 1 type h\n"
            "file appendonly.aof.2.incr.gkv seq 2 type i\n");
  absl::StatusOr<Manifest> parsed = ParseManifest(text);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->base, manifest.base);
  EXPECT_EQ(parsed->incrs, manifest.incrs);
  EXPECT_EQ(ManifestName("appendonly.aof"), "appendonly.aof.manifest");
  EXPECT_EQ(TempManifestName("appendonly.aof"), "temp-appendonly.aof.manifest");
}

TEST(ManifestTest, QuotedNamesRoundTrip) {
  Manifest manifest;
  AddBase(&manifest, "my file.aof");
  const std::string text = FormatManifest(manifest);
  EXPECT_EQ(text, "file \"my file.aof.1.base.rdb\" seq 1 type b\n");
  absl::StatusOr<Manifest> parsed = ParseManifest(text);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->base->name, "my file.aof.1.base.rdb");
}

TEST(ManifestTest, CommentsExtraKeysAndCaseAreAccepted) {
  absl::StatusOr<Manifest> parsed =
      ParseManifest("# written by hand\nFILE a.1.incr.aof SEQ 1 TYPE i future x\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->incrs.size(), 1u);
  EXPECT_EQ(parsed->incrs[0].name, "a.1.incr.aof");
}

TEST(ManifestTest, RedisErrors) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "Found an empty AOF manifest"},
      {"file a seq 1 type b", "The AOF manifest file contains too long line"},
      {"file a seq 1 type b\n" + std::string(1100, 'x') + "\n",
       "The AOF manifest file contains too long line"},
      {"\n", "Invalid AOF manifest file format"},
      {"file a seq 1\n", "Invalid AOF manifest file format"},
      {"file a seq 1 type\n", "Invalid AOF manifest file format"},
      {"file a seq 0 type b\n", "Invalid AOF manifest file format"},
      {"file \"a seq 1 type b\n", "Invalid AOF manifest file format"},
      {"file dir/a seq 1 type b\n", "File can't be a path, just a filename"},
      {"file a seq 1 type b\nfile b seq 2 type b\n", "Found duplicate base file information"},
      {"file a seq 2 type i\nfile b seq 2 type i\n", "Found a non-monotonic sequence number"},
      {"file a seq 1 type x\n", "Unknown AOF file type"},
  };
  for (const auto& [text, error] : cases) {
    absl::StatusOr<Manifest> parsed = ParseManifest(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(std::string(parsed.status().message()).find(error), std::string::npos)
        << parsed.status() << " for " << text;
  }
}

}  // namespace
}  // namespace gigakv::persistence::log
