#include "collectives/gloo/thread_ranks.h"

#include <sys/mman.h>
#include <sys/resource.h>

#include <exception>
#include <memory>
#include <new>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/barrier.h"
#include "absl/synchronization/notification.h"
#include "collectives/stores/in_process_store.h"

namespace reshard {
namespace {

// A status made before any thread starts: copying it allocates nothing, so
// a thread that finds the heap exhausted can still report it.
const absl::Status& OutOfMemory() {
  static const absl::Status* const status = new absl::Status(absl::ResourceExhaustedError(
      "out of memory (std::bad_alloc): this process's memory limit (ulimit -v) is too low for "
      "this many ranks"));
  return *status;
}

// The address space a rank on a thread takes besides the heap: its own
// stack and its Gloo device's loop thread's (the stack limit each), and
// 16 MiB of buffers. Gloo's device starts that thread and then allocates; if
// that fails, the process terminates (its destructor meets a joinable
// thread), so the room is checked before any rank starts.
int64_t AddressSpacePerRank() {
  int64_t stack_bytes = int64_t{8} << 20;
  struct rlimit stack;
  if (getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY) {
    stack_bytes = static_cast<int64_t>(stack.rlim_cur);
  }
  return 2 * stack_bytes + (int64_t{16} << 20);
}

// Whether `bytes` of address space can be reserved now (ulimit -v).
bool AddressSpaceFree(int64_t bytes) {
  void* p = mmap(nullptr, static_cast<size_t>(bytes), PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  munmap(p, static_cast<size_t>(bytes));
  return true;
}

}  // namespace

std::vector<absl::Status> RunTogetherOnThreads(int64_t n,
                                               const std::function<absl::Status(int64_t)>& fn) {
  OutOfMemory();  // made here, on the caller's thread
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
          results[i] = OutOfMemory();
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
  if (const int64_t need = n * AddressSpacePerRank(); !AddressSpaceFree(need)) {
    return std::vector<absl::Status>(
        n, absl::ResourceExhaustedError(absl::StrCat(
               n, " ranks on threads need about ", need >> 20,
               " MiB of address space (stacks for each rank and its Gloo device's thread, and "
               "buffers): more than this process's memory limit (ulimit -v) leaves")));
  }
  std::shared_ptr<Store> store = NewInProcessStore();
  // Every communicator stays alive until all ranks are done, so no rank
  // closes its connections while a peer may still be reading from them.
  absl::Barrier* done = new absl::Barrier(static_cast<int>(n));  // deletes itself
  std::vector<absl::Status> results = RunTogetherOnThreads(n, [&](int64_t rank) {
    absl::StatusOr<std::unique_ptr<GlooCommunicator>> comm;
    absl::Status result;
    try {  // every rank reaches `done`, or its peers would wait there forever
      comm = GlooCommunicator::Connect(mesh, rank, store, options);
      result = comm.ok() ? fn(**comm) : comm.status();
    } catch (const std::bad_alloc&) {
      result = OutOfMemory();
    }
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
