/* test_bwd_nvrtc.c: the backward templates (dglu.cu, dnorm.cu, dbias.cu, dreduce.cu)
 * compile under NVRTC for sm_90a and sm_100a (no GPU needed), as the runtime will
 * compile them: slot values as #defines in front of the template, the shared headers
 * (tg_codes.h, tg_formats.h, tg_recipe.h, tg_kernel.h, tg_rowvec.h, tg_backward.h, tg_wgmma.h,
 * tg_glu.h) from templates/, -std=c++17. Each configuration must compile with no warning and no
 * local-memory spill (ptxas -v). So do the generated GEMM's variants that no spec plans (the
 * promoting tile, per-tensor and with block scales: tested on a GPU by test_gemm only), for sm_90a
 * (gemm-nvrtc/). Run from the repository root. */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	if (s)
		s[n] = 0;
	fclose(f);
	return s;
}

static const char *const hnames[] = {"tg_codes.h", "tg_formats.h", "tg_recipe.h", "tg_kernel.h", "tg_rowvec.h", "tg_backward.h",
	"tg_wgmma.h", "tg_glu.h"};
#define NH ((int)(sizeof hnames / sizeof hnames[0]))

/* Spilled bytes reported in an NVRTC log ("N bytes spill stores"), summed. */
static long spills(const char *log)
{
	long total = 0;
	for (const char *p = strstr(log, "bytes spill stores"); p; p = strstr(p + 1, "bytes spill stores")) {
		const char *q = p;
		while (q > log && q[-1] == ' ')
			q--;
		while (q > log && q[-1] >= '0' && q[-1] <= '9')
			q--;
		total += strtol(q, NULL, 10);
	}
	return total;
}

static void compile_one(const char *prefix, const char *name, const char *tmpl, const char *defs, char **htexts,
	const char *arch)
{
	char *src_t = slurp(tmpl);
	if (!src_t) {
		check_line(prefix, 0, name, "cannot read %s (run from the repository root)", tmpl);
		return;
	}
	size_t n = strlen(defs) + strlen(src_t) + 64;
	char *src = malloc(n);
	snprintf(src, n, "#define TG_KERNEL k_%s\n%s\n%s", name, defs, src_t);
	char archopt[64];
	snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
	const char *opts[] = {archopt, "-std=c++17", "-default-device", "--ptxas-options=-v"};
	nvrtcProgram prog;
	nvrtcResult rc = nvrtcCreateProgram(&prog, src, "kernel.cu", NH, (const char *const *)htexts, hnames);
	char full[96];
	snprintf(full, sizeof full, "%s/%s", name, arch);
	if (rc != NVRTC_SUCCESS) {
		check_line(prefix, 0, full, "nvrtcCreateProgram: %s", nvrtcGetErrorString(rc));
		free(src);
		free(src_t);
		return;
	}
	rc = nvrtcCompileProgram(prog, 4, opts);
	size_t ln = 0;
	nvrtcGetProgramLogSize(prog, &ln);
	char *log = calloc(1, ln + 1);
	nvrtcGetProgramLog(prog, log);
	long sp = spills(log);
	int warned = strstr(log, "warning") != NULL;
	check_line(prefix, rc == NVRTC_SUCCESS && !warned && sp == 0, full, "%s%s, %ld spilled bytes:\n%.2000s",
	           nvrtcGetErrorString(rc), warned ? ", warnings" : "", sp, log);
	nvrtcDestroyProgram(&prog);
	free(log);
	free(src);
	free(src_t);
}

#define DGLU(act, in, out, fmt, rec, roww, colw, dbias, vec, thr, rpc, cols)                                        \
	"#define TG_ACT " #act "\n#define TG_IN_DTYPE " #in "\n#define TG_G_DTYPE " #in "\n#define TG_OUT_DTYPE " #out \
	"\n#define TG_FMT " #fmt "\n#define TG_RECIPE " #rec "\n#define TG_ROWWISE " #roww "\n#define TG_COLWISE " #colw \
	"\n#define TG_DBIAS " #dbias                                                                                \
	"\n#define TG_VEC " #vec "\n#define TG_THREADS " #thr "\n#define TG_ROWS_PER_CTA " #rpc "\n#define TG_COLS " #cols \
	"\n#define TG_ALPHA 1.702f\n#define TG_LIMIT 7.0f\n#define TG_EPS_SCALE 0.0f\n#define TG_POW2 0\n#define TG_DEQ 0\n#define TG_DB_STAGE 0\n"
#define DNORM(norm, in, vec, thr, cols, zc, dres, passes)                                                           \
	"#define TG_NORM " #norm "\n#define TG_IN_DTYPE " #in "\n#define TG_G_DTYPE " #in "\n#define TG_W_DTYPE " #in    \
	"\n#define TG_OUT_DTYPE " #in "\n#define TG_R_DTYPE " #in "\n#define TG_VEC " #vec "\n#define TG_THREADS " #thr      \
	"\n#define TG_COLS " #cols \
	"\n#define TG_ZERO_CENTERED " #zc "\n#define TG_HAS_DRES " #dres "\n#define TG_PASSES " #passes "\n"
/* gemm_fp8.cu without an epilogue: tile width, stages, promotion, output type, block scales */
#define GEMM(bn, stages, promote, out, scale)                                                                       \
	"#define TG_BN " #bn "\n#define TG_STAGES " #stages "\n#define TG_PROMOTE " #promote "\n#define TG_KIND \"e4m3.e5m2\"" \
	"\n#define TG_OUT " #out "\n#define TG_EPI 0\n#define TG_ACT 0\n#define TG_ALPHA 0.0f\n#define TG_LIMIT 0.0f"          \
	"\n#define TG_FMT 0\n#define TG_ACT_T 0\n#define TG_SCALE " #scale "\n"

int main(void)
{
	char *htexts[NH];
	for (int i = 0; i < NH; i++) {
		char path[64];
		snprintf(path, sizeof path, "templates/%s", hnames[i]);
		htexts[i] = slurp(path);
		if (!htexts[i]) {
			check_line("bwd-nvrtc/", 0, "headers", "cannot read %s (run from the repository root)", path);
			return 1;
		}
	}
	static const struct { const char *name, *tmpl, *defs; } cfg[] = {
		{"dglu_swiglu_bf16_14336", "templates/dglu.cu", DGLU(0, 1, 1, 1, 0, 1, 0, 0, 8, 256, 1, 14336)},
		{"dglu_clamped_f16_mxfp8", "templates/dglu.cu", DGLU(5, 2, 0, 0, 6, 1, 0, 0, 8, 128, 4, 512)},
		{"dglu_geglu_e5m2_rowcol_dbias", "templates/dglu.cu", DGLU(1, 1, 0, 1, 1, 1, 1, 1, 8, 1024, 32, 14336)},
		{"dglu_reglu_bf16_dbias", "templates/dglu.cu", DGLU(2, 1, 1, 1, 0, 1, 0, 1, 8, 256, 32, 512)},
		{"dglu_qgeglu_f32_amax", "templates/dglu.cu", DGLU(3, 0, 0, 1, 3, 0, 0, 0, 4, 128, 4, 160)},
		{"dnorm_rms_bf16_1pass", "templates/dnorm.cu", DNORM(0, 1, 8, 256, 4096, 0, 0, 1)},
		{"dnorm_ln_bf16_zc_dres_2pass", "templates/dnorm.cu", DNORM(1, 1, 8, 512, 4096, 1, 1, 2)},
		{"dnorm_ln_f32_208_1pass", "templates/dnorm.cu", DNORM(1, 0, 4, 128, 208, 1, 1, 1)},
		{"dbias_bf16_4096", "templates/dbias.cu", "#define TG_IN_DTYPE 1\n#define TG_VEC 8\n#define TG_THREADS 256\n#define TG_COLS 4096\n"},
		{"dreduce_acc", "templates/dreduce.cu", "#define TG_THREADS 256\n#define TG_ACCUMULATE 1\n"},
	};
	for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
		compile_one("bwd-nvrtc/", cfg[i].name, cfg[i].tmpl, cfg[i].defs, htexts, "sm_90a");
		if (i == 0 || i == 4)
			compile_one("bwd-nvrtc/", cfg[i].name, cfg[i].tmpl, cfg[i].defs, htexts, "sm_100a");
	}
	static const struct { const char *name, *defs; } gemm[] = {
		{"promote_n192s4p_bf16", GEMM(192, 4, 1, 0, 0)},
		{"block_w_n192s4p_bf16", GEMM(192, 4, 1, 0, 1)},
		{"block_w_n128s5p_f16", GEMM(128, 5, 1, 1, 1)},
		{"block_v_n192s3p_f32", GEMM(192, 3, 1, 2, 2)},
		{"block_v_n128s4p_f32", GEMM(128, 4, 1, 2, 2)},
	};
	for (size_t i = 0; i < sizeof gemm / sizeof gemm[0]; i++)
		compile_one("gemm-nvrtc/", gemm[i].name, "templates/gemm_fp8.cu", gemm[i].defs, htexts, "sm_90a");
	for (int i = 0; i < NH; i++)
		free(htexts[i]);
	return check_failures ? 1 : 0;
}
