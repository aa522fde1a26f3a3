#!/usr/bin/env bash
# A real one-node Slurm cluster in a folder, for the tests: Debian's munge and slurm-wlm daemons
# (munged, slurmctld, slurmd), started as they are on a cluster, with a generated slurm.conf.
#
#   local_slurm.sh start DIR   starts them; prints SLURM_CONF=DIR/slurm.conf once the node is idle.
#                              Exits 77 with the reason when Slurm cannot run here (no packages,
#                              not root, a daemon that does not come up): the tests then skip.
#   local_slurm.sh stop DIR    stops every daemon it started in DIR and waits for them to end.
#
# One node with the machine's cores, ProctrackType=proctrack/linuxproc and TaskPlugin=task/none
# (no cgroups: containers and CI machines have none to give), no accounting database (sacct says
# so, and plugtrain reads its own files instead). Ports are free ones found at start, so two
# clusters can run side by side.
set -uo pipefail

skip() { echo "SKIP: $*"; exit 77; }

start() {
  local dir=$1 fd
  # The daemons must not keep the caller's descriptors: started under `flock -s` (the tests'
  # build lock), they would hold that lock for as long as they live (netns_slurm.sh does the same).
  for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
  [ "$(id -u)" = 0 ] || skip "the local Slurm runs its daemons as root (slurmd must); this is uid $(id -u)"
  local d
  for d in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/sbatch /usr/bin/srun /usr/bin/squeue; do
    [ -x "$d" ] || skip "$d is missing (Debian packages munge, slurmctld, slurmd, slurm-client; scripts/test installs them)"
  done
  mkdir -p "$dir"/{munge,state,spool,log}
  chmod 700 "$dir/munge"
  dir=$(cd "$dir" && pwd)
  /usr/sbin/mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null 2>&1 || skip "mungekey could not make a key"
  /usr/sbin/munged --force --socket="$dir/munge/socket" --key-file="$dir/munge/munge.key" \
    --log-file="$dir/log/munged.log" --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/seed" \
    >"$dir/log/munged.out" 2>&1 || skip "munged did not start: $(tail -1 "$dir/log/munged.out")"

  local host ports
  host=$(hostname -s)
  # Two free TCP ports from the kernel (bound, read, released), for slurmctld and slurmd.
  ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
  set -- $ports
  # The machine's cores: nproc alone answers OMP_NUM_THREADS (scripts/test sets it per test).
  cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
  cat >"$dir/slurm.conf" <<EOF
# Written by tests/slurm/local_slurm.sh: a one-node cluster for plugtrain's tests.
ClusterName=plugtrain-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket
CryptoType=crypto/munge
MpiDefault=none
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=60
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$dir/slurm.conf
  /usr/sbin/slurmctld -D -f "$SLURM_CONF" >"$dir/log/slurmctld.out" 2>&1 &
  echo $! >"$dir/slurmctld.daemon"
  /usr/sbin/slurmd -D -f "$SLURM_CONF" >"$dir/log/slurmd.out" 2>&1 &
  echo $! >"$dir/slurmd.daemon"
  # Ready when the node reports idle; each daemon that exits instead is named with its last line.
  local i state
  for i in $(seq 600); do
    state=$(sinfo -h -o %T 2>/dev/null | head -1)
    [ "$state" = idle ] && { echo "SLURM_CONF=$SLURM_CONF"; return 0; }
    for d in slurmctld slurmd; do
      kill -0 "$(cat "$dir/$d.daemon")" 2>/dev/null || {
        stop "$dir"
        skip "$d exited: $(grep -i error "$dir/log/$d.out" | grep -v -i pmix | tail -1)"
      }
    done
    sleep 0.1
  done
  stop "$dir"
  skip "the node did not become idle within 60 s (sinfo: ${state:-nothing})"
}

stop() {
  local dir=$1 f pid
  # Jobs first: their slurmstepd and tasks would outlive slurmd. Wait until the node is empty.
  if [ -f "$dir/slurm.conf" ] && [ -f "$dir/slurmctld.daemon" ] && kill -0 "$(cat "$dir/slurmctld.daemon")" 2>/dev/null; then
    SLURM_CONF=$dir/slurm.conf scancel --user="$(id -un)" 2>/dev/null
    for _ in $(seq 300); do
      [ -z "$(SLURM_CONF=$dir/slurm.conf squeue -h 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  for f in "$dir/slurmd.daemon" "$dir/slurmctld.daemon" "$dir/munge/munged.pid"; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
  done
  return 0
}

case "${1:-}" in
  start) start "$2" ;;
  stop) stop "$2" ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
