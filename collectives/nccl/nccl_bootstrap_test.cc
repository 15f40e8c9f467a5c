// The NCCL unique-id exchange (collectives/nccl/nccl_bootstrap.h) over reshard's
// stores (collectives/stores/), with ranks as threads: only rank 0 makes the id, every rank gets
// the same bytes, rank 0's failure is its own, and a rank whose rank 0 never comes fails with
// DeadlineExceeded instead of hanging. No CUDA involved.
#include "collectives/nccl/nccl_bootstrap.h"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "collectives/stores/file_store.h"
#include "collectives/stores/in_process_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

std::vector<char> Id() {
  std::vector<char> id(128);
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<char>(i * 13 + 5);
  return id;
}

// Runs ShareFromRankZero on `n` threads, rank i with stores[i]; returns each
// rank's result, and counts calls of the id maker.
std::vector<absl::StatusOr<std::vector<char>>> Share(const std::vector<Store*>& stores,
                                                     std::atomic<int>& made) {
  const int n = static_cast<int>(stores.size());
  std::vector<absl::StatusOr<std::vector<char>>> results(n);
  std::vector<std::thread> threads;
  for (int rank = n - 1; rank >= 0; --rank) {  // rank 0 last: the others must wait
    threads.emplace_back([&, rank] {
      results[rank] =
          ShareFromRankZero(*stores[rank], "test/nccl_unique_id", rank, absl::Seconds(60),
                            [&]() -> absl::StatusOr<std::vector<char>> {
                              ++made;
                              return Id();
                            });
    });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

TEST(ShareFromRankZero, EveryRankGetsRankZerosBytesMadeOnce) {
  std::shared_ptr<Store> store = NewInProcessStore();
  std::atomic<int> made{0};
  const std::vector<absl::StatusOr<std::vector<char>>> results =
      Share(std::vector<Store*>(8, store.get()), made);
  EXPECT_EQ(made.load(), 1);
  for (size_t rank = 0; rank < results.size(); ++rank) {
    ASSERT_TRUE(results[rank].ok()) << "rank " << rank << ": " << results[rank].status();
    EXPECT_EQ(*results[rank], Id()) << "rank " << rank;
  }
}

TEST(ShareFromRankZero, WorksThroughAFileStoreAsProcessesWould) {
  // One FileStore object per rank on one directory, as separate processes
  // would have.
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp != nullptr ? tmp : "/tmp");
  std::vector<std::shared_ptr<Store>> owned;
  std::vector<Store*> stores;
  for (int rank = 0; rank < 4; ++rank) {
    owned.push_back(NewFileStore(dir));
    stores.push_back(owned.back().get());
  }
  std::atomic<int> made{0};
  const std::vector<absl::StatusOr<std::vector<char>>> results = Share(stores, made);
  EXPECT_EQ(made.load(), 1);
  for (size_t rank = 0; rank < results.size(); ++rank) {
    ASSERT_TRUE(results[rank].ok()) << "rank " << rank << ": " << results[rank].status();
    EXPECT_EQ(*results[rank], Id()) << "rank " << rank;
  }
}

TEST(ShareFromRankZero, RankZerosMakerErrorIsReturned) {
  std::shared_ptr<Store> store = NewInProcessStore();
  absl::StatusOr<std::vector<char>> result = ShareFromRankZero(
      *store, "k", 0, absl::Seconds(1),
      []() -> absl::StatusOr<std::vector<char>> { return absl::InternalError("no id today"); });
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("no id today"));
}

TEST(ShareFromRankZero, AMissingRankZeroIsADeadlineNotAHang) {
  std::shared_ptr<Store> store = NewInProcessStore();
  bool made = false;
  absl::StatusOr<std::vector<char>> result =
      ShareFromRankZero(*store, "run7/nccl_unique_id", 3, absl::Milliseconds(50),
                        [&]() -> absl::StatusOr<std::vector<char>> {
                          made = true;
                          return Id();
                        });
  EXPECT_FALSE(made);  // only rank 0 makes the id
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded) << result.status();
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("rank 3"));
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("run7/nccl_unique_id"));
}

}  // namespace
}  // namespace reshard
