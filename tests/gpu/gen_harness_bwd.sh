#!/bin/sh
# gen_harness_bwd.sh LIST OUT: write the backward-template instances of LIST
# (tests/gpu/harness_bwd.list: lines "dglu|dnorm|dbias|dreduce NAME SLOT...") as
# #define/#include blocks plus one instance table per template, which
# tests/gpu/harness_bwd.cu includes. Extra trailing fields NAME=VALUE are harness-only
# #defines of that instance (e.g. TG_DN_DEPTH=1 to time a template default against another).
set -eu
awk '
BEGIN {
	s["dglu"] = "TG_ACT TG_IN_DTYPE TG_G_DTYPE TG_OUT_DTYPE TG_FMT TG_RECIPE TG_ROWWISE TG_COLWISE TG_DBIAS TG_VEC TG_THREADS TG_ROWS_PER_CTA TG_COLS TG_EPS_SCALE TG_POW2 TG_BENCH"
	s["dnorm"] = "TG_NORM TG_IN_DTYPE TG_G_DTYPE TG_W_DTYPE TG_OUT_DTYPE TG_VEC TG_THREADS TG_COLS TG_ZERO_CENTERED TG_HAS_DRES TG_PASSES TG_BENCH"
	s["dbias"] = "TG_IN_DTYPE TG_VEC TG_THREADS TG_COLS TG_BENCH"
	s["dreduce"] = "TG_THREADS TG_ACCUMULATE"
	file["dglu"] = "dglu.cu"; file["dnorm"] = "dnorm.cu"; file["dbias"] = "dbias.cu"; file["dreduce"] = "dreduce.cu"
}
/^#/ || NF == 0 { next }
{
	k = $1
	if (!(k in s)) { printf "%s:%d: unknown template %s\n", FILENAME, FNR, k > "/dev/stderr"; bad = 1; exit 1 }
	n = split(s[k], slot, " ")
	nx = 0
	while (NF > n + 2 && $NF ~ /^[A-Z_]+=/) { nx++; xd[nx] = $NF; NF-- }
	if (NF != n + 2) { printf "%s:%d: %s wants %d columns, got %d\n", FILENAME, FNR, k, n + 2, NF > "/dev/stderr"; bad = 1; exit 1 }
	printf "#define TG_KERNEL %s\n", $2
	for (i = 1; i <= n; i++) printf "#define %s %s\n", slot[i], $(i + 2)
	for (i = 1; i <= nx; i++) { split(xd[i], kv, "="); printf "#define %s %s\n", kv[1], kv[2] }
	if (k == "dglu") print "#define TG_ALPHA 1.702f\n#define TG_LIMIT 7.0f\n#define TG_DEQ 0\n#define TG_DB_STAGE 0"
	if (k == "dnorm") printf "#define TG_R_DTYPE %s\n", $5 # grad_residual in the dtype of grad (TG_G_DTYPE)
	printf "#include \"%s\"\nextern \"C\" __global__ void %s(const TgParams p);\n#undef TG_KERNEL\n", file[k], $2
	for (i = 1; i <= n; i++) printf "#undef %s\n", slot[i]
	for (i = 1; i <= nx; i++) { split(xd[i], kv, "="); printf "#undef %s\n", kv[1] }
	if (k == "dglu") print "#undef TG_ALPHA\n#undef TG_LIMIT\n#undef TG_DEQ\n#undef TG_DB_STAGE"
	if (k == "dnorm") print "#undef TG_R_DTYPE"
	row = sprintf("\t{\"%s\", %s", $2, $2)
	for (i = 3; i <= NF; i++) row = row ", " $i
	tab[k] = tab[k] row "},\n"
}
END {
	if (bad) exit 1
	print "static const DgInst dg_insts[] = {\n" tab["dglu"] "};"
	print "static const DnInst dn_insts[] = {\n" tab["dnorm"] "};"
	print "static const DbInst db_insts[] = {\n" tab["dbias"] "};"
	print "static const DrInst dr_insts[] = {\n" tab["dreduce"] "};"
}' "$1" >"$2.tmp"
mv "$2.tmp" "$2"
