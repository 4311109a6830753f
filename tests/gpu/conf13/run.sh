#!/bin/sh
# conf13/run.sh: the issue-13 regression specs through `tegen run --check` at odd token counts.
# Usage (repo root, after ninja): sh tests/gpu/conf13/run.sh [LOG]
log=${1:-/dev/stdout}
dir=$(dirname "$0")
fails=0
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
[ $fails = 0 ]
