// DistanceHeap (planner/search/distance_heap.h): a Dijkstra with it gives the
// same distances as one with a heap of (distance, vertex) pairs, the one
// NativeGraphCosts' tables used before, on random graphs.
#include "planner/search/distance_heap.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace reshard {
namespace {

struct Arc {
  uint32_t to;
  double cost;
};
using Graph = std::vector<std::vector<Arc>>;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Costs from a few values, so that many paths tie (as prices on symmetric meshes do).
Graph RandomGraph(std::mt19937* rng, uint32_t n, int arcs_per_vertex) {
  const double costs[] = {0.0, 0.5, 1.25, 3.0, 7.1, 1e-3};
  Graph g(n);
  std::uniform_int_distribution<uint32_t> vertex(0, n - 1);
  std::uniform_int_distribution<int> cost(0, 5);
  for (auto& arcs : g) {
    for (int i = 0; i < arcs_per_vertex; ++i) arcs.push_back({vertex(*rng), costs[cost(*rng)]});
  }
  return g;
}

std::vector<double> DistancesWithPairHeap(const Graph& g, uint32_t source) {
  std::vector<double> dist(g.size(), kInfinity);
  dist[source] = 0;
  using Item = std::pair<double, uint32_t>;
  std::vector<Item> heap = {{0.0, source}};
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<Item>());
    const auto [d, v] = heap.back();
    heap.pop_back();
    if (d > dist[v]) continue;
    for (const Arc& a : g[v]) {
      if (d + a.cost < dist[a.to]) {
        dist[a.to] = d + a.cost;
        heap.push_back({dist[a.to], a.to});
        std::push_heap(heap.begin(), heap.end(), std::greater<Item>());
      }
    }
  }
  return dist;
}

TEST(DistanceHeapTest, DijkstraEqualsOneWithAPairHeapAndPopsEachVertexOnceInOrder) {
  std::mt19937 rng(17);
  DistanceHeap heap;
  for (int trial = 0; trial < 200; ++trial) {
    const uint32_t n = 1 + rng() % 300;
    const Graph g = RandomGraph(&rng, n, 1 + static_cast<int>(rng() % 6));
    const uint32_t source = rng() % n;
    std::vector<double> dist(n, kInfinity);
    std::vector<int> pops(n, 0);
    dist[source] = 0;
    heap.Reset(n);
    heap.Push(source, 0.0);
    double last = 0;
    while (!heap.empty()) {
      const uint32_t v = heap.Pop();
      ++pops[v];
      EXPECT_GE(dist[v], last) << "trial " << trial;
      last = dist[v];
      for (const Arc& a : g[v]) {
        if (dist[v] + a.cost < dist[a.to]) {
          dist[a.to] = dist[v] + a.cost;
          heap.Push(a.to, dist[a.to]);
        }
      }
    }
    EXPECT_EQ(dist, DistancesWithPairHeap(g, source)) << "trial " << trial;
    for (uint32_t v = 0; v < n; ++v) EXPECT_EQ(pops[v], dist[v] == kInfinity ? 0 : 1);
  }
}

}  // namespace
}  // namespace reshard
