#!/usr/bin/env bash
# mrrun on the MPI transport built against MPICH (-tags mpich) and run by
# MPICH's own launcher (mpiexec.mpich: with OpenMPI installed too, Debian's
# mpirun and mpiexec may be OpenMPI's): every app at 2 and 4 ranks, with
# native collectives and without, must print the bytes of the seq
# baseline; then Ctrl-C (SIGINT to mpiexec) must end the job with one line
# and no process left. Called by .ci/run; needs Debian's mpich and
# libmpich-dev.
set -euo pipefail
cd "$(dirname "$0")/../.."
. cmd/mrrun/killtest.sh
launcher=$(command -v mpiexec.mpich || command -v mpiexec.hydra) || { echo "mpich_check: no mpiexec.mpich"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -tags mpich -o "$tmp/mrrun" ./cmd/mrrun
m="$tmp/mrrun"
"$m" gen -q histogram --size 2MB --seed 1 "$tmp/img.bmp"
"$m" gen -q linreg --points 200000 --seed 1 "$tmp/pts.bin"
"$m" gen -q wordcount --size 2MB --files 20 --seed 1 "$tmp/corpus"
"$m" gen -q spamcount --messages 200 --seed 1 "$tmp/mail"

fail=0 runs=0
for pair in histogram:"$tmp/img.bmp" linreg:"$tmp/pts.bin" wordcount:"$tmp/corpus" spamcount:"$tmp/mail"; do
  app=${pair%%:*} in=${pair#*:}
  "$m" -q --baseline seq --output-format tsv "$app" "$in" > "$tmp/want"
  for np in 2 4; do
    for native in 1 0; do
      if ! PGASMR_MPI_NATIVE=$native timeout 120 "$launcher" -n $np "$m" --transport mpi -q --output-format tsv "$app" "$in" > "$tmp/got" 2> "$tmp/err"; then
        echo "FAIL: mpiexec.mpich -n $np mrrun --transport mpi $app (native=$native):"; cat "$tmp/err"; fail=1; continue
      fi
      runs=$((runs + 1))
      if ! cmp -s "$tmp/want" "$tmp/got"; then
        echo "FAIL: mpiexec.mpich -n $np mrrun --transport mpi $app (native=$native): output differs from seq"; fail=1
      fi
    done
  done
done
# Ctrl-C: SIGINT to mpiexec's process group (the ranks, each in a session
# of its own, are not in it). mpiexec passes SIGINT on to every rank and
# says so on its stdout; rank 0 says the one line on stderr, and every rank
# exits with status 130 without aborting the job. mpiexec exits with 130,
# unless a rank was still on its way out when another exited: Hydra then
# kills it (SIGKILL), prints its "BAD TERMINATION" box on stdout and exits
# with 9.
"$m" gen -q wordcount --size 120MB --files 6 --seed 2 "$tmp/big"
interrupt_launch mpiexec.mpich 5000 3 "$m --transport mpi -q wordcount $tmp/big" "$m" "$tmp/interr" "130 9" \
  "mrrun: interrupted by SIGINT" "$launcher" -n 3 "$m" --transport mpi -q wordcount "$tmp/big" || fail=1

if [ "$fail" != 0 ]; then
  echo "mrrun mpich checks: FAILED"; exit 1
fi
echo "mpich_check: $runs passed, 0 failed"
