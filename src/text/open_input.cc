// Opening text inputs by path and choosing a reader by extension.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "lancelet/error.h"
#include "lancelet/text.h"

namespace lancelet {
namespace {

InputOpener& ArrowIpcOpener() {
  static InputOpener opener;
  return opener;
}

std::unique_ptr<std::istream> OpenFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) ThrowNotFound("{}: no such file", path);
  auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*file) ThrowIo("{}: cannot open: {}", path, std::strerror(errno));
  return file;
}

}  // namespace

std::unique_ptr<RecordBatchReader> OpenCsv(const std::string& path, const TextReadOptions& options) {
  return ReadCsv(OpenFile(path), path, options);
}

std::unique_ptr<RecordBatchReader> OpenJsonLines(const std::string& path,
                                                 const TextReadOptions& options) {
  return ReadJsonLines(OpenFile(path), path, options);
}

InputFormat DetectInputFormat(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".csv") return InputFormat::kCsv;
  if (ext == ".json" || ext == ".jsonl" || ext == ".ndjson") return InputFormat::kJsonLines;
  if (ext == ".arrow" || ext == ".arrows" || ext == ".ipc") return InputFormat::kArrowIpc;
  return InputFormat::kUnknown;
}

void SetArrowIpcOpener(InputOpener opener) { ArrowIpcOpener() = std::move(opener); }

std::unique_ptr<RecordBatchReader> OpenTextInput(const std::string& path,
                                                 const TextReadOptions& options) {
  switch (DetectInputFormat(path)) {
    case InputFormat::kCsv: return OpenCsv(path, options);
    case InputFormat::kJsonLines: return OpenJsonLines(path, options);
    case InputFormat::kArrowIpc:
      if (!ArrowIpcOpener()) ThrowNotSupported("{}: Arrow IPC input is not available in this build", path);
      return ArrowIpcOpener()(path, options);
    case InputFormat::kUnknown: break;
  }
  ThrowInvalid("{}: unknown input format; expected a .csv, .json, .jsonl, .ndjson, .arrow, "
               ".arrows or .ipc file",
               path);
}

}  // namespace lancelet
