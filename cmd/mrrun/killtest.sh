# Shell functions of the kill checks (sourced by cmd/mrrun/mpi_check.sh,
# cmd/mrrun/shmem_check.sh and .ci/slurm.sh).

# procs PREFIX: the pids whose command line starts with PREFIX (from /proc:
# no procps needed).
procs() {
  local d cmd
  for d in /proc/[0-9]*; do
    # (A process that ends meanwhile fails the redirection: quietly.)
    cmd=$({ tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null) || continue
    case "$cmd" in "$1"*) echo "${d#/proc/}" ;; esac
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
