#!/bin/sh
# run.sh: every test of tegen, from the repo root after `ninja`.
# Each part prints "ok NAME", "FAIL NAME: why" or "skip NAME: why" lines;
# this script counts them and ends with "N passed, N failed, N skipped".
# GPU tests report "skip ...: no GPU" on machines without one.
# Env: TEGEN_FUZZ_SECONDS (default 20), TEGEN_SKIP_ASAN=1 to skip the sanitizer build,
# TEGEN_CONFORMANCE_SAMPLE (default 64 generated specs).
cd "$(dirname "$0")/.." || exit 2
log=$(mktemp -d)/tests.log
: >"$log"
status=0

part() { # part NAME COMMAND...: run a part, echo its output, keep it for counting
	name=$1; shift
	echo "== $name"
	out=$("$@" 2>&1); rc=$?
	printf '%s\n' "$out" | tee -a "$log" | grep -E '^(FAIL|skip)' || true
	if [ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^FAIL'; then
		echo "FAIL $name: exited $rc" | tee -a "$log"
		printf '%s\n' "$out" | tail -20
	fi
	printf '%s\n' "$out" | grep -c '^ok ' | sed "s/^/   ok: /"
}

part formats build/tests/test_formats
part recipe build/tests/test_recipe
part ref build/tests/test_ref
part backward build/tests/test_backward
part optim build/tests/test_optim
part bwd-nvrtc build/tests/test_bwd_nvrtc
part cache build/tests/test_cache
part interp build/tests/test_interp
part ref-threads sh tests/ref_threads.sh # the reference's outputs on one thread and on every core: the same bytes
part numerics build/tests/test_numerics
part golden sh tests/golden.sh
part cli sh tests/cli.sh
part nvrtc sh tests/nvrtc.sh
part harness-slots sh tests/harness_slots.sh
part tune sh tests/tune.sh
part gemm build/tests/test_gemm --no-bench
part gpu build/tests/test_gpu
part conf13 sh tests/gpu/conf13/run.sh
part numerics-gpu sh tests/gpu/numerics_gpu.sh
part bench build/tests/test_bench
part bench-report build/tests/test_bench_report
part abi sh tests/abi.sh
part nccl build/tests/test_nccl
part nccl-real build/tests/test_nccl --real
# one amax across ranks: a one-rank NCCL communicator gives the same bits (GPU and NCCL, else skips)
part nccl-gpu sh tests/gpu/nccl.sh
# examples/host needs a GPU; without one it says why and exits 1: a skip, not a failure
example() {
	[ -x build/examples/host ] || { echo "FAIL example: build/examples/host is missing (run ninja)"; return 1; }
	if ! why=$(build/examples/host --check-gpu 2>&1); then
		echo "skip example: no GPU (${why#host: no GPU: })"
		return 0
	fi
	build/examples/host && echo "ok example/host"
}
part example example
# examples/train.c: its selftest and generated specs (CPU); a short training run (GPU, else a skip)
part train sh tests/train.sh
# the conformance generator's CPU half: a fixed sample of generated specs must check, plan and
# NVRTC-compile (spilling only as tests/conformance/spills.expected allows), or be rejected by check on purpose
# (tests/conformance/gen.py; the GPU half: --gpu)
conformance() {
	command -v python3 >/dev/null || { echo "skip conformance: no python3"; return 0; }
	python3 tests/conformance/gen.py --cpu --sample "${TEGEN_CONFORMANCE_SAMPLE:-64}" \
		--spills-expected tests/conformance/spills.expected || return 1
	# a filtered sample draws as many cases as asked (it once gave up after cells that never match)
	d=$(mktemp -d)
	python3 tests/conformance/gen.py --filter '^norm\..*block1x128.*\.both\.' --sample 40 --seed 1416 --out "$d" >/dev/null
	n=$(($(wc -l <"$d/cases.tsv") - 1))
	rm -rf "$d"
	[ "$n" = 40 ] && echo "ok conformance/filtered-sample (40 cases)" || { echo "FAIL conformance/filtered-sample: $n of 40 cases"; return 1; }
}
part conformance conformance
# the derived backward of layers whose tensors are read by several ops (fan-outs, add, a residual norm beside a
# GEMM) against finite differences of their forward, through the CPU reference
derive_check() {
	command -v python3 >/dev/null || { echo "skip derive: no python3"; return 0; }
	python3 tests/derive_check.py
}
part derive derive_check
# the Python package (python/tegen) without a GPU or torch: imports, finds libtegen.so, maps types
python_cpu() {
	command -v python3 >/dev/null || { echo "skip python: no python3"; return 0; }
	python3 python/tests/test_cpu.py; rc=$?
	python3 python/tests/test_torch_cpu.py || rc=1 # tegen.torch's autograd plumbing on a fake layer; skips without torch
	return $rc
}
part python python_cpu
part fuzz sh tests/fuzz.sh "${TEGEN_FUZZ_SECONDS:-20}"
[ "${TEGEN_SKIP_ASAN:-0}" = 1 ] || part asan sh tests/asan.sh

passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^FAIL' "$log")
skipped=$(grep -c '^skip ' "$log")
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
