#!/bin/sh
# nccl.sh: the amax reduction through NCCL on one GPU: examples/nccl_amax runs each layer without a
# communicator and with a one-rank one (TG_REDUCE_ALL: the delayed amaxes in tg_step, the current-
# scaling and NVFP4 amaxes between their amax and cast passes); outputs and recipe state must be the
# same bits. Skips without a GPU or without NCCL. The two-GPU proof: bench/nccl_2gpu.sh.
# Usage (repo root, after ninja): sh tests/gpu/nccl.sh
x=build/examples/nccl_amax
[ -x $x ] || { echo "FAIL nccl-gpu: $x is missing (run ninja)"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fails=0
for spec in ops_delayed ops_current ops_nvfp4 gemm_delayed gemm_nvfp4; do
	sed 's/@H@/256/g' tests/gpu/specs/$spec.yaml >"$d/$spec.yaml"
	for t in 5 256; do
		out=$($x "$d/$spec.yaml" --tokens $t 2>&1)
		rc=$?
		case $out in
		skip*) echo "$out" | head -1; exit 0 ;;
		esac
		printf '%s\n' "$out" | sed "s|^\(ok\|FAIL\) nccl/|\1 nccl/$spec/t$t/|"
		[ $rc = 0 ] || fails=$((fails + 1))
	done
done
[ $fails = 0 ]
