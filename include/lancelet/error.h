// Errors: lancelet reports every failure by throwing lancelet::Error.
//
// The message is one line that names what was wrong and where (file, fragment, field,
// offset) and, when there is one, what to do. The kind lets callers (the CLI, the commit
// retry loop) react without parsing text.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace lancelet {

enum class ErrorKind {
  kInvalidArgument,  // the caller asked for something malformed or impossible
  kNotFound,         // a path, version, field or row that does not exist
  kCorrupt,          // bytes on disk that do not decode as the format says
  kNotSupported,     // valid Lance that this build cannot handle (yet)
  kConflict,         // a concurrent commit made ours impossible
  kIo,               // the operating system refused a read or write
};

const char* ErrorKindName(ErrorKind kind);

// `bytes` made safe to quote in a message: valid UTF-8 passes through unchanged; every
// byte of an invalid sequence and every control character (U+0000-U+001F, U+007F)
// becomes \xNN. The result is valid UTF-8 on one line, and escaping it again changes
// nothing. Use it wherever a message quotes input (file contents, values, SQL text).
std::string EscapeForMessage(std::string_view bytes);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

template <typename... Args>
[[noreturn]] void Throw(ErrorKind kind, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(kind, fmt::format(format, std::forward<Args>(args)...));
}

#define LANCELET_DEFINE_THROW(Name, Kind)                                   \
  template <typename... Args>                                              \
  [[noreturn]] void Name(fmt::format_string<Args...> format, Args&&... args) { \
    Throw(ErrorKind::Kind, format, std::forward<Args>(args)...);          \
  }
LANCELET_DEFINE_THROW(ThrowInvalid, kInvalidArgument)
LANCELET_DEFINE_THROW(ThrowNotFound, kNotFound)
LANCELET_DEFINE_THROW(ThrowCorrupt, kCorrupt)
LANCELET_DEFINE_THROW(ThrowNotSupported, kNotSupported)
LANCELET_DEFINE_THROW(ThrowConflict, kConflict)
LANCELET_DEFINE_THROW(ThrowIo, kIo)
#undef LANCELET_DEFINE_THROW

}  // namespace lancelet
