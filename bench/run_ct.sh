#!/bin/sh
# run_ct.sh: build tests/gpu/harness_ct.cu (cast_transpose, recipe_update,
# mxfp8_swizzle templates vs the CPU reference, then the H100 benchmark) into
# build/harness/ and run it; the log goes to ${OUT:-/tmp}/ct.log.
# Usage: bench/run_ct.sh [--no-bench] [--quick]   (exit status = the harness's)
set -eu
cd "$(dirname "$0")/.."
CUDA=${CUDA:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA/bin/nvcc}
B=build/harness
LOG=${OUT:-/tmp}/ct.log
mkdir -p "$B" "$(dirname "$LOG")"
{
	echo "== build $(date -u +%FT%TZ)"
	for f in ref gemm parallel; do gcc -std=c11 -O2 -D_GNU_SOURCE -Itemplates -Iref -c ref/$f.c -o $B/$f.o; done
	gcc -std=c11 -O2 -D_GNU_SOURCE -Itemplates -Iref -c ref/recipe.c -o $B/recipe.o
	sh tests/gpu/gen_harness_ct.sh tests/gpu/harness_ct.list $B/harness_ct_inst.inc
	"$NVCC" -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -Itemplates -Iref -I$B \
		-Xptxas -warn-spills -c tests/gpu/harness_ct.cu -o $B/harness_ct.o
	"$NVCC" -gencode=arch=compute_90a,code=sm_90a $B/harness_ct.o $B/ref.o $B/gemm.o $B/parallel.o $B/recipe.o -o $B/harness_ct -lm -lpthread
	echo "== run"
} >"$LOG" 2>&1 || { cat "$LOG"; echo "run_ct.sh: build failed (log: $LOG)"; exit 2; }
t0=$(date +%s)
set +e
{ $B/harness_ct "$@"; echo $? >$B/rc; } 2>&1 | tee -a "$LOG"
set -e
rc=$(cat $B/rc)
echo "== harness exit $rc, $(( $(date +%s) - t0 )) s (log: $LOG)" | tee -a "$LOG"
exit "$rc"
