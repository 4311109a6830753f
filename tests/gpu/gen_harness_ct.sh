#!/bin/sh
# gen_harness_ct.sh LIST OUT: write the cast_transpose instances of LIST
# (tests/gpu/harness_ct.list) as #define/#include blocks plus the insts[] table
# that tests/gpu/harness_ct.cu includes.
set -eu
awk '
BEGIN { n = split("TG_IN_DTYPE TG_OUT_DTYPE TG_FMT TG_RECIPE TG_ROWWISE TG_COLWISE TG_COLS TG_THREADS TG_TILE_ROWS TG_TILE_COLS TG_EPS_SCALE TG_POW2", slot, " ") }
/^#/ || NF == 0 { next }
NF != 15 { printf "%s:%d: expected 15 columns, got %d\n", FILENAME, FNR, NF > "/dev/stderr"; bad = 1; exit 1 }
{
	printf "#define TG_KERNEL ct_%s\n", $1
	for (i = 1; i <= n; i++) printf "#define %s %s\n", slot[i], $(i + 1)
	print "#define TG_DBIAS 0"
	print "#define TG_DEQ 0"
	print "#define TG_CT_STAGE 0"
	if ($15 == "old") print "#define CT_LEGACY 1"
	print "#include \"cast_transpose.cu\""
	print "#undef TG_KERNEL"
	for (i = 1; i <= n; i++) printf "#undef %s\n", slot[i]
	print "#undef TG_DBIAS"
	print "#undef TG_DEQ"
	print "#undef TG_CT_STAGE"
	if ($15 == "old") print "#undef CT_LEGACY"
	tab[++m] = sprintf("\t{\"%s\", ct_%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s},", $1, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
}
END {
	if (bad) exit 1
	print "static const Inst insts[] = {"
	for (i = 1; i <= m; i++) print tab[i]
	print "};"
}' "$1" >"$2.tmp"
mv "$2.tmp" "$2"
