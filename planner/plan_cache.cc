#include "planner/plan_cache.h"

#include <cstring>
#include <list>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"

namespace reshard {
namespace {

// The cache key: every input that changes the plan, serialised into bytes
// with length prefixes so that distinct inputs never share a key. Built in a
// stack buffer so that a hit allocates nothing (a typical key is ~200 bytes);
// a generic container's insert costs more than the rest of a hit.
class KeyBuilder {
 public:
  void Byte(uint8_t v) { Raw(&v, 1); }
  void Int(int64_t v) { Raw(&v, sizeof v); }
  void Ints(absl::Span<const int64_t> v) {
    Int(static_cast<int64_t>(v.size()));
    Raw(v.data(), v.size() * sizeof(int64_t));
  }
  void String(absl::string_view s) {
    Int(static_cast<int64_t>(s.size()));
    Raw(s.data(), s.size());
  }
  void State(const DistState& s, bool strided) {
    Int(static_cast<int64_t>(s.bits()));
    Byte(static_cast<uint8_t>(s.ndim()));
    Byte(strided ? 1 : 0);
  }
  absl::string_view view() const {
    return spilled_ ? absl::string_view(heap_) : absl::string_view(inline_, size_);
  }

 private:
  void Raw(const void* p, size_t n) {
    if (!spilled_ && size_ + n <= sizeof inline_) {
      std::memcpy(inline_ + size_, p, n);
      size_ += n;
      return;
    }
    if (!spilled_)
      heap_.assign(inline_, size_), spilled_ = true;  // e.g. a long cost model fingerprint
    heap_.append(static_cast<const char*>(p), n);
  }
  char inline_[512];
  size_t size_ = 0;
  bool spilled_ = false;
  std::string heap_;
};

void BuildKey(const DistSpec& src, const DistSpec& dst, const PlanOptions& options,
              KeyBuilder* key) {
  // Mesh, shape and dtype are src's: the caller checked dst shares them.
  key->Ints(src.mesh().sizes());
  key->Ints(src.global_shape());
  key->Byte(static_cast<uint8_t>(src.dtype()));
  key->State(src.state(), src.strided_input());
  key->State(dst.state(), dst.strided_input());
  key->Byte(static_cast<uint8_t>(ResolvedMode(options)));
  key->Byte(static_cast<uint8_t>(options.algorithm));
  key->Int(options.max_memory);
  // The model's fingerprint names it and every parameter that changes a cost.
  key->String(ResolvedCostModel(options)->fingerprint());
  key->Int(options.max_expanded_states);
  key->Int(options.max_search_edges);
  if (options.coordinate.empty()) {
    // Empty means all zeros (planner.h): the same plan as an explicit zero coordinate.
    key->Int(src.mesh().ndim());
    for (int i = 0; i < src.mesh().ndim(); ++i) key->Int(0);
  } else {
    key->Ints(options.coordinate);
  }
}

}  // namespace

struct PlanCache::Impl {
  struct Entry {
    std::string key;
    std::shared_ptr<const Plan> plan;
  };
  using List = std::list<Entry>;

  explicit Impl(size_t cap) : capacity(cap) {}

  // Caller holds mu. Moves a hit to the front.
  std::shared_ptr<const Plan> Find(absl::string_view key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto it = index.find(key);
    if (it == index.end()) return nullptr;
    lru.splice(lru.begin(), lru, it->second);
    return it->second->plan;
  }

  const size_t capacity;
  mutable absl::Mutex mu;
  // Most recently used first. The index's keys point into the list's strings,
  // which stay put because list nodes never move.
  List lru ABSL_GUARDED_BY(mu);
  absl::flat_hash_map<absl::string_view, List::iterator> index ABSL_GUARDED_BY(mu);
  int64_t hits ABSL_GUARDED_BY(mu) = 0;
  int64_t misses ABSL_GUARDED_BY(mu) = 0;
};

PlanCache::PlanCache(size_t capacity) : impl_(std::make_unique<Impl>(capacity)) {}
PlanCache::~PlanCache() = default;

absl::StatusOr<std::shared_ptr<const Plan>> PlanCache::GetOrPlan(const DistSpec& src,
                                                                 const DistSpec& dst,
                                                                 const PlanOptions& options) {
  if (src.mesh() != dst.mesh() || src.global_shape() != dst.global_shape() ||
      src.dtype() != dst.dtype() || ResolvedCostModel(options) == nullptr) {
    // Not a valid request; let the planner say why (errors are not cached).
    {
      absl::MutexLock lock(&impl_->mu);
      ++impl_->misses;
    }
    RESHARD_ASSIGN_OR_RETURN(Plan plan, PlanRedistribution(src, dst, options));
    return std::shared_ptr<const Plan>(std::make_shared<Plan>(std::move(plan)));
  }

  KeyBuilder key;
  BuildKey(src, dst, options, &key);
  {
    absl::MutexLock lock(&impl_->mu);
    if (std::shared_ptr<const Plan> hit = impl_->Find(key.view())) {
      ++impl_->hits;
      return hit;
    }
    ++impl_->misses;
  }

  // Plan without the lock: a search can take a while and other keys must not
  // wait for it. Two threads missing on one key both plan; the first to
  // insert wins so that every caller sees the same plan object afterwards.
  RESHARD_ASSIGN_OR_RETURN(Plan planned, PlanRedistribution(src, dst, options));
  std::shared_ptr<const Plan> plan = std::make_shared<const Plan>(std::move(planned));

  absl::MutexLock lock(&impl_->mu);
  if (std::shared_ptr<const Plan> existing = impl_->Find(key.view())) return existing;
  if (impl_->capacity == 0) return plan;
  impl_->lru.push_front(Impl::Entry{std::string(key.view()), plan});
  impl_->index.emplace(impl_->lru.front().key, impl_->lru.begin());
  while (impl_->lru.size() > impl_->capacity) {
    impl_->index.erase(impl_->lru.back().key);
    impl_->lru.pop_back();
  }
  return plan;
}

PlanCache::Stats PlanCache::stats() const {
  absl::MutexLock lock(&impl_->mu);
  Stats s;
  s.hits = impl_->hits;
  s.misses = impl_->misses;
  s.size = impl_->lru.size();
  return s;
}

}  // namespace reshard
