#!/bin/sh
# tune.sh: tile-shape variants and the tuning DB (tests/unit/test_tune.c), and
# the CLI around them: `tegen plan` says "(heuristic)" without a DB and
# ignores a garbage one, every offered variant NVRTC-compiles, and `tegen tune`
# without a GPU exits 1 with "needs a GPU". Protocol: ok/FAIL/skip lines.
cd "$(dirname "$0")/.." || exit 2
TEGEN=${TEGEN:-build/tegen}
dir=$(mktemp -d) || exit 2
trap 'rm -rf "$dir"' EXIT
build/tests/test_tune
rc=$?
spec=specs/llama3_8b_mlp.yaml
out=$(TEGEN_CACHE_DIR="$dir" "$TEGEN" plan "$spec" 2>&1)
if printf '%s\n' "$out" | grep -q 'variant=t128v8r1 (heuristic)' && ! printf '%s\n' "$out" | grep -q '(tuned)'; then
	echo "ok tune/cli-plan-heuristic-without-db"
else
	echo "FAIL tune/cli-plan-heuristic-without-db: $out"; rc=1
fi
# a garbage DB changes nothing and breaks nothing
mkdir -p "$dir/tuning" && printf 'garbage\n\tmore\t\n' >"$dir/tuning/v1.txt"
out2=$("$TEGEN" plan "$spec" --tokens 4096 --cache-dir "$dir" 2>&1)
[ "$out2" = "$out" ] && echo "ok tune/cli-plan-garbage-db" || { echo "FAIL tune/cli-plan-garbage-db: $out2"; rc=1; }
"$TEGEN" tune "$spec" >/dev/null 2>&1
[ $? = 2 ] && echo "ok tune/cli-usage-needs-tokens" || { echo "FAIL tune/cli-usage-needs-tokens: not exit 2"; rc=1; }
"$TEGEN" tune "$spec" --tokens 0 >/dev/null 2>&1
[ $? = 2 ] && echo "ok tune/cli-usage-bad-tokens" || { echo "FAIL tune/cli-usage-bad-tokens: not exit 2"; rc=1; }
# every variant the tables offer compiles (NVRTC, no GPU): the tables match the templates' static_asserts
for s in tests/specs/llama3_8b_mlp_backward.yaml; do
	out=$("$TEGEN" tune "$s" --compile-only --arch sm_90a --cache-dir "$dir" 2>&1); trc=$?
	last=$(printf '%s\n' "$out" | tail -1)
	if [ $trc = 0 ]; then echo "ok tune/compile-all-variants/$(basename "$s" .yaml) ($last)"
	else echo "FAIL tune/compile-all-variants/$(basename "$s" .yaml): $last"; printf '%s\n' "$out" | grep -v ' ok ' | head -20; rc=1; fi
done
if [ ! -e /dev/nvidia0 ] && ! nvidia-smi -L >/dev/null 2>&1; then
	err=$("$TEGEN" tune "$spec" --tokens 1024 --cache-dir "$dir" 2>&1 >/dev/null); trc=$?
	case "$err" in
	"tegen tune: needs a GPU ("*")") [ $trc = 1 ] && echo "ok tune/cli-no-gpu" || { echo "FAIL tune/cli-no-gpu: exit $trc"; rc=1; } ;;
	*) echo "FAIL tune/cli-no-gpu: exit $trc: $err"; rc=1 ;;
	esac
else
	echo "skip tune/cli-no-gpu: a GPU is present"
fi
exit $rc
