#!/usr/bin/env bash
# Compares rltrade tune's search methods on the analytic objectives, as docs/performance.md
# reports them: for each method and function, SEEDS studies (seeds 0 .. SEEDS-1) of EVALS
# trials each through the command line, then the share of studies whose best value is
# within the tolerance of the known minimum (Branin 0.397887: 0.05; Hartmann6 -3.32237:
# 1e-2), the share within ten times that tolerance, and the median best value.
#   scripts/tune_methods.sh [RLTRADE] [SEEDS] [EVALS]   (defaults build/rltrade 100 128)
set -euo pipefail
bin=${1:-build/rltrade}
seeds=${2:-100}
evals=${3:-128}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'x1 = { uniform = [-5, 10] }\nx2 = { uniform = [0, 15] }\n' > "$work/branin.toml"
for i in 1 2 3 4 5 6; do echo "x$i = { uniform = [0, 1] }"; done > "$work/hartmann6.toml"
echo "| function | method | within tolerance | within 10x tolerance | median best | seconds |"
echo "|---|---|---|---|---|---|"
for fn in branin hartmann6; do
  for method in random sobol anneal tpe cmaes; do
    start=$(date +%s.%N)
    for ((s = 0; s < seeds; s++)); do
      "$bin" tune --objective-fn "$fn" --space "$work/$fn.toml" --method "$method" \
        --trials "$evals" --seed "$s" --parallel 1 --quiet --json --out "$work/$fn-$method-$s" \
        > "$work/$fn-$method-$s.json"
      rm -rf "$work/$fn-$method-$s"
    done
    end=$(date +%s.%N)
    python3 - "$work" "$fn" "$method" "$seeds" "$start" "$end" <<'PY'
import json, statistics, sys
work, fn, method, seeds, start, end = sys.argv[1:]
best = [json.load(open(f"{work}/{fn}-{method}-{s}.json"))["best_objective"] for s in range(int(seeds))]
minimum, tol = (0.397887, 0.05) if fn == "branin" else (-3.32237, 1e-2)
hits = sum(b < minimum + tol for b in best)
near = sum(b < minimum + 10 * tol for b in best)
print(f"| {fn} | {method} | {hits}/{len(best)} | {near}/{len(best)} | "
      f"{statistics.median(best):.4f} | {float(end) - float(start):.1f} |")
PY
  done
done
