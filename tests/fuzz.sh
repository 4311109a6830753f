#!/bin/sh
# fuzz.sh: build the fuzz targets (libFuzzer, ASan, UBSan) and run each:
#   fuzz_spec  the front end: spec_load + ir_build (tests/fuzz/fuzz_spec.c)
#   fuzz_plan  spec + ir + plan + emit, every legal variant (tests/fuzz/fuzz_plan.c)
# Usage: tests/fuzz.sh [seconds [target...]]   (default 20 seconds each, both targets). Run from anywhere.
# Seeds: tests/gen/*.yaml, tests/specs/*.yaml and specs/*.yaml. Crashes land in build-fuzz/ (replay one:
# build-fuzz/fuzz_plan build-fuzz/crash-...). Without libFuzzer ($FUZZ_CC, default clang, lacks
# -fsanitize=fuzzer) each target is built with tests/fuzz/replay.c instead and replays the seeds once.
# Prints "ok NAME (N runs)" or "FAIL NAME" with the report tail, per target.
cd "$(dirname "$0")/.." || exit 1
secs=${1:-20}
[ $# -gt 0 ] && shift
targets=${*:-fuzz_spec fuzz_plan}
out=build-fuzz
mkdir -p $out/corpus
cc=${FUZZ_CC:-clang}
yaml_a=$(sed -n 's/^yaml_a = //p' config.ninja 2>/dev/null)
[ -n "$yaml_a" ] || yaml_a=/usr/lib/x86_64-linux-gnu/libyaml.a
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
# the embedded templates emit needs (the same tool and files as build.ninja's embed edge)
sh tools/embed.sh $out/templates_data.c templates/*.h templates/*.cu || { echo "FAIL fuzz (embed)"; exit 1; }
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' >$out/probe.c
if command -v "$cc" >/dev/null 2>&1 && $cc -fsanitize=fuzzer $out/probe.c -o $out/probe 2>/dev/null; then
	driver="-fsanitize=fuzzer"
else
	[ -n "${FUZZ_CC:-}" ] || cc=${CC:-cc}
	driver="tests/fuzz/replay.c"
fi
cp tests/gen/*.yaml tests/specs/*.yaml specs/*.yaml $out/corpus/ 2>/dev/null
# a dictionary of spec words helps reach deep states
{
	for w in layer dims recipe overrides tensors ops outputs targets shape dtype role dynamic \
		scaling format history amax_algo margin eps pow2 nvfp4_2d nvfp4_sr nvfp4_rht none delayed current \
		block1x128 block128x128 mxfp8 nvfp4 e4m3 e5m2 hybrid max most_recent bf16 fp16 fp32 fp8 e2m1 \
		activation weight gradient norm_quantize glu_amax gemm_cast cast_transpose quantize in gamma beta \
		residual residual_out a b bias out norm rmsnorm layernorm zero_centered_gamma act swiglu geglu \
		clamped_swiglu alpha limit pass fprop dgrad wgrad accumulate fast_accum epilogue gelu layout rowwise \
		columnwise precision sm_80 sm_89 sm_90a sm_100a true false dglu dnorm dbias grad rsigma mu \
		grad_residual d_gamma d_beta backward optimizer kind adamw lr betas weight_decay add main_grad grad_dtype; do
		echo "\"$w\""
	done
	printf '"%s"\n' ': ' '- ' '{' '}' '[' ']' '*' '/' '(' ')' '2*' '&a ' '*a' '---'
} >$out/spec.dict

fails=0
for t in $targets; do
	case $t in
	fuzz_spec) srcs="gen/spec.c gen/ir.c gen/derive.c gen/derive_optim.c gen/util.c" ;;
	fuzz_plan) srcs="gen/spec.c gen/ir.c gen/derive.c gen/layout.c gen/plan.c gen/plan_kernel.c gen/plan_launch.c gen/plan_gemm.c gen/plan_backward.c gen/emit.c gen/tune.c gen/util.c $out/templates_data.c" ;;
	*) echo "FAIL $t: unknown fuzz target"; fails=$((fails + 1)); continue ;;
	esac
	if ! $cc -std=c11 -D_GNU_SOURCE -g -O1 $driver $san -Igen -Itemplates tests/fuzz/$t.c $srcs $yaml_a \
		-o $out/$t 2>$out/$t.build.log; then
		echo "FAIL $t (build)"
		tail -20 $out/$t.build.log
		fails=$((fails + 1))
		continue
	fi
	if [ "$driver" = tests/fuzz/replay.c ]; then
		./$out/$t $out/corpus/* >$out/$t.log 2>&1
		rc=$?
		runs=$(sed -n 's/^replayed \([0-9]*\) inputs$/\1/p' $out/$t.log)
		note="; no libFuzzer in $cc: seeds replayed, no mutation"
	else
		./$out/$t -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -dict=$out/spec.dict \
			-artifact_prefix=$out/ $out/corpus >$out/$t.log 2>&1
		rc=$?
		runs=$(grep -o 'Done [0-9]* runs' $out/$t.log | grep -o '[0-9]*' | tail -1)
		note=
	fi
	if [ $rc = 0 ] && [ -n "$runs" ]; then
		echo "ok $t ($runs runs$note)"
	else
		echo "FAIL $t (exit $rc; log: $out/$t.log)"
		grep -A30 -m1 -e 'ERROR:' -e 'runtime error' -e 'deadly signal' $out/$t.log | head -40
		fails=$((fails + 1))
	fi
done
[ $fails = 0 ]
