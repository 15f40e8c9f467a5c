// The rendezvous stores (collectives/stores/): a Get waits for a Set made
// later by another thread or store object on the same directory, a key never
// set is a DeadlineExceeded naming it, and any key (slashes, long) works.
#include "collectives/store.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "collectives/stores/file_store.h"
#include "collectives/stores/in_process_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

std::string FreshDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name);
  std::system(absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'").c_str());
  return dir;
}

// Two handles on one store: the same object in memory, two objects on one
// directory (as two processes would have).
struct Handles {
  std::shared_ptr<Store> writer, reader;
};

class StoreTest : public ::testing::TestWithParam<bool> {
 protected:
  Handles Make(const std::string& name) {
    if (!GetParam()) {
      std::shared_ptr<Store> s = NewInProcessStore();
      return {s, s};
    }
    const std::string dir = FreshDir(name);
    return {NewFileStore(dir), NewFileStore(dir)};
  }
};

TEST_P(StoreTest, GetWaitsForASetFromAnotherThread) {
  Handles h = Make("wait");
  const std::vector<char> value = {'a', '\0', 'b'};
  std::thread writer([&] {
    absl::SleepFor(absl::Milliseconds(20));
    EXPECT_TRUE(h.writer->Set("job/rank1/addr", value).ok());
  });
  absl::StatusOr<std::vector<char>> got = h.reader->Get("job/rank1/addr", absl::Seconds(60));
  writer.join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, value);
}

TEST_P(StoreTest, AKeyNeverSetIsADeadlineNamingIt) {
  Handles h = Make("deadline");
  absl::StatusOr<std::vector<char>> got = h.reader->Get("job/missing", absl::Milliseconds(30));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded) << got.status();
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("job/missing"));
}

TEST_P(StoreTest, APastDeadlineIsReportedAsZeroNotNegative) {
  Handles h = Make("negative");
  absl::StatusOr<std::vector<char>> got = h.reader->Get("job/missing", absl::Milliseconds(-326));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded) << got.status();
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("not set within 0"));
}

// Issue 44: what is left of a deadline was shown as "4.999998919s".
TEST_P(StoreTest, TheTimeWaitedIsShownInWholeMilliseconds) {
  Handles h = Make("rounded");
  absl::StatusOr<std::vector<char>> got =
      h.reader->Get("job/missing", absl::Milliseconds(20) - absl::Nanoseconds(1081));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded) << got.status();
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("not set within 20ms"));
}

TEST_P(StoreTest, SetIfAbsentHasExactlyOneWinnerAndEveryoneSeesItsValue) {
  Handles h = Make("claim");
  std::vector<std::thread> racers;
  std::vector<std::vector<char>> seen(8);
  for (int i = 0; i < 8; ++i) {
    racers.emplace_back([&, i] {
      Store& s = i % 2 == 0 ? *h.writer : *h.reader;
      absl::StatusOr<std::vector<char>> got =
          s.SetIfAbsent("job/claim/4", {static_cast<char>('a' + i)});
      ASSERT_TRUE(got.ok()) << got.status();
      seen[i] = *got;
    });
  }
  for (std::thread& t : racers) t.join();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(seen[i], seen[0]) << "racer " << i;
  absl::StatusOr<std::vector<char>> stored = h.reader->Get("job/claim/4", absl::Seconds(1));
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, seen[0]);
}

TEST_P(StoreTest, KeysThatDifferOnlyInOddCharactersOrAfterALongHeadStayApart) {
  Handles h = Make("keys");
  const std::string head(300, 'k');
  const std::vector<std::string> keys = {"a/b", "a%2Fb", "a_b", ".", "..", head + "1", head + "2"};
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(h.writer->Set(keys[i], {static_cast<char>('0' + i)}).ok()) << keys[i];
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    absl::StatusOr<std::vector<char>> got = h.reader->Get(keys[i], absl::Seconds(1));
    ASSERT_TRUE(got.ok()) << keys[i] << ": " << got.status();
    EXPECT_EQ(*got, std::vector<char>{static_cast<char>('0' + i)}) << keys[i];
  }
}

INSTANTIATE_TEST_SUITE_P(InProcessAndFile, StoreTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "File" : "InProcess";
                         });

TEST(FileStore, AMissingDirectoryIsUnavailableNamingIt) {
  std::shared_ptr<Store> store = NewFileStore("/nonexistent/reshard-store");
  absl::Status s = store->Set("k", {'1'});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("/nonexistent/reshard-store"));
}

}  // namespace
}  // namespace reshard
