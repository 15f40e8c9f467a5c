#include "collectives/stores/redis_store.h"

#include <hiredis/hiredis.h>
#include <sys/stat.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "collectives/stores/file_store.h"

namespace reshard {
namespace {

struct ContextDeleter {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

class RedisStore final : public Store {
 public:
  RedisStore(redisContext* context, std::string server, std::string prefix)
      : context_(context), server_(std::move(server)), prefix_(std::move(prefix)) {}

  absl::Status Set(absl::string_view key, const std::vector<char>& value) override {
    const std::string full = absl::StrCat(prefix_, "/", key);
    absl::MutexLock lock(&mu_);
    Reply reply(static_cast<redisReply*>(redisCommand(context_.get(), "SET %b %b", full.data(),
                                                      full.size(), value.data(), value.size())));
    if (reply == nullptr || reply->type == REDIS_REPLY_ERROR)
      return Error("SET", full, reply.get());
    return absl::OkStatus();
  }

  // SET NX, then GET when another caller won (its value is never removed).
  absl::StatusOr<std::vector<char>> SetIfAbsent(absl::string_view key,
                                                const std::vector<char>& value) override {
    const std::string full = absl::StrCat(prefix_, "/", key);
    {
      absl::MutexLock lock(&mu_);
      Reply reply(static_cast<redisReply*>(redisCommand(context_.get(), "SET %b %b NX", full.data(),
                                                        full.size(), value.data(), value.size())));
      if (reply == nullptr || reply->type == REDIS_REPLY_ERROR) {
        return Error("SET NX", full, reply.get());
      }
      if (reply->type == REDIS_REPLY_STATUS) return value;  // "OK": this caller won
    }
    return Get(key, absl::ZeroDuration());
  }

  absl::StatusOr<std::vector<char>> Get(absl::string_view key, absl::Duration timeout) override {
    const std::string full = absl::StrCat(prefix_, "/", key);
    const absl::Time deadline = absl::Now() + timeout;
    absl::Duration pause = absl::Milliseconds(1);
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        Reply reply(static_cast<redisReply*>(
            redisCommand(context_.get(), "GET %b", full.data(), full.size())));
        if (reply == nullptr || reply->type == REDIS_REPLY_ERROR) {
          return Error("GET", full, reply.get());
        }
        if (reply->type == REDIS_REPLY_STRING) {
          return std::vector<char>(reply->str, reply->str + reply->len);
        }
      }
      if (absl::Now() >= deadline) {
        return absl::DeadlineExceededError(
            absl::StrFormat("redis store %s: key \"%s\" was not set within %s", server_, full,
                            ShownTimeout(timeout)));
      }
      absl::SleepFor(std::min(pause, deadline - absl::Now()));
      pause = std::min(2 * pause, absl::Milliseconds(10));
    }
  }

 private:
  absl::Status Error(absl::string_view command, absl::string_view key, const redisReply* reply) {
    const std::string why =
        reply != nullptr ? std::string(reply->str, reply->len) : std::string(context_->errstr);
    return absl::UnavailableError(
        absl::StrFormat("redis store %s: %s \"%s\" failed: %s", server_, command, key, why));
  }

  absl::Mutex mu_;
  std::unique_ptr<redisContext, ContextDeleter> context_ ABSL_GUARDED_BY(mu_);
  const std::string server_;
  const std::string prefix_;
};

// HOST, HOST:PORT, [IPV6] or [IPV6]:PORT; an IPv6 address needs its
// brackets, since its colons would read as a port.
bool ParseRedisAddress(absl::string_view address, std::string* host, int* port) {
  absl::string_view port_text;
  if (absl::ConsumePrefix(&address, "[")) {
    const size_t close = address.find(']');
    if (close == absl::string_view::npos) return false;
    *host = std::string(address.substr(0, close));
    address.remove_prefix(close + 1);
    if (!address.empty() && !absl::ConsumePrefix(&address, ":")) return false;
    port_text = address;
    if (address.empty()) port_text = "6379";
  } else {
    const size_t colon = address.find(':');
    if (colon != address.rfind(':')) return false;
    *host = std::string(address.substr(0, colon));
    port_text = colon == absl::string_view::npos ? "6379" : address.substr(colon + 1);
  }
  return !host->empty() && absl::SimpleAtoi(port_text, port) && *port >= 1 && *port <= 65535;
}

// The URL as a message may show it: what precedes an @ may be a password
// (one with a / in it too), so it is not echoed.
std::string Shown(absl::string_view url) {
  const size_t at = url.rfind('@');
  return at == absl::string_view::npos ? std::string(url)
                                       : absl::StrCat("redis://...@", url.substr(at + 1));
}

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewRedisStore(const std::string& host, int port,
                                                     const std::string& prefix,
                                                     absl::Duration connect_timeout) {
  const bool ipv6 = host.find(':') != std::string::npos;
  const std::string server = absl::StrCat(ipv6 ? "[" : "", host, ipv6 ? "]" : "", ":", port);
  std::unique_ptr<redisContext, ContextDeleter> context(
      redisConnectWithTimeout(host.c_str(), port, absl::ToTimeval(connect_timeout)));
  if (context == nullptr || context->err != 0) {
    return absl::UnavailableError(
        absl::StrFormat("redis store: cannot connect to %s: %s; is redis-server running there?",
                        server, context != nullptr ? context->errstr : "out of memory"));
  }
  if (redisSetTimeout(context.get(), absl::ToTimeval(connect_timeout)) != REDIS_OK) {
    return absl::UnavailableError(absl::StrCat("redis store ", server, ": cannot set a timeout"));
  }
  return std::shared_ptr<Store>(std::make_shared<RedisStore>(context.release(), server, prefix));
}

absl::StatusOr<std::shared_ptr<Store>> NewStoreFromUrl(absl::string_view url,
                                                       absl::Duration connect_timeout) {
  absl::string_view rest = url;
  if (absl::ConsumePrefix(&rest, "redis://")) {
    const size_t slash = rest.find('/');
    absl::string_view address = rest.substr(0, slash);
    absl::string_view prefix = slash == absl::string_view::npos ? "" : rest.substr(slash + 1);
    if (address.find('@') != absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "store \"", Shown(url),
          "\": a user or password in the URL is not supported (the Redis store sends no "
          "AUTH); use a Redis server without one that only the job's hosts reach"));
    }
    std::string host;
    int port = 6379;
    if (!ParseRedisAddress(address, &host, &port) || prefix.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("store \"", Shown(url),
                       "\": expected redis://HOST:PORT/PREFIX (an IPv6 HOST in brackets, "
                       "[::1]) with a key prefix per job"));
    }
    return NewRedisStore(host, port, std::string(prefix), connect_timeout);
  }
  struct stat st;
  const std::string dir(url);
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "store \"", url, "\": neither redis://HOST:PORT/PREFIX nor an existing directory"));
  }
  return NewFileStore(dir);
}

}  // namespace reshard
