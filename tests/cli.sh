#!/bin/sh
# cli.sh: the command line on hostile arguments and damaged caches (no GPU needed).
# Each case runs tegen, checks its exit status (0 ok, 1 error, 2 usage) and that
# stderr says why; every run is bounded by a timeout, so a hang is a failure.
# Usage: tests/cli.sh   ($TEGEN: the binary, default build/tegen). Run from the repo root.
# Prints "ok cli/NAME", "FAIL cli/NAME: why" or "skip cli/NAME: why" per case.
tegen=${TEGEN:-build/tegen}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
export TEGEN_CACHE_DIR="$tmp/default-cache" # never the user's cache
fp8=specs/llama3_8b_mlp.yaml
fails=0

# expect NAME RC PATTERN COMMAND...: COMMAND exits RC within 60 s and its stderr matches PATTERN (grep -E)
expect() {
	name=$1 want=$2 pat=$3
	shift 3
	timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc = 124 ]; then
		echo "FAIL cli/$name: hung (killed after 60 s): $*"
		fails=$((fails + 1))
	elif [ $rc != "$want" ]; then
		echo "FAIL cli/$name: exit $rc, want $want: $*"
		sed 's/^/  /' "$tmp/err" | head -5
		fails=$((fails + 1))
	elif [ -n "$pat" ] && ! grep -Eq -e "$pat" "$tmp/err"; then
		echo "FAIL cli/$name: stderr does not match /$pat/: $*"
		sed 's/^/  /' "$tmp/err" | head -5
		fails=$((fails + 1))
	else
		echo "ok cli/$name"
	fi
}

# --arch: usage errors (2) before anything is compiled; an FP8 spec on sm_80 is a spec error (1)
expect arch_empty 2 'empty architecture' "$tegen" build $fp8 --arch ''
expect arch_comma 2 'empty architecture' "$tegen" build $fp8 --arch ,
expect arch_trailing_comma 2 'empty architecture' "$tegen" build $fp8 --arch sm_90a,
expect arch_sm00 2 "'sm_00' is not a target" "$tegen" build $fp8 --arch sm_00
expect arch_sm9999 2 "'sm_9999' is not a target" "$tegen" build $fp8 --arch sm_9999
expect arch_main_sm00 2 "'sm_00' is not a target" "$tegen" $fp8 --arch sm_00
expect arch_tune_sm9999 2 "'sm_9999' is not a target" "$tegen" tune $fp8 --compile-only --arch sm_9999
expect arch_twice 2 'listed twice' "$tegen" build $fp8 --arch sm_90a,sm_90a
many=sm_80
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do many=$many,sm_90a; done
expect arch_17 2 '17 architectures; at most 16' "$tegen" build $fp8 --arch $many
expect arch_fp8_sm80 1 '^--arch: error: target sm_80 has no FP8/FP4 support' "$tegen" build $fp8 --arch sm_80
expect arch_fp8_sm86_main 1 'target sm_86 has no FP8/FP4 support' "$tegen" $fp8 --arch sm_90a,sm_86

# --tokens: a whole number from 1 to 2^31-1, else a usage error
expect tokens_suffix 2 "'12abc' is not a whole number from 1 to 2147483647" "$tegen" plan $fp8 --tokens 12abc
expect tokens_huge 2 'not a whole number' "$tegen" plan $fp8 --tokens 4611686018427387904
expect tokens_over 2 'not a whole number' "$tegen" plan $fp8 --tokens 2147483648
expect tokens_zero 2 'not a whole number' "$tegen" plan $fp8 --tokens 0
expect tokens_negative 2 'not a whole number' "$tegen" plan $fp8 --tokens -5
expect tokens_empty 2 'not a whole number' "$tegen" plan $fp8 --tokens ''
expect tokens_build 2 'not a whole number' "$tegen" build $fp8 --tokens 12abc
expect tokens_run 2 'not a whole number' "$tegen" run $fp8 --tokens 12abc
expect run_cooldown_negative 2 'cooldown MS' "$tegen" run $fp8 --cooldown -1
expect run_cooldown_big 2 'cooldown MS' "$tegen" run $fp8 --cooldown 60001
expect tokens_max 0 '' "$tegen" plan tests/specs/llama3_8b_mlp_backward.yaml --tokens 2147483647
# extents whose product overflows 64 bits: a spec error from the planner, not a wrapped number
cat >"$tmp/rows.yaml" <<'EOF'
layer: rows
dims: {tokens: dynamic}
tensors:
  x: {shape: [tokens*2147483647, 2147483647, 2147483647, 16], dtype: bf16}
ops:
  - quantize: {in: x, out: xq}
recipe: {scaling: current}
EOF
expect plan_rows_overflow 1 "tensor 'xq' has more rows than the planner can count" "$tegen" plan "$tmp/rows.yaml"

# emit -o: the reason a directory cannot be made
expect emit_not_dir 1 'cannot create /dev/null/x: Not a directory' "$tegen" emit $fp8 -o /dev/null/x
expect emit_file 1 'cannot create /dev/null: Not a directory' "$tegen" emit $fp8 -o /dev/null
if [ "$(id -u)" != 0 ]; then
	mkdir "$tmp/ro" && chmod 0500 "$tmp/ro"
	expect emit_readonly 1 'cannot create .*: Permission denied' "$tegen" emit $fp8 -o "$tmp/ro/out"
	chmod 0755 "$tmp/ro"
else
	echo "skip cli/emit_readonly: running as root, permissions do not apply"
fi

# the kernel cache: a FIFO where a file belongs hangs nothing; a file as the cache is an error
key=ab$(printf '0%.0s' $(seq 62))
entry="$tmp/cache/v1/ab/$key"
mkdir -p "$entry" && mkfifo "$entry/meta.txt"
expect cache_ls_fifo 0 '' "$tegen" cache ls --cache-dir "$tmp/cache"
expect cache_verify_fifo 1 '' "$tegen" cache verify --cache-dir "$tmp/cache"
if grep -q "bad ab00000000000000: .*meta.txt is not a regular file (removed)" "$tmp/out" &&
	grep -q ": 1 bad entries (removed)$" "$tmp/out" && [ ! -e "$entry" ]; then
	echo "ok cli/cache_verify_fifo_report"
else
	echo "FAIL cli/cache_verify_fifo_report: $(tr '\n' '|' <"$tmp/out")"
	fails=$((fails + 1))
fi
mkdir -p "$tmp/cache/v1/cd" && ln -s /nonexistent "$tmp/cache/v1/cd/cd$(printf '0%.0s' $(seq 62))"
: >"$tmp/cache/v1/ef"
expect cache_verify_links 1 '' "$tegen" cache verify --cache-dir "$tmp/cache"
if grep -q "dangling symbolic link (removed)" "$tmp/out" && grep -q "shard .*/ef is a regular file, not a directory (removed)" "$tmp/out" &&
	grep -q ": 2 bad entries (removed)$" "$tmp/out"; then
	echo "ok cli/cache_verify_links_report"
else
	echo "FAIL cli/cache_verify_links_report: $(tr '\n' '|' <"$tmp/out")"
	fails=$((fails + 1))
fi
expect cache_verify_clean 0 '' "$tegen" cache verify --cache-dir "$tmp/cache"
# build over a cache whose entry has a FIFO as its cubin: the entry is recompiled, nothing hangs
bf16=specs/llama3_8b_mlp_bf16.yaml
expect build_cache_fill 0 '' "$tegen" build $bf16 --cache-dir "$tmp/bcache" -q
cubin=$(ls "$tmp"/bcache/v1/*/*/kernel.cubin | head -1)
rm -f "$cubin" && mkfifo "$cubin"
expect build_cache_fifo 0 '' "$tegen" build $bf16 --cache-dir "$tmp/bcache" -q
if grep -q ' 1 compiled, ' "$tmp/out" && [ -f "$cubin" ]; then
	echo "ok cli/build_cache_fifo_repaired"
else
	echo "FAIL cli/build_cache_fifo_repaired: $(tr '\n' '|' <"$tmp/out")"
	fails=$((fails + 1))
fi
: >"$tmp/plainfile"
expect cache_ls_file 1 'cache dir .*plainfile: Not a directory' "$tegen" cache ls --cache-dir "$tmp/plainfile"
expect cache_verify_file 1 'cache dir .*plainfile: Not a directory' "$tegen" cache verify --cache-dir "$tmp/plainfile"
if [ "$(id -u)" != 0 ]; then
	mkdir -p "$tmp/rocache/v1/ab/$key" && chmod 0500 "$tmp/rocache/v1/ab"
	expect cache_verify_readonly 1 '' "$tegen" cache verify --cache-dir "$tmp/rocache"
	chmod 0755 "$tmp/rocache/v1/ab"
	if grep -q "could not remove it" "$tmp/out" && grep -q "(none removed)" "$tmp/out" && ! grep -q "(removed)" "$tmp/out"; then
		echo "ok cli/cache_verify_readonly_report"
	else
		echo "FAIL cli/cache_verify_readonly_report: $(tr '\n' '|' <"$tmp/out")"
		fails=$((fails + 1))
	fi
else
	echo "skip cli/cache_verify_readonly: running as root, permissions do not apply"
fi
# phases: a derived plan lists its forward kernels, then its backward ones, then tg_step's;
# a forward-only plan has no phase lines (it prints as before phases existed)
expect plan_phases 0 '' "$tegen" plan specs/llama3_8b_mlp_train.yaml
heads=$(grep '^# ' "$tmp/out" | tr '\n' '|')
if [ "$heads" = "# forward (tg_run)|# backward (tg_backward)|# step (tg_step)|" ] &&
	awk '/^# backward/ { b = 1 } /^# step/ { b = 0 }
		/ ops=op/ { n = $2; sub(/^ops=op/, "", n); n += 0; if ((n < 6) == b) bad = 1 } # ops 0-5: the forward
		END { exit bad }' "$tmp/out"; then
	echo "ok cli/plan_phases_order"
else
	echo "FAIL cli/plan_phases_order: phase lines $heads"
	fails=$((fails + 1))
fi
expect plan_forward_only 0 '' "$tegen" plan $fp8
if grep -q '^# ' "$tmp/out"; then
	echo "FAIL cli/plan_forward_only_no_phase_lines"
	fails=$((fails + 1))
else
	echo "ok cli/plan_forward_only_no_phase_lines"
fi

# tegen run --cpu, tegen compare, tegen numerics (CPU reference; no GPU needed)
tiny=tests/gen/numerics_mlp.yaml
expect numerics_usage 2 'usage: tegen numerics' "$tegen" numerics
expect numerics_help 0 '' "$tegen" numerics --help
expect numerics_bad_inputs 2 "'cauchy' is not gaussian, student or outliers" "$tegen" numerics $tiny --inputs cauchy
expect numerics_bad_recipe 2 "'fp3' is not one of" "$tegen" numerics $tiny --recipes delayed,fp3
expect numerics_bad_tokens 2 'not a whole number' "$tegen" numerics $tiny --tokens 0
expect numerics_no_spec 1 'nosuch.yaml' "$tegen" numerics "$tmp/nosuch.yaml"
expect numerics_csv_unwritable 1 'cannot write' "$tegen" numerics $tiny --tokens 16 --csv "$tmp/nodir/x.csv"
expect numerics_run 0 '' "$tegen" numerics $tiny --tokens 16 --recipes mxfp8,nvfp4_rht --inputs student --csv "$tmp/n.csv" --chart "$tmp/n.svg"
if grep -q '^mxfp8,copy,xn,row,e4m3,' "$tmp/n.csv" && grep -q '^nvfp4_rht,output,y,' "$tmp/n.csv" && grep -q '</svg>' "$tmp/n.svg"; then
	echo "ok cli/numerics_files"
else
	echo "FAIL cli/numerics_files: csv or svg incomplete"
	fails=$((fails + 1))
fi
expect run_cpu_check 2 'compare a GPU run' "$tegen" run $tiny --cpu --check
expect run_cpu 0 '' "$tegen" run $tiny --cpu --tokens 16 --out "$tmp/cpu_a"
expect run_cpu_again 0 '' "$tegen" run $tiny --cpu --tokens 16 --out "$tmp/cpu_b"
expect compare_same 0 '' "$tegen" compare $tiny "$tmp/cpu_a" "$tmp/cpu_b"
grep -q '^ok numerics_mlp y (relative error 0)' "$tmp/out" && echo "ok cli/compare_same_report" ||
	{ echo "FAIL cli/compare_same_report: $(tr '\n' '|' <"$tmp/out")"; fails=$((fails + 1)); }
expect run_cpu_tokens 0 '' "$tegen" run $tiny --cpu --tokens 17 --out "$tmp/cpu_c"
expect compare_shape 1 '' "$tegen" compare $tiny "$tmp/cpu_a" "$tmp/cpu_c"
grep -q '^FAIL numerics_mlp y: dtype or shape differ' "$tmp/out" && echo "ok cli/compare_shape_report" ||
	{ echo "FAIL cli/compare_shape_report: $(tr '\n' '|' <"$tmp/out")"; fails=$((fails + 1)); }
# a layer whose extents are all fixed takes no --tokens (it was ignored silently)
sed 's/tokens: dynamic/tokens: 24/' $tiny >"$tmp/static.yaml"
expect run_static_tokens 1 'no dynamic dim' "$tegen" run "$tmp/static.yaml" --cpu --tokens 16
expect run_static 0 '' "$tegen" run "$tmp/static.yaml" --cpu --out "$tmp/cpu_s"
grep -q 'static shapes' "$tmp/out" && echo "ok cli/run_static_label" ||
	{ echo "FAIL cli/run_static_label: $(tr '\n' '|' <"$tmp/out")"; fails=$((fails + 1)); }
# plan and build refuse it the same way (they took it silently)
expect plan_static_tokens 1 'no dynamic dim' "$tegen" plan "$tmp/static.yaml" --tokens 16
expect build_static_tokens 1 'no dynamic dim' "$tegen" build "$tmp/static.yaml" --tokens 16 -q --cache-dir "$tmp/static_cache"
# rows `tokens - 1`: zero rows at --tokens 1; the reference's dbias wrote its cols sums past a 1-float buffer
expect run_cpu_zero_rows 0 '' "$tegen" run tests/gen/plan_offset_rows.yaml --cpu --tokens 1 --out "$tmp/cpu_z"
expect compare_usage 2 'usage: tegen compare' "$tegen" compare $tiny "$tmp/cpu_a"
expect compare_no_dir 1 'cannot read directory' "$tegen" compare $tiny "$tmp/cpu_a" "$tmp/nosuch"
[ $fails = 0 ]
