// Arrow IPC inputs (.arrow, .arrows, .ipc) by path, for OpenTextInput.
#include <memory>

#include "io/local_input.h"
#include "io/object_store.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"
#include "text/arrow_input.h"

namespace lancelet::text {

// A regular file is mapped, not read: its batches are decoded one at a time from the
// page cache, so memory holds a batch, not the file (a 545 MB file read into a string
// took 1.1 GB and a third of a `create`). Each message's pages leave the mapping once
// decoded: mapped pages count in the process's memory, and a 3 GB input peaked at 3.1 GB.
// Pipes are read as a stream (ReadIpcStream). A file in another store is read whole.
std::unique_ptr<RecordBatchReader> OpenArrowIpc(const std::string& path, const StorageOptions& storage_options) {
  auto [store, local_path] = io::OpenStore(path, storage_options);
  if (store != io::DefaultLocalStore()) {
    auto file = store->OpenRead(local_path);
    return ReadIpc(file->Read(0, file->size()), path);
  }
  auto input = io::LocalInput::Open(local_path, path);
  if (input->mappable()) {
    io::MappedBytes mapped = input->Map();
    return ReadIpc(std::move(mapped.owner), mapped.bytes, path, std::move(mapped.release));
  }
  return ReadIpcStream([input](char* out, size_t n) { return input->ReadSome(out, n); }, path);
}

}  // namespace lancelet::text
