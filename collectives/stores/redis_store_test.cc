// The Redis rendezvous store (collectives/stores/redis_store.h) against a
// real redis-server (Debian's, started here on a loopback port): values
// round-trip byte for byte, a missing key times out naming it, prefixes keep
// jobs apart, and URLs are parsed or refused with a message naming them.
#include "collectives/stores/redis_store.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

class RedisStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = 20000 + static_cast<int>(getpid() % 20000);
    const std::string port = absl::StrCat(port_);
    pid_ = fork();
    if (pid_ == 0) {
      execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--loglevel", "warning", nullptr);
      _exit(127);
    }
    ASSERT_GT(pid_, 0);
    // Up to 10 s for the server to listen.
    for (int i = 0; i < 200 && !store_.ok(); ++i) {
      absl::SleepFor(absl::Milliseconds(50));
      store_ = NewRedisStore("127.0.0.1", port_, "job1", absl::Seconds(2));
    }
    ASSERT_TRUE(store_.ok()) << "redis-server (scripts/install_deps) did not start: "
                             << store_.status();
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }

  int port_ = 0;
  pid_t pid_ = -1;
  absl::StatusOr<std::shared_ptr<Store>> store_ = absl::UnknownError("not started");
};

TEST_F(RedisStoreTest, ValuesRoundTripByteForByte) {
  const std::vector<char> value = {'a', '\0', '\xff', '\n', 'z'};
  ASSERT_TRUE((*store_)->Set("rank0/addr", value).ok());
  absl::StatusOr<std::vector<char>> got = (*store_)->Get("rank0/addr", absl::Seconds(5));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, value);
}

TEST_F(RedisStoreTest, MissingKeyTimesOutNamingIt) {
  absl::StatusOr<std::vector<char>> got = (*store_)->Get("never/set", absl::Milliseconds(100));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded) << got.status();
  EXPECT_NE(got.status().message().find("job1/never/set"), absl::string_view::npos) << got.status();
}

TEST_F(RedisStoreTest, SetIfAbsentKeepsTheFirstValue) {
  absl::StatusOr<std::vector<char>> first = (*store_)->SetIfAbsent("claim/4", {'a'});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, std::vector<char>{'a'});
  absl::StatusOr<std::vector<char>> second = (*store_)->SetIfAbsent("claim/4", {'b'});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*second, std::vector<char>{'a'});
}

TEST_F(RedisStoreTest, APastDeadlineIsReportedAsZeroNotNegative) {
  absl::StatusOr<std::vector<char>> got = (*store_)->Get("never/set", absl::Milliseconds(-326));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded) << got.status();
  EXPECT_NE(got.status().message().find("not set within 0"), absl::string_view::npos)
      << got.status();
}

TEST_F(RedisStoreTest, PrefixesKeepJobsApartAndUrlsName) {
  absl::StatusOr<std::shared_ptr<Store>> other =
      NewStoreFromUrl(absl::StrCat("redis://127.0.0.1:", port_, "/job2"), absl::Seconds(2));
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE((*store_)->Set("k", {'1'}).ok());
  EXPECT_EQ((*other)->Get("k", absl::Milliseconds(50)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  ASSERT_TRUE((*other)->Set("k", {'2'}).ok());
  EXPECT_EQ(*(*store_)->Get("k", absl::Seconds(1)), std::vector<char>{'1'});
  EXPECT_EQ(*(*other)->Get("k", absl::Seconds(1)), std::vector<char>{'2'});
}

TEST(RedisStoreUrlTest, BadUrlsAreRefusedNamingThem) {
  for (const std::string url : {"redis://host", "redis://:6379/p", "redis://h:99999/p",
                                "redis://h:x/p", "/no/such/directory"}) {
    absl::StatusOr<std::shared_ptr<Store>> s = NewStoreFromUrl(url, absl::Seconds(1));
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << url << ": " << s.status();
    EXPECT_NE(s.status().message().find(url), absl::string_view::npos) << s.status();
  }
  absl::StatusOr<std::shared_ptr<Store>> refused =
      NewStoreFromUrl("redis://127.0.0.1:1/p", absl::Seconds(1));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();
  // Issue 44: a bracketed IPv6 host is parsed (and here not reached), one
  // without brackets is refused, and credentials are refused without echoing.
  absl::StatusOr<std::shared_ptr<Store>> ipv6 =
      NewStoreFromUrl("redis://[::1]:1/p", absl::Seconds(1));
  EXPECT_EQ(ipv6.status().code(), absl::StatusCode::kUnavailable) << ipv6.status();
  EXPECT_NE(ipv6.status().message().find("[::1]:1"), absl::string_view::npos) << ipv6.status();
  absl::StatusOr<std::shared_ptr<Store>> bare =
      NewStoreFromUrl("redis://::1:1/p", absl::Seconds(1));
  EXPECT_EQ(bare.status().code(), absl::StatusCode::kInvalidArgument) << bare.status();
  EXPECT_NE(bare.status().message().find("in brackets"), absl::string_view::npos) << bare.status();
  absl::StatusOr<std::shared_ptr<Store>> secret =
      NewStoreFromUrl("redis://user:hunter2@h:6379/p", absl::Seconds(1));
  EXPECT_EQ(secret.status().code(), absl::StatusCode::kInvalidArgument) << secret.status();
  EXPECT_NE(secret.status().message().find("no AUTH"), absl::string_view::npos) << secret.status();
  EXPECT_EQ(secret.status().message().find("hunter2"), absl::string_view::npos) << secret.status();
  // A / in the password ends the address early: still not echoed.
  secret = NewStoreFromUrl("redis://user:hun/ter2@h:6379/p", absl::Seconds(1));
  EXPECT_EQ(secret.status().code(), absl::StatusCode::kInvalidArgument) << secret.status();
  EXPECT_EQ(secret.status().message().find("ter2@"), absl::string_view::npos) << secret.status();
  const char* tmp = std::getenv("TEST_TMPDIR");
  EXPECT_TRUE(NewStoreFromUrl(tmp != nullptr ? tmp : "/tmp", absl::Seconds(1)).ok());
}

}  // namespace
}  // namespace reshard
