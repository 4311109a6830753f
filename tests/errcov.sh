#!/bin/sh
# errcov.sh: lists diagnostic messages in gen/spec.c, gen/ir.c and gen/derive.c that no
# tests/gen/*.err golden file exercises. Each message's fixed text up to its
# first format directive is the pattern looked for. Exit 1 if any is uncovered.
cd "$(dirname "$0")/.." || exit 1
missing=0
total=0
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
# one message per line: the format string of diag_error/ex_error calls
for f in gen/spec.c gen/ir.c gen/derive.c; do
	awk '/(diag_error|ex_error)\(/ { buf = "" ; collecting = 1 }
	     collecting { buf = buf $0 }
	     collecting && /;[ \t]*$/ { if (match(buf, /"([^"\\]|\\.)*"/)) print substr(buf, RSTART + 1, RLENGTH - 2); collecting = 0 }' "$f"
done | grep -v '^%s$' | sort -u |
	# not reachable from a spec: libyaml allocation failures
	grep -v -e '^yaml: cannot initialize the parser$' -e '^yaml: out of memory$' >"$tmp"
cat tests/gen/*.err >"$tmp.all" 2>/dev/null
while IFS= read -r msg; do
	total=$((total + 1))
	# the longest literal run before or between directives
	key=$(printf '%s\n' "$msg" | sed 's/%[-0-9.]*l*[sdgcux]/\n/g' | awk '{ if (length($0) > length(best)) best = $0 } END { print best }')
	if ! grep -qF -- "$key" "$tmp.all"; then
		echo "uncovered: $msg"
		missing=$((missing + 1))
	fi
done <"$tmp"
rm -f "$tmp.all"
echo "errcov: $((total - missing)) of $total messages covered"
[ $missing = 0 ]
