// A rendezvous Store (collectives/store.h) in a directory that every rank can
// read and write: ranks that are processes of one host, or hosts sharing a
// filesystem. Each process makes its own store on the same directory.
//
//   std::shared_ptr<Store> store = NewFileStore("/tmp/job42");  // must exist
//
// One file per key, written to a temporary name and renamed, so a reader
// never sees half a value; Get polls for the file (1 ms, backing off to
// 10 ms). File names encode the key, so any key is safe; other files in the
// directory are left alone. Use a fresh directory (or key prefix) per job:
// a file left over from an earlier job would be read as this job's value.
#ifndef RESHARD_COLLECTIVES_STORES_FILE_STORE_H_
#define RESHARD_COLLECTIVES_STORES_FILE_STORE_H_

#include <memory>
#include <string>

#include "collectives/store.h"

namespace reshard {

// Errors show on use: Set and Get fail with Unavailable (naming the
// directory) when it cannot be written or read.
std::shared_ptr<Store> NewFileStore(const std::string& dir);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_STORES_FILE_STORE_H_
