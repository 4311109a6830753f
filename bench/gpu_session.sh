#!/bin/sh
# gpu_session.sh: everything one device call runs, prebuilt binaries carried in build/.
# Correctness first (GPU tests, GEMM tests), then the kernel harnesses (correctness
# and bandwidth), then tegen end to end and the PyTorch anchors, side by side.
# Logs under $OUT (at most 8 files); a short summary is printed last.
# Usage: bench/gpu_session.sh [STAGE...]  (stages: gpu gemm ct rows run anchors; default all)
O=${OUT:-/tmp/tegen-out}
mkdir -p "$O"
export PYTHONUNBUFFERED=1 TEGEN_CACHE_DIR=/tmp/tegen-cache
stages=${*:-gpu gemm ct rows run anchors}
sum=$O/summary.txt
: >"$sum"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader >>"$sum" 2>&1
stage() { # stage NAME TIMEOUT LOG CMD...
	n=$1 t=$2 log=$3; shift 3
	s=$(date +%s)
	timeout "$t" "$@" >>"$log" 2>&1
	rc=$?
	echo "$n: rc=$rc $(( $(date +%s) - s ))s ok=$(grep -c '^ok ' "$log") FAIL=$(grep -c '^FAIL' "$log")" >>"$sum"
}
for st in $stages; do
	case $st in
	gpu) stage test_gpu 240 "$O/test_gpu.log" build/tests/test_gpu ;;
	gemm) stage test_gemm 150 "$O/gemm.log" build/tests/test_gemm ;;
	ct) stage harness_ct 150 "$O/harness.log" build/harness/harness_ct ;;
	rows) stage harness_rows 150 "$O/harness.log" build/harness/harness_rows ;;
	run)
		for spec in specs/llama3_8b_mlp.yaml; do
			stage "run-check $spec" 120 "$O/run.log" build/tegen run "$spec" --tokens 64 --check --iters 3; stage "run-time $spec" 120 "$O/run.log" build/tegen run "$spec" --tokens 8192 --iters 20
		done ;;
	anchors) stage anchors 150 "$O/anchors.log" python3 bench/anchors/torch_anchors.py ;;
	esac
done
cat "$sum"
echo "--- FAIL lines (first 40)"
grep -h '^FAIL' "$O"/*.log | head -40
