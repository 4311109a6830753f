#!/bin/sh
# conf13/run.sh: the issue-13 regression specs through `tegen run --check` at odd token counts.
# Usage (repo root, after ninja): sh tests/gpu/conf13/run.sh [LOG]
log=${1:-/dev/null}
dir=$(dirname "$0")
fails=0
if ! why=$(build/examples/host --check-gpu 2>&1); then
	echo "skip conf13: no GPU (${why#host: no GPU: })"
	exit 0
fi
for spec in "$dir"/*.yaml; do
	for t in 1 5 48 217 993; do
		n=$(basename "$spec" .yaml)
		if out=$(build/tegen run "$spec" --tokens $t --check --iters 1 2>&1); then
			echo "ok conf13/$n/$t"
		else
			echo "FAIL conf13/$n/$t: $(printf '%s\n' "$out" | grep -m3 -E 'FAIL|error' | tr '\n' ' ')"; fails=$((fails+1))
		fi
		printf '%s\n' "$out" >>"$log.detail" 2>/dev/null || true
	done
done
# NVFP4 blocks whose E4M3 scale rounds to zero (crafted input): GPU == reference bit for bit
d=$(mktemp -d)
python3 "$dir/nvfp4_tiny_blocks.py" "$d" 5 256
if out=$(build/tegen run "$dir/nvfp4_zero_scale.yaml" --tokens 5 --check --iters 1 --in "$d" 2>&1); then
	echo "ok conf13/nvfp4_zero_scale/crafted"
else
	echo "FAIL conf13/nvfp4_zero_scale/crafted: $(printf '%s\n' "$out" | grep -m3 FAIL | tr '\n' ' ')"; fails=$((fails+1))
fi
rm -rf "$d"
[ $fails = 0 ]
