#!/usr/bin/env bash
# The example study of configs/intraday_ppo_space.toml (its comment has the command) with
# each search method on the budgets docs/performance.md compares: Sobol and TPE with 16
# trials of the full 200,000 steps, ASHA (random points) and TPE with ASHA pruning with
# 27 trials on rungs of 7,407 / 22,222 / 66,666 / 200,000 steps (eta 3). All with
# --parallel PARALLEL and seed SEED. Prints a Markdown table: wall seconds, rung runs, env
# steps trained, the best validation Sharpe ratio (the objective the search saw) and, apart,
# the best trial's test-range Sharpe ratio (evaluated once, after the search).
#   scripts/tune_intraday.sh [RLTRADE] [PARALLEL] [SEED]   (defaults build/rltrade 2 0)
set -euo pipefail
bin=${1:-build/rltrade}
parallel=${2:-2}
seed=${3:-0}
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| method | trials | rung runs | env steps | wall s | best validation Sharpe | its test Sharpe |"
echo "|---|---|---|---|---|---|---|"
for spec in "sobol 16" "tpe 16" "asha 27" "tpe --prune asha 27"; do
  trials=${spec##* }
  method=${spec% *}
  name=$(echo "$method" | tr -d ' -')
  start=$(date +%s.%N)
  # shellcheck disable=SC2086  # $method carries "--prune asha" for the pruned TPE study
  "$bin" tune "$src/configs/intraday_ppo.toml" --space "$src/configs/intraday_ppo_space.toml" \
    --method $method --trials "$trials" --parallel "$parallel" --seed "$seed" \
    --set split.train=2023-01-02:2023-08-04 --set split.validation=2023-08-07:2023-10-06 \
    --set run.total_steps=200000 --quiet --json --out "$work/$name" > "$work/$name.json" \
    2> "$work/$name.log"
  end=$(date +%s.%N)
  python3 - "$work/$name" "$work/$name.json" "$method" "$trials" "$start" "$end" <<'PY'
import json, sys
out, summary, method, trials, start, end = sys.argv[1:]
rows = [json.loads(line) for line in open(f"{out}/trials.jsonl")]
s = json.load(open(summary))
steps = sum(r["steps"] for r in rows if r["status"] == "ok")
print(f"| {method} | {trials} | {len(rows)} | {steps / 1e6:.2f} M | {float(end) - float(start):.1f} "
      f"| {s['best_objective']:.2f} (trial {s['best_trial']}) | {s['test_objective']:.2f} |")
PY
done
