#!/bin/sh
# sanitize_conf.sh: compute-sanitizer (memcheck, then racecheck) over conformance cases.
# Usage (repo root, after ninja, on a GPU machine):
#   sh tests/gpu/sanitize_conf.sh DIR [N]
# DIR holds the specs and cases.tsv of `tests/conformance/gen.py --out DIR`; the first N
# (default 40) cases that `tegen check` accepts run through `tegen run --check` under each
# tool. Prints ok/FAIL lines per case and tool.
dir=$1 n=${2:-40}
S=${SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
[ -x "$S" ] || { echo "skip sanitize: no compute-sanitizer at $S"; exit 0; }
fails=0
awk -F'\t' 'NR > 1 && $12 == "" { print $13, $10, $1 }' "$dir/cases.tsv" | head -n "$n" > /tmp/sanitize_cases.txt
for tool in memcheck racecheck; do
	while read -r spec tokens name; do
		if out=$("$S" --tool $tool --error-exitcode 9 build/tegen run "$dir/$spec" --tokens "$tokens" --check --iters 1 2>&1); then
			echo "ok $tool/$name"
		else
			echo "FAIL $tool/$name: $(printf '%s\n' "$out" | grep -m3 -E 'ERROR|Invalid|FAIL|Race|error' | tr '\n' ' ' | cut -c1-300)"
			fails=$((fails + 1))
		fi
	done < /tmp/sanitize_cases.txt
done
[ $fails = 0 ]
