#include "collectives/stores/in_process_store.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace reshard {

namespace {

class InProcessStore final : public Store {
 public:
  absl::Status Set(absl::string_view key, const std::vector<char>& value) override {
    absl::MutexLock lock(&mu_);
    values_[std::string(key)] = value;
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<char>> SetIfAbsent(absl::string_view key,
                                                const std::vector<char>& value) override {
    absl::MutexLock lock(&mu_);
    return values_.emplace(std::string(key), value).first->second;
  }

  absl::StatusOr<std::vector<char>> Get(absl::string_view key, absl::Duration timeout) override {
    const std::string k(key);
    absl::MutexLock lock(&mu_);
    auto is_set = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return values_.count(k) > 0; };
    if (!mu_.AwaitWithTimeout(absl::Condition(&is_set), timeout)) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "in-process store: key \"%s\" was not set within %s (did every rank start?)", k,
          ShownTimeout(timeout)));
    }
    return values_.at(k);
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, std::vector<char>> values_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::shared_ptr<Store> NewInProcessStore() { return std::make_shared<InProcessStore>(); }

}  // namespace reshard
