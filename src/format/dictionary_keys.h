// Writing dictionary-encoded fields (Lance logical type "dict:<values>:<keys>:false"). Every
// page of such a field holds its own dictionary: the page's distinct values, in order of
// first appearance, and one key per value into it. The reference's readers refuse a page
// of a dictionary field that has no dictionary, so there is no plain fallback.
#pragma once

#include "array/dictionary_array.h"
#include "format/lance_schema.h"

namespace lancelet::format {

// Throws NotSupported unless lancelet writes this field's dictionaries (CanDictionaryEncode
// its keys and values).
void CheckWritableDictionaryField(const LanceField& field);

// A keyer for one page of the dictionary field; errors name the field.
DictionaryKeyer PageKeyer(const LanceField& field);

}  // namespace lancelet::format
