#!/usr/bin/env bash
# mrrun on the MPI transport built against MPICH (-tags mpich) and run by
# MPICH's own launcher (mpiexec.mpich: with OpenMPI installed too, Debian's
# mpirun and mpiexec may be OpenMPI's): every app at 2 and 4 ranks, with
# native collectives and without, must print the bytes of the seq
# baseline. Called by .ci/run; needs Debian's mpich and libmpich-dev.
set -euo pipefail
cd "$(dirname "$0")/../.."
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
if [ "$fail" != 0 ]; then
  echo "mrrun mpich checks: FAILED"; exit 1
fi
echo "mpich_check: $runs passed, 0 failed"
