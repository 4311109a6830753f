#!/bin/sh
# tune_sweep.sh: `tegen tune` over hidden sizes x token counts (issue 7: no shape
# more than 10% under the best variant found for it). For each hidden size H,
# bench/sweep.yaml (RMSNorm+FP8, SwiGLU+FP8, cast+transpose FP8 and MXFP8) is
# tuned at every token count; the table lists, per kernel and token bucket, how
# much faster tune's best variant is than the heuristic's (1.00 = the heuristic
# was best), then bench/sweep_best.py: the variants with the least worst case.
# Needs a GPU. Usage: [SPEC=bench/sweep_norms.yaml] bench/tune_sweep.sh [H,...] [TOKENS,...]
set -u
cd "$(dirname "$0")/.."
HS=$(echo "${1:-1024,2048,4096,8192,14336,16384}" | tr , ' ')
TOKS=${2:-1,16,256,4096,65536}
O=${OUT:-/tmp}
CACHE=${TEGEN_CACHE_DIR:-/tmp/tegen-sweep}
log=$O/tune_sweep.log
: >"$log"
printf '%-7s %-22s %-9s %s\n' H kernel tokens "best/heuristic speed"
for h in $HS; do
	spec=/tmp/sweep_h$h.yaml
	sed "s/@H@/$h/g" "${SPEC:-bench/sweep.yaml}" >"$spec"
	echo "== H=$h" >>"$log"
	build/tegen tune "$spec" --tokens "$TOKS" --iters 20 --cache-dir "$CACHE" >>"$log" 2>/dev/null || echo "tune failed for H=$h (see $log)"
	# "NAME VARIANT BUCKET US GBS ..." rows then "NAME best V: R.RRx the heuristic's speed"
	awk -v h="$h" '/^== H=/ { on = ($2 == "H=" h) } on && $3 ~ /^[0-9]+$/ { bucket[$1] = $3 }
		on && /the heuristic.s speed/ { r = $4; sub(/x$/, "", r); printf "%-7s %-22s %-9s %s (%s)\n", h, $1, bucket[$1], r, $3 }' "$log"
done
awk '/the heuristic.s speed/ { r = $4; sub(/x$/, "", r); if (r + 0 > m) m = r + 0; n++ } END { printf "worst: best variant %.2fx the heuristic over %d kernel x shape cases (bar: <= 1.11)\n", m, n }' "$log"
# each kernel's variants by their worst case over the token counts, per hidden size (what a row table would pick)
command -v python3 >/dev/null && python3 bench/sweep_best.py "$log" --top 2
