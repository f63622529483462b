// `lancelet sql` driven through a pseudo-terminal, as a person types into it: line editing
// and history (libedit), dot commands, Ctrl-C, and the row limit of table output.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_env.h"

namespace lancelet::testing {
namespace {

// Runs `lancelet sql --db DB` on a pty with HOME=home, types each input (waiting until the
// output has been quiet for a moment, so that the shell reads them one at a time), and
// returns everything it printed.
std::string TypeInto(const std::string& db, const std::string& home, const std::vector<std::string>& inputs) {
  int fd = -1;
  const pid_t pid = forkpty(&fd, nullptr, nullptr, nullptr);
  if (pid == 0) {
    setenv("HOME", home.c_str(), 1);
    setenv("TERM", "xterm", 1);
    const std::string binary = LanceletBinary();
    execl(binary.c_str(), binary.c_str(), "sql", "--db", db.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  EXPECT_GT(pid, 0);
  std::string out;
  // Reads until the output has been quiet for `quiet_ms`; false once the shell has exited.
  auto drain = [&](int quiet_ms) {
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, quiet_ms) <= 0) return true;
      char buffer[4096];
      const ssize_t n = read(fd, buffer, sizeof buffer);
      if (n <= 0) return false;
      out.append(buffer, size_t(n));
    }
  };
  drain(500);
  for (const auto& input : inputs) {
    EXPECT_EQ(write(fd, input.data(), input.size()), ssize_t(input.size()));
    drain(300);
  }
  // Everything up to the exit: a slow shell must not block on a full pty while we wait.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (drain(1000) && std::chrono::steady_clock::now() < deadline) {
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(fd);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) <= 1) << out;
  return out;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class ShellPtyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.Join("db");
    home_ = dir_.Join("home");
    std::filesystem::create_directories(home_);
    std::filesystem::create_directories(db_);
    const std::string rows = dir_.Join("rows.jsonl");
    std::string text;
    for (int i = 0; i < 100; ++i) text += "{\"id\":" + std::to_string(i) + ",\"name\":\"n" + std::to_string(i) + "\"}\n";
    WriteStringToFile(rows, text);
    Lancelet({"create", db_ + "/people.lance", "--from", rows});
  }
  TempDir dir_;
  std::string db_, home_;
};

TEST_F(ShellPtyTest, UpArrowRecallsTheLastStatementAndHistoryOutlivesTheSession) {
  const std::string out = TypeInto(db_, home_, {"SELECT 40 + 2 AS answer;\n", "\x1b[A\n", ".quit\n"});
  EXPECT_EQ(Count(out, "(1 row)"), 2u) << out;  // the recalled statement ran again
  EXPECT_EQ(out.find("unexpected character"), std::string::npos) << out;
  // A new session finds it in ~/.lancelet_history, before the .quit.
  const std::string again = TypeInto(db_, home_, {"\x1b[A\x1b[A\n", ".quit\n"});
  EXPECT_NE(again.find("answer"), std::string::npos) << again;
  EXPECT_NE(again.find("42"), std::string::npos) << again;
  EXPECT_TRUE(std::filesystem::exists(home_ + "/.lancelet_history"));
}

TEST_F(ShellPtyTest, EditingKeysChangeTheLineBeforeItRuns) {
  // "SELECT 6 AS x;", then six left arrows (to just after the 6), backspace, 7.
  const std::string out = TypeInto(db_, home_, {"SELECT 6 AS x;\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D\x7f" "7\n", ".quit\n"});
  EXPECT_NE(out.find("(1 row)"), std::string::npos) << out;
  EXPECT_NE(out.find("\n7\r\n"), std::string::npos) << out;
}

TEST_F(ShellPtyTest, AStatementEndsAtASemicolonOutsideComments) {
  const std::string out = TypeInto(db_, home_, {"SELECT 5 /* ; */\n", "AS five; /* done */\n", ".quit\n"});
  EXPECT_NE(out.find("     ...> "), std::string::npos) << "the first line was not a whole statement: " << out;
  EXPECT_NE(out.find("five\r\n----\r\n   5\r\n(1 row)"), std::string::npos) << out;
}

TEST_F(ShellPtyTest, DotCommands) {
  const std::string out = TypeInto(db_, home_,
                                   {".help\n", ".tables\n", ".schema people\n", ".mode csv\n",
                                    "SELECT id, name FROM people WHERE id = 3;\n", ".timer on\n", "SELECT 1 AS one;\n",
                                    ".nope\n", ".maxrows x\n", ".quit\n", "SELECT 99 AS never;\n"});
  EXPECT_NE(out.find(".schema [TABLE]"), std::string::npos) << out;
  EXPECT_NE(out.find("\npeople\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("people(id int64, name utf8)"), std::string::npos) << out;
  EXPECT_NE(out.find("id,name\r\n3,n3\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Run Time: "), std::string::npos) << out;
  EXPECT_NE(out.find("lancelet: unknown command '.nope'; .help lists the commands"), std::string::npos) << out;
  EXPECT_NE(out.find("lancelet: .maxrows takes a number of rows (0: all)"), std::string::npos) << out;
  EXPECT_EQ(out.find("\n99\r\n"), std::string::npos) << ".quit leaves: " << out;
}

TEST_F(ShellPtyTest, CtrlCStopsTheRunningStatementOrDropsTheTypedOneAndTheShellGoesOn) {
  // A statement that would run for many minutes, interrupted once the output is quiet;
  // then a statement half typed, dropped by Ctrl-C at the prompt.
  const std::string out = TypeInto(db_, home_,
                                   {"SELECT count(*) AS n FROM range(100000000000) WHERE random() < 0;\n", "\x03",
                                    "SELECT 40 + 2 AS after;\n", "SELECT 99 AS dropped", "\x03", "SELECT 7 AS y;\n",
                                    ".quit\n"});
  EXPECT_NE(out.find("lancelet: interrupted (Ctrl-C)"), std::string::npos) << out;
  EXPECT_NE(out.find("after\r\n-----\r\n   42\r\n(1 row)"), std::string::npos) << out;
  EXPECT_NE(out.find("y\r\n-\r\n7\r\n(1 row)"), std::string::npos) << out;
  EXPECT_EQ(Count(out, "(1 row)"), 2u) << "the interrupted count and the dropped line print no rows: " << out;
  EXPECT_EQ(out.find("\n99\r\n"), std::string::npos) << out;
}

TEST_F(ShellPtyTest, TabCompletesKeywordsTablesColumnsAndDotCommands) {
  // "sel", "na", "peo" and ".sch" are each the start of one candidate only.
  const std::string out = TypeInto(db_, home_, {"sel\t na\t FROM peo\t WHERE id = 3;\n", ".sch\t peo\t\n", ".quit\n"});
  EXPECT_NE(out.find("name\r\n----\r\nn3\r\n(1 row)"), std::string::npos) << out;
  EXPECT_NE(out.find("people(id int64, name utf8)"), std::string::npos) << out;
  EXPECT_EQ(out.find("lancelet: "), std::string::npos) << out;
}

TEST_F(ShellPtyTest, ImportReadAndOutputOnTheTerminal) {
  const std::string csv = dir_.Join("more.csv"), script = dir_.Join("script.sql"), out_file = dir_.Join("out.csv");
  WriteStringToFile(csv, "id,name\n500,five hundred\n501,five hundred one\n");
  WriteStringToFile(script, "SELECT count(*) AS n FROM people;\n.mode csv\n");
  const std::string out = TypeInto(db_, home_,
                                   {".import " + csv + " people\n", ".read " + script + "\n", ".output " + out_file + "\n",
                                    "SELECT id, name FROM people WHERE id >= 500 ORDER BY id;\n", ".output\n",
                                    "SELECT 'screen' AS back;\n", ".quit\n"});
  EXPECT_NE(out.find("INSERT 2 rows"), std::string::npos) << out;
  EXPECT_NE(out.find("  n\r\n---\r\n102\r\n(1 row)"), std::string::npos) << out;  // .read ran the count
  EXPECT_NE(out.find("back\r\nscreen\r\n"), std::string::npos) << out;         // .read's .mode csv stayed
  EXPECT_EQ(out.find("five hundred"), std::string::npos) << ".output kept the rows off the screen: " << out;
  EXPECT_EQ(ReadFileToString(out_file), "id,name\n500,five hundred\n501,five hundred one\n");
}

TEST_F(ShellPtyTest, TableOutputShowsTheFirstAndLastRowsOfALongResult) {
  const std::string out = TypeInto(db_, home_, {"SELECT id FROM people;\n", ".maxrows 4\n",
                                                "SELECT id FROM people WHERE id >= 90;\n", ".quit\n"});
  EXPECT_NE(out.find("(100 rows, 40 shown)"), std::string::npos) << out;
  EXPECT_NE(out.find("\r\n19\r\n …\r\n80\r\n"), std::string::npos) << out;  // the first 20, then the last 20
  EXPECT_NE(out.find("\r\n91\r\n …\r\n98\r\n99\r\n(10 rows, 4 shown)"), std::string::npos) << out;
}

}  // namespace
}  // namespace lancelet::testing
