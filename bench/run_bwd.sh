#!/bin/sh
# run_bwd.sh: build and run tests/gpu/harness_bwd.cu (dglu.cu, dnorm.cu, dbias.cu,
# dreduce.cu: bit-exact against ref/backward.c, then speed). The instances of
# tests/gpu/harness_bwd.list are generated into build/harness/harness_bwd_inst.inc.
# Log: ${OUT:-/tmp}/bwd.log. Exit status: the harness's (1 = correctness failure).
# Usage: bench/run_bwd.sh [--build-only] [harness options: --no-bench, --only SUBSTR]
set -e
cd "$(dirname "$0")/.."
CUDA=${CUDA:-/usr/local/cuda}
NVCC="$CUDA/bin/nvcc"
ARCH="-gencode=arch=compute_90a,code=sm_90a"
B=build/harness
LOG=${OUT:-/tmp}/bwd.log
mkdir -p "$B" "${OUT:-/tmp}"
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }
say "== build harness_bwd ($(date -u +%H:%M:%S)) =="
for f in ref recipe backward gemm parallel; do
	gcc -O2 -std=c11 -D_GNU_SOURCE -Iref -Itemplates -c ref/$f.c -o $B/bwd_$f.o
done
sh tests/gpu/gen_harness_bwd.sh tests/gpu/harness_bwd.list $B/harness_bwd_inst.inc
if ! "$NVCC" $ARCH -O3 -std=c++17 -Itemplates -Iref -I$B -Xptxas -warn-spills -o $B/harness_bwd \
	tests/gpu/harness_bwd.cu $B/bwd_ref.o $B/bwd_recipe.o $B/bwd_backward.o $B/bwd_gemm.o $B/bwd_parallel.o -lm -lpthread > $B/harness_bwd.build 2>&1; then
	cat $B/harness_bwd.build | tee -a "$LOG"; say "BUILD FAILED"; exit 3
fi
cat $B/harness_bwd.build >> "$LOG"
say "built $B/harness_bwd ($(date -u +%H:%M:%S))"
[ "${1:-}" = "--build-only" ] && exit 0
set +e
{ $B/harness_bwd "$@"; echo $? > $B/bwd_rc; } 2>&1 | tee -a "$LOG"
rc=$(cat $B/bwd_rc)
say "harness_bwd exit status $rc (log: $LOG)"
exit "$rc"
