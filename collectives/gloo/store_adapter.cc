#include "collectives/gloo/store_adapter.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace reshard {

void GlooStoreAdapter::set(const std::string& key, const std::vector<char>& data) {
  if (absl::Status s = store_.Set(key, data); !s.ok()) throw StoreError(std::move(s));
}

std::vector<char> GlooStoreAdapter::get(const std::string& key) {
  absl::StatusOr<std::vector<char>> value = store_.Get(key, timeout_);
  if (!value.ok()) throw StoreError(value.status());
  return *std::move(value);
}

void GlooStoreAdapter::wait(const std::vector<std::string>& keys) {
  wait(keys, std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout_)));
}

// reshard::Store has no wait: getting each key within what is left of the
// timeout waits for all of them.
void GlooStoreAdapter::wait(const std::vector<std::string>& keys,
                            const std::chrono::milliseconds& timeout) {
  const absl::Time deadline = absl::Now() + absl::FromChrono(timeout);
  for (const std::string& key : keys) {
    absl::StatusOr<std::vector<char>> value =
        store_.Get(key, std::max(deadline - absl::Now(), absl::ZeroDuration()));
    if (!value.ok()) throw StoreError(value.status());
  }
}

}  // namespace reshard
