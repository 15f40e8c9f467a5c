#include "harness/job_membership.h"

#include <unistd.h>

#include <algorithm>
#include <random>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"

namespace reshard {
namespace {

// Keys under the store's prefix; see the header for what each holds.
constexpr char kFingerprintKey[] = "job/fingerprint";
constexpr char kAbortKey[] = "job/abort";
constexpr char kFinishedKey[] = "job/finished";
std::string ClaimKey(int64_t rank) { return absl::StrCat("job/claim/", rank); }
std::string AliveKey(absl::string_view id) { return absl::StrCat("job/alive/", id); }
std::string DoneKey(absl::string_view id) { return absl::StrCat("job/done/", id); }

// What a host writes under each rank it claims: who it is and its whole
// range, so that a host whose own claims all succeeded still sees that another
// host's range overlaps its own (that host stopped at the first rank it lost).
struct RankClaim {
  std::string id;
  int64_t first = 0, last = -1;
  std::string host_name;

  std::string Encode() const { return absl::StrCat(id, "\n", first, " ", last, "\n", host_name); }
  static RankClaim Decode(absl::string_view text) {
    std::vector<std::string> lines = absl::StrSplit(text, absl::MaxSplits('\n', 2));
    RankClaim c;
    c.id = lines[0];
    if (lines.size() < 3) return c;  // not a claim of this version: overlaps nothing
    std::vector<absl::string_view> range = absl::StrSplit(lines[1], ' ');
    if (range.size() != 2 || !absl::SimpleAtoi(range[0], &c.first) ||
        !absl::SimpleAtoi(range[1], &c.last)) {
      c.first = 0, c.last = -1;
    }
    c.host_name = lines[2];
    return c;
  }
  // "host a (ranks 0-4)", as messages name a host.
  std::string Shown() const {
    return last < first ? absl::StrCat(host_name, " (no ranks)")
                        : absl::StrFormat("%s (ranks %d-%d)", host_name, first, last);
  }
};

constexpr absl::Duration kPoll = absl::Milliseconds(100);

std::vector<char> Bytes(absl::string_view s) { return std::vector<char>(s.begin(), s.end()); }
std::string Text(const std::vector<char>& v) { return std::string(v.begin(), v.end()); }

std::string Escape(absl::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '%' || c == '\n') {
      absl::StrAppendFormat(&out, "%%%02X", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

std::string Unescape(absl::string_view value) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    int byte = 0;
    if (value[i] == '%' && i + 2 < value.size() &&
        absl::SimpleHexAtoi(value.substr(i + 1, 2), &byte)) {
      out += static_cast<char>(byte);
      i += 2;
    } else {
      out += value[i];
    }
  }
  return out;
}

// Values in messages: quoted, and cut short when long (a layouts list).
std::string Shown(absl::string_view value) {
  if (value.size() <= 80) return absl::StrCat("'", value, "'");
  return absl::StrCat("'", value.substr(0, 77), "...' (", value.size(), " bytes)");
}

// A key that is not set yet is no error here; anything else is the store's.
bool IsAbsent(const absl::Status& s) { return s.code() == absl::StatusCode::kDeadlineExceeded; }

absl::Status StoreFailed(const absl::Status& s) {
  return absl::UnavailableError(absl::StrCat("the store stopped answering: ", s.message()));
}

// The abort key's value: the status code, a newline, the message.
std::string EncodeAbort(const absl::Status& s) {
  return absl::StrCat(static_cast<int>(s.code()), "\n", s.message());
}

absl::Status DecodeAbort(absl::string_view value) {
  const size_t newline = value.find('\n');
  int code = static_cast<int>(absl::StatusCode::kAborted);
  if (newline == absl::string_view::npos || !absl::SimpleAtoi(value.substr(0, newline), &code)) {
    return absl::AbortedError(value);
  }
  return absl::Status(static_cast<absl::StatusCode>(code), value.substr(newline + 1));
}

std::string NewId(absl::string_view host_name) {
  std::random_device random;
  return absl::StrFormat("%s#%d#%08x", host_name, getpid(), random());
}

}  // namespace

std::string EncodeFingerprint(const JobFingerprint& job) {
  std::string out;
  for (const auto& [name, value] : job) absl::StrAppend(&out, name, "=", Escape(value), "\n");
  return out;
}

std::string FingerprintDifference(absl::string_view stored, const JobFingerprint& job) {
  std::map<std::string, std::string> theirs;
  std::vector<std::string> order;
  for (absl::string_view line : absl::StrSplit(stored, '\n', absl::SkipEmpty())) {
    const size_t eq = line.find('=');
    const std::string name(line.substr(0, eq));
    theirs[name] = eq == absl::string_view::npos ? "" : Unescape(line.substr(eq + 1));
    order.push_back(name);
  }
  std::set<std::string> mine;
  for (const auto& [name, value] : job) {
    mine.insert(name);
    auto it = theirs.find(name);
    if (it == theirs.end()) {
      return absl::StrCat(name, " is ", Shown(value),
                          " here and not part of the job already in the store");
    }
    if (it->second != value) {
      return absl::StrCat(name, " is ", Shown(it->second), " in the job already in the store, ",
                          Shown(value), " here");
    }
  }
  for (const std::string& name : order) {
    if (mine.count(name) == 0) {
      return absl::StrCat(name, " is ", Shown(theirs[name]),
                          " in the job already in the store and not given here");
    }
  }
  return "";
}

std::string RankRanges(const std::vector<int64_t>& ranks) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    parts.push_back(j == i ? absl::StrCat(ranks[i]) : absl::StrCat(ranks[i], "-", ranks[j]));
    i = j + 1;
  }
  return absl::StrJoin(parts, ", ");
}

JobMembership::JobMembership(std::shared_ptr<Store> store, const MembershipOptions& options,
                             std::string id)
    : store_(std::move(store)), options_(options), id_(std::move(id)) {}

absl::StatusOr<std::unique_ptr<JobMembership>> JobMembership::Join(
    std::shared_ptr<Store> store, const JobFingerprint& job, const MembershipOptions& options) {
  if (store == nullptr) return absl::InvalidArgumentError("job membership: no store");
  if (options.num_ranks < 1) return absl::InvalidArgumentError("num_ranks: must be >= 1");
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("timeout: must be positive");
  }
  std::unique_ptr<JobMembership> m(
      new JobMembership(std::move(store), options, NewId(options.host_name)));
  RESHARD_RETURN_IF_ERROR(m->Claim(job));
  m->heartbeat_ = std::thread([p = m.get()] { p->Beat(); });
  RESHARD_RETURN_IF_ERROR(m->AwaitEveryRank());
  return m;
}

JobMembership::~JobMembership() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (heartbeat_.joinable()) heartbeat_.join();
}

// Steps 1-3 of Join (header).
absl::Status JobMembership::Claim(const JobFingerprint& job) {
  for (const char* key : {kFinishedKey, kAbortKey}) {
    absl::StatusOr<std::vector<char>> end = store_->Get(key, absl::ZeroDuration());
    if (!end.ok() && !IsAbsent(end.status())) return StoreFailed(end.status());
    if (end.ok()) {
      const std::string how = key == kFinishedKey ? "finished" : "stopped";
      const std::string why =
          key == kFinishedKey ? Text(*end) : std::string(DecodeAbort(Text(*end)).message());
      return absl::InvalidArgumentError(
          absl::StrCat("this store prefix (or directory) holds a job that already ", how, " (", why,
                       "); its keys stay in the store: give each run a fresh prefix"));
    }
  }
  absl::StatusOr<std::vector<char>> stored =
      store_->SetIfAbsent(kFingerprintKey, Bytes(EncodeFingerprint(job)));
  if (!stored.ok()) return StoreFailed(stored.status());
  if (std::string diff = FingerprintDifference(Text(*stored), job); !diff.empty()) {
    const absl::Status s =
        absl::InvalidArgumentError(absl::StrCat("the hosts disagree on the job: ", diff));
    Abort(s);
    return s;
  }
  const int64_t last = std::min(options_.last_rank, options_.num_ranks - 1);
  const RankClaim mine{id_, options_.first_rank, last, options_.host_name};
  for (int64_t r = options_.first_rank; r <= last; ++r) {
    absl::StatusOr<std::vector<char>> owner =
        store_->SetIfAbsent(ClaimKey(r), Bytes(mine.Encode()));
    if (!owner.ok()) return StoreFailed(owner.status());
    const RankClaim other = RankClaim::Decode(Text(*owner));
    if (other.id == id_) continue;
    return ClaimedTwice(r, other.Shown(), mine.Shown());
  }
  return absl::OkStatus();
}

absl::Status JobMembership::ClaimedTwice(int64_t rank, absl::string_view first,
                                         absl::string_view second) {
  const absl::Status s = absl::InvalidArgumentError(absl::StrFormat(
      "rank %d is claimed by two hosts: %s and %s (if the first one's job is over, its keys "
      "stay in the store: give each run a fresh prefix)",
      rank, first, second));
  Abort(s);
  return s;
}

// Step 4 of Join: every rank claimed, and who the peers are.
absl::Status JobMembership::AwaitEveryRank() {
  const absl::Time deadline = absl::Now() + options_.timeout;
  std::vector<std::string> owners(options_.num_ranks);
  while (true) {
    RESHARD_RETURN_IF_ERROR(ReadAbort());
    std::vector<int64_t> missing;
    for (int64_t r = 0; r < options_.num_ranks; ++r) {
      if (!owners[r].empty()) continue;
      absl::StatusOr<std::vector<char>> owner = store_->Get(ClaimKey(r), absl::ZeroDuration());
      if (!owner.ok() && !IsAbsent(owner.status())) return StoreFailed(owner.status());
      if (owner.ok()) {
        owners[r] = Text(*owner);
      } else {
        missing.push_back(r);
      }
    }
    if (missing.empty()) break;
    if (absl::Now() >= deadline) {
      const absl::Status s = absl::DeadlineExceededError(absl::StrFormat(
          "rank%s %s never joined within %s: no host claimed %s under this store prefix (is "
          "every host running, with the same store and prefix, and do their ranks cover %d-%d?)",
          missing.size() > 1 ? "s" : "", RankRanges(missing),
          absl::FormatDuration(options_.timeout), missing.size() > 1 ? "them" : "it", 0,
          options_.num_ranks - 1));
      Abort(s);
      return s;
    }
    absl::SleepFor(kPoll);
  }
  const absl::Time now = absl::Now();
  const int64_t last = std::min(options_.last_rank, options_.num_ranks - 1);
  const RankClaim mine{id_, options_.first_rank, last, options_.host_name};
  for (const std::string& owner : owners) {
    const RankClaim other = RankClaim::Decode(owner);
    if (other.id == id_ || peers_.count(other.id) > 0) continue;
    // A host that lost a rank to this one stopped claiming there; its range
    // still says so, and both hosts refuse alike whoever claimed first.
    const int64_t overlap = std::max(mine.first, other.first);
    if (overlap <= std::min(mine.last, other.last)) {
      return ClaimedTwice(overlap, other.Shown(), mine.Shown());
    }
    peers_[other.id] = Peer{other.Shown(), "", now};
  }
  return absl::OkStatus();
}

absl::Status JobMembership::ReadAbort() {
  absl::StatusOr<std::vector<char>> why = store_->Get(kAbortKey, absl::ZeroDuration());
  if (!why.ok()) return IsAbsent(why.status()) ? absl::OkStatus() : StoreFailed(why.status());
  return DecodeAbort(Text(*why));
}

absl::Status JobMembership::CheckPeers() {
  const absl::Time now = absl::Now();
  for (auto& [id, peer] : peers_) {
    absl::StatusOr<std::vector<char>> done = store_->Get(DoneKey(id), absl::ZeroDuration());
    if (!done.ok() && !IsAbsent(done.status())) return StoreFailed(done.status());
    if (done.ok()) continue;  // finished: it beats no more
    absl::StatusOr<std::vector<char>> beat = store_->Get(AliveKey(id), absl::ZeroDuration());
    if (!beat.ok() && !IsAbsent(beat.status())) return StoreFailed(beat.status());
    if (beat.ok() && Text(*beat) != peer.beat) {
      peer.beat = Text(*beat);
      peer.moved = now;
    }
    if (now - peer.moved > options_.timeout) {
      return absl::UnavailableError(absl::StrFormat(
          "%s wrote no heartbeat for %s (the limit is the timeout, %s): it died, or lost the "
          "store",
          peer.name, absl::FormatDuration(absl::Trunc(now - peer.moved, absl::Milliseconds(100))),
          absl::FormatDuration(options_.timeout)));
    }
  }
  return absl::OkStatus();
}

absl::Status JobMembership::Check() {
  if (!failed_.ok()) return failed_;
  const absl::Time now = absl::Now();
  if (now - last_check_ < kPoll) return absl::OkStatus();
  last_check_ = now;
  {
    absl::MutexLock lock(&mu_);
    if (!beat_error_.ok()) failed_ = StoreFailed(beat_error_);
  }
  if (failed_.ok()) failed_ = ReadAbort();
  if (failed_.ok()) failed_ = CheckPeers();
  return failed_;
}

void JobMembership::Abort(const absl::Status& why) {
  if (failed_.ok()) failed_ = why;
  const absl::Status shared(why.code(), absl::StrCat(options_.host_name, ": ", why.message()));
  store_->SetIfAbsent(kAbortKey, Bytes(EncodeAbort(shared))).IgnoreError();
}

void JobMembership::Finish(absl::string_view summary) {
  store_->Set(DoneKey(id_), Bytes("1")).IgnoreError();
  store_
      ->SetIfAbsent(kFinishedKey, Bytes(absl::StrCat(options_.host_name, ": ", summary, ", at ",
                                                     absl::FormatTime(absl::Now()))))
      .IgnoreError();
}

void JobMembership::Beat() {
  const absl::Duration every = std::min(absl::Seconds(1), options_.timeout / 5);
  for (int64_t count = 0;; ++count) {
    if (absl::Status s = store_->Set(AliveKey(id_), Bytes(absl::StrCat(count))); !s.ok()) {
      absl::MutexLock lock(&mu_);
      beat_error_ = s;
      return;
    }
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stop_), every)) return;
  }
}

}  // namespace reshard
