// Shared helpers for lancelet's tests: temporary directories, running the CLI and the
// reference implementation (the oracle), and reading their output.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lancelet/error.h"

namespace lancelet::testing {

// A fresh directory under the build tree, removed when the object dies (unless
// LANCELET_KEEP_TEST_DIRS is set).
class TempDir {
 public:
  // kLocalScratch: files the test itself keeps on the local file system (a subprocess's
  // captured output). Otherwise, under LANCELET_TEST_STORE=memory, the directory must stay
  // empty: anything found in it when it dies was written behind the store's back, and
  // fails the test.
  enum class Use { kDatasets, kLocalScratch };
  explicit TempDir(Use use = Use::kDatasets);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }
  // Where a test's datasets go when it reaches them only through lancelet: this
  // directory, or, under LANCELET_TEST_STORE=memory (the suites' second run, see
  // tests/CMakeLists.txt), the same name in the process's memory:// store, which proves
  // that nothing under test touches the file system behind the store's back.
  std::string RootUri() const;
  std::string Uri(const std::string& name) const { return RootUri() + "/" + name; }
  // Under LANCELET_TEST_STORE=s3 (the S3 run) the same name under s3://BUCKET (env
  // LANCELET_TEST_S3_BUCKET, default lancelet-test) on the test server the AWS_*
  // variables name.
  static bool InMemory();
  // True in the memory and S3 runs: the datasets are not on the local file system.
  static bool InObjectStore();
  // True in the S3 run: a store without directories (a prefix exists while it holds objects).
  static bool InS3();

 private:
  std::string path_;
  Use use_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs a shell command line, capturing stdout and stderr.
CommandResult RunCommand(const std::string& command_line);
// Quotes one argument for /bin/sh.
std::string ShellQuote(const std::string& arg);

// Path of the built `lancelet` program.
std::string LanceletBinary();
// Runs `lancelet ARGS...`.
CommandResult RunLancelet(const std::vector<std::string>& args);

// True when node and the oracle package are installed (tests/oracle/node_modules).
bool OracleAvailable();
// Runs `node tests/oracle/oracle.mjs ARGS...`; `env` is prepended (e.g. "VAR=1").
CommandResult RunOracle(const std::vector<std::string>& args, const std::string& env = "");

// Skips the current test when the reference is not installed.
#define REQUIRE_ORACLE()                                                                                  \
  if (!::lancelet::testing::OracleAvailable())                                                            \
  GTEST_SKIP() << "the reference (tests/oracle/node_modules) is not installed; run ./run setup"

// The stdout of a command that should have succeeded; a non-zero exit fails the current
// test, naming `what` and quoting the command's stderr.
std::string ExpectOk(const CommandResult& r, const std::string& what);
// `lancelet ARGS...` and `node oracle.mjs ARGS...` (with `env`) that should succeed.
std::string Lancelet(const std::vector<std::string>& args);
std::string Oracle(const std::vector<std::string>& args, const std::string& env = "");

// The lancelet::Error `fn` throws, or nothing when it returns normally.
template <typename Fn>
std::optional<Error> ThrownError(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}
// Its kind, or nothing when `fn` returns normally.
template <typename Fn>
std::optional<ErrorKind> ThrownKind(Fn&& fn) {
  const std::optional<Error> error = ThrownError(std::forward<Fn>(fn));
  return error ? std::optional<ErrorKind>(error->kind()) : std::nullopt;
}
// Its message, or "(no error)".
template <typename Fn>
std::string ThrownMessage(Fn&& fn) {
  const std::optional<Error> error = ThrownError(std::forward<Fn>(fn));
  return error ? error->what() : "(no error)";
}

std::string ReadFileToString(const std::string& path);
void WriteStringToFile(const std::string& path, const std::string& bytes);
// The same through the store a URI names (io::OpenStore), for tests that read or damage
// a dataset's files and run in both store modes: the whole object at `uri`, replacing it,
// and the URIs of every object below `dir`, sorted (empty when `dir` is missing).
std::string ReadObject(const std::string& uri);
void PutObject(const std::string& uri, const std::string& bytes);
std::vector<std::string> ObjectsUnder(const std::string& dir);
std::vector<std::string> SplitLines(const std::string& text);

}  // namespace lancelet::testing
