#!/usr/bin/env bash
# Checks the MapReduce-MPI baseline (apps/mrmpi): builds mrmpirun with
# -tags mpi,mrmpi and runs every app on small generated inputs under
# mpirun at 1 and 2 ranks, with and without MR_compress, in every output
# format; each output must be byte-identical to pgasmr's (mrrun, 2 ranks)
# and to the sequential baseline's (mrrun --baseline seq). Needs OpenMPI
# and MR-MPI (Debian: apt-get install libopenmpi-dev openmpi-bin
# libmrmpi-dev).
set -euo pipefail
cd "$(dirname "$0")/../.."

# OpenMPI refuses to run as root without these; more ranks than cores
# need oversubscription; in containers the vader BTL's single-copy
# mechanism (CMA) fails.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go vet -tags mpi,mrmpi ./apps/mrmpi/...
go build -o "$tmp/mrrun" ./cmd/mrrun
go build -tags mpi,mrmpi -o "$tmp/mrmpirun" ./apps/mrmpi/mrmpirun

in=$tmp/in
mkdir -p "$in"
"$tmp/mrrun" gen wordcount --size 1MB --files 7 --seed 1 "$in/wc" >/dev/null 2>&1
printf 'binary\0file\n' >"$in/wc/zz-binary.txt"
"$tmp/mrrun" gen histogram --size 1MB --seed 1 "$in/img.bmp" >/dev/null 2>&1
"$tmp/mrrun" gen linreg --points 200000 --seed 1 "$in/pts.bin" >/dev/null 2>&1
"$tmp/mrrun" gen linreg --points 50000 --input-format f64 --seed 2 "$in/ptsf.bin" >/dev/null 2>&1
"$tmp/mrrun" gen linreg --points 20000 --input-format csv --seed 3 "$in/pts.csv" >/dev/null 2>&1
"$tmp/mrrun" gen spamcount --messages 150 --seed 1 "$in/mail" >/dev/null 2>&1
printf 'From a@example.com Mon Jan  1 00:00:00 2024\nSubject: free money\n\nviagra casino\n\nFrom b@example.com Mon Jan  1 00:00:00 2024\nSubject: hi\n\nlottery winner\n' >"$in/mail/box.mbox"

fails=0 runs=0
# check APP "MRMPI FLAGS" "MRRUN FLAGS" INPUT...
check() {
  local app=$1 mflags=$2 rflags=$3
  shift 3
  for fmt in text tsv csv json; do
    "$tmp/mrrun" -q --baseline seq --output-format "$fmt" $rflags "$app" "$@" >"$tmp/seq"
    "$tmp/mrrun" -q -np 2 --output-format "$fmt" $rflags "$app" "$@" >"$tmp/pgasmr"
    if ! cmp -s "$tmp/seq" "$tmp/pgasmr"; then
      echo "FAIL: mrrun -np 2 and --baseline seq differ: $app $rflags $* ($fmt)"; fails=$((fails + 1))
    fi
    for np in 1 2; do
      for compress in "" -compress; do
        runs=$((runs + 1))
        if ! timeout 120 mpirun -np "$np" "$tmp/mrmpirun" $compress $mflags -output-format "$fmt" "$app" "$@" >"$tmp/mrmpi" 2>"$tmp/err"; then
          echo "FAIL: mpirun -np $np mrmpirun $compress $mflags -output-format $fmt $app $*"; cat "$tmp/err"; fails=$((fails + 1))
          continue
        fi
        if ! cmp -s "$tmp/pgasmr" "$tmp/mrmpi"; then
          echo "FAIL: MR-MPI output differs from pgasmr's: mpirun -np $np mrmpirun $compress $mflags -output-format $fmt $app $*"
          diff "$tmp/pgasmr" "$tmp/mrmpi" | head -5 || true; fails=$((fails + 1))
        fi
      done
    done
  done
  echo "ok   $app $mflags $*"
}

check histogram "" "" "$in/img.bmp"
check histogram "-chunk-bytes 100000" "" "$in/img.bmp" "$in/img.bmp"
check linreg "" "" "$in/pts.bin"
check linreg "-input-format f64" "--input-format f64" "$in/ptsf.bin"
# (float sums depend on the chunk size, so float inputs keep the default.)
check linreg "-input-format csv" "--input-format csv" "$in/pts.csv"
check linreg "-chunk-bytes 4096" "" "$in/pts.bin" "$in/pts.bin"
check wordcount "" "" "$in/wc"
check wordcount "-top 20 -chunk-bytes 65536" "--top 20" "$in/wc"
check wordcount "-task-combine -chunk-bytes 65536" "" "$in/wc"
check spamcount "" "" "$in/mail"

# A failing map task fails every rank with an error naming the file.
runs=$((runs + 1))
if mpirun -np 2 "$tmp/mrmpirun" histogram "$in/pts.bin" >/dev/null 2>"$tmp/err"; then
  echo "FAIL: histogram of a non-BMP file succeeded"; fails=$((fails + 1))
elif ! grep -q 'pts.bin' "$tmp/err"; then
  echo "FAIL: the error does not name the file:"; cat "$tmp/err"; fails=$((fails + 1))
fi

echo "mrmpi: $((runs - fails)) passed, $fails failed"
[ "$fails" = 0 ]
