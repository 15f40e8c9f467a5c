#include "collectives/gloo/thread_ranks.h"

#include <exception>
#include <memory>
#include <new>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/barrier.h"
#include "absl/synchronization/notification.h"
#include "collectives/stores/in_process_store.h"

namespace reshard {

std::vector<absl::Status> RunTogetherOnThreads(int64_t n,
                                               const std::function<absl::Status(int64_t)>& fn) {
  std::vector<absl::Status> results(n);
  absl::Notification start;
  bool abandon = false;  // written before start is notified, read after
  absl::Status cannot;
  std::vector<std::thread> threads;
  try {
    threads.reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        start.WaitForNotification();
        if (abandon) return;
        try {
          results[i] = fn(i);
        } catch (const std::bad_alloc&) {
          results[i] = absl::ResourceExhaustedError("out of memory (std::bad_alloc)");
        }
      });
    }
  } catch (const std::exception& e) {  // std::system_error, std::bad_alloc
    cannot = absl::ResourceExhaustedError(
        absl::StrCat("cannot start thread ", threads.size() + 1, " of ", n, " (", e.what(),
                     "): this process's memory or thread limit (ulimit -v, ulimit -u) is too "
                     "low for this many ranks"));
    abandon = true;
  }
  start.Notify();
  for (std::thread& t : threads) t.join();
  if (abandon) results.assign(n, cannot);
  return results;
}

std::vector<absl::Status> RunRanksOnThreads(
    const DeviceMesh& mesh, const GlooOptions& options,
    const std::function<absl::Status(GlooCommunicator& comm)>& fn) {
  const int64_t n = mesh.num_ranks();
  std::shared_ptr<Store> store = NewInProcessStore();
  // Every communicator stays alive until all ranks are done, so no rank
  // closes its connections while a peer may still be reading from them.
  absl::Barrier* done = new absl::Barrier(static_cast<int>(n));  // deletes itself
  std::vector<absl::Status> results = RunTogetherOnThreads(n, [&](int64_t rank) {
    absl::StatusOr<std::unique_ptr<GlooCommunicator>> comm =
        GlooCommunicator::Connect(mesh, rank, store, options);
    absl::Status result = comm.ok() ? fn(**comm) : comm.status();
    if (done->Block()) delete done;
    return result;
  });
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
