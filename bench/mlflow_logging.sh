#!/usr/bin/env bash
# What MLflow logging costs a run, in one invocation on this machine, against a real MLflow
# server (the project venv's `mlflow server`, SQLite, on a free localhost port): the Fashion-MNIST
# MLP example (1 epoch, 600 steps) with MLflow off and on, alternating, 3 times each, at the
# example's log interval (100) and at every step (log_interval = 1); then the time `plugtrain
# send-logs` takes to send a finished run's figures that a down server never got.
#   bench/mlflow_logging.sh [build/bin/plugtrain]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exe=$(realpath "${1:-$root/build/bin/plugtrain}")
source "$root/scripts/lib.sh"
work=$(mktemp -d /tmp/ptmlflow-XXXXXX)
server=""
trap '[ -n "$server" ] && kill -TERM -- "-$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
port=$("$PLUGTRAIN_VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false setsid "$PLUGTRAIN_VENV/bin/mlflow" server \
  --backend-store-uri "sqlite:///$work/mlflow.db" --artifacts-destination "$work/artifacts" \
  --host 127.0.0.1 --port "$port" --workers 1 >server.log 2>&1 &
server=$!
until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do sleep 0.5; done
uri=http://127.0.0.1:$port

calc() { awk "BEGIN { printf \"%.3f\", $* }"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
run() {  # run NAME LOG_INTERVAL [--set ...]: prints the run's samples/s (summary.json)
  local name=$1 interval=$2
  shift 2
  "$exe" run "$root/examples/fashion_mnist_mlp.toml" --set train.epochs=1 --set "train.log_interval=$interval" \
    --set "experiment.name=\"$name\"" --set 'experiment.output="runs"' "$@" >"$name.log" 2>&1
  "$PLUGTRAIN_VENV/bin/python" -c "import json,glob; print(json.load(open(sorted(glob.glob('runs/$name/version_*'))[-1] + '/summary.json'))['samples_per_second'])"
}

for interval in 100 1; do
  off=() on=()
  for i in 1 2 3; do
    off+=("$(run "off$interval" "$interval")")
    on+=("$(run "on$interval" "$interval" --set "logging.mlflow.uri=\"$uri\"")")
  done
  off_m=$(printf '%s\n' "${off[@]}" | median) on_m=$(printf '%s\n' "${on[@]}" | median)
  echo "log_interval $interval: samples/s off ${off[*]} (median $off_m), on ${on[*]} (median $on_m); on/off $(calc "$on_m / $off_m")"
done

# A run whose server hangs all along (SIGSTOP: connections are accepted, nothing answers; one
# request waits timeout_seconds = 1; flush 0: the run's end does not wait), then sent by
# send-logs once the server answers again.
kill -STOP -- "-$server"
"$exe" run "$root/examples/fashion_mnist_mlp.toml" --set train.epochs=1 --set train.log_interval=1 \
  --set 'experiment.name="kept"' --set 'experiment.output="runs"' --set "logging.mlflow.uri=\"$uri\"" \
  --set logging.mlflow.timeout_seconds=1 --set logging.mlflow.flush_seconds=0 >kept.log 2>&1
kill -CONT -- "-$server"
folder=$(ls -d runs/kept/version_*)
figures=$(wc -l <"$folder/mlflow/journal.jsonl")
s=$(date +%s.%N)
"$exe" send-logs "$folder" >send.log 2>&1
send_s=$(calc "$(date +%s.%N) - $s")
echo "the kept run said: $(grep '^mlflow:' kept.log | tr '\n' ' ')"
echo "send-logs: $figures figures and the run's files in $send_s s ($(calc "$figures / $send_s") figures/s): $(tail -1 send.log)"
