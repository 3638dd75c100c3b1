#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, and pgasmr run on it with srun.
#
#   .ci/slurm.sh check     start Slurm, run the checks below, stop it
#   .ci/slurm.sh up        start it and leave it running (prints the
#                          SLURM_CONF to export for srun, sinfo, squeue)
#   .ci/slurm.sh down      stop what "up" started
#
# What it needs (Debian 12; root, for munged and slurmd):
#   apt-get install -y --no-install-recommends slurm-wlm munge \
#       pkg-config libopenmpi-dev openmpi-bin
#
# What "up" does, step by step, so that you can do the same by hand on a
# laptop: munged (the credential daemon every Slurm command talks to) runs
# as the munge user with the key the package made; a slurm.conf in a
# scratch directory names this host as both controller and only node, with
# all its processors, no cgroups (proctrack/linuxproc, task/none; Debian's
# 22.05 slurmd will not start with a cgroup.conf that disables them), and
# no accounting; slurmctld and slurmd run in the foreground of their own
# sessions, logging into the scratch directory, until "down" kills them.
# Every client command finds the cluster through SLURM_CONF.
#
# The checks ("check"): mrrun built with -tags mpi (OpenMPI) and started
# by srun through PMIx, with no mpirun anywhere:
#   srun -n 2 --mpi=pmix mrrun --transport mpi APP INPUT
# for every app at 2 ranks and wordcount at 4 (--overcommit: 4 ranks on 2
# processors), each printing the bytes of `mrrun --baseline seq`; then a
# job one of whose ranks is killed in its map must end with an error, no
# rank left, within 20 s.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

dir=${PGASMR_SLURM_DIR:-/tmp/pgasmr-slurm}
conf=$dir/slurm.conf
host=$(hostname -s)

die() { echo "slurm.sh: $*" >&2; exit 1; }
. cmd/mrrun/killtest.sh # procs, kill_one_rank


up() {
  [ "$(id -u)" = 0 ] || die "needs root (munged and slurmd)"
  export PATH=$PATH:/usr/sbin # the daemons live there
  for c in munged slurmctld slurmd srun sinfo; do
    command -v "$c" >/dev/null || die "$c is missing (apt-get install slurm-wlm munge)"
  done
  mkdir -p "$dir/state" "$dir/spool"

  # munge: the package made /etc/munge/munge.key; its socket lives in
  # /run/munge, which a fresh container may not have.
  [ -s /etc/munge/munge.key ] || { mungekey --create --force && chown munge: /etc/munge/munge.key; }
  install -d -o munge -g munge -m 0755 /run/munge
  if ! munge -n </dev/null >/dev/null 2>&1; then
    runuser -u munge -- munged || die "munged did not start"
  fi
  for _ in $(seq 50); do munge -n </dev/null >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n </dev/null | unmunge >/dev/null || die "munge does not work: see /var/log/munge/munged.log"

  cat >"$conf" <<EOF
# One node, this host, for pgasmr's checks (.ci/slurm.sh).
ClusterName=pgasmr
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
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
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$conf
  setsid slurmctld -D -f "$conf" >"$dir/slurmctld.out" 2>&1 </dev/null &
  echo $! >"$dir/slurmctld.session"
  setsid slurmd -D -f "$conf" -N "$host" >"$dir/slurmd.out" 2>&1 </dev/null &
  echo $! >"$dir/slurmd.session"
  for _ in $(seq 150); do
    state=$(sinfo -h -N -o %T 2>/dev/null || true)
    case $state in idle*) break ;; esac
    sleep 0.2
  done
  case ${state:-} in
    idle*) ;;
    *)
      echo "slurm.sh: the node did not come up (state '${state:-none}')" >&2
      tail -n 20 "$dir"/slurmctld.log "$dir"/slurmd.log "$dir"/*.out >&2 || true
      down
      exit 1
      ;;
  esac
  echo "Slurm is up: export SLURM_CONF=$conf"
}

down() {
  # The daemons lead their own sessions: end each whole session, politely
  # first, and wait for them (a daemon's children are reaped by init).
  for d in slurmd slurmctld; do
    f=$dir/$d.session
    [ -s "$f" ] || continue
    pid=$(cat "$f")
    kill -TERM -- "-$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
    rm -f "$f"
  done
}

check() {
  tmp=$(mktemp -d)
  trap 'down; rm -rf "$tmp"' EXIT
  go build -tags mpi -o "$tmp/mrrun" ./cmd/mrrun
  m=$tmp/mrrun
  "$m" gen -q histogram --size 2MB --seed 1 "$tmp/img.bmp"
  "$m" gen -q linreg --points 200000 --seed 1 "$tmp/pts.bin"
  "$m" gen -q wordcount --size 4MB --files 20 --seed 1 "$tmp/corpus"
  "$m" gen -q spamcount --messages 200 --seed 1 "$tmp/mail"

  up
  export SLURM_CONF=$conf
  # OpenMPI under srun: no mpirun, so its settings come from the
  # environment srun passes on.
  export OMPI_MCA_btl_vader_single_copy_mechanism=none

  fail=0 runs=0
  run() { # np app input [srun options]
    local np=$1 app=$2 in=$3; shift 3
    "$m" -q --baseline seq --output-format tsv "$app" "$in" >"$tmp/want"
    if ! timeout 180 srun -n "$np" --mpi=pmix "$@" "$m" --transport mpi -q --output-format tsv "$app" "$in" >"$tmp/got" 2>"$tmp/err"; then
      echo "FAIL: srun -n $np $* mrrun --transport mpi $app:"; cat "$tmp/err"; fail=1; return
    fi
    runs=$((runs + 1))
    if ! cmp -s "$tmp/want" "$tmp/got"; then
      echo "FAIL: srun -n $np $* mrrun --transport mpi $app: output differs from seq"; fail=1
    fi
  }
  run 2 histogram "$tmp/img.bmp"
  run 2 linreg "$tmp/pts.bin"
  run 2 wordcount "$tmp/corpus"
  run 2 spamcount "$tmp/mail"
  run 4 wordcount "$tmp/corpus" --overcommit
  echo "mrrun under srun: $runs runs compared with seq"

  # A rank killed in the middle of its map: srun must end the job with an
  # error, no rank left behind, within 20 s.
  "$m" gen -q wordcount --size 200MB --files 8 --seed 2 "$tmp/big"
  kill_one_rank srun 20000 2 "$m --transport mpi -q wordcount $tmp/big" "$m" "$tmp/killerr" \
    timeout 60 srun -n 2 --mpi=pmix "$m" --transport mpi -q wordcount "$tmp/big" || fail=1
  [ "$fail" = 0 ] || exit 1
  echo "slurm: ok"
}

case ${1:-check} in
  up) up ;;
  down) down ;;
  check) check ;;
  *) die "usage: $0 [check|up|down]" ;;
esac
