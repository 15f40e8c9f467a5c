// A rendezvous Store (collectives/store.h) on a Redis server, for ranks on
// several hosts that share no filesystem: every rank connects to the same
// server and keeps its keys under a key prefix of its own job.
//
//   absl::StatusOr<std::shared_ptr<Store>> store =
//       NewRedisStore("10.0.0.1", 6379, "job42", absl::Seconds(30));
//   absl::StatusOr<std::shared_ptr<Store>> same = NewStoreFromUrl("redis://10.0.0.1:6379/job42");
//
// Key "k" is stored as "<prefix>/k" with SET; Get polls with GET (1 ms,
// backing off to 10 ms) until the key exists or the timeout passes. Keys are
// written once per job, so reusing a prefix would read an earlier job's
// values: give each job a fresh prefix (or flush the server). One connection
// per store, serialised by a mutex (hiredis contexts are not thread-safe).
#ifndef RESHARD_COLLECTIVES_STORES_REDIS_STORE_H_
#define RESHARD_COLLECTIVES_STORES_REDIS_STORE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "collectives/store.h"

namespace reshard {

// Connects to the server at host:port. Unavailable (naming the server) when it
// cannot be reached within `connect_timeout`, which also bounds each command.
absl::StatusOr<std::shared_ptr<Store>> NewRedisStore(const std::string& host, int port,
                                                     const std::string& prefix,
                                                     absl::Duration connect_timeout);

// "redis://HOST:PORT/PREFIX" (PREFIX non-empty; PORT defaults to 6379) or a
// directory that exists (a file store, stores/file_store.h).
// InvalidArgument for anything else, naming the URL.
absl::StatusOr<std::shared_ptr<Store>> NewStoreFromUrl(absl::string_view url,
                                                       absl::Duration connect_timeout);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_STORES_REDIS_STORE_H_
