# Shell functions of the kill and interrupt checks (sourced by
# cmd/mrrun/mpi_check.sh, cmd/mrrun/mpich_check.sh,
# cmd/mrrun/shmem_check.sh and .ci/slurm.sh).

# procs PREFIX: the pids whose command line starts with PREFIX (from /proc:
# no procps needed; with bash's builtins only, a scan takes milliseconds,
# where a command per process took most of a second on a busy machine).
procs() {
  local d args
  for d in /proc/[0-9]*; do
    # (A process that ends meanwhile fails the redirection: quietly.)
    { mapfile -d '' -t args < "$d/cmdline"; } 2>/dev/null || continue
    case "${args[*]} " in "$1"*) echo "${d#/proc/}" ;; esac
  done
}

# first_proc PREFIX: the first of procs PREFIX (no pipe, which set -o
# pipefail would fail when head closes it).
first_proc() {
  local p
  for p in $(procs "$1"); do
    echo "$p"
    return
  done
}

# kill_one_rank NAME LIMIT_MS RANKS RANK_PREFIX BINARY ERRFILE CMD...:
# starts the launch CMD... in the background (stdout to /dev/null, stderr
# to ERRFILE), waits until RANKS processes whose command line starts with
# RANK_PREFIX run, kills the last of them with SIGKILL, and checks that the
# launch then fails within LIMIT_MS with no process of BINARY left. Prints
# one line saying what happened; returns 1 (after printing ERRFILE) if the
# check failed.
kill_one_rank() {
  local name=$1 limit=$2 ranks=$3 prefix=$4 binary=$5 errfile=$6
  shift 6
  "$@" > /dev/null 2> "$errfile" &
  local pid=$! victim="" found _
  for _ in $(seq 100); do
    found=$(procs "$prefix")
    victim=$(echo "$found" | tail -1)
    [ -n "$victim" ] && [ "$(echo "$found" | wc -l)" -ge "$ranks" ] && break
    sleep 0.1
  done
  sleep 0.1
  local ok=1
  kill -9 "$victim" || { echo "FAIL: $name: the rank process '$victim' had already ended"; ok=0; }
  local killed_at status=0
  killed_at=$(date +%s%N)
  wait "$pid" || status=$?
  local took_ms=$((($(date +%s%N) - killed_at) / 1000000))
  local left
  left=$(procs "$binary ")
  echo "kill: $name exited $status ${took_ms} ms after SIGKILL of rank process $victim; left: ${left:-none}"
  if [ "$ok" = 0 ] || [ "$status" = 0 ] || [ -n "$left" ] || [ "$took_ms" -gt "$limit" ]; then
    echo "FAIL: $name kill test"; cat "$errfile"; return 1
  fi
}

# pgid PID: the process group of process PID.
pgid() {
  local s
  s=$({ cat "/proc/$1/stat"; } 2>/dev/null) || return 1
  s=${s##*) } # after the command's name: state, ppid, pgrp, ...
  set -- $s
  echo "$3"
}

# interrupt_launch NAME LIMIT_MS RANKS RANK_PREFIX BINARY ERRFILE STATUSES
# LINE CMD...: starts the launch CMD... in a session of its own (stdout to
# /dev/null, stderr to ERRFILE), waits until RANKS processes whose
# command line starts with RANK_PREFIX run, then sends SIGINT to the
# launcher's process group, as a terminal's Ctrl-C does, and checks that
# the launch then ends within LIMIT_MS with one of the exit statuses
# STATUSES (space separated), that its stderr is LINE and nothing else,
# and that no process of BINARY is left a second after. Prints one line
# saying what happened; returns 1 (after printing ERRFILE) if the check
# failed.
interrupt_launch() {
  local name=$1 limit=$2 ranks=$3 prefix=$4 binary=$5 errfile=$6 statuses=$7 line=$8
  shift 8
  setsid "$@" > /dev/null 2> "$errfile" &
  local pid=$! found _ ok=1
  for _ in $(seq 100); do
    found=$(procs "$prefix")
    [ -n "$found" ] && [ "$(echo "$found" | wc -l)" -ge "$ranks" ] && break
    sleep 0.1
  done
  sleep 0.3 # into the job
  if [ "$(pgid "$pid")" != "$pid" ]; then
    echo "FAIL: $name: the launcher $pid does not lead its process group"; ok=0
  fi
  kill -INT -- "-$pid" || { echo "FAIL: $name: the launch had already ended"; ok=0; }
  local sent_at status=0
  sent_at=$(date +%s%N)
  wait "$pid" || status=$?
  local took_ms=$((($(date +%s%N) - sent_at) / 1000000)) left=""
  for _ in $(seq 10); do
    left=$(procs "$binary ")
    [ -z "$left" ] && break
    sleep 0.1
  done
  echo "interrupt: $name exited $status ${took_ms} ms after SIGINT; stderr $(wc -l < "$errfile") line(s); left: ${left:-none}"
  case " $statuses " in *" $status "*) ;; *) echo "FAIL: $name: exit status $status, want one of: $statuses"; ok=0 ;; esac
  if [ "$(cat "$errfile")" != "$line" ]; then
    echo "FAIL: $name: stderr is not the one line '$line'"; ok=0
  fi
  if [ -n "$left" ] || [ "$took_ms" -gt "$limit" ]; then
    echo "FAIL: $name: processes left or too slow"; ok=0
  fi
  if [ "$ok" = 0 ]; then
    echo "FAIL: $name interrupt test; its stderr:"; cat "$errfile"; return 1
  fi
}
