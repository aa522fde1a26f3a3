#!/usr/bin/env bash
# The Fashion-MNIST optimizer sweep (5 optimizers x 3 seeds, 5 epochs) three ways, in one
# invocation on this machine: the full grid with --jobs 2, the same stopped early by ASHA
# (examples/fashion_mnist_optimizers_asha.toml) with --jobs 2, and the full grid through a real
# one-node Slurm (tests/slurm/local_slurm.sh; 1 CPU per array task, so 2 run at a time as with
# --jobs 2). Prints wall time, epochs trained, the best configuration, and Slurm's overhead per
# trial against --jobs.
#   bench/sweep_schedulers.sh [build/bin/plugtrain]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exe=$(realpath "${1:-$root/build/bin/plugtrain}")
work=$(mktemp -d /tmp/ptsweeps-XXXXXX)
trap '"$root/tests/slurm/local_slurm.sh" stop "$work/cluster" >/dev/null 2>&1; rm -rf "$work"' EXIT
cd "$work"
data=${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}

calc() { awk "BEGIN { printf \"%.2f\", $* }"; }
epochs_trained() {  # epoch rows over every trial's metrics.csv
  cat "$1"/*/version_*/metrics.csv | grep -c '^epoch,'
}
best_group() {  # the first group row of sweep.md: the best mean final test accuracy
  grep -A3 '^| group |' "$1/sweep.md" | sed -n 3p | cut -d'|' -f2,4
}

echo "== grid, --jobs 2"
s=$(date +%s.%N)
"$exe" sweep "$root/examples/fashion_mnist_optimizers_sweep.toml" --jobs 2 --set "data.path=\"$data\"" \
  --set 'experiment.output="grid"' >grid.log 2>&1
grid_s=$(calc "$(date +%s.%N) - $s")
grid_dir=grid/fashion-mnist-optimizers/sweep

echo "== asha, --jobs 2"
s=$(date +%s.%N)
"$exe" sweep "$root/examples/fashion_mnist_optimizers_asha.toml" --jobs 2 --set "data.path=\"$data\"" \
  --set 'experiment.output="asha"' >asha.log 2>&1
asha_s=$(calc "$(date +%s.%N) - $s")
asha_dir=asha/fashion-mnist-optimizers-asha/sweep
asha_best=$(grep -E '\| trained all 5 epochs' "$asha_dir/sweep.md" | cut -d'|' -f2)

echo "== grid on a local Slurm (--slurm, 1 CPU per trial)"
slurm_s=skipped
if "$root/tests/slurm/local_slurm.sh" start "$work/cluster" >slurm-start.log; then
  export SLURM_CONF=$work/cluster/slurm.conf
  s=$(date +%s.%N)
  "$exe" sweep "$root/examples/fashion_mnist_optimizers_sweep.toml" --slurm --set "data.path=\"$data\"" \
    --set 'experiment.output="slurm"' >slurm.log 2>&1
  slurm_dir=slurm/fashion-mnist-optimizers/sweep
  until grep -q -E 'every trial is done|trial\(s\) failed' "$slurm_dir"/slurm/next-*.out 2>/dev/null; do sleep 0.2; done
  slurm_s=$(calc "$(date +%s.%N) - $s")
else
  echo "   (no Slurm here: $(cat slurm-start.log))"
fi

printf '\n| run | wall s | epochs trained | best |\n| --- | --- | --- | --- |\n'
printf '| grid, --jobs 2 | %.1f | %s | %s |\n' "$grid_s" "$(epochs_trained $grid_dir)" "$(best_group $grid_dir)"
printf '| asha, --jobs 2 | %.1f | %s | %s (the trial trained to the end) |\n' "$asha_s" "$(epochs_trained $asha_dir)" "$asha_best"
if [ "$slurm_s" != skipped ]; then
  printf '| grid, --slurm | %.1f | %s | %s |\n' "$slurm_s" "$(epochs_trained $slurm_dir)" "$(best_group $slurm_dir)"
  echo
  echo "asha against the grid: $(calc "$asha_s / $grid_s")x the wall time"
  echo "Slurm overhead per trial against --jobs 2: $(calc "($slurm_s - $grid_s) / 15") s (15 trials, 2 at a time)"
fi
