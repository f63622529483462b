#include "format/dictionary_keys.h"

#include <fmt/format.h>

#include "lancelet/error.h"

namespace lancelet::format {
namespace {

std::string Describe(const LanceField& field) {
  return fmt::format("field '{}' (dictionary<{},{}>)", field.name,
                     field.dictionary_index ? field.dictionary_index->ToString() : "?", field.type->ToString());
}

}  // namespace

void CheckWritableDictionaryField(const LanceField& field) {
  if (!field.dictionary_index || !CanDictionaryEncode(*field.dictionary_index, *field.type))
    ThrowNotSupported("{} is dictionary-encoded; lancelet writes dictionaries of integer keys over fixed-width or "
                      "utf8/binary values only",
                      Describe(field));
}

DictionaryKeyer PageKeyer(const LanceField& field) {
  return DictionaryKeyer(*field.dictionary_index, Describe(field) + ": a page");
}

}  // namespace lancelet::format
