#include "planner/steps/slice_routes.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

namespace reshard {

int64_t BoxElements(const Box& box) {
  int64_t n = 1;
  for (const Slice& s : box) n *= s.size;
  return n;
}

Box MeetBoxes(const Box& a, const Box& b, const Box& origin) {
  Box out(a.size());
  for (size_t d = 0; d < a.size(); ++d) {
    const int64_t begin = std::max(a[d].offset, b[d].offset);
    const int64_t end = std::min(a[d].offset + a[d].size, b[d].offset + b[d].size);
    if (end <= begin) return Box(a.size());
    out[d] = Slice{begin - origin[d].offset, end - begin};
  }
  return out;
}

namespace {

// One slice a receiver needs from a replica class (the participants holding
// one box), before its sender is chosen.
struct Demand {
  int64_t receiver;
  int64_t holder_class;  // index into Classes::holders
  Box box;
  int64_t elements;
};

// The distinct non-empty held boxes, each with its holders (ascending), and
// every participant's class (-1: holds nothing).
struct Classes {
  std::vector<std::vector<int64_t>> holders;
  std::vector<int64_t> of;
};

Classes ClassesOf(absl::Span<const Box> held) {
  Classes c;
  c.of.assign(held.size(), -1);
  for (size_t i = 0; i < held.size(); ++i) {
    if (BoxElements(held[i]) == 0) continue;
    for (size_t k = 0; k < c.holders.size() && c.of[i] < 0; ++k) {
      if (held[c.holders[k].front()] == held[i]) c.of[i] = static_cast<int64_t>(k);
    }
    if (c.of[i] < 0) {
      c.of[i] = static_cast<int64_t>(c.holders.size());
      c.holders.emplace_back();
    }
    c.holders[c.of[i]].push_back(static_cast<int64_t>(i));
  }
  return c;
}

// Spec §11.1 step 3: the least loaded holder; ties to the holder nearest the
// receiver by participant index (members of one host are neighbours), then
// the lower index.
int64_t ChooseSender(const std::vector<int64_t>& holders, int64_t receiver,
                     const std::vector<int64_t>& load) {
  int64_t best = holders.front();
  auto key = [&](int64_t i) { return std::make_tuple(load[i], std::llabs(i - receiver), i); };
  for (int64_t i : holders) {
    if (key(i) < key(best)) best = i;
  }
  return best;
}

}  // namespace

std::vector<SliceRoute> RouteSlices(absl::Span<const Box> held, absl::Span<const Box> wanted) {
  const Classes classes = ClassesOf(held);
  std::vector<SliceRoute> routes;
  std::vector<Demand> demands;
  for (size_t j = 0; j < wanted.size(); ++j) {
    if (BoxElements(wanted[j]) == 0) continue;
    const Box zero(wanted[j].size());
    for (size_t k = 0; k < classes.holders.size(); ++k) {
      Box piece = MeetBoxes(held[classes.holders[k].front()], wanted[j], zero);
      const int64_t elements = BoxElements(piece);
      if (elements == 0) continue;
      const int64_t receiver = static_cast<int64_t>(j);
      if (classes.of[j] == static_cast<int64_t>(k)) {  // its own copy
        routes.push_back({receiver, receiver, std::move(piece)});
      } else {
        demands.push_back({receiver, static_cast<int64_t>(k), std::move(piece), elements});
      }
    }
  }
  // Step 2: forced sends (one holder) first; step 3: the rest, largest first.
  std::stable_sort(demands.begin(), demands.end(), [&](const Demand& a, const Demand& b) {
    const bool forced_a = classes.holders[a.holder_class].size() == 1;
    const bool forced_b = classes.holders[b.holder_class].size() == 1;
    if (forced_a != forced_b) return forced_a;
    return a.elements > b.elements;  // stable: then by receiver, then by class
  });
  std::vector<int64_t> load(held.size(), 0);
  for (Demand& d : demands) {
    const int64_t sender = ChooseSender(classes.holders[d.holder_class], d.receiver, load);
    load[sender] += d.elements;
    routes.push_back({sender, d.receiver, std::move(d.box)});
  }
  std::sort(routes.begin(), routes.end(), [](const SliceRoute& a, const SliceRoute& b) {
    return std::tie(a.receiver, a.sender) < std::tie(b.receiver, b.sender);
  });
  return routes;
}

RouteLoad LoadOfRoutes(absl::Span<const SliceRoute> routes, int64_t participants) {
  std::vector<int64_t> sent(participants, 0), received(participants, 0);
  std::vector<int64_t> sends(participants, 0), receives(participants, 0);
  RouteLoad load;
  for (const SliceRoute& r : routes) {
    if (r.sender == r.receiver) continue;
    const int64_t elements = BoxElements(r.box);
    sent[r.sender] += elements;
    received[r.receiver] += elements;
    ++sends[r.sender];
    ++receives[r.receiver];
    load.total_sent += elements;
  }
  for (int64_t i = 0; i < participants; ++i) {
    load.max_sent = std::max(load.max_sent, sent[i]);
    load.max_received = std::max(load.max_received, received[i]);
    load.max_sent_plus_received = std::max(load.max_sent_plus_received, sent[i] + received[i]);
    load.max_messages = std::max({load.max_messages, sends[i], receives[i]});
  }
  return load;
}

}  // namespace reshard
