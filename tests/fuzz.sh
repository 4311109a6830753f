#!/bin/sh
# fuzz.sh: build the spec fuzzer (libFuzzer, ASan, UBSan) and run it.
# Usage: tests/fuzz.sh [seconds]   (default 20). Run from anywhere.
# Seeds: tests/gen/*.yaml and specs/*.yaml. Crashes land in build-fuzz/.
# Prints "ok fuzz_spec (N runs)" or "FAIL fuzz_spec" with the report tail.
cd "$(dirname "$0")/.." || exit 1
secs=${1:-20}
out=build-fuzz
mkdir -p $out/corpus
cc=${FUZZ_CC:-clang}
yaml_a=/usr/lib/x86_64-linux-gnu/libyaml.a
if ! $cc -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Igen tests/fuzz/fuzz_spec.c gen/spec.c gen/ir.c gen/derive.c gen/util.c $yaml_a -o $out/fuzz_spec 2>$out/build.log; then
	echo "FAIL fuzz_spec (build)"
	tail -20 $out/build.log
	exit 1
fi
cp tests/gen/*.yaml specs/*.yaml $out/corpus/ 2>/dev/null
# a dictionary of spec words helps reach deep states
{
	for w in layer dims recipe overrides tensors ops outputs targets shape dtype role dynamic \
		scaling format history amax_algo margin eps pow2 nvfp4_2d nvfp4_sr nvfp4_rht none delayed current \
		block1x128 block128x128 mxfp8 nvfp4 e4m3 e5m2 hybrid max most_recent bf16 fp16 fp32 fp8 e2m1 \
		activation weight gradient norm_quantize glu_amax gemm_cast cast_transpose quantize in gamma beta \
		residual residual_out a b bias out norm rmsnorm layernorm zero_centered_gamma act swiglu geglu \
		clamped_swiglu alpha limit pass fprop dgrad wgrad accumulate fast_accum epilogue gelu layout rowwise \
		columnwise precision sm_80 sm_89 sm_90a sm_100a true false dglu dnorm dbias grad rsigma mu \
		grad_residual d_gamma d_beta backward; do
		echo "\"$w\""
	done
	printf '"%s"\n' ': ' '- ' '{' '}' '[' ']' '*' '/' '(' ')' '2*' '&a ' '*a' '---'
} >$out/spec.dict
./$out/fuzz_spec -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -dict=$out/spec.dict \
	-artifact_prefix=$out/ $out/corpus >$out/fuzz.log 2>&1
rc=$?
runs=$(grep -o 'Done [0-9]* runs' $out/fuzz.log | grep -o '[0-9]*' | tail -1)
if [ $rc = 0 ] && [ -n "$runs" ]; then
	echo "ok fuzz_spec ($runs runs)"
else
	echo "FAIL fuzz_spec (exit $rc)"
	grep -A30 -m1 -e 'ERROR:' -e 'runtime error' -e 'deadly signal' $out/fuzz.log | head -40
	exit 1
fi
