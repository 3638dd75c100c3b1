#!/usr/bin/env bash
# Runs the MPI transport's tests: builds the test binary with the MPI tag
# and runs it; its tests start copies of it as ranks under mpirun (see
# main_test.go). Needs an MPI library with pkg-config and mpirun (Debian:
# apt-get install pkg-config libopenmpi-dev openmpi-bin).
#
#   pgas/mpi/run_tests.sh [-race] [-tags mpich] [test binary flags...]
#
# -race builds the ranks with the race detector (CI does). Extra arguments
# go to the test binary, e.g. -test.run TestKill, or for the benchmarks
# (without -race): -test.run '^$' -test.bench '/size=8$/' -test.benchtime 200000x
set -euo pipefail
cd "$(dirname "$0")/../.."
tags=mpi race=()
while [ $# -gt 0 ]; do
  case $1 in
    -race) race=(-race); shift ;;
    -tags) tags=$2; shift 2 ;;
    *) break ;;
  esac
done

# OpenMPI refuses to run as root without these; more ranks than cores
# need oversubscription; in containers the vader BTL's single-copy
# mechanism (CMA) fails.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Fail rather than skip when mpirun is missing.
export MPITEST_REQUIRE=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go vet -tags "$tags" ./pgas/mpi ./pgas/launch
go test "${race[@]}" -c -tags "$tags" -o "$tmp/mpi.test" ./pgas/mpi
cd "$tmp"
./mpi.test -test.v -test.timeout 5m "$@" 2>&1 | grep -v '^=== \(RUN\|PAUSE\|CONT\)'
exit "${PIPESTATUS[0]}"
