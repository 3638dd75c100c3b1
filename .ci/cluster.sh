#!/usr/bin/env bash
# A cluster in a box: N emulated hosts on this machine, made of Linux
# namespaces, for running pgasmr across "nodes" under mpirun, MPICH's
# hydra and Slurm's srun (issue 36).
#
#   .ci/cluster.sh up [N] [--netem DELAY] [--no-slurm]
#                          make hosts pg1..pgN (default 3) and start Slurm
#   .ci/cluster.sh down    remove everything "up" made (also after a crash)
#   .ci/cluster.sh status  what is up
#   .ci/cluster.sh exec [SSH OPTIONS] [USER@]HOST CMD...
#                          the remote-shell agent of mpirun and hydra: runs
#                          CMD's words, joined by spaces, with bash -c (as
#                          ssh does) inside all of HOST's namespaces, with
#                          a fresh login-like environment; ssh's options
#                          (-x, -l USER, -o OPT, ...) are taken and ignored;
#                          HOST is a name (pg2) or an address (10.77.0.2)
#   .ci/cluster.sh enter HOST CMD...
#                          CMD (no shell) inside HOST, environment kept
#   .ci/cluster.sh run [CMD...]
#                          CMD (default bash) on the "login node" pg0: the
#                          root network namespace (10.77.0.254 on the
#                          bridge) with the cluster's /etc/hosts and
#                          hostname pg0; start the launchers here
#   .ci/cluster.sh check   up, run the checks below, down
#
# Needs root, iproute2 and util-linux (nsenter, unshare); Slurm needs
# slurm-wlm and munge; the checks OpenMPI, MPICH and Go.
#
# What a host is. pgI has
#   - its own network namespace (ip netns "pgasmr-pgI"): loopback, and eth0,
#     the end of a veth pair whose other end (pgmr-pgI) is a port of the
#     bridge pgmr-br0; address 10.77.0.I/24, no default route (the hosts
#     reach each other and pg0, nothing else; this machine does not forward);
#   - its own UTS namespace (hostname pgI), IPC namespace (System V IPC and
#     POSIX message queues), and mount namespace, in which /dev/shm and /tmp
#     are fresh tmpfs (OpenMPI's session directories and shared-memory
#     files, PMIx's and UCX's, cannot meet another host's) and /etc/hosts is
#     the cluster's (pg0 and pg1..pgN);
# the rest of the file system is this machine's, so a binary or input
# under the run directory, or anywhere else but /tmp and /dev/shm, is seen
# alike by every host, like a cluster's shared file system. The namespaces
# are persistent: the network ones in /run/netns, the others bind-mounted
# on files in $PGASMR_CLUSTER_DIR/ns (a private mount, so that the copies
# of the mount table the hosts get do not propagate back). No process
# needs to stay in a host for it to exist; "exec" enters one with nsenter.
# The root network namespace is pg0, 10.77.0.254 on the bridge: the
# launchers run there ("run" gives them the cluster's names) and the
# orteds, hydra proxies and slurmds connect back to it.
#
# Slurm: a munged of the cluster's own (key and socket in the run
# directory; slurm.conf's AuthInfo points at it), slurmctld on pg1 and one
# slurmd per host, each started inside its host's namespaces with
# -N pgI; no cgroups, no accounting, as in .ci/slurm.sh. srun from pg0:
#   .ci/cluster.sh run env SLURM_CONF=$PGASMR_CLUSTER_DIR/slurm/slurm.conf \
#       srun -N 3 -n 6 --mpi=pmix ./mrrun --transport mpi wordcount corpus/
#
# The launchers, as "check" runs them from pg0 ("run"):
#   mpirun --allow-run-as-root --oversubscribe --host pg1:2,pg2:2,pg3:2
#          --mca plm_rsh_agent "/abs/path/.ci/cluster.sh exec"
#          --mca plm_rsh_no_tree_spawn 1 --mca btl tcp,self,vader
#          --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24
#          --mca btl_vader_single_copy_mechanism none PROGRAM
#     (mpirun calls AGENT HOST "<one word: the orted command line>")
#   mpiexec.mpich -launcher ssh -launcher-exec $PGASMR_CLUSTER_DIR/agent
#          -hosts pg1:2,pg2:2,pg3:2 -n 6 PROGRAM
#     (hydra calls AGENT -x HOST "/usr/bin/hydra_pmi_proxy" --control-port
#     pg0:PORT ...; the agent file is a two-line wrapper of "exec", since
#     -launcher-exec takes one path; the proxies find pg0 by name, so run
#     mpiexec under "run", or give it -localhost 10.77.0.254)
#   srun -N 3 -n 6 --mpi=pmix PROGRAM      (with SLURM_CONF exported)
#
# The checks ("check", 3 hosts x 2 ranks, each with a time limit): first
# the box (hostname, and a small MPI program: a ring of messages, an
# allreduce, MPI_COMM_TYPE_SHARED's size, under mpirun, mpiexec.mpich and
# srun), then pgasmr: mrrun built with -tags mpi and -tags mpich runs
# histogram, linreg, wordcount and spamcount under the three launchers and
# must print the bytes of --baseline seq; the OpenMPI runs once without
# the workaround too (expected to fail: MPI_Win_allocate's MPI_ERR_WIN).
# At the end "down", and a check that nothing is left.
#
# --netem DELAY puts a netem qdisc on every host's eth0 (each packet a
# host sends waits DELAY), when the kernel has sch_netem; without it the
# links run at veth speed.
#
# Environment: PGASMR_CLUSTER_DIR (default /var/tmp/pgasmr-cluster; not
# under /tmp or /dev/shm, which the hosts do not share), PGASMR_CLUSTER_NET
# (the /24's first three numbers, default 10.77.0), PGASMR_CLUSTER_PMIX_GDS
# (the PMIx data store of the slurmds, default hash; see slurm_up),
# PGASMR_CLUSTER_AGENT_LOG (a file to which "exec" appends how it was
# called). For "check": PGASMR_CLUSTER_OMPI_FLAGS, the mpirun flags that
# make the MPI transport work on OpenMPI 4.1 over TCP (default --mca osc
# pt2pt -x PGASMR_MPI_SERIALIZE=1; empty: the transport as it is),
# PGASMR_CLUSTER_SRUN_ENV, the same for srun as environment assignments
# (default OMPI_MCA_osc=pt2pt PGASMR_MPI_SERIALIZE=1), and
# PGASMR_CLUSTER_KNOWN, the checks whose failure is known and does not
# fail "check" (glob patterns; default "mpich/ring mpich/app/*
# srun-pmi2/ring-mpich": MPICH 4.0.2 on UCX 1.13 over TCP hangs in
# MPI_Finalize now and then, openucx/ucx#8738).
set -euo pipefail
self=$(readlink -f "$0")
repo=$(cd "$(dirname "$self")/.." && pwd)
export PATH="/usr/local/go/bin:$PATH:/usr/local/sbin:/usr/sbin:/sbin"

run=${PGASMR_CLUSTER_DIR:-/var/tmp/pgasmr-cluster}
net=${PGASMR_CLUSTER_NET:-10.77.0}
export PGASMR_CLUSTER_DIR=$run PGASMR_CLUSTER_NET=$net
nsd=$run/ns                 # the namespace files (a private bind mount)
br=pgmr-br0                 # the bridge
netns_prefix=pgasmr-        # ip netns names: pgasmr-pg1 ...
veth_prefix=pgmr-           # root ends of the veths: pgmr-pg1 ...
login=pg0                   # the root network namespace's name
slurm_conf=$run/slurm/slurm.conf

die() { echo "cluster.sh: $*" >&2; exit 1; }
say() { echo "cluster: $*"; }

case $run in
  /tmp | /tmp/* | /dev/shm | /dev/shm/*) die "PGASMR_CLUSTER_DIR=$run: the hosts have their own /tmp and /dev/shm; choose a directory they share" ;;
  /*) ;;
  *) die "PGASMR_CLUSTER_DIR=$run: want an absolute path" ;;
esac

need_root() { [ "$(id -u)" = 0 ] || die "needs root (namespaces, veths, mounts)"; }

# hosts: the names of the hosts that are up (from the run directory).
hosts() { [ -s "$run/hosts.list" ] && awk '{print $1}' "$run/hosts.list" || true; }

# host_of NAME|ADDRESS: the host's name, or nothing.
host_of() {
  local h=${1#*@}
  h=${h%%.*} # pg1.cluster -> pg1 (but keep addresses whole)
  case ${1#*@} in [0-9]*.[0-9]*.[0-9]*.[0-9]*) h=${1#*@} ;; esac
  [ -s "$run/hosts.list" ] || return 0
  awk -v h="$h" '$1 == h || $2 == h {print $1; exit}' "$run/hosts.list"
}

# ns_args HOST: sets nsargs to nsenter's options that enter HOST. The
# namespace files are seen only in the mount namespace "up" ran in: a
# copy of a mount table (unshare --mount, as "run" does, or a host's own)
# leaves mount-namespace files out. Elsewhere the host's anchor process
# (a sleep that "up" starts in each host) leads the way in through /proc.
ns_args() {
  local h=$1 pid
  if [ "$(stat -f -c %T "$nsd/$h.mnt" 2>/dev/null)" = nsfs ] &&
    [ "$(stat -f -c %T "/run/netns/$netns_prefix$h" 2>/dev/null)" = nsfs ]; then
    nsargs=(--net="/run/netns/$netns_prefix$h" --uts="$nsd/$h.uts" --ipc="$nsd/$h.ipc" --mount="$nsd/$h.mnt")
    return 0
  fi
  pid=$(cat "$run/pids/host.$h" 2>/dev/null || true)
  case $(tr '\0' ' ' <"/proc/${pid:-none}/cmdline" 2>/dev/null) in
    "pgasmr-host-$h "*) ;;
    *) die "host $h: its namespace files are not seen here and its anchor process is gone" ;;
  esac
  nsargs=(--target="$pid" --net --uts --ipc --mount)
}

# enter HOST CMD...: CMD inside all of HOST's namespaces, environment kept.
enter() {
  local h=$1 nsargs
  shift
  ns_args "$h"
  nsenter "${nsargs[@]}" -- "$@"
}

# ---------------------------------------------------------------- exec

# exec [SSH OPTIONS] [USER@]HOST [CMD...]: what ssh would do, inside HOST.
# mpirun (plm rsh) calls AGENT HOST CMD-WORDS...; hydra's ssh launcher
# AGENT -x HOST CMD-WORDS... . Like ssh, the words are joined with spaces
# and run by a shell, with a fresh login-like environment (PATH, HOME,
# USER, LOGNAME, SHELL, LANG, TERM; SLURM_CONF when Slurm is up): what
# mpirun's environment holds is not for the orted. Unlike ssh, the command
# starts in the caller's directory (or / when the host does not have it).
cmd_exec() {
  if [ -n "${PGASMR_CLUSTER_AGENT_LOG:-}" ]; then # how a launcher calls us
    { printf 'exec'; printf ' %q' "$@"; echo; } >>"$PGASMR_CLUSTER_AGENT_LOG"
  fi
  while [ $# -gt 0 ]; do
    case $1 in
      --) shift; break ;;
      -[BbcDEeFIiJLlmOoPpQRSWw]) shift 2 ;; # ssh options with an argument
      -?*) shift ;;                         # flags, and options with the argument attached
      *) break ;;
    esac
  done
  [ $# -gt 0 ] || die "exec: usage: exec [ssh options] HOST [CMD...]"
  local h
  h=$(host_of "$1")
  [ -n "$h" ] || die "exec: no host '$1' (hosts: $(hosts | tr '\n' ' '))"
  shift
  local cmd="$*"
  [ -n "$cmd" ] || cmd='exec bash -l'
  local envv=(PATH="$PATH" HOME="${HOME:-/root}" USER="$(id -un)" LOGNAME="$(id -un)" SHELL=/bin/bash LANG="${LANG:-C.UTF-8}")
  [ -n "${TERM:-}" ] && envv+=(TERM="$TERM")
  [ -s "$slurm_conf" ] && envv+=(SLURM_CONF="$slurm_conf")
  local nsargs
  ns_args "$h"
  exec nsenter "${nsargs[@]}" -- env -i "${envv[@]}" \
    bash -c 'cd -- "$1" 2>/dev/null || cd /; exec bash -c "$2"' bash "$PWD" "$cmd"
}

# run CMD...: CMD on pg0, the login node (root network namespace, the
# cluster's /etc/hosts, hostname pg0), in a mount and UTS namespace that
# lives as long as CMD.
cmd_run() {
  [ $# -gt 0 ] || set -- bash
  [ -s "$run/etc/hosts" ] || die "run: the cluster is not up"
  [ -s "$slurm_conf" ] && export SLURM_CONF="${SLURM_CONF:-$slurm_conf}"
  exec unshare --mount --uts --propagation private -- sh -c \
    'hostname "$1" && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"' \
    sh "$login" "$run/etc/hosts" "$@"
}

# ---------------------------------------------------------------- up

# daemon PIDFILE OUT CMD...: CMD in a session of its own, in the
# background, out of this shell's jobs (so that "down" ends it without a
# word from bash), output to OUT; its pid (the session's) in PIDFILE.
daemon() {
  local pidfile=$1 out=$2
  shift 2
  (
    setsid "$@" >"$out" 2>&1 </dev/null &
    echo $! >"$pidfile"
  )
}

cmd_up() {
  local n=3 netem="" slurm=1
  while [ $# -gt 0 ]; do
    case $1 in
      --netem) [ $# -ge 2 ] || die "up: --netem DELAY"; netem=$2; shift 2 ;;
      --netem=*) netem=${1#*=}; shift ;;
      --no-slurm) slurm=0; shift ;;
      [0-9]*) n=$1; shift ;;
      *) die "up: unknown argument '$1' (usage: up [N] [--netem DELAY] [--no-slurm])" ;;
    esac
  done
  case $n in '' | *[!0-9]*) die "up: N must be a number" ;; esac
  [ "$n" -ge 1 ] && [ "$n" -le 200 ] || die "up: N must be 1..200"
  need_root
  for c in ip nsenter unshare mount umount findmnt; do
    command -v "$c" >/dev/null || die "$c is missing (apt-get install iproute2 util-linux mount)"
  done

  cmd_down >/dev/null 2>&1 || true # the leftovers of a crashed run
  [ -n "${in_check:-}" ] || trap 'echo "cluster.sh: up failed; removing what it made" >&2; cmd_down >&2 || true' EXIT

  mkdir -p "$run" "$nsd" "$run/etc" "$run/pids"
  chmod 0755 "$run"
  # The namespace files live on a private mount: a mount namespace file
  # may only be bind-mounted where the mount does not propagate into that
  # namespace (unshare(1)).
  mount --bind "$nsd" "$nsd"
  mount --make-private "$nsd"
  [ -d /run/netns ] || touch "$run/netns-made" # ip netns add makes it: down removes it again

  {
    echo "127.0.0.1 localhost"
    echo "::1 localhost ip6-localhost ip6-loopback"
    echo "$net.254 $login"
    for i in $(seq "$n"); do echo "$net.$i pg$i"; done
  } >"$run/etc/hosts"
  : >"$run/hosts.list"

  ip link add "$br" type bridge
  ip addr add "$net.254/24" dev "$br"
  ip link set "$br" up
  for i in $(seq "$n"); do
    local h=pg$i ns=$netns_prefix"pg$i"
    ip netns add "$ns"
    ip link add "$veth_prefix$h" type veth peer name eth0 netns "$ns"
    ip link set "$veth_prefix$h" master "$br" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$net.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    touch "$nsd/$h.uts" "$nsd/$h.ipc" "$nsd/$h.mnt"
    # In the new mount namespace: drop the copies of the namespace files
    # (they would keep other hosts' namespaces alive), then the host's own
    # /dev/shm, /tmp and /etc/hosts.
    nsenter --net="/run/netns/$ns" unshare --uts="$nsd/$h.uts" --ipc="$nsd/$h.ipc" \
      --mount="$nsd/$h.mnt" --propagation private -- sh -c '
        set -e
        hostname "$1"
        umount -l "$2"
        if mountpoint -q /run/netns; then umount -l /run/netns; fi
        mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs-"$1" /dev/shm
        mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs-"$1" /tmp
        mount --bind "$3" /etc/hosts
      ' sh "$h" "$nsd" "$run/etc/hosts"
    echo "$h $net.$i" >>"$run/hosts.list"
    # The anchor: one process that lives in the host as long as it is up
    # (see ns_args).
    daemon "$run/pids/host.$h" /dev/null \
      nsenter --net="/run/netns/$ns" --uts="$nsd/$h.uts" --ipc="$nsd/$h.ipc" --mount="$nsd/$h.mnt" \
      -- bash -c 'exec -a "pgasmr-host-$1" sleep infinity' sh "$h"
    if [ -n "$netem" ]; then
      tc -n "$ns" qdisc add dev eth0 root netem delay "$netem" ||
        die "up: tc netem is not available here (kernel without sch_netem?)"
    fi
  done
  # Every host reaches every other and pg0: a TCP connection to a closed
  # port is refused at once by a host that is there (no ping needed).
  local h err
  for h in $(hosts); do
    for i in $(seq "$n") 254; do
      err=$(enter "$h" timeout 3 bash -c "exec 3<>/dev/tcp/$net.$i/9" 2>&1 || true)
      case $err in *refused*) ;; *) die "up: $h cannot reach $net.$i: ${err:-timeout}" ;; esac
    done
  done
  say "hosts up: $(hosts | tr '\n' ' ')(pg0 = $net.254, the root namespace)${netem:+; netem delay $netem}"

  # The agent for mpirun's plm_rsh_agent and hydra's -launcher-exec: one
  # path, no spaces, and outside /tmp, which every host has its own of (a
  # clone of the repository under /tmp is not there for the launchers):
  # a copy of this script in $run, and a wrapper of its "exec".
  install -m 0755 "$self" "$run/cluster.sh"
  printf '#!/bin/sh\nPGASMR_CLUSTER_DIR=%s PGASMR_CLUSTER_NET=%s exec bash %s exec "$@"\n' "$run" "$net" "$run/cluster.sh" >"$run/agent"
  chmod 0755 "$run/agent"

  if [ "$slurm" = 1 ]; then
    slurm_up "$n"
  fi
  [ -n "${in_check:-}" ] || trap - EXIT
}

# slurm_up N: munged, slurmctld on pg1, slurmd on every host.
slurm_up() {
  local n=$1
  for c in munged mungekey slurmctld slurmd srun sinfo setpriv; do
    command -v "$c" >/dev/null || die "$c is missing (apt-get install slurm-wlm munge; or up --no-slurm)"
  done
  local m=$run/munge s=$run/slurm
  mkdir -p "$s/state" "$s/spool" "$s/log"
  install -d -o munge -g munge -m 0755 "$m"
  mungekey --create --keyfile="$m/munge.key" --bits=1024 2>/dev/null ||
    { dd if=/dev/urandom of="$m/munge.key" bs=128 count=1 status=none; }
  chown munge:munge "$m/munge.key"
  chmod 0400 "$m/munge.key"
  daemon "$run/pids/munged" "$s/log/munged.out" \
    setpriv --reuid=munge --regid=munge --init-groups \
    munged -F --socket="$m/munge.socket" --key-file="$m/munge.key" \
    --pid-file="$m/munged.pid" --log-file="$m/munged.log" --seed-file="$m/munged.seed"
  local ok=0
  for _ in $(seq 50); do
    munge --socket="$m/munge.socket" -n </dev/null 2>/dev/null |
      unmunge --socket="$m/munge.socket" >/dev/null 2>&1 && { ok=1; break; }
    sleep 0.1
  done
  [ "$ok" = 1 ] || { cat "$s/log/munged.out" "$m/munged.log" >&2 2>/dev/null || true; die "munged did not start"; }

  local cpus
  cpus=$(nproc)
  # PMIx's shared-memory data store (gds ds21) can deadlock a slurmstepd
  # (pmix_ds21_lock_wr_get in PMIx_server_finalize / register_job_info,
  # openpmix/openpmix#1233); it did here once in a few first jobs. The
  # slurmds' PMIx servers use the hash store instead unless
  # PGASMR_CLUSTER_PMIX_GDS says otherwise ("" = PMIx's choice).
  local pmix_gds=${PGASMR_CLUSTER_PMIX_GDS-hash}
  {
    cat <<EOF
# The cluster in a box (.ci/cluster.sh): slurmctld on pg1, a slurmd on
# every host, each in its host's namespaces.
ClusterName=pgasmr-box
SlurmctldHost=pg1($net.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$m/munge.socket
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool/%n
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd.%n.pid
SlurmctldLogFile=$s/log/slurmctld.log
SlurmdLogFile=$s/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=pmix
ReturnToService=2
KillWait=5
SlurmdTimeout=30
EOF
    for i in $(seq "$n"); do echo "NodeName=pg$i NodeAddr=$net.$i CPUs=$cpus State=UNKNOWN"; done
    echo "PartitionName=box Nodes=pg[1-$n] Default=YES MaxTime=INFINITE State=UP"
  } >"$slurm_conf"

  daemon "$run/pids/slurmctld" "$s/log/slurmctld.out" \
    bash "$self" enter pg1 env SLURM_CONF="$slurm_conf" slurmctld -D -f "$slurm_conf"
  for h in $(hosts); do
    daemon "$run/pids/slurmd.$h" "$s/log/slurmd.$h.out" \
      bash "$self" enter "$h" env SLURM_CONF="$slurm_conf" ${pmix_gds:+PMIX_MCA_gds="$pmix_gds"} \
      slurmd -D -f "$slurm_conf" -N "$h"
  done
  local idle=0 states=""
  for _ in $(seq 150); do
    states=$(SLURM_CONF=$slurm_conf sinfo -h -N -o '%N %T' 2>/dev/null || true)
    idle=$(echo "$states" | grep -c ' idle' || true)
    [ "$idle" -ge "$n" ] && break
    sleep 0.2
  done
  if [ "$idle" -lt "$n" ]; then
    echo "cluster.sh: the Slurm nodes did not all come up:" >&2
    echo "${states:-(no answer from slurmctld)}" >&2
    tail -n 20 "$s"/log/* >&2 || true
    exit 1
  fi
  say "slurm up: slurmctld on pg1, slurmd on $(hosts | tr '\n' ' ')(export SLURM_CONF=$slurm_conf)"
}

# ---------------------------------------------------------------- down

# alive PID: the process is there and not a zombie (an orphan ended by
# "down" is reaped by init, in its own time).
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

# stop PIDFILE NAME: end the session the daemon leads, politely first,
# if its pid is still a NAME (a pid file that outlived its process, as
# after a reboot, must not end another).
stop() {
  local f=$1 name=$2 pid
  [ -s "$f" ] || return 0
  pid=$(cat "$f")
  rm -f "$f"
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] || return 0
  ended="$ended $pid"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
}

cmd_down() {
  need_root
  local f ns pids ended=""
  # Slurm first (slurmds, then the controller), then munged.
  if [ -d "$run/pids" ]; then
    for f in "$run"/pids/slurmd.*; do [ -e "$f" ] && stop "$f" slurmd; done
    stop "$run/pids/slurmctld" slurmctld
    stop "$run/pids/munged" munged
  fi
  # Whatever still runs in a host (ranks, orteds, proxies, slurmstepds):
  # every process of the cluster is in one of its network namespaces.
  for ns in $(ip netns list 2>/dev/null | awk -v p="$netns_prefix" 'index($1, p) == 1 {print $1}'); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null || true
    ended="$ended $pids"
  done
  for ns in $(ip netns list 2>/dev/null | awk -v p="$netns_prefix" 'index($1, p) == 1 {print $1}'); do
    for _ in $(seq 50); do [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break; sleep 0.1; done
  done
  # The namespace files and anything else mounted under the run
  # directory, deepest first; then the network namespaces, veths, bridge.
  if [ -d "$run" ]; then
    findmnt -rn -o TARGET | awk -v r="$run/" 'index($0, r) == 1' | sort -r | while read -r f; do
      umount "$f" 2>/dev/null || umount -l "$f"
    done
  fi
  for ns in $(ip netns list 2>/dev/null | awk -v p="$netns_prefix" 'index($1, p) == 1 {print $1}'); do
    ip netns delete "$ns"
  done
  for f in $(ip -o link show 2>/dev/null | awk -F': ' -v p="$veth_prefix" '{sub(/@.*/, "", $2)} index($2, p) == 1 {print $2}'); do
    ip link delete "$f" 2>/dev/null || true
  done
  # /run/netns: ip netns made it (a mount); take it away when we made it
  # and no namespace is left in it.
  if [ -e "$run/netns-made" ] && [ -d /run/netns ] && [ -z "$(ls -A /run/netns)" ]; then
    while mountpoint -q /run/netns; do umount /run/netns || break; done
    rmdir /run/netns 2>/dev/null || true
  fi
  rm -rf "$run"
  # Orphans are reaped by init: wait (a little) until they are gone, so
  # that nothing of the cluster shows up right after "down".
  for f in $ended; do
    for _ in $(seq 30); do [ -e "/proc/$f" ] || break; sleep 0.1; done
  done
}

# ---------------------------------------------------------------- status

cmd_status() {
  if [ ! -s "$run/hosts.list" ]; then
    echo "cluster: down"
    return 0
  fi
  echo "cluster: run directory $run"
  local h ip
  while read -r h ip; do
    printf '  %-5s %-12s netns %s; processes: %s\n' "$h" "$ip" "$netns_prefix$h" \
      "$(ip netns pids "$netns_prefix$h" 2>/dev/null | wc -l)"
  done <"$run/hosts.list"
  echo "  $login   $net.254  (root network namespace, bridge $br)"
  tc -n "${netns_prefix}pg1" qdisc show dev eth0 2>/dev/null | sed 's/^/  pg1 eth0: /' || true
  local f
  for f in "$run"/pids/*; do
    [ -e "$f" ] || continue
    if alive "$(cat "$f")"; then echo "  ${f##*/}: running (pid $(cat "$f"))"; else echo "  ${f##*/}: gone"; fi
  done
  if [ -s "$slurm_conf" ]; then
    echo "  SLURM_CONF=$slurm_conf"
    SLURM_CONF=$slurm_conf sinfo -N -o '%N %T %c' 2>&1 | sed 's/^/  /'
  fi
}

# ---------------------------------------------------------------- check

# The ring program of the box checks: a ring of point-to-point messages
# (4 bytes and 1 MiB), an allreduce, and the size of MPI_COMM_TYPE_SHARED
# (the ranks MPI counts on this rank's node); "win" also puts into an
# MPI_Win_allocate window of the right neighbour, under
# MPI_THREAD_MULTIPLE, as pgasmr's MPI transport does.
ring_c() {
  cat <<'C'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  int provided, rank, size, len, nodesize, got = -1, bad = 0;
  char host[MPI_MAX_PROCESSOR_NAME];
  int win = argc > 1 && strcmp(argv[1], "win") == 0;
  MPI_Init_thread(&argc, &argv, win ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Get_processor_name(host, &len);
  int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Sendrecv(&rank, 1, MPI_INT, right, 0, &got, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  bad |= got != left;
  enum { big = 1 << 20 };
  char *s = malloc(big), *r = malloc(big);
  memset(s, rank, big);
  MPI_Sendrecv(s, big, MPI_CHAR, right, 1, r, big, MPI_CHAR, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  bad |= r[0] != (char)left || r[big - 1] != (char)left;
  long mine = rank + 1, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  bad |= sum != (long)size * (size + 1) / 2;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &nodesize);
  if (win) {
    MPI_Win w;
    int *base, rc;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Win_allocate(big, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
    if (rc != MPI_SUCCESS) {
      char e[MPI_MAX_ERROR_STRING];
      int n;
      MPI_Error_string(rc, e, &n);
      fprintf(stderr, "%s: MPI_Win_allocate (thread level %d of %d): %s\n", host, provided, MPI_THREAD_MULTIPLE, e);
      fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    *base = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w);
    MPI_Put(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, w);
    MPI_Win_unlock(right, w);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w);
    bad |= *base != left;
    MPI_Win_unlock(rank, w);
    MPI_Win_free(&w);
  }
  printf("%s %d per node %s\n", host, nodesize, bad ? "BAD" : "ok");
  fflush(stdout);
  MPI_Finalize();
  return bad;
}
C
}

# procs_of PATH...: the pids of processes running one of these files.
procs_of() {
  local d exe f
  for d in /proc/[0-9]*; do
    exe=$(readlink "$d/exe" 2>/dev/null) || continue
    for f in "$@"; do [ "$exe" = "$f" ] && echo "${d#/proc/}"; done
  done
}

# stepds: the pids of the slurmstepds in the hosts.
stepds() {
  local h p
  for h in $(hosts); do
    for p in $(ip netns pids "$netns_prefix$h" 2>/dev/null); do
      [ "$(cat "/proc/$p/comm" 2>/dev/null)" = slurmstepd ] && echo "$p"
    done
  done
  return 0
}

# where_stuck PID: the host of a process and, with gdb, the MPI, PMIx or
# UCX function it is in.
where_stuck() {
  local pid=$1 host frames=""
  host=$(nsenter -t "$pid" -u hostname 2>/dev/null || echo '?')
  if command -v gdb >/dev/null; then
    frames=$(timeout 20 gdb -q -batch -p "$pid" -ex 'thread apply all bt 30' 2>/dev/null |
      grep -oE ' in (P?MPI_[A-Za-z_]+|PMIx_[A-Za-z_]+|pmix_ds21_lock_[a-z_]+|ucp_worker_progress|pg_[a-z_]+|__GI___libc_read|epoll_wait|select) ' |
      awk '{print $2}' | awk '!seen[$0]++' | grep -vE '^(epoll_wait|select)$' | head -4 | tr '\n' ' ')
  fi
  echo "    pid $pid on $host ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-60)...): ${frames:-(no gdb: state $(awk '/^State/{print $2}' "/proc/$pid/status" 2>/dev/null))}"
}

# wait_for_where: waits for the where_stuck jobs of launch (not for
# launch's own command, $pid, also a job of this shell).
wait_for_where() {
  local j
  for j in $(jobs -p); do [ "$j" = "$pid" ] || wait "$j" 2>/dev/null || true; done
}

# launch SECONDS OUT ERR CMD...: CMD on pg0 (the login view), in its own
# session, stdout to OUT, stderr to ERR. After SECONDS it says in ERR
# where the ranks are (where_stuck), ends the session and any rank left,
# and returns 124.
launch() {
  local t=$1 out=$2 err=$3 pid i=0 rc=0 p
  shift 3
  : >"$err" # appended to: the diagnosis below must not be overwritten
  # From $run, which every host sees: a clone of the repository under
  # /tmp (CI's) is not there inside the hosts, nor for hydra's proxies.
  (cd "$run" && exec setsid bash "$self" run "$@") >"$out" 2>>"$err" </dev/null &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$i" -ge $((t * 10)) ]; then
      {
        echo "cluster check: timed out after ${t}s; where the processes are:"
        # (gdb takes a while on a busy machine: all at once)
        local ps=() k=0
        for p in $(procs_of "${bins[@]}") $(case $1 in srun | env) stepds ;; esac); do
          ps+=("$p")
          where_stuck "$p" >"$err.where.$k" 2>&1 &
          k=$((k + 1))
        done
        wait_for_where
        for k in "${!ps[@]}"; do cat "$err.where.$k"; rm -f "$err.where.$k"; done
      } >>"$err" 2>&1
      kill -TERM -- "-$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL -- "-$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      sleep 1
      for p in $(procs_of "${bins[@]}"); do kill -KILL "$p" 2>/dev/null || true; done
      return 124
    fi
    sleep 0.1
    i=$((i + 1))
  done
  wait "$pid" || rc=$?
  return "$rc"
}

# record ID STATUS DETAIL [RC]: one result line, now and in the summary.
# A check that FAILs by timing out (RC 124) whose ID matches one of
# $known is KNOWN instead: any other failure of it is still a FAIL.
record() {
  local id=$1 st=$2 detail=$3 rc=${4:-}
  if [ "$st" = FAIL ] && [ "$rc" = 124 ]; then
    local pat
    for pat in $known; do
      # shellcheck disable=SC2254
      case $id in $pat) st=KNOWN ;; esac
    done
  fi
  [ "$st" = FAIL ] && failed=$((failed + 1))
  results+=("$(printf '%-6s %-24s %s' "$st" "$id" "$detail")")
  printf '%-6s %-24s %s\n' "$st" "$id" "$detail"
}

# first_error ERR: the line of ERR that says most about a failure.
first_error() {
  local l
  l=$(grep -m1 -E 'MPI_ERR|MPI_Win|error|Error|ERROR|refused|BAD|assert|Abort|abort' "$1" || true)
  grep -q '^cluster check: timed out' "$1" && l="$(grep -m1 '^cluster check: timed out' "$1" | sed 's/; where.*//') (${l:-no message})"
  [ -n "$l" ] || l=$(grep -m1 . "$1" || true)
  echo "${l:-no message}" | cut -c1-220
}

# show ERR: after a failure, its first lines and where the processes
# were if it timed out, indented.
show() {
  awk '/^cluster check: timed out/ || /^    pid [0-9]+ on / { diag = diag "      | " $0 "\n"; next }
    n < 12 { print "      | " $0; n++ }
    END { printf "%s", diag }' "$1"
}

# expect_hosts ID RC OUT ERR PATTERN: a box check passes when it exited
# 0 and printed PATTERN (sorted, counted) exactly.
expect_lines() {
  local id=$1 rc=$2 out=$3 err=$4 want=$5 got
  got=$(grep -E '^pg[0-9]+( |$)' "$out" | sort | uniq -c | awk '{$1=$1; print}' | paste -sd, -) || got= # no line: the check fails below, not set -e
  if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
    record "$id" PASS "$got"
  else
    record "$id" FAIL "exit $rc; printed '${got}'; $(first_error "$err")" "$rc"
    show "$err"
  fi
}

cmd_check() {
  need_root
  local t0=$SECONDS
  for c in go mpirun mpicc.openmpi mpiexec.mpich mpicc.mpich srun; do
    command -v "$c" >/dev/null || die "check: $c is missing (apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev slurm-wlm munge)"
  done
  in_check=1
  trap 'cmd_down >/dev/null 2>&1 || true' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  results=() failed=0
  known=${PGASMR_CLUSTER_KNOWN-mpich/ring mpich/app/* srun-pmi2/ring-mpich}
  local ompi_fix=${PGASMR_CLUSTER_OMPI_FLAGS---mca osc pt2pt -x PGASMR_MPI_SERIALIZE=1}
  local srun_fix=${PGASMR_CLUSTER_SRUN_ENV-OMPI_MCA_osc=pt2pt PGASMR_MPI_SERIALIZE=1}

  echo "== up: 3 hosts, Slurm"
  cmd_up 3
  export SLURM_CONF=$slurm_conf
  local d=$run/check
  mkdir -p "$d"
  local hostlist="pg1:2,pg2:2,pg3:2"
  want="2 pg1,2 pg2,2 pg3"

  echo "== tc netem ($((SECONDS - t0)) s)"
  local netem_msg
  if netem_msg=$(tc qdisc add dev "${veth_prefix}pg1" root netem delay 100us 2>&1); then
    tc qdisc del dev "${veth_prefix}pg1" root 2>/dev/null || true
    record box/netem INFO "tc netem works: up --netem DELAY delays every packet a host sends"
  else
    record box/netem INFO "no netem (links run at veth speed): tc qdisc add dev ${veth_prefix}pg1 root netem delay 100us: $(echo "$netem_msg" | head -1)"
  fi

  # The launchers, wired to the hosts.
  ompi=(mpirun --allow-run-as-root --oversubscribe --host "$hostlist"
    --mca plm_rsh_agent "$run/agent" --mca plm_rsh_no_tree_spawn 1
    --mca btl tcp,self,vader --mca btl_tcp_if_include "$net.0/24" --mca oob_tcp_if_include "$net.0/24"
    --mca btl_vader_single_copy_mechanism none)
  mpich=(mpiexec.mpich -launcher ssh -launcher-exec "$run/agent" -hosts "$hostlist" -n 6)
  slurm=(srun -N 3 -n 6 --mpi=pmix)
  ompi_env=(OMPI_MCA_btl=tcp,self,vader OMPI_MCA_btl_tcp_if_include="$net.0/24" OMPI_MCA_btl_vader_single_copy_mechanism=none)
  bins=("$d/ring-ompi" "$d/ring-mpich" "$d/mrrun-mpi" "$d/mrrun-mpich")

  echo "== the box: hostname and an MPI ring at 3 hosts x 2 ranks ($((SECONDS - t0)) s)"
  local rc
  rc=0; launch 60 "$d/o" "$d/e" "${ompi[@]}" hostname || rc=$?
  expect_lines mpirun/hostname "$rc" "$d/o" "$d/e" "$want"
  rc=0; launch 60 "$d/o" "$d/e" "${mpich[@]}" hostname || rc=$?
  expect_lines mpich/hostname "$rc" "$d/o" "$d/e" "$want"
  rc=0; launch 60 "$d/o" "$d/e" "${slurm[@]}" hostname || rc=$?
  expect_lines srun/hostname "$rc" "$d/o" "$d/e" "$want"

  ring_c >"$d/ring.c"
  mpicc.openmpi -O -o "$d/ring-ompi" "$d/ring.c"
  mpicc.mpich -O -o "$d/ring-mpich" "$d/ring.c"
  local rwant="2 pg1 2 per node ok,2 pg2 2 per node ok,2 pg3 2 per node ok"
  rc=0; launch 60 "$d/o" "$d/e" "${ompi[@]}" "$d/ring-ompi" || rc=$?
  expect_lines mpirun/ring "$rc" "$d/o" "$d/e" "$rwant"
  rc=0; launch 20 "$d/o" "$d/e" "${mpich[@]}" "$d/ring-mpich" || rc=$?
  expect_lines mpich/ring "$rc" "$d/o" "$d/e" "$rwant"
  rc=0; launch 60 "$d/o" "$d/e" env "${ompi_env[@]}" "${slurm[@]}" "$d/ring-ompi" || rc=$?
  expect_lines srun/ring "$rc" "$d/o" "$d/e" "$rwant"
  # MPICH (Debian's: PMI-1/2, no PMIx) under srun, through Slurm's pmi2.
  rc=0; launch 20 "$d/o" "$d/e" srun -N 3 -n 6 --mpi=pmi2 "$d/ring-mpich" || rc=$?
  expect_lines srun-pmi2/ring-mpich "$rc" "$d/o" "$d/e" "$rwant"
  # One-sided under MPI_THREAD_MULTIPLE, without pgasmr: what OpenMPI
  # 4.1 over TCP does with the MPI transport's window.
  rc=0; launch 60 "$d/o" "$d/e" "${ompi[@]}" "$d/ring-ompi" win || rc=$?
  if [ "$rc" = 0 ]; then
    record mpirun/ring-win INFO "MPI_Win_allocate under MPI_THREAD_MULTIPLE works"
  else
    record mpirun/ring-win INFO "exit $rc: $(grep -m1 MPI_Win_allocate "$d/e" || first_error "$d/e")"
  fi

  echo "== pgasmr: build, inputs, seq baselines ($((SECONDS - t0)) s)"
  (cd "$repo" && go build -tags mpi -o "$d/mrrun-mpi" ./cmd/mrrun && go build -tags mpich -o "$d/mrrun-mpich" ./cmd/mrrun)
  local m=$d/mrrun-mpi
  "$m" gen -q histogram --size 2MB --seed 1 "$d/img.bmp"
  "$m" gen -q linreg --points 200000 --seed 1 "$d/pts.bin"
  "$m" gen -q wordcount --size 8MiB --files 16 --seed 1 "$d/corpus"
  "$m" gen -q spamcount --messages 200 --seed 1 "$d/mail"
  local pair app in
  for pair in histogram:img.bmp linreg:pts.bin wordcount:corpus spamcount:mail; do
    app=${pair%%:*} in=$d/${pair#*:}
    "$m" -q --baseline seq --output-format tsv "$app" "$in" >"$d/want.$app"
  done

  echo "== pgasmr at 3 hosts x 2 ranks, output compared with --baseline seq ($((SECONDS - t0)) s)"
  # shellcheck disable=SC2206
  local ofix=($ompi_fix) sfix=($srun_fix)
  # The transport as it is, without the workaround: expected to fail.
  rc=0; launch 90 "$d/o" "$d/e" "${ompi[@]}" "$m" --transport mpi -q --output-format tsv wordcount "$d/corpus" || rc=$?
  if [ "$rc" = 0 ] && cmp -s "$d/o" "$d/want.wordcount"; then
    record mpirun/no-workaround XPASS "wordcount passes without '$ompi_fix': the workaround can go"
  else
    record mpirun/no-workaround XFAIL "exit $rc: $(first_error "$d/e")"
  fi
  rc=0; launch 90 "$d/o" "$d/e" env "${ompi_env[@]}" "${slurm[@]}" "$m" --transport mpi -q --output-format tsv wordcount "$d/corpus" || rc=$?
  if [ "$rc" = 0 ] && cmp -s "$d/o" "$d/want.wordcount"; then
    record srun/no-workaround XPASS "wordcount passes without '$srun_fix': the workaround can go"
  else
    record srun/no-workaround XFAIL "exit $rc: $(first_error "$d/e")"
  fi

  local stats_lines=()
  pgasmr() { # ID SECONDS APP IN CMD...
    local id=$1 t=$2 app=$3 in=$4 rc=0 st
    shift 4
    launch "$t" "$d/o" "$d/e" "$@" --transport mpi --stats -q --output-format tsv "$app" "$in" || rc=$?
    st=$(grep -m1 '^stats:' "$d/e" || true)
    [ "$app" = wordcount ] && stats_lines+=("${id%%/*}: ${st:-no stats line}")
    if [ "$rc" != 0 ]; then
      record "$id" FAIL "exit $rc: $(first_error "$d/e")" "$rc"
      show "$d/e"
    elif ! cmp -s "$d/o" "$d/want.$app"; then
      record "$id" FAIL "output differs from --baseline seq ($(wc -c <"$d/o") bytes, seq $(wc -c <"$d/want.$app"))"
    else
      record "$id" PASS "same bytes as seq (${st#stats: })"
    fi
  }
  for pair in histogram:img.bmp linreg:pts.bin wordcount:corpus spamcount:mail; do
    app=${pair%%:*} in=$d/${pair#*:}
    pgasmr "mpirun/app/$app" 90 "$app" "$in" "${ompi[@]}" "${ofix[@]}" "$m"
    pgasmr "mpich/app/$app" 25 "$app" "$in" "${mpich[@]}" "$d/mrrun-mpich"
    pgasmr "srun/app/$app" 90 "$app" "$in" env "${ompi_env[@]}" "${sfix[@]}" "${slurm[@]}" "$m"
  done

  echo "== down ($((SECONDS - t0)) s)"
  trap - EXIT
  cmd_down
  local left=""
  ip netns list 2>/dev/null | grep -q "^$netns_prefix" && left="$left netns"
  ip -o link show 2>/dev/null | grep -q ": $veth_prefix" && left="$left links"
  findmnt -rn -o TARGET | grep -qE "^($run|/run/netns)(/|$)" && [ -e "$run" ] && left="$left mounts"
  [ -n "$(procs_of "${bins[@]}")" ] && left="$left ranks"
  [ -e "$run" ] && left="$left $run"
  if [ -n "$left" ]; then record box/down FAIL "left behind:$left"; else record box/down PASS "no namespace, link, mount, daemon or file left"; fi

  echo
  echo "== summary ($((SECONDS - t0)) s)"
  printf '%s\n' "${results[@]}"
  echo "--stats of wordcount (mrrun's ranks per node):"
  printf '  %s\n' "${stats_lines[@]}"
  echo "PASS: as expected; KNOWN: timed out, a known failure (PGASMR_CLUSTER_KNOWN='$known'); XFAIL: the transport without the"
  echo "OpenMPI workaround (PGASMR_CLUSTER_OMPI_FLAGS='$ompi_fix', PGASMR_CLUSTER_SRUN_ENV='$srun_fix'), expected to fail"
  if [ "$failed" != 0 ]; then
    echo "cluster check: $failed FAILED"
    exit 1
  fi
  echo "cluster check: ok"
}


case ${1:-} in
  up) shift; cmd_up "$@" ;;
  down) shift; cmd_down ;;
  exec) shift; cmd_exec "$@" ;;
  enter) shift; h=$(host_of "${1:-}"); [ -n "$h" ] || die "enter: no host '${1:-}'"; shift; nsargs=(); ns_args "$h"; exec nsenter "${nsargs[@]}" -- "$@" ;;
  run) shift; cmd_run "$@" ;;
  status) shift; cmd_status ;;
  check) shift; cmd_check "$@" ;;
  *) die "usage: $0 up [N] [--netem DELAY] [--no-slurm] | down | status | exec [SSH OPTIONS] HOST CMD... | enter HOST CMD... | run [CMD...] | check" ;;
esac
