// TIMESTAMP AS OF between two commits reads the first: the commit times come from the
// manifests, and the statement's time is UTC.
#include <chrono>
#include <thread>

#include <fmt/chrono.h>
#include <gtest/gtest.h>

#include "lancelet/sql.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

TEST(SqlTimeTravelTest, TimestampAsOfReadsTheVersionCommittedByThen) {
  TempDir dir;
  SqlSession session(dir.RootUri());
  session.Execute("CREATE TABLE t (id int64) AS VALUES (1), (2)");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto between = std::chrono::floor<std::chrono::microseconds>(std::chrono::system_clock::now());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  session.Execute("INSERT INTO t VALUES (3)");
  const auto seconds = std::chrono::floor<std::chrono::seconds>(between);
  const std::string at = fmt::format("{:%Y-%m-%d %H:%M:%S}.{:06d}", seconds,  // UTC
                                     (between - seconds).count());
  auto count = [&](const std::string& from) {
    return session.Execute("SELECT count(*) AS n FROM t " + from).rows->column(0)->values<int64_t>()[0];
  };
  EXPECT_EQ(count("TIMESTAMP AS OF '" + at + "'"), 2);
  EXPECT_EQ(count("TIMESTAMP AS OF TIMESTAMP '" + at + "' + INTERVAL 1 HOUR"), 3);
  EXPECT_EQ(count(""), 3);
}

}  // namespace
}  // namespace lancelet::testing
