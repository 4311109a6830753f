#!/bin/sh
# clock_probe.sh SPEC REGEX [TOKENS]: why a kernel runs slower in the layer than alone. Samples the SM clock, the
# throttle reasons (0x4: the software power cap) and the power every 10 ms during `tegen run SPEC`, then runs the
# kernels matching REGEX under ncu without clock or cache control, each launch's duration beside the SM clock it
# ran at (thirty-sixth session: the 1x128 block dglu's in-layer gap is the power cap's clocks after the GEMMs).
# Needs a GPU, ncu and nvidia-smi. Logs under ${OUT:-/tmp}.
set -u
cd "$(dirname "$0")/.."
spec=$1 re=$2 tok=${3:-8192}
O=${OUT:-/tmp}
n=$(basename "$spec" .yaml)
build/tegen run "$spec" --tokens "$tok" --iters 2 >/dev/null 2>&1 # compile first
nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active,power.draw --format=csv,noheader -lms 10 >"$O/clk_$n.csv" 2>&1 &
sp=$!
build/tegen run "$spec" --tokens "$tok" --iters 20 >"$O/run_$n.log" 2>&1
kill $sp
echo "== $n: SM clock, throttle reasons, power (50 W bins): samples"
awk -F, '{ split($3, a, " "); print $1 "," $2 ", " int(a[1] / 50) * 50 " W" }' "$O/clk_$n.csv" | sort | uniq -c | sort -rn | head -12
echo "== $n: launches of $re under ncu (no clock or cache control): duration, SM clock"
ncu --clock-control none --cache-control none --replay-mode application --kernel-name "regex:$re" --launch-count 30 \
	--metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second --csv \
	build/tegen run "$spec" --tokens "$tok" --iters 3 2>/dev/null |
	awk -F'","' '/gpu__time_duration.sum/ { d[$1] = $NF } /sm__cycles_elapsed.avg.per_second/ { c[$1] = $NF }
		END { for (k in d) { gsub(/[",]/, "", d[k]); gsub(/[",]/, "", c[k]); printf "%8.1f us at %6.0f MHz\n", d[k] / 1e3, c[k] / 1e6 } }' |
	sort -n
