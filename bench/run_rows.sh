#!/bin/sh
# run_rows.sh: build and run tests/gpu/harness_rows.cu (norm_quantize.cu and
# glu_amax.cu: correctness against ref/, then bandwidth). Every variant in the
# harness's table is compiled from the template with -D slots, in parallel.
# Log: ${OUT:-/tmp}/rows.log. Exit status: the harness's (1 = correctness failure).
# Usage: bench/run_rows.sh [--build-only] [--quick] [--only SUBSTR]
set -e
cd "$(dirname "$0")/.."
CUDA=${CUDA:-/usr/local/cuda}
NVCC="$CUDA/bin/nvcc"
ARCH="-gencode=arch=compute_90a,code=sm_90a"
B=build/harness
LOG=${OUT:-/tmp}/rows.log
mkdir -p "$B" "${OUT:-/tmp}"
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }

say "== build ($(date -u +%H:%M:%S)) =="
for f in ref gemm parallel; do gcc -O2 -std=c11 -D_GNU_SOURCE -Iref -Itemplates -c ref/$f.c -o $B/$f.o; done
gcc -O2 -std=c11 -D_GNU_SOURCE -Iref -Itemplates -c ref/recipe.c -o $B/recipe.o
# One line per variant: template name flags...
gcc -E -P -DTG_LIST -x c tests/gpu/harness_rows.cu | sed 's/@@/\n/g' | sed 's/^[[:space:]]*//; s/[[:space:]]*$//' | sed '/^$/d' > $B/variants.txt
NV=$(wc -l < $B/variants.txt)
say "variants: $NV"
JOBS=$(nproc 2>/dev/null || echo 8)
# compile each variant: templates/<tmpl> -> $B/<name>.o, ptxas report in $B/<name>.ptxas
export NVCC ARCH B
xargs -P "$JOBS" -L 1 sh -c '
  t=$0; n=$1; shift
  if ! "$NVCC" $ARCH -O3 -std=c++17 -Itemplates -Xptxas -v "$@" -x cu -c templates/$t -o $B/$n.o > $B/$n.ptxas 2>&1; then
    echo "COMPILE FAILED: $n"; cat $B/$n.ptxas; exit 255; fi' < $B/variants.txt 2>&1 | tee -a "$LOG"
OBJS=$(awk '{print "'$B'/" $2 ".o"}' $B/variants.txt)
for o in $OBJS; do [ -f "$o" ] || { say "missing $o"; exit 1; }; done
say "registers / spills per variant (ptxas):"
for n in $(awk '{print $2}' $B/variants.txt); do
  r=$(grep -o 'Used [0-9]* registers' $B/$n.ptxas | head -1)
  s=$(grep -o '[0-9]* bytes spill stores' $B/$n.ptxas | head -1)
  m=$(grep -o '[0-9]* bytes smem' $B/$n.ptxas | head -1)
  w=$(grep -ci warning $B/$n.ptxas || true)
  say "  $n: $r, $s, $m, warnings $w"
done
"$NVCC" $ARCH -O3 -std=c++17 -Itemplates -Iref -o $B/harness_rows tests/gpu/harness_rows.cu $OBJS $B/ref.o $B/gemm.o $B/parallel.o $B/recipe.o -lm -lpthread
say "built $B/harness_rows ($(date -u +%H:%M:%S))"
[ "${1:-}" = "--build-only" ] && exit 0
set +e
{ $B/harness_rows "$@"; echo $? > $B/rc; } 2>&1 | tee -a "$LOG"
rc=$(cat $B/rc)
say "harness exit status $rc (log: $LOG)"
exit "$rc"
