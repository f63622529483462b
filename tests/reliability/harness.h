// Shared pieces of the reliability suite: many lancelet processes at once, killed
// processes, and checks of what they leave on disk. Every test runs a small, seeded
// version in ./run test; `./run soak` sets LANCELET_SOAK=1 for the large ones, and the
// tests print their figures ("[figures] ...") either way.
#pragma once

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/object_store.h"
#include "support/test_env.h"
#include "table/deletions.h"
#include "table/manifest_store.h"

namespace lancelet::testing::reliability {

inline bool Soak() {
  const char* v = std::getenv("LANCELET_SOAK");
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}
inline int Scaled(int small, int large) { return Soak() ? large : small; }

inline void Figures(const std::string& line) { std::cout << "[figures] " << line << std::endl; }

// The version a writing command's stdout says holds its change ("now version N", "is now
// at version N", "(version N holds the change; ...)"), or 0 when it committed nothing
// ("unchanged at version N").
inline uint64_t CommittedVersion(const std::string& out) {
  if (out.find("unchanged at version") != std::string::npos) return 0;
  // A write followed by a merge of overlay layers says which version holds its change.
  if (size_t at = out.find("(version "); at != std::string::npos && out.find(" holds the change", at) != std::string::npos)
    return std::strtoull(out.c_str() + at + 9, nullptr, 10);
  for (const char* marker : {"now version ", "now at version "}) {
    size_t at = out.find(marker);
    if (at != std::string::npos) return std::strtoull(out.c_str() + at + std::strlen(marker), nullptr, 10);
  }
  return 0;
}

// The newest version listed (0: no dataset).
inline uint64_t LatestVersion(const std::string& ds) {
  auto loc = table::LatestManifest(*io::MakeLocalStore(), ds);
  return loc ? loc->version : 0;
}

// id -> val of every row of a dataset with int64 columns id and val.
inline std::map<int64_t, int64_t> ReadIdVal(const std::string& ds, std::string* error = nullptr) {
  auto scan = RunLancelet({"scan", ds, "--columns", "id,val", "--format", "jsonl"});
  std::map<int64_t, int64_t> rows;
  if (scan.exit_code != 0) {
    if (error) *error = scan.err;
    else ADD_FAILURE() << "scan of " << ds << " failed: " << scan.err;
    return rows;
  }
  for (const auto& line : SplitLines(scan.out)) {
    auto j = nlohmann::json::parse(line);
    int64_t id = j["id"].get<int64_t>();
    EXPECT_EQ(rows.count(id), 0u) << "id " << id << " appears twice in " << ds;
    rows[id] = j["val"].is_null() ? INT64_MIN : j["val"].get<int64_t>();
  }
  return rows;
}

// How many ids of `model` and `rows` disagree (missing, extra or another val), with the
// first few as text, to start a diagnosis from.
struct RowsDiff {
  size_t count = 0;
  std::string sample;
};
inline RowsDiff DiffRows(const std::map<int64_t, int64_t>& model, const std::map<int64_t, int64_t>& rows) {
  RowsDiff out;
  for (const auto& [id, val] : model) {
    auto it = rows.find(id);
    if (it != rows.end() && it->second == val) continue;
    if (++out.count <= 5)
      out.sample += fmt::format(" id {}: {} (model {});", id, it != rows.end() ? std::to_string(it->second) : "missing", val);
  }
  for (const auto& [id, val] : rows)
    if (!model.count(id) && ++out.count <= 5) out.sample += fmt::format(" id {}: {} (not in the model);", id, val);
  return out;
}

// Writes a CSV of (id, val) rows.
inline void WriteIdValCsv(const std::string& path, const std::vector<std::pair<int64_t, int64_t>>& rows) {
  std::string text = "id,val\n";
  for (const auto& [id, val] : rows) text += std::to_string(id) + "," + std::to_string(val) + "\n";
  WriteStringToFile(path, text);
}

// Runs each shell script in its own background process, all at once, and waits for all.
inline void RunAtOnce(const TempDir& dir, const std::vector<std::string>& scripts) {
  std::string all;
  for (size_t i = 0; i < scripts.size(); ++i) {
    std::string path = dir.Join("proc" + std::to_string(i) + ".sh");
    WriteStringToFile(path, scripts[i]);
    all += "sh " + ShellQuote(path) + " &\n";
  }
  all += "wait\n";
  WriteStringToFile(dir.Join("all.sh"), all);
  ASSERT_EQ(RunCommand("sh " + ShellQuote(dir.Join("all.sh"))).exit_code, 0);
}

// A shell line that runs `lancelet ARGS...` with stdout, stderr and the exit code in
// <stem>.out, <stem>.err and <stem>.rc.
inline std::string LoggedLancelet(const std::vector<std::string>& args, const std::string& stem) {
  std::string cmd = ShellQuote(LanceletBinary());
  for (const auto& a : args) cmd += " " + ShellQuote(a);
  return cmd + " >" + ShellQuote(stem + ".out") + " 2>" + ShellQuote(stem + ".err") + "; echo $? >" +
         ShellQuote(stem + ".rc") + "\n";
}

// Every file of a dataset directory, relative to it, with its size and contents' hash:
// equal listings mean an operation left the directory exactly as it was.
inline std::map<std::string, std::string> Snapshot(const std::string& ds) {
  std::map<std::string, std::string> files;
  if (!std::filesystem::exists(ds)) return files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(ds)) {
    if (!e.is_regular_file()) continue;
    std::string bytes = ReadFileToString(e.path().string());
    files[std::filesystem::relative(e.path(), ds).string()] =
        std::to_string(bytes.size()) + ":" + std::to_string(std::hash<std::string>()(bytes));
  }
  return files;
}

// Files under data/, _deletions/, _transactions/ and _versions/ that no manifest names,
// and any temporary file: what interrupted writers left behind.
inline std::vector<std::string> OrphanFiles(const std::string& ds) {
  auto store = io::MakeLocalStore();
  std::set<std::string> named;
  for (const auto& loc : table::ListManifests(*store, ds)) {
    named.insert(std::filesystem::relative(loc.path, ds).string());
    auto m = table::ReadManifest(*store, loc.path);
    if (!m.transaction_file().empty()) named.insert(std::string(table::kTransactionsDir) + "/" + m.transaction_file());
    for (const auto& f : m.fragments()) {
      for (const auto& file : f.files()) named.insert(std::string(table::kDataDir) + "/" + file.path());
      for (const auto& o : f.overlays()) named.insert(std::string(table::kDataDir) + "/" + o.data_file().path());
      if (f.has_deletion_file())
        named.insert(std::string(table::kDeletionsDir) + "/" + table::DeletionFileName(f.id(), f.deletion_file()));
    }
  }
  std::vector<std::string> orphans;
  for (const auto& [path, unused] : Snapshot(ds)) {
    bool tracked = path.rfind(std::string(table::kDataDir) + "/", 0) == 0 ||
                   path.rfind(std::string(table::kDeletionsDir) + "/", 0) == 0 ||
                   path.rfind(std::string(table::kTransactionsDir) + "/", 0) == 0 ||
                   (path.rfind(std::string(table::kVersionsDir) + "/", 0) == 0 &&
                    path.find(".manifest") != std::string::npos);
    if ((tracked && !named.count(path)) || path.find(".tmp") != std::string::npos) orphans.push_back(path);
  }
  return orphans;
}

}  // namespace lancelet::testing::reliability
