#!/bin/sh
# harness_slots.sh: every instance of the GPU template harnesses (tests/gpu/harness_rows.cu,
# harness_ct.list, harness_bwd.list) sets every slot its template declares on its
# `tegen-slots:` line. The harnesses are built with nvcc on a GPU machine only, so a slot added
# to a template (TG_SR, TG_DBIAS) would otherwise break them unseen until a device call.
# Prints "ok harness-slots/NAME" or "FAIL harness-slots/NAME: ..." lines. No GPU, no nvcc.
cd "$(dirname "$0")/.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# slots TEMPLATE: the slot names its tegen-slots line declares, one per line
slots() { sed -n 's|^// tegen-slots: ||p' "templates/$1" | tr ' ' '\n' | sed '/^$/d'; }

# check NAME FILE: FILE has one instance a line, "TEMPLATE INSTANCE FLAG...", flags -DSLOT=VALUE
check() {
	name=$1 file=$2 bad=0 n=0
	while read -r tpl inst flags; do
		[ -n "$tpl" ] || continue
		n=$((n + 1))
		if [ ! -f "templates/$tpl" ]; then
			echo "FAIL harness-slots/$name: $inst: no template $tpl"
			bad=1
			continue
		fi
		for s in $(slots "$tpl"); do
			case " $flags " in
			*" -D$s="*) ;;
			*) echo "FAIL harness-slots/$name: instance $inst of $tpl does not set $s"; bad=1 ;;
			esac
		done
	done <"$file"
	if [ "$n" -eq 0 ]; then
		echo "FAIL harness-slots/$name: no instances found"
	elif [ "$bad" -eq 0 ]; then
		echo "ok harness-slots/$name ($n instances)"
	fi
}

# harness_rows.cu lists its variants as "template name -DSLOT=V ... @@" under -DTG_LIST (run_rows.sh)
if gcc -E -P -DTG_LIST -x c tests/gpu/harness_rows.cu 2>"$tmp/rows.err" | sed 's/@@/\n/g' |
	sed 's/^[[:space:]]*//; s/[[:space:]]*$//' | sed '/^$/d' >"$tmp/rows.txt"; then
	check rows "$tmp/rows.txt"
else
	echo "FAIL harness-slots/rows: the variant list does not preprocess: $(head -3 "$tmp/rows.err")"
fi

# harness_ct and harness_bwd: the generated #define blocks, one per instance, turned into the same form
for h in ct bwd; do
	if ! sh "tests/gpu/gen_harness_$h.sh" "tests/gpu/harness_$h.list" "$tmp/$h.inc" 2>"$tmp/$h.err"; then
		echo "FAIL harness-slots/$h: gen_harness_$h.sh failed: $(head -3 "$tmp/$h.err")"
		continue
	fi
	awk '
		/^#define TG_KERNEL / { inst = $3; flags = "" }
		/^#define TG_/ { flags = flags " -D" $2 "=" $3 }
		/^#include "/ { gsub(/"/, "", $2); print $2, inst, flags }
	' "$tmp/$h.inc" >"$tmp/$h.txt"
	check "$h" "$tmp/$h.txt"
done
