#!/bin/sh
# nccl_2gpu.sh: the two-GPU proof of tg_layer_set_comm (needs 2 GPUs of one host and NCCL):
# two processes, one per GPU, each with half of the tokens, the NCCL id shared through a file.
# Each rank checks that its rowwise outputs equal its rows of a whole-batch run without a
# communicator, and its recipe state (scales, scale_inv, amaxes) that run's state, bit for bit:
# so the ranks agree with each other and with one GPU that saw every token. Then the cost of the
# reduction: `tegen run` times are not per rank, so it prints nccl_amax's own timing lines.
# Usage: sh bench/nccl_2gpu.sh [TOKENS]   (logs in ${OUT:-/tmp})
cd "$(dirname "$0")/.." || exit 2
t=${1:-4096}
O=${OUT:-/tmp}
id=$O/nccl_id.$$
rm -f "$id"
fails=0
for spec in ops_delayed ops_current ops_nvfp4; do
	# stochastic rounding draws its random bits from the element's index in the copy, which differs between a
	# rank's rows and the same rows of the whole batch, so the SR copies are made round-to-nearest here
	sed -e 's/@H@/4096/g' -e 's/nvfp4_sr: true/nvfp4_sr: false/g' tests/gpu/specs/$spec.yaml >"$O/$spec.yaml"
	rm -f "$id"
	CUDA_VISIBLE_DEVICES=0 build/examples/nccl_amax "$O/$spec.yaml" --tokens "$t" --rank 0 --nranks 2 --id "$id" >"$O/nccl_r0_$spec.log" 2>&1 &
	p0=$!
	CUDA_VISIBLE_DEVICES=1 build/examples/nccl_amax "$O/$spec.yaml" --tokens "$t" --rank 1 --nranks 2 --id "$id" >"$O/nccl_r1_$spec.log" 2>&1
	r1=$?
	wait $p0
	r0=$?
	cat "$O/nccl_r0_$spec.log" "$O/nccl_r1_$spec.log" | sed "s|^|$spec: |"
	[ $r0 = 0 ] && [ $r1 = 0 ] || fails=$((fails + 1))
done
rm -f "$id"
echo "nccl_2gpu: $fails failed"
[ $fails = 0 ]
