#!/usr/bin/env bash
# A real Slurm cluster of several nodes on this one machine, for the tests: one slurmd per node,
# each in a network namespace of its own with its own address, so that a rendezvous, a chosen
# network interface and a lost node are as they are on a cluster.
#
#   netns_slurm.sh start DIR [NODES]  starts munged and slurmctld on the host and NODES (3) slurmd
#                                     (n1, n2, ...), prints SLURM_CONF=DIR/slurm.conf and
#                                     NODE_ADDRS=10.77.X.1,... once every node is idle. Exits 77
#                                     with the reason when it cannot run here (not root, no ip, no
#                                     Slurm, no network namespaces in this kernel or container).
#   netns_slurm.sh kill-node DIR I    node I dies as a machine does: every process in its namespace
#                                     (slurmd, slurmstepd, tasks) killed at once.
#   netns_slurm.sh revive-node DIR I  starts node I's slurmd again; returns once it is idle.
#   netns_slurm.sh stop DIR           stops everything started for DIR: jobs, daemons, every
#                                     process left in the namespaces, the namespaces and the bridge.
#
# The network: a bridge ptnbrX with the host's end at 10.77.X.254/24 (slurmctld listens there),
# and for node i a namespace ptnX-i whose eth0 (a veth pair onto the bridge) is 10.77.X.i/24.
# Node names resolve nowhere (n1 is only a Slurm name): what reaches a node is its NodeAddr.
# X is the first subnet no other cluster holds, chosen under a lock; each cluster is recorded in
# /run/plugtrain-netns/X with its folder and the process that owns it (PLUGTRAIN_CLUSTER_OWNER,
# else the caller), and a start first stops every recorded cluster whose owner has died, so a
# test binary that crashed or was killed leaves nothing behind for long. Slurm itself is
# configured as tests/slurm/local_slurm.sh does (no cgroups, no accounting).
set -uo pipefail

REGISTRY=/run/plugtrain-netns
skip() { echo "SKIP: $*"; exit 77; }

# The clusters whose owner process has gone (a crashed or killed test binary), stopped.
reap_orphans() {
  local entry owner dir
  for entry in "$REGISTRY"/*; do
    [ -f "$entry" ] || continue
    read -r owner dir <"$entry"
    kill -0 "$owner" 2>/dev/null && continue
    echo "netns_slurm: stopping the cluster of $dir (its owner $owner has gone)" >&2
    stop "$dir" "${entry##*/}"
  done
}

# The first subnet index neither recorded nor carried by a bridge (under the registry's lock).
claim_subnet() {
  local dir=$1 owner=$2 x
  for x in $(seq 1 250); do
    [ -e "$REGISTRY/$x" ] && continue
    ip link show "ptnbr$x" >/dev/null 2>&1 && continue
    echo "$owner $dir" >"$REGISTRY/$x"
    echo "$x"
    return 0
  done
  return 1
}

# Namespace ptnX-i with eth0 = 10.77.X.i/24 on the bridge, loopback up.
add_node_network() {
  local x=$1 i=$2 ns="ptn$1-$2"
  ip netns add "$ns" &&
    ip link add "ptn${x}v$i" type veth peer name eth0 netns "$ns" &&
    ip link set "ptn${x}v$i" master "ptnbr$x" up &&
    ip -n "$ns" addr add "10.77.$x.$i/24" dev eth0 &&
    ip -n "$ns" link set eth0 up &&
    ip -n "$ns" link set lo up
}

write_conf() {
  local dir=$1 x=$2 nodes=$3 ctl_port=$4 cpus=$5 i
  cat >"$dir/slurm.conf" <<EOF
# Written by tests/slurm/netns_slurm.sh: $nodes nodes, each slurmd in namespace ptn$x-<i>.
ClusterName=plugtrain-netns
SlurmctldHost=$(hostname -s)(10.77.$x.254)
SlurmctldPort=$ctl_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket
CryptoType=crypto/munge
MpiDefault=none
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Nodes declare the CPUs a test asks for, more than this machine may have.
SlurmdParameters=config_overrides
ReturnToService=2
# A node whose slurmd stops answering is DOWN after 6 s (and its jobs requeued or failed), not 5 min.
SlurmdTimeout=6
KillWait=5
MinJobAge=600
EOF
  for i in $(seq "$nodes"); do
    echo "NodeName=n$i NodeAddr=10.77.$x.$i Port=6818 CPUs=$cpus State=UNKNOWN" >>"$dir/slurm.conf"
  done
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$dir/slurm.conf"
}

start() {
  local dir=$1 nodes=${2:-3} owner=${PLUGTRAIN_CLUSTER_OWNER:-$PPID} fd
  # The daemons must not keep the caller's descriptors: started under `flock -s` (the tests'
  # build lock), they would hold that lock for as long as they live, a killed test's too.
  for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
  [ "$(id -u)" = 0 ] || skip "network namespaces and slurmd need root; this is uid $(id -u)"
  command -v ip >/dev/null || skip "ip is missing (Debian package iproute2; scripts/setup installs it)"
  command -v nsenter >/dev/null || skip "nsenter is missing (Debian package util-linux)"
  local d
  for d in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/sbatch /usr/bin/srun /usr/bin/scontrol; do
    [ -x "$d" ] || skip "$d is missing (Debian packages munge, slurmctld, slurmd, slurm-client)"
  done
  mkdir -p "$REGISTRY" "$dir"/{munge,state,spool,log} || skip "cannot write $REGISTRY or $dir"
  dir=$(cd "$dir" && pwd)
  chmod 700 "$dir/munge"
  local x
  x=$(
    exec 9>"$REGISTRY/.lock"
    flock 9
    reap_orphans
    claim_subnet "$dir" "$owner"
  ) || skip "no free subnet 10.77.X.0/24 (250 clusters recorded in $REGISTRY)"
  echo "$x" >"$dir/netns.subnet"
  ip link add "ptnbr$x" type bridge 2>"$dir/log/ip.out" && ip link set "ptnbr$x" up &&
    ip addr add "10.77.$x.254/24" dev "ptnbr$x" || { stop "$dir"; skip "cannot make a bridge: $(tail -1 "$dir/log/ip.out")"; }
  local i
  for i in $(seq "$nodes"); do
    add_node_network "$x" "$i" 2>"$dir/log/ip.out" || { stop "$dir"; skip "cannot make namespace ptn$x-$i: $(tail -1 "$dir/log/ip.out")"; }
  done

  /usr/sbin/mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null 2>&1 || { stop "$dir"; skip "mungekey could not make a key"; }
  /usr/sbin/munged --force --socket="$dir/munge/socket" --key-file="$dir/munge/munge.key" \
    --log-file="$dir/log/munged.log" --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/seed" \
    >"$dir/log/munged.out" 2>&1 || { stop "$dir"; skip "munged did not start: $(tail -1 "$dir/log/munged.out")"; }
  # A free port on the host for slurmctld; every slurmd has its namespace's port 6818 to itself.
  local ctl_port
  ctl_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("0.0.0.0",0)); print(s.getsockname()[1])')
  # Each node has the CPUs of this machine, and at least 4 (a test runs 4 tasks on one node).
  local cpus
  cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
  [ "$cpus" -ge 4 ] || cpus=4
  write_conf "$dir" "$x" "$nodes" "$ctl_port" "$cpus"
  export SLURM_CONF=$dir/slurm.conf
  /usr/sbin/slurmctld -D -f "$SLURM_CONF" >"$dir/log/slurmctld.out" 2>&1 &
  echo $! >"$dir/slurmctld.daemon"
  for i in $(seq "$nodes"); do start_slurmd "$dir" "$x" "$i"; done
  wait_until_idle "$dir" "$nodes" "$x"
}

start_slurmd() {
  local dir=$1 x=$2 i=$3
  mkdir -p "$dir/spool/n$i"
  # nsenter, not `ip netns exec`: that one also mounts a /sys of its own, without the cgroup
  # file system slurmd looks for.
  nsenter --net="/run/netns/ptn$x-$i" /usr/sbin/slurmd -D -N "n$i" -f "$dir/slurm.conf" >>"$dir/log/slurmd-n$i.out" 2>&1 &
  echo $! >"$dir/slurmd-n$i.daemon"
}

kill_node() {
  local dir=$1 i=$2 x pid
  x=$(cat "$dir/netns.subnet") || exit 1
  for pid in $(ip netns pids "ptn$x-$i"); do kill -KILL "$pid" 2>/dev/null; done
  echo "KILLED=n$i"
}

revive_node() {
  local dir=$1 i=$2 x state
  x=$(cat "$dir/netns.subnet") || exit 1
  export SLURM_CONF=$dir/slurm.conf
  start_slurmd "$dir" "$x" "$i"
  for _ in $(seq 600); do
    state=$(sinfo -h -n "n$i" -o %T 2>/dev/null)
    [ "$state" = idle ] && { echo "REVIVED=n$i"; return 0; }
    sleep 0.1
  done
  echo "n$i did not become idle again within 60 s (sinfo: $state)"
  exit 1
}

# Ready when sinfo lists every node idle; a daemon that exits instead is named with its last error.
wait_until_idle() {
  local dir=$1 nodes=$2 x=$3 i idle f
  for i in $(seq 600); do
    idle=$(sinfo -h -N -t idle -o %N 2>/dev/null | wc -l)
    if [ "$idle" = "$nodes" ]; then
      echo "SLURM_CONF=$SLURM_CONF"
      echo "NODE_ADDRS=$(seq -s, -f "10.77.$x.%g" "$nodes")"
      return 0
    fi
    for f in "$dir"/*.daemon; do
      kill -0 "$(cat "$f")" 2>/dev/null && continue
      local name=${f##*/}
      name=${name%.daemon}
      stop "$dir"
      skip "$name exited: $(grep -i error "$dir/log/$name.out" | grep -v -i pmix | tail -1)"
    done
    sleep 0.1
  done
  stop "$dir"
  skip "the nodes did not all become idle within 60 s (sinfo: $(sinfo -h -N -o '%N %T' 2>/dev/null | tr '\n' ' '))"
}

# Stops DIR's cluster. `x`: its subnet when DIR has lost its record of it (an orphan's folder).
stop() {
  local dir=$1 x=${2:-} f pid ns
  [ -n "$x" ] || x=$(cat "$dir/netns.subnet" 2>/dev/null)
  # Jobs first, so that their steps end as Slurm ends them; then the daemons.
  if [ -f "$dir/slurm.conf" ] && [ -f "$dir/slurmctld.daemon" ] && kill -0 "$(cat "$dir/slurmctld.daemon")" 2>/dev/null; then
    SLURM_CONF=$dir/slurm.conf scancel --user="$(id -un)" 2>/dev/null
    for _ in $(seq 100); do
      [ -z "$(SLURM_CONF=$dir/slurm.conf squeue -h 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  # Every daemon at once, then up to 10 s for all of them together.
  local pids=""
  for f in "$dir"/slurmd-*.daemon "$dir/slurmctld.daemon" "$dir/munge/munged.pid"; do
    [ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null && pids="$pids $(cat "$f")"
  done
  for pid in $pids; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
  done
  [ -n "$x" ] || return 0
  # Whatever still runs in a node's namespace (a task Slurm lost track of) goes with it.
  for ns in $(ip netns list 2>/dev/null | awk -v p="^ptn$x-" '$1 ~ p {print $1}'); do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  for f in /sys/class/net/ptn"${x}"v*; do [ -e "$f" ] && ip link del "${f##*/}" 2>/dev/null; done
  ip link del "ptnbr$x" 2>/dev/null
  rm -f "$REGISTRY/$x" "$dir/netns.subnet"
  return 0
}

case "${1:-}" in
  start) start "$2" "${3:-3}" ;;
  stop) stop "$2" ;;
  kill-node) kill_node "$2" "$3" ;;
  revive-node) revive_node "$2" "$3" ;;
  *) echo "usage: $0 start DIR [NODES] | stop DIR | kill-node DIR I | revive-node DIR I" >&2; exit 2 ;;
esac
