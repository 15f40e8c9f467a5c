// A rendezvous Store (collectives/store.h) in memory, for ranks that are
// threads of one process: every thread shares the one object.
//
//   std::shared_ptr<Store> store = NewInProcessStore();
//   // each rank's thread: GlooCommunicator::Connect(mesh, rank, store, options)
#ifndef RESHARD_COLLECTIVES_STORES_IN_PROCESS_STORE_H_
#define RESHARD_COLLECTIVES_STORES_IN_PROCESS_STORE_H_

#include <memory>

#include "collectives/store.h"

namespace reshard {

// A thread-safe map; Get blocks on a condition until its key is set.
std::shared_ptr<Store> NewInProcessStore();

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_STORES_IN_PROCESS_STORE_H_
