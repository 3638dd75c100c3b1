#!/usr/bin/env bash
# Runs the OpenSHMEM transport's tests: builds the test binary with the
# shmem tag and runs it; its tests start copies of it as PEs under oshrun
# (see main_test.go). Needs OpenMPI's OSHMEM (Debian: apt-get install
# libopenmpi-dev openmpi-bin).
#
#   pgas/shmem/run_tests.sh [-race] [test binary flags...]
set -euo pipefail
cd "$(dirname "$0")/../.."
race=()
if [ "${1:-}" = -race ]; then race=(-race); shift; fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# Fail rather than skip when oshrun is missing.
export SHMEMTEST_REQUIRE=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go vet -tags shmem ./pgas/shmem ./pgas/launch
go test "${race[@]}" -c -tags shmem -o "$tmp/shmem.test" ./pgas/shmem
cd "$tmp"
./shmem.test -test.v -test.timeout 5m "$@" 2>&1 | grep -v '^=== \(RUN\|PAUSE\|CONT\)'
exit "${PIPESTATUS[0]}"
