#!/bin/sh
# gpu_session.sh: everything one device call runs, prebuilt binaries carried in build/.
# Correctness first (GPU tests, GEMM tests), then the kernel harnesses (correctness
# and bandwidth), then tegen end to end and the PyTorch anchors, side by side.
# Logs under $OUT (at most 8 files); a short summary is printed last.
# Usage: bench/gpu_session.sh [STAGE...]  (stages: gpu gemm ct rows run anchors; default all; also: genbench rowsq
# anchors2 bench tune sweep sweep1 nvfp4 specs example gemmdisk npy jit sanitize conf13 conformance bwd
# train anchors3 gemmtune python)
# conformance: CONF_N cases of tests/conformance/gen.py (default 800), then SAN_N (default 30) under
# compute-sanitizer memcheck and racecheck.
O=${OUT:-/tmp/tegen-out}
mkdir -p "$O"
export PYTHONUNBUFFERED=1 TEGEN_CACHE_DIR=/tmp/tegen-cache PATH="$PATH:/usr/local/cuda/bin"
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
	genbench) # the generated GEMM's variants beside cuBLASLt (per-tensor, promoting, block-scaled rows)
		stage gen-bench 150 "$O/genbench.log" build/tests/test_gemm --gen-bench
		grep -E 'promo|fast' "$O/genbench.log" >>"$sum" ;;
	ct) stage harness_ct 150 "$O/harness.log" build/harness/harness_ct ;;
	rows) stage harness_rows 280 "$O/harness.log" build/harness/harness_rows ;;
	rowsq) stage harness_rows_quick 200 "$O/harness.log" build/harness/harness_rows --quick ;;
	run)
		for spec in specs/llama3_8b_mlp.yaml; do
			stage "run-check $spec" 120 "$O/run.log" build/tegen run "$spec" --tokens 64 --check --iters 3; stage "run-time $spec" 120 "$O/run.log" build/tegen run "$spec" --tokens 8192 --iters 20
		done ;;
	anchors) stage anchors 150 "$O/anchors.log" python3 bench/anchors/torch_anchors.py ;;
	anchors2) stage anchors2 200 "$O/anchors.log" python3 bench/anchors/torch_anchors2.py ;;
	bench) # tegen bench and its PyTorch cross-check, Llama-3 8B (bench/README.md); not in the default list
		m="--hidden 4096 --ffn 14336 --heads 32 --kv-heads 8 --layers 32 --micro-batch 2 --seq 4096"
		stage tegen-bench 240 "$O/bench.log" build/tegen bench $m --csv "$O/tegen_bench.csv" --chart "$O/tegen_bench.svg"
		stage torch-bench 240 "$O/bench.log" python3 bench/bench_torch.py $m --csv "$O/torch_bench.csv" ;;
	tune) # tune the Llama-3 8B MLP, then time it tuned vs heuristic (no DB) side by side
		stage tune 420 "$O/tune.log" build/tegen tune specs/llama3_8b_mlp.yaml --tokens 8192,16384
		stage run-tuned 60 "$O/tune.log" build/tegen run specs/llama3_8b_mlp.yaml --tokens 16384 --iters 20
		stage run-heuristic 60 "$O/tune.log" env TEGEN_CACHE_DIR=/tmp/tegen-empty build/tegen run specs/llama3_8b_mlp.yaml --tokens 16384 --iters 20 ;;
	sweep) stage tune-sweep 540 "$O/sweep.log" sh bench/tune_sweep.sh ;;
	sweep1) stage tune-sweep-14336 200 "$O/sweep.log" sh bench/tune_sweep.sh 14336 4096,65536 ;;
	nvfp4) # the NVFP4 layer: check at odd and full token counts, then kernel times at 8192 tokens
		for t in 5 64; do stage "run-check nvfp4 $t" 120 "$O/run.log" build/tegen run specs/llama3_8b_mlp_nvfp4.yaml --tokens $t --check --iters 3; done
		stage "run-time nvfp4" 120 "$O/run.log" build/tegen run specs/llama3_8b_mlp_nvfp4.yaml --tokens 8192 --iters 20
		for t in 5 64; do stage "run-check nvfp4-bwd $t" 120 "$O/run.log" build/tegen run tests/specs/llama3_8b_mlp_backward_nvfp4.yaml --tokens $t --check --iters 3; done
		stage "run-time nvfp4-bwd" 120 "$O/run.log" build/tegen run tests/specs/llama3_8b_mlp_backward_nvfp4.yaml --tokens 8192 --iters 20 ;;
	example) stage example 60 "$O/run.log" build/examples/host ;;
	gemmdisk) # the chosen GEMM algorithms are recorded on disk and reused by a second process
		rm -f /tmp/tegen-cache/tuning/gemm-v1.txt
		stage gemm-algos-1 60 "$O/run.log" build/tegen run specs/llama3_8b_mlp.yaml --tokens 256 --iters 2
		stage gemm-algos-2 60 "$O/run.log" build/tegen run specs/llama3_8b_mlp.yaml --tokens 256 --iters 2
		echo "gemm-v1.txt lines: $(wc -l < /tmp/tegen-cache/tuning/gemm-v1.txt 2>/dev/null)" >>"$sum" ;;
	npy) stage torch-crosscheck 120 "$O/run.log" python3 bench/torch_crosscheck.py ;;
	jit) # cold compile on this host's cores, then a warm start from the disk cache in a new process
		rm -rf /tmp/tegen-jit
		for i in 1 2; do stage "jit-$i" 60 "$O/run.log" build/tegen build specs/llama3_8b_mlp.yaml --cache-dir /tmp/tegen-jit; done ;;
	sanitize)
		S=/usr/local/cuda/bin/compute-sanitizer
		stage memcheck 200 "$O/sanitize.log" $S --tool memcheck --error-exitcode 9 build/tests/test_gpu tests/gpu/sanitize
		stage racecheck 200 "$O/sanitize.log" $S --tool racecheck --error-exitcode 9 build/tests/test_gpu tests/gpu/sanitize ;;
	conf13) stage conf13 150 "$O/conf13.log" sh tests/gpu/conf13/run.sh ;;
	python) # the Python package: CPU tests, the GPU test (MLP fwd/bwd vs PyTorch, graph, compile), the example,
		# then the 8192-token timing table vs torch.compile BF16 and torch._scaled_mm FP8
		stage python-cpu 60 "$O/python.log" python3 python/tests/test_cpu.py
		stage python-torch-cpu 60 "$O/python.log" python3 python/tests/test_torch_cpu.py
		stage python-gpu 240 "$O/python.log" python3 python/tests/test_gpu.py
		stage python-example 120 "$O/python.log" python3 python/examples/mlp.py
		stage python-bench 300 "$O/python_bench.log" python3 bench/python_bench.py
		tail -8 "$O/python_bench.log" >>"$sum" ;;
	conformance)
		stage conformance 300 "$O/conformance.log" python3 tests/conformance/gen.py --gpu --sample "${CONF_N:-800}" --out /tmp/confout
		grep -A12 '^matrix' "$O/conformance.log" >>"$sum"
		for tool in memcheck racecheck; do
			stage "$tool-conformance" 150 "$O/sanitize.log" python3 tests/conformance/gen.py --gpu \
				--sample "${SAN_N:-30}" --jobs 4 --sanitizer $tool --time-limit 120
		done ;;
	bwd) # the backward kernels against ref/backward.c; a harness built beforehand (run_bwd.sh --build-only) is reused
		if [ -x build/harness/harness_bwd ]; then stage harness_bwd 200 "$O/bwd.log" build/harness/harness_bwd --no-bench
		else stage harness_bwd 300 "$O/bwd.log" sh bench/run_bwd.sh --no-bench; fi ;;
	train) # the wired backward ops and the derived training layers on the GPU (session 5)
		mkdir -p /tmp/bwd && cp tests/gpu/specs/bwd_*.yaml /tmp/bwd
		stage test_gpu-bwd 200 "$O/train.log" build/tests/test_gpu /tmp/bwd
		for t in 1 5 217 1024; do
			stage "run-check train $t" 90 "$O/train.log" build/tegen run specs/llama3_8b_mlp_train.yaml --tokens $t --check --iters 2
		done
		stage "run-check train_bwd 217" 90 "$O/train.log" build/tegen run tests/gen/plan_train_bwd_by_hand.yaml --tokens 217 --check --iters 2
		stage "run-time train 8192" 90 "$O/train.log" build/tegen run specs/llama3_8b_mlp_train.yaml --tokens 8192 --iters 20
		stage conformance-bwd 200 "$O/train.log" python3 tests/conformance/gen.py --gpu --sample "${CONF_N:-60}" --filter '^(dglu|dnorm|dbias)\.' --out /tmp/confbwd
		grep -A12 '^matrix' "$O/train.log" >>"$sum" ;;
	anchors3) stage anchors3 200 "$O/anchors.log" python3 bench/anchors/torch_anchors3.py ;;
	gemmtune) stage test_gemm-tuned 120 "$O/gemm.log" env TEGEN_GEMM_TUNE=1 build/tests/test_gemm ;;
	specs)
		for spec in specs/*.yaml; do
			stage "run-check $spec" 100 "$O/run.log" build/tegen run "$spec" --tokens 16 --check --iters 3
		done ;;
	esac
done
cat "$sum"
echo "--- FAIL lines (first 40)"
grep -h '^FAIL' "$O"/*.log | head -40
