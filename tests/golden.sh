#!/bin/sh
# golden.sh: golden tests for the generator (run from the repo root).
#   tests/gen/NAME.yaml with NAME.ir   -> `tegen ir` stdout must match, exit 0
#                          NAME.err    -> stderr must match, exit 1
#                          NAME.plan   -> `tegen plan` stdout must match
#                          NAME.cu     -> `tegen emit` stdout must match
#                          NAME.numerics -> `tegen numerics --recipes all --tokens 32 --inputs outliers` stdout
# and every specs/*.yaml and tests/specs/*.yaml must pass `tegen check`.
# Usage: tests/golden.sh [--update]   ($TEGEN: the binary, default build/tegen)
# Prints one line per case: "ok gen/NAME.ir" or "FAIL gen/NAME.err" and a diff.
tegen=${TEGEN:-build/tegen}
update=0
[ "${1:-}" = --update ] && update=1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
pass=0

# check_case KIND FILE EXPECTED CMD...: run CMD, compare stdout (or stderr for .err)
check_case() {
	kind=$1 yaml=$2 want=$3
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	name=${want#tests/}
	if [ "$kind" = err ]; then got=$tmp/err; wantrc=1; else got=$tmp/out; wantrc=0; fi
	if [ $update = 1 ]; then
		cp "$got" "$want"
		[ $rc = $wantrc ] || { echo "FAIL $name (exit $rc, want $wantrc; updated anyway)"; fails=$((fails + 1)); return; }
		echo "ok $name (updated)"
		pass=$((pass + 1))
		return
	fi
	if [ $rc != $wantrc ]; then
		echo "FAIL $name (exit $rc, want $wantrc)"
		sed 's/^/  /' "$tmp/err" | head -20
		fails=$((fails + 1))
	elif ! cmp -s "$want" "$got"; then
		echo "FAIL $name"
		diff -u "$want" "$got" | head -40
		fails=$((fails + 1))
	else
		echo "ok $name"
		pass=$((pass + 1))
	fi
}

for yaml in tests/gen/*.yaml; do
	[ -e "$yaml" ] || continue
	base=${yaml%.yaml}
	found=0
	[ -e "$base.ir" ] && { check_case ir "$yaml" "$base.ir" "$tegen" ir "$yaml"; found=1; }
	[ -e "$base.err" ] && { check_case err "$yaml" "$base.err" "$tegen" ir "$yaml"; found=1; }
	[ -e "$base.plan" ] && { check_case plan "$yaml" "$base.plan" "$tegen" plan "$yaml"; found=1; }
	[ -e "$base.cu" ] && { check_case cu "$yaml" "$base.cu" "$tegen" emit "$yaml"; found=1; }
	[ -e "$base.numerics" ] && { check_case numerics "$yaml" "$base.numerics" "$tegen" numerics "$yaml" --recipes all \
		--tokens 32 --inputs outliers; found=1; }
	if [ $found = 0 ]; then
		echo "FAIL ${yaml#tests/}: no expected file (.ir, .err, .plan, .cu or .numerics); create one, then run with --update"
		fails=$((fails + 1))
	fi
done

for spec in specs/*.yaml tests/specs/*.yaml; do
	[ -e "$spec" ] || continue
	if out=$("$tegen" check "$spec" 2>&1); then
		echo "ok $spec"
		pass=$((pass + 1))
	else
		echo "FAIL $spec"
		echo "$out" | sed 's/^/  /'
		fails=$((fails + 1))
	fi
done

echo "golden: $pass passed, $fails failed"
[ $fails = 0 ]
