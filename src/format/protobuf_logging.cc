#include "format/protobuf_logging.h"

#include <google/protobuf/stubs/logging.h>

namespace lancelet::format {

void SilenceProtobufLogging() {
  // SetLogHandler is not thread-safe; a function-local static makes it happen once.
  static const bool installed = [] {
    google::protobuf::SetLogHandler([](google::protobuf::LogLevel, const char*, int, const std::string&) {});
    return true;
  }();
  (void)installed;
}

}  // namespace lancelet::format
