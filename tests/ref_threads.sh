#!/bin/sh
# ref_threads.sh: the CPU reference's results do not depend on its thread count. Each spec runs with `tegen run --cpu`
# on one thread (TEGEN_THREADS=1) and on every core (TEGEN_THREADS unset; ref/parallel.c caps the threads at the
# cores), at 300 tokens (five 64-row tasks, three 128-row bands) and 1024 columns (sixteen 64-column tasks; 307200
# elements: five element tasks, two chunks of the input stream); every output file must
# be byte-identical. The ops threaded over rows, chunks, columns or elements (ref/ref.c, backward.c, optim.c, interp.c,
# and the inputs in cli/refrun.c) are all here: norms with residuals, every FP8 / MXFP8 / NVFP4 cast, GLU and dglu,
# dnorm, dbias, AdamW. Prints "ok ref-threads/SPEC" or "FAIL ref-threads/SPEC: ..." per spec. No GPU.
cd "$(dirname "$0")/.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
for spec in tests/gpu/specs/bwd_ops.yaml tests/gpu/specs/block_norm_colwise.yaml tests/gpu/specs/act_ops.yaml \
	tests/gpu/specs/ops_nvfp4.yaml tests/gpu/specs/optim_adamw_nvfp4.yaml tests/gpu/specs/bwd_act_mlp_block.yaml \
	tests/gpu/specs/ct_dbias.yaml specs/tiny_residual_train.yaml; do
	name=$(basename "$spec" .yaml)
	sed 's/@H@/1024/g' "$spec" >"$tmp/spec.yaml"
	for t in 1 all; do
		rm -rf "$tmp/o$t"
		if ! env TEGEN_THREADS=${t%all} build/tegen run "$tmp/spec.yaml" --tokens 300 --cpu --out "$tmp/o$t" >"$tmp/log$t" 2>&1; then
			echo "FAIL ref-threads/$name: --cpu on $t thread(s) failed: $(tail -1 "$tmp/log$t")"
			rc=1
			continue 2
		fi
	done
	n=$(ls "$tmp/o1" | wc -l)
	if [ "$n" -eq 0 ]; then
		echo "FAIL ref-threads/$name: no output files"
		rc=1
	elif diff -r "$tmp/o1" "$tmp/oall" >/dev/null; then
		echo "ok ref-threads/$name ($n files identical on 1 thread and every core)"
	else
		echo "FAIL ref-threads/$name: outputs differ between 1 thread and every core: $(diff -rq "$tmp/o1" "$tmp/oall" | head -2 | tr '\n' ' ')"
		rc=1
	fi
done
exit $rc
