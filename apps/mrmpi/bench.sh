#!/usr/bin/env bash
# Compares MapReduce-MPI (apps/mrmpi) with pgasmr and the sequential
# baseline on this machine: for each app, the median wall time of RUNS
# runs (whole commands, process start and mpirun included) of
#
#   seq          mrrun -q --baseline seq APP INPUT
#   pgasmr       mrrun -q -np 2 APP INPUT                      (in-process ranks)
#   pgasmr-mpi   mpirun -np 2 mrrun-mpi -q --transport mpi APP INPUT
#   mrmpi        mpirun -np 2 mrmpirun APP INPUT
#   mrmpi+cmp    mpirun -np 2 mrmpirun -compress APP INPUT
#   mrmpi+tc     mpirun -np 2 mrmpirun -task-combine APP INPUT (wordcount only)
#
# and checks that every output is the same. Inputs (generated once into
# DIR, about 100 MB each):
#
#   mrrun gen wordcount --size 100MB --files 40 --seed 1 DIR/wc100
#   mrrun gen histogram --size 100MB --seed 1 DIR/img100.bmp
#   mrrun gen linreg --size 100MB --seed 1 DIR/pts100.bin
#   mrrun gen spamcount --messages 26000 --seed 1 DIR/mail100
#
# Usage: apps/mrmpi/bench.sh DIR [RUNS] [APP...]   (default: 3 runs, every app)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:?usage: bench.sh DIR [RUNS] [APP...]}
runs=${2:-3}
shift $(($# < 2 ? $# : 2))
apps=("$@")
[ ${#apps[@]} -gt 0 ] || apps=(wordcount histogram linreg spamcount)

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none

mkdir -p "$dir"
go build -o "$dir/mrrun" ./cmd/mrrun
go build -tags mpi -o "$dir/mrrun-mpi" ./cmd/mrrun
go build -tags mpi,mrmpi -o "$dir/mrmpirun" ./apps/mrmpi/mrmpirun
m=$dir/mrrun
[ -e "$dir/wc100" ] || "$m" gen wordcount --size 100MB --files 40 --seed 1 "$dir/wc100"
[ -e "$dir/img100.bmp" ] || "$m" gen histogram --size 100MB --seed 1 "$dir/img100.bmp"
[ -e "$dir/pts100.bin" ] || "$m" gen linreg --size 100MB --seed 1 "$dir/pts100.bin"
[ -e "$dir/mail100" ] || "$m" gen spamcount --messages 26000 --seed 1 "$dir/mail100"

declare -A input=([wordcount]=wc100 [histogram]=img100.bmp [linreg]=pts100.bin [spamcount]=mail100)

# median of the wall times of "$@" over $runs runs; the output of the
# last run is left in $dir/out.
timeit() {
  local ts=() t0 t1
  for _ in $(seq "$runs"); do
    t0=$(date +%s%N)
    "$@" >"$dir/out"
    t1=$(date +%s%N)
    ts+=($(((t1 - t0) / 1000000)))
  done
  printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m/1000}'
}

printf '%-10s %8s %8s %11s %8s %10s %9s   (median s of %d runs, 2 ranks)\n' app seq pgasmr pgasmr-mpi mrmpi mrmpi+cmp mrmpi+tc "$runs"
for app in "${apps[@]}"; do
  in=$dir/${input[$app]}
  s=$(timeit "$m" -q --baseline seq "$app" "$in"); cp "$dir/out" "$dir/want"
  p=$(timeit "$m" -q -np 2 "$app" "$in"); cmp -s "$dir/out" "$dir/want" || echo "$app: pgasmr output differs" >&2
  pm=$(timeit mpirun -np 2 "$dir/mrrun-mpi" -q --transport mpi "$app" "$in"); cmp -s "$dir/out" "$dir/want" || echo "$app: pgasmr-mpi output differs" >&2
  r=$(timeit mpirun -np 2 "$dir/mrmpirun" "$app" "$in"); cmp -s "$dir/out" "$dir/want" || echo "$app: mrmpi output differs" >&2
  rc=$(timeit mpirun -np 2 "$dir/mrmpirun" -compress "$app" "$in"); cmp -s "$dir/out" "$dir/want" || echo "$app: mrmpi -compress output differs" >&2
  tc=-
  if [ "$app" = wordcount ]; then
    tc=$(timeit mpirun -np 2 "$dir/mrmpirun" -task-combine "$app" "$in"); cmp -s "$dir/out" "$dir/want" || echo "$app: mrmpi -task-combine output differs" >&2
  fi
  printf '%-10s %8s %8s %11s %8s %10s %9s\n' "$app" "$s" "$p" "$pm" "$r" "$rc" "$tc"
done
