// Hand-built file-format 2.0 pages for decoder tests.
#pragma once

#include <string>
#include <vector>

#include "encodings_v2_0.pb.h"
#include "format/v20_internal.h"

namespace lancelet::format::v20::test {

// A page of `rows` rows whose ArrayEncoding refers to `buffers` by index.
inline EncodedPage Page(uint64_t rows, std::vector<std::string> buffers, const lance::encodings::ArrayEncoding& encoding) {
  EncodedPage page;
  page.num_rows = rows;
  page.buffers = std::move(buffers);
  page.encoding = WrapAny(kArrayEncodingUrl, encoding);
  return page;
}

}  // namespace lancelet::format::v20::test
