#!/bin/sh
# train.sh: examples/train.c. CPU: its selftest (options, data statistics, the teacher's math), and
# the specs it generates pass `tegen check` and `tegen plan`. GPU: a short training run per recipe
# in $TEGEN_TRAIN_RECIPES (default bf16 delayed) whose loss must fall; without a GPU the program
# prints `skip train: no GPU (...)`, which this passes on. Prints ok/FAIL/skip lines.
cd "$(dirname "$0")/.." || exit 2
train=build/examples/train
tegen=build/tegen
[ -x $train ] || { echo "FAIL train: $train is missing (run ninja)"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

$train --selftest

# Errors that mean "tegen does not do this yet" (the backward of residual norms, the optimizer,
# BF16 blocks inside a quantized layer): reported as skips with the message, never as passes.
not_yet="unknown key 'optimizer'|is not derived yet|not derived yet|mixes quantized"

spec_check() { # spec_check NAME TRAIN-ARGS...: the student spec, and its forward half
	name=$1; shift
	$train "$@" --print-spec >"$tmp/$name.yaml" || { echo "FAIL train/spec/$name: --print-spec failed"; return; }
	grep -v '^backward:\|^optimizer:' "$tmp/$name.yaml" >"$tmp/$name.fwd.yaml"
	if out=$($tegen check "$tmp/$name.fwd.yaml" 2>&1); then
		echo "ok train/spec/$name/forward"
	else
		echo "FAIL train/spec/$name/forward: $(printf '%s' "$out" | head -1)"
	fi
	if out=$($tegen check "$tmp/$name.yaml" 2>&1) && $tegen plan "$tmp/$name.yaml" >/dev/null 2>&1; then
		echo "ok train/spec/$name"
	elif printf '%s\n' "$out" | head -1 | grep -Eq "$not_yet"; then
		echo "skip train/spec/$name: tegen cannot build it yet: $(printf '%s' "$out" | head -1 | sed 's/^[^ ]* error: //')"
	else
		echo "FAIL train/spec/$name: $(printf '%s' "$out" | head -1)"
	fi
}

$train --print-teacher >"$tmp/teacher.yaml" && out=$($tegen check "$tmp/teacher.yaml" 2>&1) &&
	$tegen plan "$tmp/teacher.yaml" >/dev/null 2>&1 && echo "ok train/spec/teacher" ||
	echo "FAIL train/spec/teacher: $out"
for r in bf16 delayed current block mxfp8 nvfp4; do
	spec_check $r --recipe $r
done
spec_check nvfp4-bf16-last --recipe nvfp4 --bf16-last 1
spec_check delayed-6-blocks --recipe delayed --blocks 6 --bf16-last 2 --hidden 512 --ffn 1024
for r in bf16 delayed current block mxfp8 nvfp4; do
	spec_check $r-no-residual --recipe $r --no-residual
done

# usage errors exit 2
for bad in "--recipe fp9" "--blocks" "--bogus" "--blocks 2 --bf16-last 3"; do
	$train $bad >/dev/null 2>&1
	rc=$?
	name=$(printf %s "$bad" | tr " " _)
	[ $rc = 2 ] && echo "ok train/usage/$name" || echo "FAIL train/usage/$name: exit $rc, want 2"
done

# GPU: a short run per recipe; the loss of the last 5 steps must be below that of the first 5.
# Without the residual backward in tegen yet, the blocks are chained without the stream (said so).
mode=
if ! $tegen check "$tmp/bf16.yaml" >/dev/null 2>&1; then
	mode=--no-residual
	echo "train.sh: the residual spec does not build yet; the GPU runs use --no-residual"
fi
for r in ${TEGEN_TRAIN_RECIPES:-bf16 delayed}; do
	out=$($train --recipe $r $mode --blocks 2 --hidden 128 --ffn 256 --tokens 256 --steps 60 --pool 8 \
		--print-every 20 --csv "$tmp/$r.csv" 2>&1)
	rc=$?
	case $out in skip*) printf '%s\n' "$out"; break ;; esac
	if [ $rc != 0 ]; then
		echo "FAIL train/gpu/$r$mode: exit $rc: $(printf '%s' "$out" | tail -3)"
		continue
	fi
	verdict=$(awk -F, 'NR > 1 { l[NR - 1] = $2; n = NR - 1 }
		END { for (i = 1; i <= 5; i++) { a += l[i]; b += l[n - 5 + i] }
		      printf "%s first %.4g last %.4g", (b < 0.7 * a ? "ok" : "no"), a / 5, b / 5 }' "$tmp/$r.csv")
	case $verdict in
	ok*) echo "ok train/gpu/$r$mode (loss ${verdict#ok })" ;;
	*) echo "FAIL train/gpu/$r$mode: the loss did not fall by 30% (${verdict#no })" ;;
	esac
done

# GPU + torch: the same run replayed from Python (python/examples/train.py) must give the C run's losses
if python3 -c "import torch" >/dev/null 2>&1; then
	mkdir -p "$tmp/dump"
	out=$($train --recipe delayed $mode --blocks 2 --hidden 128 --ffn 256 --tokens 256 --steps 40 --pool 8 \
		--print-every 20 --target-noise 0.1 --dump "$tmp/dump" --csv "$tmp/dump/c.csv" 2>&1)
	case $out in
	skip*) echo "skip train/python: no GPU" ;;
	*) py=$(python3 python/examples/train.py "$tmp/dump" --compare "$tmp/dump/c.csv" 2>&1)
	   printf '%s\n' "$py" | grep -E '^(ok|FAIL|skip) ' || echo "FAIL train/python: $(printf '%s' "$py" | tail -3)" ;;
	esac
else
	echo "skip train/python: no torch"
fi
