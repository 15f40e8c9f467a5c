// QuadHeap (planner/search/quad_heap.h): random pushes and pops, interleaved
// as a search's are, pop in the order a sorted multiset gives, ties on the
// key included (NativeGraphCosts' entries tie often on symmetric meshes).
#include "planner/search/quad_heap.h"

#include <cstdint>
#include <random>
#include <set>
#include <utility>

#include "gtest/gtest.h"

namespace reshard {
namespace {

// A key and an id that the order ignores: ties pop in any order.
struct Item {
  double key;
  uint32_t id;
};
struct KeyFirst {
  bool operator()(const Item& a, const Item& b) const { return a.key < b.key; }
};

TEST(QuadHeapTest, InterleavedPushesAndPopsComeOutInKeyOrder) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> key(0, 40);  // few keys: many ties
  std::uniform_int_distribution<int> action(0, 2);
  QuadHeap<Item, KeyFirst> heap;
  std::multiset<std::pair<double, uint32_t>> want;  // every item held, by key
  int pops = 0;
  for (uint32_t i = 0; i < 20000; ++i) {
    if (action(rng) != 0 || heap.empty()) {
      const Item item{key(rng) * 0.25, i};
      heap.Push(item);
      want.insert({item.key, item.id});
    } else {
      const double least = want.begin()->first;
      ASSERT_EQ(heap.top().key, least);
      const Item got = heap.Pop();
      ASSERT_EQ(got.key, least) << "pop " << pops;
      ASSERT_EQ(want.erase({got.key, got.id}), 1u) << "popped an item never pushed";
      ++pops;
    }
    ASSERT_EQ(heap.size(), want.size());
  }
  while (!heap.empty()) {
    const Item got = heap.Pop();
    ASSERT_EQ(got.key, want.begin()->first);
    ASSERT_EQ(want.erase({got.key, got.id}), 1u);
  }
  EXPECT_TRUE(want.empty());
  EXPECT_GT(pops, 5000);
}

}  // namespace
}  // namespace reshard
