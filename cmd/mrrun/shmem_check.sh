#!/usr/bin/env bash
# mrrun on the OpenSHMEM transport (-tags shmem, OpenMPI's OSHMEM) under
# oshrun: every app at 2 and 4 PEs (4 oversubscribed on 2 cores), in the
# default mode and element by element with cyclic distribution and a
# gather to every rank, and wordcount on a large vocabulary, must print
# the bytes of the seq baseline; then one PE killed in its map must end
# every PE within 5 s. Called by .ci/run; needs libopenmpi-dev and
# openmpi-bin.
set -euo pipefail
cd "$(dirname "$0")/../.."
. cmd/mrrun/killtest.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -tags shmem -o "$tmp/mrrun" ./cmd/mrrun
m="$tmp/mrrun"
"$m" gen -q histogram --size 2MB --seed 1 "$tmp/img.bmp"
"$m" gen -q linreg --points 200000 --seed 1 "$tmp/pts.bin"
"$m" gen -q wordcount --size 2MB --files 20 --seed 1 "$tmp/corpus"
"$m" gen -q spamcount --messages 200 --seed 1 "$tmp/mail"
# About 550,000 distinct words: pairs many times the collectives' staging.
awk 'BEGIN { srand(19); for (i = 0; i < 580000; i++) { w = ""; for (j = 0; j < 8; j++) w = w sprintf("%c", 97 + int(rand() * 26)); printf "%s%s", w, (i % 10 == 9 ? "\n" : " ") } }' > "$tmp/tokens.txt"

fail=0 runs=0
for pair in histogram:"$tmp/img.bmp" linreg:"$tmp/pts.bin" wordcount:"$tmp/corpus" spamcount:"$tmp/mail" wordcount:"$tmp/tokens.txt"; do
  app=${pair%%:*} in=${pair#*:}
  "$m" -q --baseline seq --output-format tsv "$app" "$in" > "$tmp/want"
  for np in 2 4; do
    for mode in "" "--map element --dist cyclic --gather all"; do
      # shellcheck disable=SC2086
      if ! timeout 300 oshrun -np $np "$m" --transport shmem -q --output-format tsv $mode "$app" "$in" > "$tmp/got" 2> "$tmp/err"; then
        echo "FAIL: oshrun -np $np mrrun --transport shmem $mode $app $(basename "$in"):"; cat "$tmp/err"; fail=1; continue
      fi
      runs=$((runs + 1))
      if ! cmp -s "$tmp/want" "$tmp/got"; then
        echo "FAIL: oshrun -np $np mrrun --transport shmem $mode $app $(basename "$in"): output differs from seq"; fail=1
      fi
    done
  done
done
echo "mrrun on shmem: $runs runs compared with seq"

# Kill one PE of a 3-PE job in its map: oshrun must end the others.
"$m" gen -q wordcount --size 120MB --files 6 --seed 2 "$tmp/big"
kill_one_rank oshrun 5000 3 "$m --transport shmem -q wordcount $tmp/big" "$m" "$tmp/killerr" \
  oshrun -np 3 "$m" --transport shmem -q wordcount "$tmp/big" || fail=1

if [ "$fail" != 0 ]; then
  echo "mrrun shmem checks: FAILED"; exit 1
fi
echo "shmem_check: $runs passed, 0 failed"
