#!/usr/bin/env bash
# mrrun on the MPI transport: builds mrrun with -tags mpi, runs every app
# under mpirun at 1, 2 and 4 ranks (4 oversubscribed on 2 cores), with
# native collectives and without, over shared memory and over TCP, and
# checks that each prints the bytes of the seq baseline; then kills one rank in the middle of a job and checks
# that mpirun ends every rank within 5 s and leaves no process behind; sends
# SIGINT to mpirun as Ctrl-C does and checks its one line, its status and
# that nothing is left; and checks where OpenMPI's shared-memory files go
# and that the next launch removes those of a job killed with SIGKILL.
# Called by .ci/run; needs OpenMPI (mpirun, pkg-config ompi).
set -euo pipefail
cd "$(dirname "$0")/../.."
. cmd/mrrun/killtest.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -tags mpi -o "$tmp/mrrun" ./cmd/mrrun
m="$tmp/mrrun"

"$m" gen -q histogram --size 2MB --seed 1 "$tmp/img.bmp"
"$m" gen -q linreg --points 200000 --seed 1 "$tmp/pts.bin"
"$m" gen -q wordcount --size 2MB --files 20 --seed 1 "$tmp/corpus"
"$m" gen -q spamcount --messages 200 --seed 1 "$tmp/mail"
inputs=(histogram:"$tmp/img.bmp" linreg:"$tmp/pts.bin" wordcount:"$tmp/corpus" spamcount:"$tmp/mail")

fail=0 runs=0
for pair in "${inputs[@]}"; do
  app=${pair%%:*} in=${pair#*:}
  "$m" -q --baseline seq --output-format tsv "$app" "$in" > "$tmp/want"
  for np in 1 2 4; do
    for native in 1 0; do
      for mode in "" "--map element --dist cyclic --gather all"; do
        # shellcheck disable=SC2086
        if ! PGASMR_MPI_NATIVE=$native timeout 120 mpirun -np $np "$m" --transport mpi -q --output-format tsv $mode "$app" "$in" > "$tmp/got" 2> "$tmp/err"; then
          echo "FAIL: mpirun -np $np mrrun --transport mpi $mode $app (native=$native):"; cat "$tmp/err"; fail=1; continue
        fi
        runs=$((runs + 1))
        if ! cmp -s "$tmp/want" "$tmp/got"; then
          echo "FAIL: mpirun -np $np mrrun --transport mpi $mode $app (native=$native): output differs from seq"; fail=1
        fi
      done
    done
  done
done
echo "mrrun on mpi: $runs runs compared with seq"

# A large vocabulary: 5 MB of random 8-letter tokens (about 550,000 distinct
# words), whose pairs are many times the collectives' staging area, at 2 and
# 4 ranks with native collectives and without (then they stream through the
# staging area in rounds), gathered to the root and partitioned.
awk 'BEGIN { srand(19); for (i = 0; i < 580000; i++) { w = ""; for (j = 0; j < 8; j++) w = w sprintf("%c", 97 + int(rand() * 26)); printf "%s%s", w, (i % 10 == 9 ? "\n" : " ") } }' > "$tmp/tokens.txt"
"$m" -q --baseline seq --output-format tsv wordcount "$tmp/tokens.txt" > "$tmp/want"
for np in 2 4; do
  for native in 1 0; do
    for mode in "" "--gather root" "--no-collectives"; do
      # shellcheck disable=SC2086
      if ! PGASMR_MPI_NATIVE=$native timeout 300 mpirun -np $np "$m" --transport mpi -q --output-format tsv $mode wordcount "$tmp/tokens.txt" > "$tmp/got" 2> "$tmp/err"; then
        echo "FAIL: mpirun -np $np mrrun --transport mpi $mode wordcount tokens.txt (native=$native):"; cat "$tmp/err"; fail=1; continue
      fi
      runs=$((runs + 1))
      if ! cmp -s "$tmp/want" "$tmp/got"; then
        echo "FAIL: mpirun -np $np mrrun --transport mpi $mode wordcount tokens.txt (native=$native): output differs from seq"; fail=1
      fi
    done
  done
done
echo "mrrun on mpi, large vocabulary: compared with seq"

# The network path on one host, the closest thing to two nodes: OpenMPI
# with TCP only between the ranks (no shared memory) and one-sided
# operations carried as messages (osc pt2pt, which refuses
# MPI_THREAD_MULTIPLE: the transport asks for MPI_THREAD_SERIALIZED), every
# app at 2 and 4 ranks with 2 ranks a node (node tables per pair of ranks,
# pairs crossing "nodes" over TCP), native collectives and not.
for pair in "${inputs[@]}"; do
  app=${pair%%:*} in=${pair#*:}
  "$m" -q --baseline seq --output-format tsv "$app" "$in" > "$tmp/want"
  for np in 2 4; do
    for native in 1 0; do
      if ! PGASMR_MPI_SERIALIZE=1 PGASMR_MPI_NATIVE=$native timeout 120 mpirun --mca btl tcp,self --mca osc pt2pt -np $np "$m" --transport mpi --ranks-per-node 2 -q --output-format tsv "$app" "$in" > "$tmp/got" 2> "$tmp/err"; then
        echo "FAIL: mpirun (tcp) -np $np mrrun --transport mpi --ranks-per-node 2 $app (native=$native):"; cat "$tmp/err"; fail=1; continue
      fi
      runs=$((runs + 1))
      if ! cmp -s "$tmp/want" "$tmp/got"; then
        echo "FAIL: mpirun (tcp) -np $np mrrun --transport mpi --ranks-per-node 2 $app (native=$native): output differs from seq"; fail=1
      fi
    done
  done
done
echo "mrrun on mpi over tcp: compared with seq"

# The MapReduce-MPI baseline through mrrun (when libmrmpi-dev is there):
# mpirun -np N mrrun --baseline mrmpi [--compress] prints seq's bytes.
if dpkg -s libmrmpi-dev >/dev/null 2>&1; then
  go build -tags mpi,mrmpi -o "$tmp/mrrun-mrmpi" ./cmd/mrrun
  for pair in "${inputs[@]}"; do
    app=${pair%%:*} in=${pair#*:}
    "$m" -q --baseline seq --output-format tsv "$app" "$in" > "$tmp/want"
    for np in 1 2; do
      for c in "" --compress; do
        # shellcheck disable=SC2086
        if timeout 120 mpirun -np $np "$tmp/mrrun-mrmpi" --baseline mrmpi $c -q --output-format tsv "$app" "$in" > "$tmp/got" 2> "$tmp/err" &&
          cmp -s "$tmp/want" "$tmp/got"; then
          runs=$((runs + 1))
        else
          echo "FAIL: mpirun -np $np mrrun --baseline mrmpi $c $app: output differs from seq or failed"; cat "$tmp/err"; fail=1
        fi
      done
    done
  done
  echo "mrrun --baseline mrmpi: compared with seq"
fi

# A user's SPMD program (examples/embed) runs unchanged under mpirun.
go build -o "$tmp/embed" ./examples/embed
go build -tags mpi -o "$tmp/embed-mpi" ./examples/embed
"$tmp/embed" -np 1 "$tmp/corpus"/d00/d00/* > "$tmp/want"
for np in 2 4; do
  if mpirun -np $np "$tmp/embed-mpi" "$tmp/corpus"/d00/d00/* > "$tmp/got" 2> "$tmp/err" && cmp -s "$tmp/want" "$tmp/got"; then
    runs=$((runs + 1))
  else
    echo "FAIL: mpirun -np $np embed: output differs or failed"; cat "$tmp/err"; fail=1
  fi
done

# Kill one rank of a 3-rank job in its map: mpirun must end the others.
"$m" gen -q wordcount --size 120MB --files 6 --seed 2 "$tmp/big"
kill_one_rank mpirun 5000 3 "$m --transport mpi -q wordcount $tmp/big" "$m" "$tmp/killerr" \
  mpirun -np 3 "$m" --transport mpi -q wordcount "$tmp/big" || fail=1

# An input that takes 3-rank wordcount about 6 s: big's files ten times
# over, as hard links.
mkdir "$tmp/links"
n=0
for _ in 1 2 3 4 5 6 7 8 9 10; do
  while IFS= read -r f; do n=$((n + 1)); ln "$f" "$tmp/links/$n.txt"; done < <(find "$tmp/big" -type f)
done

# The ranks keep OpenMPI's shared-memory files in a directory of their
# job's, /dev/shm/pgasmr-ompi-UID-JOB (pgas/mpi/jobdir.go).
uid=$(id -u)
jobdirs() { ls -d /dev/shm/pgasmr-ompi-"$uid"-* 2>/dev/null || true; }
# jobdir_of PID: that directory for rank process PID, from its PMIx
# namespace.
jobdir_of() { echo "/dev/shm/pgasmr-ompi-$uid-$(tr '\0' '\n' < "/proc/$1/environ" | sed -n 's/^PMIX_NAMESPACE=//p')"; }
# segments DIR: how many vader segments DIR holds.
segments() { find "$1" -name 'vader_segment.*' 2>/dev/null | wc -l; }

# Ctrl-C: SIGINT to mpirun's process group (the ranks, whose process groups
# are their own, are not in it). OpenMPI 4.1's mpirun takes it for an
# abort: it prints nothing, sends the ranks SIGCONT, SIGTERM a second
# later and SIGKILL once one of them has exited, and exits with status 1
# whatever the ranks do (its signal handler sets the status before it
# signals them). The ranks must not abort the job (no MPI_ABORT box, no
# line from every rank): rank 0 says the one line, and none is left.
before=$(jobdirs)
interrupt_launch mpirun 5000 3 "$m --transport mpi -q wordcount $tmp/links" "$m" "$tmp/interr" 1 \
  "mrrun: interrupted by SIGTERM" mpirun -np 3 "$m" --transport mpi -q wordcount "$tmp/links" || fail=1
# mpirun removed the segments; the job's directory may stay (empty) until
# the next launch.
interrupted=$(comm -13 <(echo "$before") <(jobdirs))
for d in $interrupted; do
  if [ "$(segments "$d")" != 0 ]; then
    echo "FAIL: the interrupted job left its segments in $d"; ls -l "$d"; fail=1
  fi
done

# mpirun and every rank killed with SIGKILL: nobody removes the job's
# segments nor mpirun's session directory, but the next launch on the node
# removes both, and a job that ends normally leaves nothing.
# (In a subshell, which says "Killed" to /dev/null rather than here.)
(mpirun -np 3 "$m" --transport mpi -q wordcount "$tmp/links"; true) > /dev/null 2>&1 &
sub=$!
dead=""
for _ in $(seq 100); do
  rank=$(first_proc "$m --transport mpi -q wordcount $tmp/links")
  [ -n "$rank" ] && dead=$(jobdir_of "$rank") && [ "$(segments "$dead")" = 3 ] && break
  sleep 0.1
done
launcher=$(first_proc "mpirun -np 3 $m --transport mpi -q wordcount $tmp/links")
# shellcheck disable=SC2046
kill -9 $launcher $(procs "$m --transport mpi -q wordcount $tmp/links") 2>/dev/null || true
wait "$sub" || true # (bash may have run mpirun in the subshell's stead)
sleep 0.5
if [ -z "$dead" ] || [ "$(segments "$dead")" != 3 ]; then
  echo "FAIL: the killed job's directory '$dead' does not hold its 3 segments"; ls -l "$dead"; fail=1
fi
# mpirun's session directory of the job stays too, marked by the ranks.
session=/tmp/ompi.$(uname -n).$uid/pid.$launcher
if [ -z "$launcher" ] || [ ! -e "$session/pgasmr-ranks.lock" ]; then
  echo "FAIL: the killed job's session directory '$session' is not there, or not marked"; fail=1
fi

"$m" -q --baseline seq --output-format tsv wordcount "$tmp/big" > "$tmp/want"
mpirun -np 3 "$m" --transport mpi -q --output-format tsv wordcount "$tmp/big" > "$tmp/got" 2> "$tmp/err" &
launcher=$!
mine=""
for _ in $(seq 100); do
  rank=$(first_proc "$m --transport mpi -q --output-format tsv wordcount $tmp/big")
  [ -n "$rank" ] && mine=$(jobdir_of "$rank") && [ "$(segments "$mine")" = 3 ] && break
  sleep 0.1
done
status=0
wait "$launcher" || status=$?
if [ "$status" != 0 ] || ! cmp -s "$tmp/want" "$tmp/got"; then
  echo "FAIL: mpirun -np 3 mrrun wordcount big (segments in the job's directory): exit $status or output differs from seq"; cat "$tmp/err"; fail=1
fi
if [ -z "$mine" ]; then
  echo "FAIL: the ranks' segments were never seen in their job's directory"; fail=1
fi
for d in $mine $dead $interrupted $session; do
  if [ -e "$d" ]; then
    echo "FAIL: $d is left after the launch"; ls -l "$d"; fail=1
  fi
done
echo "shm directories: the job's segments in ${mine:-?}; the killed job's ${dead:-?} and session directory $session, and the interrupted one's ${interrupted:-none}, removed by the next launch"

if [ "$fail" != 0 ]; then
  echo "mrrun mpi checks: FAILED"; exit 1
fi
echo "mpi_check: $runs passed, 0 failed"
