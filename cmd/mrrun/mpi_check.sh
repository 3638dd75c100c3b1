#!/usr/bin/env bash
# mrrun on the MPI transport: builds mrrun with -tags mpi, runs every app
# under mpirun at 1, 2 and 4 ranks (4 oversubscribed on 2 cores), with
# native collectives and without, over shared memory and over TCP, and
# checks that each prints the bytes of the seq baseline; then kills one rank in the middle of a job and checks
# that mpirun ends every rank within 5 s and leaves no process behind.
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

if [ "$fail" != 0 ]; then
  echo "mrrun mpi checks: FAILED"; exit 1
fi
echo "mpi_check: $runs passed, 0 failed"
