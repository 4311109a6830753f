#!/bin/sh
# samegen.sh: the before/after proof that a refactor leaves the generated code alone.
#
#   tools/samegen.sh snap TEGEN DIR [--cubin]   record what TEGEN generates into DIR
#   tools/samegen.sh diff DIR1 DIR2             compare two records; exit 0 when identical
#
# snap runs `tegen emit` and `tegen plan` on every spec of specs/, tests/gpu/specs, tests/gen
# and a fixed 300-case conformance sample (tests/conformance/gen.py --sample 300), keeping
# stdout, stderr and the exit code of each. With --cubin it also NVRTC-compiles every kernel
# (`tegen build --arch $ARCHS`, default sm_90a) into a fresh cache and records, per kernel
# name, the SHA-256 of its cubin: the proof for a change of template text, whose source
# (and so cache key) changes while the compiled code must not.
# Build the "before" binary from the old commit (e.g. in a scratch worktree), snap both, diff.
cd "$(dirname "$0")/.." || exit 2

snap() {
	tegen=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") dir=$2 cubin=$3
	mkdir -p "$dir/out" || exit 2
	python3 tests/conformance/gen.py --sample 300 --out "$dir/conf" >/dev/null 2>&1 ||
		{ echo "samegen: conformance sample failed" >&2; exit 1; }
	n=0
	for spec in specs/*.yaml tests/gpu/specs/*.yaml tests/gen/*.yaml "$dir"/conf/*.yaml; do
		case $spec in "$dir"/*) name=conf_$(basename "$spec" .yaml) ;;
		*) name=$(printf '%s' "${spec%.yaml}" | tr / _) ;; esac
		for verb in emit plan; do
			# the spec path appears in messages; write it the same way for both records
			(cd "$(dirname "$spec")" && "$tegen" $verb "$(basename "$spec")") \
				>"$dir/out/$name.$verb" 2>"$dir/out/$name.$verb.err"
			echo "exit $?" >>"$dir/out/$name.$verb.err"
		done
		if [ "$cubin" = --cubin ] && grep -q '^exit 0' "$dir/out/$name.emit.err"; then
			"$tegen" build "$spec" --arch "${ARCHS:-sm_90a}" --cache-dir "$dir/cache" -q \
				>/dev/null 2>>"$dir/build.err" || echo "build failed: $spec" >>"$dir/build.err"
		fi
		n=$((n + 1))
	done
	if [ "$cubin" = --cubin ]; then
		find "$dir/cache" -name meta.txt -exec awk '
			$1 == "name" { name = $2 } $1 == "arch" { arch = $2 }
			$1 == "cubin_sha256" { print name, arch, $2 }' {} \; | sort >"$dir/cubins.txt"
	fi
	echo "samegen: $n specs recorded in $dir$( [ -f "$dir/cubins.txt" ] &&
		echo ", $(wc -l <"$dir/cubins.txt") cubins")"
}

compare() {
	a=$1 b=$2 bad=0
	specs=$(ls "$a/out" | grep -c '\.emit$')
	kernels=$(cat "$a"/out/*.emit | grep -c '^// kernel ')
	if diff -r "$a/out" "$b/out" >/dev/null; then
		echo "same: emit+plan of $specs specs ($kernels kernels), stdout, stderr and exit codes"
	else
		echo "DIFFERENT: emit/plan output:"; diff -rq "$a/out" "$b/out" | head -20; bad=1
	fi
	if [ -f "$a/cubins.txt" ] && [ -f "$b/cubins.txt" ]; then
		if cmp -s "$a/cubins.txt" "$b/cubins.txt"; then
			echo "same: $(wc -l <"$a/cubins.txt") cubins byte for byte (SHA-256 per kernel name and arch)"
		else
			echo "DIFFERENT: cubins:"; diff "$a/cubins.txt" "$b/cubins.txt" | head -20; bad=1
		fi
	fi
	return $bad
}

case $1 in
snap) [ $# -ge 3 ] || exit 2; snap "$2" "$3" "$4" ;;
diff) [ $# -eq 3 ] || exit 2; compare "$2" "$3" ;;
*) sed -n '2,6p' "$0" >&2; exit 2 ;;
esac
