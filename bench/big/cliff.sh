#!/bin/sh
# cliff.sh: the transposing casts past 2^31 elements against their grid cap (bench/RESULTS.md, thirty-eighth session:
# 47-56% of a copy, the NVFP4 strip casts 15%). The guess to test: a capped grid that grid-strides over many tiles a CTA
# spreads the resident CTAs' tiles over the whole tensor. Each spec at 65552 tokens with the planner's caps, then
# TEGEN_GRID_CAP=1024 (about a CTA a tile) and 8 (one wave of CTAs); the 8B NVFP4 layer beside them (d_h: 6.8 strips
# a CTA at the default cap). From the repo root on a GPU machine with build/ built; about 3 minutes.
for cap in default 1024 8; do
	set -- ${cap#default}
	for s in bench/big/big_casts.yaml bench/big/big_mx.yaml; do
		echo "== $s cap=$cap"
		env ${1:+TEGEN_GRID_CAP=$1} build/tegen run "$s" --tokens 65552 --iters 3 | grep -E '^k[0-9]'
	done
	echo "== 8B NVFP4 layer cap=$cap"
	env ${1:+TEGEN_GRID_CAP=$1} build/tegen run specs/llama3_8b_mlp_train_nvfp4.yaml --tokens 8192 --iters 10 |
		grep -E 'nvfp4_cast|whole layer  '
done
