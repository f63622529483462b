#include "support/test_env.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "io/object_store.h"

namespace lancelet::testing {

namespace fs = std::filesystem;

TempDir::TempDir(Use use) : use_(use) {
  static std::atomic<int> counter{0};
  std::random_device rd;
  fs::path base = fs::path(LANCELET_BINARY_DIR) / "test-tmp";
  fs::create_directories(base);
  path_ = (base / ("t" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" + std::to_string(rd())))
              .string();
  fs::create_directories(path_);
}

namespace {

// LANCELET_TEST_STORE: "" (the local file system), "memory", or "s3:PORT" (the S3 test
// server on 127.0.0.1:PORT, tests/support/s3_test_server.py). The S3 run points the AWS_*
// variables at that server, for this process and the CLIs it starts, whatever the
// environment held: a test never reaches a real bucket.
std::string TestStore() {
  static const std::string store = [] {
    const char* given = std::getenv("LANCELET_TEST_STORE");
    std::string s = given ? given : "";
    if (!s.starts_with("s3:")) return s;
    setenv("AWS_ENDPOINT_URL", ("http://127.0.0.1:" + s.substr(3)).c_str(), 1);
    setenv("AWS_ALLOW_HTTP", "true", 1);
    setenv("AWS_ACCESS_KEY_ID", "testing", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "testing", 1);
    setenv("AWS_REGION", "us-east-1", 1);
    unsetenv("AWS_SESSION_TOKEN");
    return std::string("s3");
  }();
  return store;
}

}  // namespace

bool TempDir::InMemory() { return TestStore() == "memory"; }
bool TempDir::InObjectStore() { return !TestStore().empty(); }
bool TempDir::InS3() { return TestStore() == "s3"; }

std::string TempDir::RootUri() const {
  const std::string store = TestStore();
  if (store == "memory") return "memory://" + path_;
  if (store == "s3") {
    const char* bucket = std::getenv("LANCELET_TEST_S3_BUCKET");
    return std::string("s3://") + (bucket ? bucket : "lancelet-test") + path_;
  }
  return path_;
}

TempDir::~TempDir() {
  if (InObjectStore()) {
    try {
      io::OpenStore(RootUri()).store->DeleteTree(RootUri());
    } catch (const std::exception& e) {
      ADD_FAILURE() << "could not remove the test's datasets under " << RootUri() << ": " << e.what();
    }
  }
  if (InObjectStore() && use_ == Use::kDatasets) {
    std::error_code ec;
    std::vector<std::string> written;
    for (const auto& entry : fs::recursive_directory_iterator(path_, ec)) written.push_back(entry.path().string());
    if (!written.empty())
      ADD_FAILURE() << "the " << TestStore() << " run wrote " << written.size()
                    << " entries to the local file system, first '" << written[0]
                    << "' (a path built without TempDir::Uri, or a write behind io::ObjectStore's back)";
  }
  if (!std::getenv("LANCELET_KEEP_TEST_DIRS")) {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
}

std::string ShellQuote(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

CommandResult RunCommand(const std::string& command_line) {
  TempDir tmp(TempDir::Use::kLocalScratch);
  std::string out_path = tmp.Join("stdout"), err_path = tmp.Join("stderr");
  std::string full = "(" + command_line + ") >" + ShellQuote(out_path) + " 2>" + ShellQuote(err_path) + " </dev/null";
  int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFileToString(out_path);
  r.err = ReadFileToString(err_path);
  return r;
}

std::string LanceletBinary() { return std::string(LANCELET_BINARY_DIR) + "/lancelet"; }

CommandResult RunLancelet(const std::vector<std::string>& args) {
  std::string cmd = ShellQuote(LanceletBinary());
  for (const auto& a : args) cmd += " " + ShellQuote(a);
  return RunCommand(cmd);
}

static std::string OracleDir() { return std::string(LANCELET_SOURCE_DIR) + "/tests/oracle"; }

bool OracleAvailable() {
  static const bool available = fs::exists(OracleDir() + "/node_modules/@lancedb/lancedb") &&
                                std::system("node --version >/dev/null 2>&1") == 0;
  return available;
}

CommandResult RunOracle(const std::vector<std::string>& args, const std::string& env) {
  std::string cmd = env.empty() ? "" : env + " ";
  // The reference logs warnings on stderr; RUST_LOG keeps them out of error text.
  cmd += "RUST_LOG=error node " + ShellQuote(OracleDir() + "/oracle.mjs");
  for (const auto& a : args) cmd += " " + ShellQuote(a);
  return RunCommand(cmd);
}

std::string ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteStringToFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string ReadObject(const std::string& uri) {
  auto [store, path] = io::OpenStore(uri);
  return store->OpenRead(path)->ReadAll();
}

void PutObject(const std::string& uri, const std::string& bytes) {
  auto [store, path] = io::OpenStore(uri);
  store->Put(path, bytes);
}

std::vector<std::string> ObjectsUnder(const std::string& dir) {
  auto [store, path] = io::OpenStore(dir);
  std::vector<std::string> objects;
  // What the store lists and refuses to open is a directory (the local store's Head
  // answers for directories too, the memory store's does not).
  auto is_object = [&](const std::string& child) {
    try {
      store->OpenRead(child);
      return true;
    } catch (const Error& e) {
      // InvalidArgument locally and in memory; on S3 a prefix is no object (NotFound).
      if (e.kind() != ErrorKind::kInvalidArgument && e.kind() != ErrorKind::kNotFound) throw;
      return false;
    }
  };
  std::vector<std::string> pending = {path};
  while (!pending.empty()) {
    const std::string at = pending.back();
    pending.pop_back();
    for (const auto& name : store->List(at)) {
      const std::string child = io::JoinPath(at, name);
      if (is_object(child)) objects.push_back(child);
      else pending.push_back(child);
    }
  }
  std::sort(objects.begin(), objects.end());
  return objects;
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) lines.push_back(line);
  return lines;
}

std::string ExpectOk(const CommandResult& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 0) << what << " failed: " << r.err;
  return r.out;
}

std::string Lancelet(const std::vector<std::string>& args) { return ExpectOk(RunLancelet(args), "lancelet " + args[0]); }

std::string Oracle(const std::vector<std::string>& args, const std::string& env) {
  return ExpectOk(RunOracle(args, env), "oracle " + args[0]);
}

}  // namespace lancelet::testing
