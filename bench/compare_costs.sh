#!/usr/bin/env bash
# Cost matrix, `reshard costs` vs planning every pair through `reshard batch`
# (graph planner), side by side on the same layouts and the same machine, in
# one run, in pytorch mode and in native mode (the default, model nccl).
# Checks that every entry agrees bit for bit, then prints both wall times,
# pairs per second and their ratio, and native `costs` as a share of pytorch
# `costs`' pairs per second (issue 17's bars: 20x batch, a quarter of pytorch).
#
#   bench/compare_costs.sh [repeats]
#   bench/compare_costs.sh repeats LAYOUTS MESH SHAPE   # one set of your own
#   THREADS=1 bench/compare_costs.sh ...                # `reshard costs --threads 1`
#
# `reshard costs` runs on one thread per core by default (`reshard batch`
# plans its lines on one); THREADS=N passes --threads N.
# Layouts (as planner_bench's BM_CostMatrix): a 1024x4096 f32 tensor; every
# mesh dim R, S(0), S(1) or P(sum): all 64 on a 2x2x2 mesh, every other one of
# the 256 on a 2x2x2x2 mesh (128). Or the layouts of the file LAYOUTS (one a
# line) on mesh MESH (e.g. 2,2,2,2) for a tensor of shape SHAPE (e.g.
# 96,200,77), as for bench/data/costs_fresh_layouts.txt (bench/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-3}
own_layouts=${2:-}
own_mesh=${3:-}
own_shape=${4:-1024,4096}
if [ -n "$own_layouts" ] && { [ ! -f "$own_layouts" ] || [ -z "$own_mesh" ]; }; then
  echo "usage: bench/compare_costs.sh repeats LAYOUTS MESH [SHAPE]: LAYOUTS must be a file" >&2
  exit 2
fi

source bench/opt_reshard.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Best of `repeats` wall times, in seconds, of "$@" < $1.
best() {
  local input=$1 best="" t0 t1 t
  shift
  for _ in $(seq "$repeats"); do
    t0=$(date +%s.%N); "$@" < "$input" > "$tmp/out"; t1=$(date +%s.%N)
    t=$(echo "$t1 - $t0" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
  done
  echo "$best"
}


if [ -n "$own_layouts" ]; then sets=own; else sets="3 4"; fi
for mesh_ndim in $sets; do
  if [ "$mesh_ndim" = own ]; then
    mesh=$own_mesh
    shape=$own_shape
  else
    mesh=$(python3 -c "print(','.join(['2'] * $mesh_ndim))")
    shape=1024,4096
  fi
  for mode in pytorch native; do
    python3 - "$mesh_ndim" "$mode" "$tmp/layouts.txt" "$tmp/pairs.jsonl" "$own_layouts" "$mesh" \
      "$shape" <<'PY'
import json, sys
ndim, mode, layouts_path, pairs_path = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
own, mesh, shape = sys.argv[5], [int(x) for x in sys.argv[6].split(",")], sys.argv[7]
if ndim == "own":
    layouts = [l.strip() for l in open(own) if l.strip()]
else:
    ndim = int(ndim)
    tokens = ["R", "S(0)", "S(1)", "P(sum)"]
    # Mesh dim 0 varies fastest, as in planner_bench.
    every = ["".join(tokens[(i // 4 ** m) % 4] for m in range(ndim)) for i in range(4 ** ndim)]
    layouts = every[:: len(every) // (64 if ndim == 3 else 128)]
open(layouts_path, "w").write("\n".join(layouts) + "\n")
with open(pairs_path, "w") as f:
    for i, a in enumerate(layouts):
        for j, b in enumerate(layouts):
            line = {"id": [i, j], "mesh": mesh, "shape": [int(x) for x in shape.split(",")],
                    "src": a, "dst": b, "algorithm": "graph"}
            if mode == "pytorch":
                line["mode"] = "pytorch"
            f.write(json.dumps(line) + "\n")
PY
    n=$(grep -c . "$tmp/layouts.txt")
    t_costs=$(best /dev/null "$reshard" costs --mesh "$mesh" --shape "$shape" \
      --layouts "$tmp/layouts.txt" --mode "$mode" ${THREADS:+--threads "$THREADS"})
    cp "$tmp/out" "$tmp/costs.jsonl"
    t_batch=$(best "$tmp/pairs.jsonl" "$reshard" batch); cp "$tmp/out" "$tmp/batch.jsonl"
    python3 - "$tmp/costs.jsonl" "$tmp/batch.jsonl" <<'PY'
import json, sys
rows = [json.loads(l)["costs"] for l in open(sys.argv[1])]
for l in open(sys.argv[2]):
    r = json.loads(l)
    i, j = r["id"]
    want = r["cost"] if r["ok"] else None
    if rows[i][j] != want:
        sys.exit(f"compare_costs: entry {i},{j} differs: {rows[i][j]} vs batch {want}")
print(f"entries agree on {len(rows) ** 2} pairs")
PY
    pairs=$((n * n))
    echo "mesh $mesh, shape $shape, $n layouts, $pairs pairs, $mode mode, best of $repeats," \
      "costs threads: ${THREADS:-one per core}"
    printf 'reshard costs : %8.3f s  %10.0f pairs/s\n' "$t_costs" "$(echo "$pairs / $t_costs" | bc -l)"
    printf 'reshard batch : %8.3f s  %10.0f pairs/s\n' "$t_batch" "$(echo "$pairs / $t_batch" | bc -l)"
    printf 'speed-up      : %8.1fx\n' "$(echo "$t_batch / $t_costs" | bc -l)"
    if [ "$mode" = pytorch ]; then
      t_pytorch=$t_costs
    else
      printf "native costs  : %8.1f%% of pytorch costs' pairs/s\n" \
        "$(echo "100 * $t_pytorch / $t_costs" | bc -l)"
    fi
  done
done
