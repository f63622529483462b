// Progress lines of long commands: drawn on a terminal's stderr, never into piped output.
// LANCELET_PROGRESS_AFTER_MS=0 draws from the first batch (by default, only work that runs
// past half a second shows one).
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "support/test_env.h"

namespace lancelet::testing {
namespace {

// Runs `command_line` with /bin/sh on a pseudo-terminal (its stdin, stdout and stderr) and
// returns everything it printed there.
std::string OnTerminal(const std::string& command_line) {
  int fd = -1;
  const pid_t pid = forkpty(&fd, nullptr, nullptr, nullptr);
  if (pid == 0) {
    setenv("LANCELET_PROGRESS_AFTER_MS", "0", 1);
    execl("/bin/sh", "sh", "-c", command_line.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) out.append(buffer, size_t(n));
  int status = 0;
  waitpid(pid, &status, 0);
  close(fd);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  return out;
}

class ProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string text;
    for (int i = 0; i < 200'000; ++i) text += "{\"id\":" + std::to_string(i) + "}\n";
    WriteStringToFile(rows_, text);
  }
  TempDir dir_;
  std::string rows_ = dir_.Join("rows.jsonl");
};

TEST_F(ProgressTest, CreateAndExportDrawOnATerminal) {
  const std::string ds = dir_.Join("t.lance");
  const std::string lancelet = ShellQuote(LanceletBinary());
  std::string out = OnTerminal(lancelet + " create " + ShellQuote(ds) + " --from " + ShellQuote(rows_));
  // The file's size is known: the share of its bytes read, and the time left.
  EXPECT_NE(out.find("\r\033[Kcreating " + ds + " ["), std::string::npos) << out;
  EXPECT_NE(out.find("% ("), std::string::npos) << out;
  EXPECT_NE(out.find(" rows, "), std::string::npos) << out;
  EXPECT_NE(out.find(" s left)"), std::string::npos) << out;
  EXPECT_NE(out.find("created " + ds + " at version 1: 200000 rows"), std::string::npos) << out;

  // From standard input, the rows alone.
  out = OnTerminal("cat " + ShellQuote(rows_) + " | " + lancelet + " create " + ShellQuote(ds + "2") +
                   " --from - --input-format jsonl");
  EXPECT_NE(out.find("\r\033[Kcreating " + ds + "2: "), std::string::npos) << out;
  EXPECT_NE(out.find(" rows ("), std::string::npos) << out;
  EXPECT_EQ(out.find("left)"), std::string::npos) << out;

  // A scan into a file counts toward the table's rows, on the terminal.
  out = OnTerminal(lancelet + " scan " + ShellQuote(ds) + " --format csv > " + ShellQuote(dir_.Join("out.csv")));
  EXPECT_NE(out.find("scanning " + ds + " ["), std::string::npos) << out;
  EXPECT_NE(out.find("% ("), std::string::npos) << out;
  EXPECT_NE(out.find(" of 200,000 rows"), std::string::npos) << out;
  EXPECT_EQ(SplitLines(ReadFileToString(dir_.Join("out.csv"))).size(), 200'001u);
}

TEST_F(ProgressTest, PipedOutputHasNone) {
  const std::string ds = dir_.Join("t.lance");
  auto r = RunCommand("LANCELET_PROGRESS_AFTER_MS=0 " + ShellQuote(LanceletBinary()) + " create " + ShellQuote(ds) +
                      " --from " + ShellQuote(rows_));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  r = RunCommand("LANCELET_PROGRESS_AFTER_MS=0 " + ShellQuote(LanceletBinary()) + " scan " + ShellQuote(ds) +
                 " --format csv");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(SplitLines(r.out).size(), 200'001u);
}

}  // namespace
}  // namespace lancelet::testing
