// Who sends which slice (planner/steps/slice_routes.h, spec §11.1): every
// receiver gets exactly what it lacks, each element once, from a holder;
// replicas share the sending by the balancing rule. Expected routes are
// derived by hand in the comments.
#include "planner/steps/slice_routes.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/device_mesh.h"
#include "planner/cross_mesh/cross_mesh_plan.h"
#include "planner/layout/dist_spec.h"

namespace reshard {
namespace {

Box Rows(int64_t begin, int64_t end) { return {Slice{begin, end - begin}}; }

// (sender, receiver, first row, rows) of every route.
std::vector<std::vector<int64_t>> Flat(const std::vector<SliceRoute>& routes) {
  std::vector<std::vector<int64_t>> out;
  for (const SliceRoute& r : routes) {
    out.push_back({r.sender, r.receiver, r.box[0].offset, r.box[0].size});
  }
  return out;
}

using Route = std::vector<int64_t>;
using ::testing::ElementsAre;

// Rows 0-3 held by participants 0 and 1, rows 4-7 by 2 and 3; everyone
// wants all 8 (an all_gather over replicas). Demands, all of 4 rows, in
// receiver order: 0 needs 4-7 (holders 2, 3: both idle, 2 is nearer), 1
// needs 4-7 (3 is idle), 2 needs 0-3 (holders 0, 1 idle, 1 nearer), 3 needs
// 0-3 (0 idle). Each sends 4 rows: the most any receives.
TEST(RouteSlicesTest, ReplicasShareTheSending) {
  const std::vector<Box> held = {Rows(0, 4), Rows(0, 4), Rows(4, 8), Rows(4, 8)};
  const std::vector<Box> wanted(4, Rows(0, 8));
  EXPECT_THAT(
      Flat(RouteSlices(held, wanted)),
      ElementsAre(Route{0, 0, 0, 4}, Route{2, 0, 4, 4}, Route{1, 1, 0, 4}, Route{3, 1, 4, 4},
                  Route{1, 2, 0, 4}, Route{2, 2, 4, 4}, Route{0, 3, 0, 4}, Route{3, 3, 4, 4}));
  const RouteLoad load = LoadOfRoutes(RouteSlices(held, wanted), 4);
  EXPECT_EQ(load.max_sent, 4);
  EXPECT_EQ(load.max_received, 4);
  EXPECT_EQ(load.max_messages, 1);
  EXPECT_EQ(load.total_sent, 16);
}

// torch.chunk of 5 rows over 4: 2, 2, 1, 0. Participant 3 holds nothing and
// sends nothing; it receives all 5 rows, from their only holders.
TEST(RouteSlicesTest, UnevenAndEmptyBlocks) {
  const std::vector<Box> held = {Rows(0, 2), Rows(2, 4), Rows(4, 5), Rows(5, 5)};
  const std::vector<Box> wanted(4, Rows(0, 5));
  const std::vector<SliceRoute> routes = RouteSlices(held, wanted);
  for (const SliceRoute& r : routes) EXPECT_NE(r.sender, 3);
  const RouteLoad load = LoadOfRoutes(routes, 4);
  EXPECT_EQ(load.max_received, 5);            // participant 3
  EXPECT_EQ(load.max_sent, 6);                // participants 0 and 1: 2 rows to each of 3
  EXPECT_EQ(load.total_sent, 3 + 3 + 4 + 5);  // what the 4 receivers lack
}

// Forced sends (one holder) are counted before any choice: rows 0-3 have one
// holder (0), rows 4-7 two (0 is not one of them: 1 and 2). Receiver 3 wants
// rows 0-7: 0-3 from 0 (forced); 4-7 from 1 or 2, both idle, 2 nearer.
// Receiver 1 wants rows 4-5 of its own copy (local) and nothing else.
TEST(RouteSlicesTest, ForcedSendsFirstThenNearestIdle) {
  const std::vector<Box> held = {Rows(0, 4), Rows(4, 8), Rows(4, 8), Rows(8, 8)};
  const std::vector<Box> wanted = {Rows(0, 0), Rows(4, 6), Rows(0, 0), Rows(0, 8)};
  EXPECT_THAT(Flat(RouteSlices(held, wanted)),
              ElementsAre(Route{1, 1, 4, 2}, Route{0, 3, 0, 4}, Route{2, 3, 4, 4}));
}

// Larger demands choose first: receivers 0 and 1 hold nothing; 0 wants 2
// rows, 1 wants 6, from the replicas 2 and 3. The 6 rows go first (to the
// nearer idle holder, 2), then the 2 rows to the idle one, 3.
TEST(RouteSlicesTest, LargestDemandChoosesFirst) {
  const std::vector<Box> held = {Rows(0, 0), Rows(0, 0), Rows(0, 8), Rows(0, 8)};
  const std::vector<Box> wanted = {Rows(0, 2), Rows(0, 6), Rows(0, 0), Rows(0, 0)};
  EXPECT_THAT(Flat(RouteSlices(held, wanted)), ElementsAre(Route{3, 0, 0, 2}, Route{2, 1, 0, 6}));
}

// Two-dim boxes: a receiver's pieces tile what it wants, each element once.
TEST(RouteSlicesTest, PiecesTileTheWantedBoxes) {
  // A 6 x 4 tensor in 2 x 2 blocks (rows 0-2 / 3-5, columns 0-1 / 2-3), held
  // by participants 0..3; wanted: column halves by participants 0 and 1, all
  // of it by 2, a 2 x 2 corner by 3.
  const std::vector<Box> held = {{Slice{0, 3}, Slice{0, 2}},
                                 {Slice{0, 3}, Slice{2, 2}},
                                 {Slice{3, 3}, Slice{0, 2}},
                                 {Slice{3, 3}, Slice{2, 2}}};
  const std::vector<Box> wanted = {{Slice{0, 6}, Slice{0, 2}},
                                   {Slice{0, 6}, Slice{2, 2}},
                                   {Slice{0, 6}, Slice{0, 4}},
                                   {Slice{2, 2}, Slice{1, 2}}};
  std::vector<int64_t> got(4, 0);
  for (const SliceRoute& r : RouteSlices(held, wanted)) {
    got[r.receiver] += BoxElements(r.box);
    // Inside what the sender holds and what the receiver wants.
    const Box zero(2);
    EXPECT_EQ(BoxElements(MeetBoxes(r.box, held[r.sender], zero)), BoxElements(r.box));
    EXPECT_EQ(BoxElements(MeetBoxes(r.box, wanted[r.receiver], zero)), BoxElements(r.box));
  }
  EXPECT_THAT(got, ElementsAre(12, 12, 24, 4));
}

// The straightforward rule of spec §11.1 (RouteSlices before issue 17):
// every receiver against every class, classes found by comparing every held
// box with every class, demands sorted whole. The fast RouteSlices must give
// exactly its routes.
std::vector<SliceRoute> ReferenceRoutes(const std::vector<Box>& held,
                                        const std::vector<Box>& wanted) {
  std::vector<std::vector<int64_t>> holders;
  std::vector<int64_t> of(held.size(), -1);
  for (size_t i = 0; i < held.size(); ++i) {
    if (BoxElements(held[i]) == 0) continue;
    for (size_t k = 0; k < holders.size() && of[i] < 0; ++k) {
      if (held[holders[k].front()] == held[i]) of[i] = static_cast<int64_t>(k);
    }
    if (of[i] < 0) {
      of[i] = static_cast<int64_t>(holders.size());
      holders.emplace_back();
    }
    holders[of[i]].push_back(static_cast<int64_t>(i));
  }
  struct Demand {
    int64_t receiver, holder_class;
    Box box;
  };
  std::vector<SliceRoute> routes;
  std::vector<Demand> demands;
  for (size_t j = 0; j < wanted.size(); ++j) {
    if (BoxElements(wanted[j]) == 0) continue;
    for (size_t k = 0; k < holders.size(); ++k) {
      Box piece = MeetBoxes(held[holders[k].front()], wanted[j], Box(wanted[j].size()));
      if (BoxElements(piece) == 0) continue;
      const int64_t receiver = static_cast<int64_t>(j);
      if (of[j] == static_cast<int64_t>(k)) {
        routes.push_back({receiver, receiver, piece});
      } else {
        demands.push_back({receiver, static_cast<int64_t>(k), piece});
      }
    }
  }
  std::stable_sort(demands.begin(), demands.end(), [&](const Demand& a, const Demand& b) {
    const bool forced_a = holders[a.holder_class].size() == 1;
    const bool forced_b = holders[b.holder_class].size() == 1;
    if (forced_a != forced_b) return forced_a;
    return BoxElements(a.box) > BoxElements(b.box);
  });
  std::vector<int64_t> load(held.size(), 0);
  for (const Demand& d : demands) {
    int64_t best = holders[d.holder_class].front();
    auto key = [&](int64_t i) { return std::make_tuple(load[i], std::llabs(i - d.receiver), i); };
    for (int64_t i : holders[d.holder_class]) {
      if (key(i) < key(best)) best = i;
    }
    load[best] += BoxElements(d.box);
    routes.push_back({best, d.receiver, d.box});
  }
  std::sort(routes.begin(), routes.end(), [](const SliceRoute& a, const SliceRoute& b) {
    return std::tie(a.receiver, a.sender) < std::tie(b.receiver, b.sender);
  });
  return routes;
}

// Every route as numbers: sender, receiver, then offset and size per dim.
std::vector<std::vector<int64_t>> AllOf(const std::vector<SliceRoute>& routes) {
  std::vector<std::vector<int64_t>> out;
  for (const SliceRoute& r : routes) {
    std::vector<int64_t> v = {r.sender, r.receiver};
    for (const Slice& s : r.box) v.insert(v.end(), {s.offset, s.size});
    out.push_back(v);
  }
  return out;
}

std::vector<SliceRoute> Touching(const std::vector<SliceRoute>& routes, int64_t participant) {
  std::vector<SliceRoute> out;
  for (const SliceRoute& r : routes) {
    if (r.sender == participant || r.receiver == participant) out.push_back(r);
  }
  return out;
}

// The boxes as a SliceGrid: per dim the distinct slices, by offset then end
// (so in the order LoadOfGridRoutes requires, for disjoint non-empty ones).
SliceGrid GridOf(const std::vector<Box>& boxes) {
  SliceGrid grid;
  const size_t ndim = boxes.empty() ? 0 : boxes[0].size();
  grid.table.resize(ndim);
  grid.index.resize(ndim);
  for (size_t d = 0; d < ndim; ++d) {
    std::vector<Slice>& table = grid.table[d];
    for (const Box& b : boxes) table.push_back(b[d]);
    auto by_offset = [](const Slice& a, const Slice& b) {
      return std::make_pair(a.offset, a.offset + a.size) <
             std::make_pair(b.offset, b.offset + b.size);
    };
    std::sort(table.begin(), table.end(), by_offset);
    table.erase(std::unique(table.begin(), table.end()), table.end());
    for (const Box& b : boxes) {
      grid.index[d].push_back(static_cast<uint32_t>(
          std::lower_bound(table.begin(), table.end(), b[d], by_offset) - table.begin()));
    }
  }
  return grid;
}

// RouteSlices, RouteSlicesOf and, where the held boxes are a grid (a
// layout's blocks), LoadOfGridRoutes, VisitRouteSizesOfGrids and
// ReceiptOfGridMember against the reference.
void ExpectSameAsReference(const std::vector<Box>& held, const std::vector<Box>& wanted,
                           bool grid = true) {
  const std::vector<SliceRoute> expected = ReferenceRoutes(held, wanted);
  ASSERT_EQ(AllOf(RouteSlices(held, wanted)), AllOf(expected));
  const int64_t n = static_cast<int64_t>(held.size());
  for (int64_t p : {int64_t{0}, n / 2, n - 1}) {
    EXPECT_EQ(AllOf(RouteSlicesOf(held, wanted, p)), AllOf(Touching(expected, p)));
  }
  if (!grid) return;
  const RouteLoad want = LoadOfRoutes(expected, n);
  const RouteLoad got = LoadOfGridRoutes(GridOf(held), GridOf(wanted), n);
  EXPECT_EQ(std::make_tuple(got.max_sent, got.max_received, got.max_sent_plus_received,
                            got.max_messages, got.total_sent),
            std::make_tuple(want.max_sent, want.max_received, want.max_sent_plus_received,
                            want.max_messages, want.total_sent));
  // VisitRouteSizesOfGrids: the same routes between participants, by size.
  std::vector<std::tuple<int64_t, int64_t, int64_t>> want_sizes, got_sizes;
  for (const SliceRoute& r : expected) {
    if (r.sender != r.receiver) want_sizes.emplace_back(r.sender, r.receiver, BoxElements(r.box));
  }
  VisitRouteSizesOfGrids(GridOf(held), GridOf(wanted), n, [&](const RouteSize& r) {
    got_sizes.emplace_back(r.sender, r.receiver, r.elements);
  });
  std::sort(want_sizes.begin(), want_sizes.end());
  std::sort(got_sizes.begin(), got_sizes.end());
  EXPECT_EQ(got_sizes, want_sizes);
  // ReceiptOfGridMember, participants of p's parity near it: each route
  // into p by whether the holders of its sender's box are near, far or both.
  for (int64_t p : {int64_t{0}, n / 2, n - 1}) {
    const auto near = [&](int64_t i) { return i % 2 == p % 2; };
    ReceiptByPlace want_receipt;
    for (const SliceRoute& r : Touching(expected, p)) {
      if (r.receiver != p || r.sender == p) continue;
      bool any_near = false, any_far = false;
      for (int64_t i = 0; i < n; ++i) {
        if (held[i] == held[r.sender]) (near(i) ? any_near : any_far) = true;
      }
      (!any_far    ? want_receipt.near_only
       : !any_near ? want_receipt.far_only
                   : want_receipt.either) += BoxElements(r.box);
    }
    const ReceiptByPlace got = ReceiptOfGridMember(GridOf(held), GridOf(wanted), n, p, near);
    EXPECT_EQ(std::make_tuple(got.near_only, got.far_only, got.either),
              std::make_tuple(want_receipt.near_only, want_receipt.far_only, want_receipt.either))
        << "participant " << p;
  }
}

// A random layout of `shape` on `mesh`: each mesh dim R or S(d) (d random),
// each tensor dim's shard order a random permutation.
DistSpec RandomSpec(const DeviceMesh& mesh, const std::vector<int64_t>& shape, std::mt19937* rng) {
  const int ndim = static_cast<int>(shape.size());
  std::vector<int> dim(mesh.ndim());
  for (int& d : dim) d = static_cast<int>((*rng)() % (ndim + 1)) - 1;  // -1: R
  std::vector<int> position(mesh.ndim(), 0);
  for (int d = 0; d < ndim; ++d) {
    std::vector<int> ms;
    for (int m = 0; m < mesh.ndim(); ++m) {
      if (dim[m] == d) ms.push_back(m);
    }
    std::shuffle(ms.begin(), ms.end(), *rng);
    for (size_t k = 0; k < ms.size(); ++k) position[ms[k]] = static_cast<int>(k);
  }
  std::string text;
  for (int m = 0; m < mesh.ndim(); ++m) {
    absl::StrAppend(&text, dim[m] < 0 ? "R" : absl::StrCat("S(", dim[m], ")[", position[m], "]"));
  }
  return *DistSpec::Parse(mesh, text, shape, DType::kF32);
}

DeviceMesh RandomMesh(std::mt19937* rng) {
  std::vector<int64_t> sizes(1 + (*rng)() % 3);
  for (int64_t& s : sizes) s = 1 + static_cast<int64_t>((*rng)() % 5);
  return *DeviceMesh::Create(sizes);
}

std::vector<Box> BlocksOf(const DistSpec& spec, int64_t participants) {
  std::vector<Box> out(participants, Box(spec.tensor_ndim()));
  for (int64_t r = 0; r < spec.mesh().num_ranks(); ++r) {
    out[r] = BlockOf(spec, spec.mesh().Coordinate(r));
  }
  return out;
}

// Real layouts (nested uneven chunks in random shard orders, replicas,
// empty blocks), on the same mesh and across meshes of other sizes (the
// extra participants hold or want nothing), and some wanted boxes emptied.
TEST(RouteSlicesTest, SameRoutesAsTheReferenceOnRandomLayouts) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<int64_t> shape(1 + rng() % 3);
    for (int64_t& s : shape) s = 1 + static_cast<int64_t>(rng() % 13);
    const DeviceMesh src_mesh = RandomMesh(&rng);
    const DeviceMesh dst_mesh = trial % 2 == 0 ? src_mesh : RandomMesh(&rng);
    const int64_t n = std::max(src_mesh.num_ranks(), dst_mesh.num_ranks());
    const std::vector<Box> held = BlocksOf(RandomSpec(src_mesh, shape, &rng), n);
    std::vector<Box> wanted = BlocksOf(RandomSpec(dst_mesh, shape, &rng), n);
    if (trial % 3 == 0) wanted[rng() % n] = Box(shape.size());
    SCOPED_TRACE(trial);
    ExpectSameAsReference(held, wanted);
  }
}

// Disjoint boxes that are no grid (guillotine cuts: a dim's extents
// overlap), where the fast search cannot take a run of extents, and random
// wanted boxes.
TEST(RouteSlicesTest, SameRoutesAsTheReferenceOnBoxesThatAreNoGrid) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const std::vector<int64_t> shape = {static_cast<int64_t>(2 + rng() % 10),
                                        static_cast<int64_t>(2 + rng() % 10)};
    std::vector<Box> boxes = {{Slice{0, shape[0]}, Slice{0, shape[1]}}};
    for (int cut = 0; cut < 6; ++cut) {  // cut a random box in two along a random dim
      Box& b = boxes[rng() % boxes.size()];
      const size_t d = rng() % 2;
      if (b[d].size < 2) continue;
      const int64_t at = 1 + static_cast<int64_t>(rng() % (b[d].size - 1));
      Box rest = b;
      rest[d] = Slice{b[d].offset + at, b[d].size - at};
      b[d].size = at;
      boxes.push_back(rest);
    }
    const int64_t n = 1 + static_cast<int64_t>(rng() % 12);
    std::vector<Box> held(n, Box(2)), wanted(n, Box(2));
    for (int64_t i = 0; i < n; ++i) {
      if (rng() % 5 != 0) held[i] = boxes[rng() % boxes.size()];
      for (size_t d = 0; d < 2; ++d) {
        const int64_t a = rng() % (shape[d] + 1), b = rng() % (shape[d] + 1);
        wanted[i][d] = Slice{std::min(a, b), std::max(a, b) - std::min(a, b)};
      }
    }
    SCOPED_TRACE(trial);
    ExpectSameAsReference(held, wanted, /*grid=*/false);
  }
}

// More distinct demand sizes than LargestFirst counts (16): the comparison
// sort takes over, largest first as in the reference.
TEST(RouteSlicesTest, SameRoutesAsTheReferenceWithManyDemandSizes) {
  std::vector<Box> held(24, Rows(0, 0)), wanted(24, Rows(0, 0));
  held[0] = held[1] = held[2] = Rows(0, 40);
  for (int64_t i = 3; i < 24; ++i) wanted[i] = Rows(0, i);  // 21 sizes, ascending
  ExpectSameAsReference(held, wanted);
}

// The hand-made cases above, too (rank-0 boxes: one class, met by all).
TEST(RouteSlicesTest, SameRoutesAsTheReferenceOnSmallCases) {
  ExpectSameAsReference({Rows(0, 4), Rows(0, 4), Rows(4, 8), Rows(4, 8)},
                        std::vector<Box>(4, Rows(0, 8)));
  ExpectSameAsReference({Rows(0, 4), Rows(4, 8), Rows(4, 8), Rows(8, 8)},
                        {Rows(0, 0), Rows(4, 6), Rows(0, 0), Rows(0, 8)});
  ExpectSameAsReference({Box(), Box(), Box()}, {Box(), Box(), Box()});
  ExpectSameAsReference({Rows(0, 0), Rows(0, 0)}, {Rows(0, 3), Rows(1, 2)});
}

}  // namespace
}  // namespace reshard
