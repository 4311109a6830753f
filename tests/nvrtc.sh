#!/bin/sh
# nvrtc.sh: every example spec generates and NVRTC-compiles for sm_90a and
# sm_100a (no GPU needed), with no NVRTC warnings and no local-memory spills;
# a second build is all cache hits; a corrupted entry is rebuilt. `tegen build`
# plans each target as the runtime does on that GPU, so sm_100a builds the native
# MXFP8/NVFP4 GEMMs' kernels (scale swizzle, NVFP4 alpha) and sm_90a the emulated
# ones' dequantize kernels; the golden specs that target sm_100a alone
# (tests/gen/plan_*_native*.yaml) are built too.
cd "$(dirname "$0")/.." || exit 2
TEGEN=${TEGEN:-build/tegen}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for spec in specs/*.yaml tests/specs/*.yaml tests/gen/plan_*_native*.yaml; do
	[ -e "$spec" ] || continue
	name=$(basename "$spec" .yaml)
	out=$($TEGEN build "$spec" --arch sm_90a,sm_100a --cache-dir "$dir" 2>"$dir/err"); rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL nvrtc/$name: exit $rc"; sed 's/^/  /' "$dir/err" | head -30; continue
	fi
	if grep -q 'NVRTC warnings' "$dir/err"; then echo "FAIL nvrtc/$name: NVRTC warnings"; head -20 "$dir/err"; continue; fi
	if printf '%s\n' "$out" | tail -1 | grep -q SPILLS; then echo "FAIL nvrtc/$name: local-memory spills"; printf '%s\n' "$out"; continue; fi
	echo "ok nvrtc/$name ($(printf '%s\n' "$out" | tail -1))"
	again=$($TEGEN build "$spec" --arch sm_90a,sm_100a --cache-dir "$dir" -q 2>&1)
	case "$again" in
	*" 0 compiled"*) echo "ok cache-hits/$name" ;;
	*) echo "FAIL cache-hits/$name: second build recompiled: $again" ;;
	esac
done
# a truncated cubin is detected and rebuilt
spec=specs/llama3_8b_mlp.yaml
[ -f "$spec" ] || spec=$(ls specs/*.yaml | head -1)
cubin=$(find "$dir/v1" -name kernel.cubin | head -1)
if [ -n "$cubin" ]; then
	: >"$cubin"
	$TEGEN cache verify --cache-dir "$dir" >/dev/null 2>&1
	[ ! -s "$cubin" ] && [ ! -f "$cubin" ] && echo "ok cache-verify-removes-bad" || echo "FAIL cache-verify-removes-bad: $cubin still there"
	out=$($TEGEN build "$spec" --arch sm_90a,sm_100a --cache-dir "$dir" -q 2>&1) && echo "ok cache-rebuild-after-corruption" ||
		echo "FAIL cache-rebuild-after-corruption: $out"
fi
