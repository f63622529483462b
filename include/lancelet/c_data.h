// The Arrow C Data Interface and C Stream Interface: zero-dependency exchange of
// schemas, arrays and batch streams with any Arrow implementation in the same process.
//
// Export hands out our buffers without copying; the exported struct keeps the arrays
// alive until its release callback runs. Import copies into our invariants (array.h):
// it honours the producer's offsets at every level, drops unused parts of children,
// and releases the imported structs before returning (also when it throws).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "lancelet/record_batch.h"

extern "C" {

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};

#endif  // ARROW_C_DATA_INTERFACE

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  const char* (*get_last_error)(struct ArrowArrayStream*);
  void (*release)(struct ArrowArrayStream*);
  void* private_data;
};

#endif  // ARROW_C_STREAM_INTERFACE

}  // extern "C"

namespace lancelet {

// The format string of a type ("i", "+w:4", "tsu:UTC", ...). Throws InvalidArgument for
// none of ours (every TypeId has one).
std::string FormatString(const DataType& type);

// Fill `out` (which must not hold a live schema). The caller owns the result and must
// call out->release.
void ExportType(const DataType& type, ArrowSchema* out);     // name "", nullable
void ExportField(const Field& field, ArrowSchema* out);      // name, flags, metadata
void ExportSchema(const Schema& schema, ArrowSchema* out);   // "+s" with one child per field

// Exports without copying; `out` keeps `array` alive until released.
void ExportArray(const ArrayPtr& array, ArrowArray* out);
// A batch as a non-null struct array with one child per column; also exports its schema
// when `out_schema` is given.
void ExportRecordBatch(const RecordBatch& batch, ArrowArray* out, ArrowSchema* out_schema = nullptr);

// Importers take ownership: each releases what it was given (arrays and schemas),
// including when it throws. Unknown formats and dictionaries throw NotSupported,
// malformed structs InvalidArgument.
TypePtr ImportType(ArrowSchema* schema);
FieldPtr ImportField(ArrowSchema* schema);
// `schema` must be a "+s" struct; its children become the fields.
SchemaPtr ImportSchema(ArrowSchema* schema);
ArrayPtr ImportArray(ArrowArray* array, ArrowSchema* schema);
ArrayPtr ImportArray(ArrowArray* array, const TypePtr& type);
// `array` must be a struct array matching `schema`; its children become the columns.
RecordBatchPtr ImportRecordBatch(ArrowArray* array, const SchemaPtr& schema);

// The stream owns the reader. Errors thrown by the reader become EIO (or EINVAL) with the
// message available from get_last_error.
void ExportRecordBatchReader(std::shared_ptr<RecordBatchReader> reader, ArrowArrayStream* out);
// Takes over the stream (out->release is left null). Errors of the producer are thrown
// as Io errors carrying get_last_error's text. Top-level string_view / binary_view
// columns (formats "vu" / "vz", as polars exports strings) are taken as large_utf8 /
// large_binary, their values copied out of the views; elsewhere views are NotSupported.
std::unique_ptr<RecordBatchReader> ImportArrayStream(ArrowArrayStream* stream);

}  // namespace lancelet
