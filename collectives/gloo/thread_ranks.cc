#include "collectives/gloo/thread_ranks.h"

#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/barrier.h"
#include "collectives/stores/in_process_store.h"

namespace reshard {

std::vector<absl::Status> RunRanksOnThreads(
    const DeviceMesh& mesh, const GlooOptions& options,
    const std::function<absl::Status(GlooCommunicator& comm)>& fn) {
  const int64_t n = mesh.num_ranks();
  std::shared_ptr<Store> store = NewInProcessStore();
  std::vector<absl::Status> results(n);
  // Every communicator stays alive until all ranks are done, so no rank
  // closes its connections while a peer may still be reading from them.
  absl::Barrier* done = new absl::Barrier(static_cast<int>(n));  // deletes itself
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (int64_t rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      absl::StatusOr<std::unique_ptr<GlooCommunicator>> comm =
          GlooCommunicator::Connect(mesh, rank, store, options);
      results[rank] = comm.ok() ? fn(**comm) : comm.status();
      if (done->Block()) delete done;
    });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

absl::Status FirstError(const std::vector<absl::Status>& statuses) {
  for (size_t rank = 0; rank < statuses.size(); ++rank) {
    if (!statuses[rank].ok()) {
      return absl::Status(statuses[rank].code(),
                          absl::StrCat("rank ", rank, ": ", statuses[rank].message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace reshard
