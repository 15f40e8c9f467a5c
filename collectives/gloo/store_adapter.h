// Gloo's rendezvous (gloo::rendezvous::Context::connectFullMesh) reads and
// writes a gloo::rendezvous::Store; reshard's backends share reshard::Store
// (collectives/store.h). GlooStoreAdapter lets Gloo use any reshard::Store,
// so no store depends on Gloo. Private to the Gloo backend.
//
// Gloo's stores report errors by throwing; the adapter throws StoreError,
// which carries the store's absl::Status so that GlooCommunicator can return
// it with its code (DeadlineExceeded stays DeadlineExceeded).
#ifndef RESHARD_COLLECTIVES_GLOO_STORE_ADAPTER_H_
#define RESHARD_COLLECTIVES_GLOO_STORE_ADAPTER_H_

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "collectives/store.h"
#include "gloo/common/error.h"
#include "gloo/rendezvous/store.h"

namespace reshard {

class StoreError : public gloo::IoException {
 public:
  explicit StoreError(absl::Status status)
      : gloo::IoException(std::string(status.message())), status_(std::move(status)) {}
  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
};

class GlooStoreAdapter final : public gloo::rendezvous::Store {
 public:
  // `store` must outlive the adapter; `timeout` bounds get() and the wait()
  // without a timeout.
  GlooStoreAdapter(reshard::Store& store, absl::Duration timeout)
      : store_(store), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  reshard::Store& store_;
  absl::Duration timeout_;
};

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_GLOO_STORE_ADAPTER_H_
