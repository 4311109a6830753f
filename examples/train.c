/* train.c: train a stack of residual MLP blocks with tegen, from plain C (tegen.h only).
 *
 * The model: N blocks of [RMSNorm of the residual stream, up GEMM, SwiGLU (or GELU: --act gelu, a
 * non-gated MLP), down GEMM, residual add],
 * then a final RMSNorm of the stream, in ONE spec with `backward: true` and an AdamW `optimizer`,
 * generated for the chosen recipe. The task has a known answer: a fixed random teacher of the same
 * shape, run in FP32 on the GPU by a second, forward-only tegen layer (recipe none), maps inputs drawn
 * like real activations (Student-t, a few outlier channels 100x the rest) to targets; the student
 * minimizes the MSE to them. The loss and its gradient d_out are computed on the host.
 *
 * One step: tg_run (forward), y to the host, loss and d_out, d_out to the device, tg_backward,
 * tg_step (recipe state), tg_optimizer_step (AdamW + the weights' quantized copies). Run
 * `train --help` for the options; `train --selftest` checks the CPU parts (no GPU needed).
 * Exit codes: 0 ok (also: no GPU, after a `skip` line), 1 a failure, 2 a usage error. */
#include "tegen.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_BLOCKS = 64 };

/* ---------------------------------------------------------------- options */

typedef struct Options {
	const char *recipe;   /* bf16 delayed current block mxfp8 nvfp4 */
	int blocks, hidden, ffn, tokens, steps, bf16_last, print_every, pool, outliers;
	int residual;         /* 0: --no-residual, blocks chained without the residual stream */
	unsigned long long seed, teacher_seed;
	double lr, warmup;    /* warmup: fraction of the steps with a linear ramp; then cosine to lr/10 */
	double target_noise;  /* Gaussian noise of this standard deviation added to the targets */
	int teacher_ffn;      /* the teacher's SwiGLU width (0: the student's) */
	int gelu;             /* --act gelu: act = gelu(h), h [tokens][ffn] (else SwiGLU over h [tokens][2*ffn]) */
	const char *csv;
	const char *dump;     /* --dump DIR: the spec, data, targets and initial weights, for python/examples/train.py */
	int print_spec;       /* 1: print the student spec and exit; 2: the teacher's */
	int selftest;
} Options;

static const char *const recipes[] = {"bf16", "delayed", "current", "block", "mxfp8", "nvfp4"};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: train [options]\n"
		"  --recipe R        bf16 (recipe none, BF16 GEMMs), delayed, current (FP8 per tensor),\n"
		"                    block (FP8 1x128, weights 128x128), mxfp8, nvfp4        [bf16]\n"
		"  --blocks N        residual MLP blocks (1..%d)                             [4]\n"
		"  --hidden H        model width (a multiple of 128)                         [256]\n"
		"  --ffn F           SwiGLU (or GELU) width (a multiple of 128)              [768]\n"
		"  --act A           swiglu, or gelu (no gate: the up GEMM writes ffn columns) [swiglu]\n"
		"  --tokens T        tokens per step (a multiple of 128)                     [512]\n"
		"  --steps S         optimizer steps                                         [400]\n"
		"  --lr LR           peak learning rate (AdamW; warmup, then cosine to LR/10) [2e-3]\n"
		"  --warmup F        fraction of the steps spent warming up                  [0.05]\n"
		"  --seed S          student init and data                                   [1]\n"
		"  --teacher-seed S  the teacher's weights and outlier channels              [1234]\n"
		"  --teacher-ffn F   the teacher's SwiGLU width: wider than --ffn, the student cannot\n"
		"                    represent it exactly (a multiple of 128)                [--ffn]\n"
		"  --target-noise S  add N(0, S^2) noise to the targets: an irreducible loss of S^2, as\n"
		"                    real training has; the sweep's default task uses 0.1     [0]\n"
		"  --bf16-last K     the last K blocks stay BF16 (no quantization)           [0]\n"
		"  --pool P          input batches generated once and cycled                 [16]\n"
		"  --outliers N      outlier channels (100x the rest)                        [hidden/64]\n"
		"  --no-residual     chain the blocks without the residual stream (each norm reads the\n"
		"                    previous block's output only)\n"
		"  --print-every K   print the loss and step time every K steps              [50]\n"
		"  --csv FILE        write step,loss,step_ms,gpu_ms,fwd_ms,bwd_ms,opt_ms,lr\n"
		"  --dump DIR        also write the student spec, the inputs, targets and initial weights\n"
		"                    to DIR (python/examples/train.py replays the run from Python)\n"
		"  --print-spec      print the student's spec and exit (--print-teacher: the teacher's)\n"
		"  --selftest        check the CPU parts (no GPU needed)\n"
		"Without a GPU it prints a `skip` line and exits 0. Exit codes: 0 ok, 1 failure, 2 usage.\n",
		MAX_BLOCKS);
}

static int parse_long(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v = strtoll(s, &end, 10);
	if (!*s || *end || v < lo || v > hi)
		return 0;
	*out = v;
	return 1;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (!*s || *end || !(v >= lo && v <= hi))
		return 0;
	*out = v;
	return 1;
}

static int takes_value(const char *a)
{
	static const char *const names[] = {"--recipe", "--blocks", "--hidden", "--ffn", "--tokens", "--steps",
					    "--bf16-last", "--print-every", "--pool", "--outliers", "--seed",
					    "--teacher-seed", "--lr", "--warmup", "--csv", "--target-noise", "--teacher-ffn", "--dump",
					    "--act"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(a, names[i]))
			return 1;
	return 0;
}

/* parse_options fills o from argv; returns 0, or 2 after printing a usage error to err. */
static int parse_options(int argc, char **argv, Options *o, FILE *err)
{
	*o = (Options){"bf16", 4, 256, 768, 512, 400, 0, 50, 16, -1, 1, 1, 1234, 2e-3, 0.05, 0.0, 0, 0, NULL, NULL, 0, 0};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		long long n = 0;
		double d = 0;
		int ok = 1, takes = 1;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--selftest"))
			o->selftest = 1, takes = 0;
		else if (!strcmp(a, "--no-residual"))
			o->residual = 0, takes = 0;
		else if (!strcmp(a, "--print-spec"))
			o->print_spec = 1, takes = 0;
		else if (!strcmp(a, "--print-teacher"))
			o->print_spec = 2, takes = 0;
		else if (!takes_value(a)) {
			fprintf(err, "train: unknown option '%s' (train --help lists them)\n", a);
			return 2;
		} else if (!v) {
			fprintf(err, "train: %s needs a value\n", a);
			return 2;
		} else if (!strcmp(a, "--recipe")) {
			ok = 0;
			for (size_t r = 0; r < sizeof recipes / sizeof *recipes; r++)
				if (!strcmp(v, recipes[r]))
					o->recipe = recipes[r], ok = 1;
		} else if (!strcmp(a, "--blocks"))
			ok = parse_long(v, 1, MAX_BLOCKS, &n), o->blocks = (int)n;
		else if (!strcmp(a, "--hidden"))
			ok = parse_long(v, 128, 65536, &n) && n % 128 == 0, o->hidden = (int)n;
		else if (!strcmp(a, "--ffn"))
			ok = parse_long(v, 128, 262144, &n) && n % 128 == 0, o->ffn = (int)n;
		else if (!strcmp(a, "--tokens"))
			ok = parse_long(v, 128, 1 << 20, &n) && n % 128 == 0, o->tokens = (int)n;
		else if (!strcmp(a, "--steps"))
			ok = parse_long(v, 1, 10000000, &n), o->steps = (int)n;
		else if (!strcmp(a, "--bf16-last"))
			ok = parse_long(v, 0, MAX_BLOCKS, &n), o->bf16_last = (int)n;
		else if (!strcmp(a, "--print-every"))
			ok = parse_long(v, 1, 10000000, &n), o->print_every = (int)n;
		else if (!strcmp(a, "--pool"))
			ok = parse_long(v, 1, 4096, &n), o->pool = (int)n;
		else if (!strcmp(a, "--outliers"))
			ok = parse_long(v, 0, 65536, &n), o->outliers = (int)n;
		else if (!strcmp(a, "--seed"))
			ok = parse_long(v, 0, 1LL << 62, &n), o->seed = (unsigned long long)n;
		else if (!strcmp(a, "--teacher-seed"))
			ok = parse_long(v, 0, 1LL << 62, &n), o->teacher_seed = (unsigned long long)n;
		else if (!strcmp(a, "--lr"))
			ok = parse_double(v, 1e-9, 10.0, &d), o->lr = d;
		else if (!strcmp(a, "--warmup"))
			ok = parse_double(v, 0.0, 1.0, &d), o->warmup = d;
		else if (!strcmp(a, "--target-noise"))
			ok = parse_double(v, 0.0, 100.0, &d), o->target_noise = d;
		else if (!strcmp(a, "--dump"))
			o->dump = v;
		else if (!strcmp(a, "--teacher-ffn"))
			ok = parse_long(v, 128, 262144, &n) && n % 128 == 0, o->teacher_ffn = (int)n;
		else if (!strcmp(a, "--act"))
			ok = !strcmp(v, "swiglu") || !strcmp(v, "gelu"), o->gelu = !strcmp(v, "gelu");
		else
			o->csv = v; /* --csv */
		if (!ok) {
			fprintf(err, "train: bad value '%s' for %s (train --help)\n", v, a);
			return 2;
		}
		i += takes;
	}
	if (o->outliers < 0)
		o->outliers = o->hidden / 64;
	if (o->outliers > o->hidden) {
		fprintf(err, "train: --outliers %d is more than --hidden %d\n", o->outliers, o->hidden);
		return 2;
	}
	if (o->bf16_last > o->blocks) {
		fprintf(err, "train: --bf16-last %d is more than --blocks %d\n", o->bf16_last, o->blocks);
		return 2;
	}
	return 0;
}

/* ---------------------------------------------------------------- random numbers and data */

typedef struct Rng { uint64_t s; double spare; int has_spare; } Rng;

static uint64_t rng_next(Rng *r) /* splitmix64 */
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static double rng_uniform(Rng *r) /* (0, 1) */
{
	return ((double)(rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double rng_gauss(Rng *r) /* Box-Muller; the pair's second value is kept for the next call */
{
	if (r->has_spare) {
		r->has_spare = 0;
		return r->spare;
	}
	double m = sqrt(-2.0 * log(rng_uniform(r))), a = 6.283185307179586 * rng_uniform(r);
	r->spare = m * sin(a), r->has_spare = 1;
	return m * cos(a);
}

enum { STUDENT_T_DOF = 5 }; /* heavy tails: excess kurtosis 6, finite variance 5/3 */

static double rng_student_t(Rng *r) /* z / sqrt(chi2_nu / nu) */
{
	double chi2 = 0.0;
	for (int i = 0; i < STUDENT_T_DOF; i++) {
		double g = rng_gauss(r);
		chi2 += g * g;
	}
	return rng_gauss(r) / sqrt(chi2 / STUDENT_T_DOF);
}

/* outlier_channels marks n distinct channels of hidden (a fixed choice per teacher seed). */
static void outlier_channels(unsigned long long seed, int hidden, int n, unsigned char *is_outlier)
{
	Rng r = {.s = seed ^ 0x6F75746C69657273ull};
	memset(is_outlier, 0, (size_t)hidden);
	for (int k = 0; k < n;) {
		int c = (int)(rng_next(&r) % (uint64_t)hidden);
		if (!is_outlier[c])
			is_outlier[c] = 1, k++;
	}
}

enum { OUTLIER_GAIN = 100 };

/* make_inputs fills x[rows][hidden] like real activations: Student-t, outlier channels x100. */
static void make_inputs(Rng *r, const unsigned char *is_outlier, int rows, int hidden, float *x)
{
	for (int t = 0; t < rows; t++)
		for (int c = 0; c < hidden; c++)
			x[(size_t)t * hidden + c] = (float)(rng_student_t(r) * (is_outlier[c] ? OUTLIER_GAIN : 1));
}

static uint16_t to_bf16(float f) /* round to nearest even (no NaN here) */
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1)) >> 16);
}

static float from_bf16(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* teacher_options: the options the teacher is built with (its own SwiGLU width, every block FP32). */
static Options teacher_options(const Options *o)
{
	Options t = *o;
	if (o->teacher_ffn)
		t.ffn = o->teacher_ffn;
	t.bf16_last = 0;
	return t;
}

/* ---------------------------------------------------------------- the model */

/* Weights of one model, FP32 on the host: per block gamma[hidden], w_up[up][hidden] (up = 2*ffn for
 * SwiGLU, ffn for GELU), w_down[hidden][ffn]; then the final norm's gamma. */
typedef struct Model {
	int blocks, hidden, ffn, up, gelu;
	float *gamma[MAX_BLOCKS], *w_up[MAX_BLOCKS], *w_down[MAX_BLOCKS], *gamma_final;
	int residual; /* 0: no residual stream (--no-residual) */
} Model;

static void model_free(Model *m)
{
	for (int b = 0; b < m->blocks; b++)
		free(m->gamma[b]), free(m->w_up[b]), free(m->w_down[b]);
	free(m->gamma_final);
}

/* model_init: w_up ~ N(0, 1/hidden), w_down ~ N(0, 1/ffn), gammas 1 + gamma_noise * N(0, 1)
 * (the final gamma is 1: the outlier channels dominate the output, and a random final gamma
 * would make the loss mostly about them). Returns 0 when out of memory. */
static int model_init(Model *m, const Options *o, unsigned long long seed, double gamma_noise)
{
	Rng r = {.s = seed};
	*m = (Model){o->blocks, o->hidden, o->ffn, o->gelu ? o->ffn : 2 * o->ffn, o->gelu, {0}, {0}, {0}, NULL, o->residual};
	size_t H = (size_t)o->hidden, F = (size_t)o->ffn, U = (size_t)m->up;
	for (int b = 0; b < m->blocks; b++) {
		m->gamma[b] = malloc(H * sizeof(float));
		m->w_up[b] = malloc(U * H * sizeof(float));
		m->w_down[b] = malloc(H * F * sizeof(float));
		if (!m->gamma[b] || !m->w_up[b] || !m->w_down[b])
			return 0;
		for (size_t i = 0; i < H; i++)
			m->gamma[b][i] = (float)(1.0 + gamma_noise * rng_gauss(&r));
		for (size_t i = 0; i < U * H; i++)
			m->w_up[b][i] = (float)(rng_gauss(&r) / sqrt((double)H));
		for (size_t i = 0; i < H * F; i++)
			m->w_down[b][i] = (float)(rng_gauss(&r) / sqrt((double)F));
	}
	m->gamma_final = malloc(H * sizeof(float));
	if (!m->gamma_final)
		return 0;
	for (size_t i = 0; i < H; i++)
		m->gamma_final[i] = 1.0f;
	return 1;
}

/* rmsnorm_row: out = (in + res) * rsqrt(mean((in + res)^2) + eps) * gamma; sum gets in + res. */
static void rmsnorm_row(const float *in, const float *res, const float *gamma, int n, float *sum, float *out)
{
	double ss = 0.0;
	for (int c = 0; c < n; c++) {
		sum[c] = in[c] + (res ? res[c] : 0.0f);
		ss += (double)sum[c] * sum[c];
	}
	double rs = 1.0 / sqrt(ss / n + 1e-5);
	for (int c = 0; c < n; c++)
		out[c] = (float)(sum[c] * rs * gamma[c]);
}

/* forward_host: the model in FP32 (double sums) on rows of x, the same math as the spec: per block
 * r = in + r_prev, xn = rmsnorm(r), h = xn W_up^T, act = silu(h[:ffn]) * h[ffn:] (GELU: tanh-approximate
 * gelu(h)), y = act W_down^T;
 * out = rmsnorm(y_last + r_last). For checks on a few rows (slow at scale). 0: out of memory. */
static int forward_host(const Model *m, const float *x, int rows, float *out)
{
	int H = m->hidden, F = m->ffn;
	float *in = malloc(sizeof(float) * (size_t)(4 * H + 3 * F));
	if (!in)
		return 0;
	float *res = in + H, *xn = res + H, *sum = xn + H, *h = sum + H, *act = h + 2 * F;
	for (int t = 0; t < rows; t++) {
		memcpy(in, x + (size_t)t * H, sizeof(float) * (size_t)H);
		for (int b = 0; b < m->blocks; b++) {
			rmsnorm_row(in, b && m->residual ? res : NULL, m->gamma[b], H, sum, xn);
			memcpy(res, sum, sizeof(float) * (size_t)H);
			for (int n = 0; n < m->up; n++) {
				double s = 0.0;
				for (int k = 0; k < H; k++)
					s += (double)xn[k] * m->w_up[b][(size_t)n * H + k];
				h[n] = (float)s;
			}
			for (int n = 0; n < F; n++) {
				const double v = h[n]; /* gelu: v sigmoid(2 sqrt(2/pi) (v + 0.044715 v^3)), as tegen's */
				act[n] = m->gelu ? (float)(v / (1.0 + exp(-1.5957691216057308 * (v + 0.044715 * v * v * v))))
					: (float)(v / (1.0 + exp(-v)) * h[F + n]);
			}
			for (int n = 0; n < H; n++) {
				double s = 0.0;
				for (int k = 0; k < F; k++)
					s += (double)act[k] * m->w_down[b][(size_t)n * F + k];
				in[n] = (float)s;
			}
		}
		rmsnorm_row(in, m->residual ? res : NULL, m->gamma_final, H, sum, out + (size_t)t * H);
	}
	free(in);
	return 1;
}

/* mse_and_grad: loss = mean((y - t)^2) over n values; d[i] = 2 (y - t) / n (BF16) when d is not NULL. */
static double mse_and_grad(const float *y, const float *target, size_t n, uint16_t *d)
{
	double s = 0.0;
	for (size_t i = 0; i < n; i++) {
		double e = (double)y[i] - target[i];
		s += e * e;
		if (d)
			d[i] = to_bf16((float)(2.0 * e / (double)n));
	}
	return s / (double)n;
}

/* ---------------------------------------------------------------- spec text */

typedef struct Text { char *s; size_t len, cap; int oom; } Text;

static void put(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(Text *t, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->oom = 1;
			return;
		}
		if (t->s && t->len + (size_t)n < t->cap) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = (t->cap + (size_t)n + 1) * 2;
		char *s = realloc(t->s, cap);
		if (!s) {
			t->oom = 1;
			return;
		}
		t->s = s, t->cap = cap;
	}
}

/* recipe_lines writes the recipe (and overrides) of a training recipe: the defaults of Transformer
 * Engine's recipe of the same name (HYBRID for the per-tensor FP8 ones, E4M3 for the block ones;
 * block: 1x128 activations and gradients, 128x128 weights). */
static void recipe_lines(Text *t, const Options *o)
{
	const char *r = o->recipe;
	int quantized_blocks = o->blocks - o->bf16_last;
	if (!strcmp(r, "delayed"))
		put(t, "recipe: {scaling: delayed, format: hybrid}\n");
	else if (!strcmp(r, "current"))
		put(t, "recipe: {scaling: current, format: hybrid}\n");
	else if (!strcmp(r, "block")) {
		put(t, "recipe: {scaling: block1x128, format: e4m3}\n");
		if (quantized_blocks > 0) {
			put(t, "overrides:\n");
			for (int b = 0; b < quantized_blocks; b++)
				put(t, "  wu%d_q: {scaling: block128x128}\n  wd%d_q: {scaling: block128x128}\n", b, b);
		}
	} else if (!strcmp(r, "mxfp8"))
		put(t, "recipe: {scaling: mxfp8, format: e4m3}\n");
	else if (!strcmp(r, "nvfp4"))
		put(t, "recipe: {scaling: nvfp4}\n");
}

/* spec_text returns the spec of the student (teacher = 0: BF16 tensors, the recipe, backward and
 * the optimizer; its last o->bf16_last blocks unquantized) or of the teacher (teacher = 1: FP32,
 * recipe none, forward only). Tensors: x, per block g<b>, wu<b>, wd<b>; gf; the output out. The
 * stream: block 0 normalizes x; block b > 0 normalizes r<b> = y<b-1> + (x or r<b-1>); the final
 * norm reads y<last> + the stream (the form of specs/tiny_residual_train.yaml). NULL: out of memory. */
static char *spec_text(const Options *o, int teacher)
{
	Text t = {0};
	char final_res[32];
	const char *dt = teacher ? "fp32" : "bf16";
	int quantized_blocks = teacher || !strcmp(o->recipe, "bf16") ? 0 : o->blocks - o->bf16_last;
	put(&t, "# generated by examples/train.c: %s, %d blocks\n", teacher ? "the FP32 teacher" : o->recipe, o->blocks);
	put(&t, "layer: %s\n", teacher ? "teacher" : "student");
	put(&t, "dims: {tokens: dynamic, hidden: %d, ffn: %d}\n", o->hidden, o->ffn);
	if (quantized_blocks > 0)
		recipe_lines(&t, o);
	put(&t, "tensors:\n");
	put(&t, "  x: {shape: [tokens, hidden], dtype: %s}\n", dt);
	for (int b = 0; b < o->blocks; b++) {
		put(&t, "  g%d: {shape: [hidden], dtype: %s, role: weight}\n", b, dt);
		put(&t, "  wu%d: {shape: [%sffn, hidden], dtype: %s, role: weight}\n", b, o->gelu ? "" : "2*", dt);
		put(&t, "  wd%d: {shape: [hidden, ffn], dtype: %s, role: weight}\n", b, dt);
	}
	put(&t, "  gf: {shape: [hidden], dtype: %s, role: weight}\n", dt);
	put(&t, "ops:\n");
	for (int b = 0; b < o->blocks; b++) {
		int q = b < quantized_blocks;
		char in[16], res[64], prec[32];
		snprintf(in, sizeof in, b ? "y%d" : "x", b - 1);
		res[0] = 0; /* block b > 0 adds y<b-1> to the stream: x, then r1, r2, ... */
		if (o->residual && b == 1)
			snprintf(res, sizeof res, "residual: x, residual_out: r1, ");
		else if (o->residual && b > 1)
			snprintf(res, sizeof res, "residual: r%d, residual_out: r%d, ", b - 1, b);
		/* block scaling: the fused norm and GLU write no columnwise block copy (the wgrad
		 * operand), so they write BF16 and a cast_transpose writes both block-scaled copies */
		int cast = q && !strcmp(o->recipe, "block");
		snprintf(prec, sizeof prec, q && !cast ? "" : ", precision: %s", dt);
		put(&t, "  - norm_quantize: {in: %s, %sgamma: g%d, out: xn%d%s}\n", in, res, b, b, prec);
		if (cast)
			put(&t, "  - cast_transpose: {in: xn%d, out: xn%d_q}\n", b, b);
		if (q)
			put(&t, "  - quantize: {in: wu%d, out: wu%d_q}\n", b, b);
		put(&t, "  - gemm_cast: {a: xn%d%s, b: wu%d%s, out: h%d, dtype: %s}\n", b, cast ? "_q" : "", b, q ? "_q" : "", b,
			dt);
		put(&t, "  - glu_amax: {in: h%d, out: a%d, act: %s%s}\n", b, b, o->gelu ? "gelu" : "swiglu", prec);
		if (cast)
			put(&t, "  - cast_transpose: {in: a%d, out: a%d_q}\n", b, b);
		if (q)
			put(&t, "  - quantize: {in: wd%d, out: wd%d_q}\n", b, b);
		put(&t, "  - gemm_cast: {a: a%d%s, b: wd%d%s, out: y%d, dtype: %s}\n", b, cast ? "_q" : "", b, q ? "_q" : "", b,
			dt);
	}
	if (o->blocks == 1)
		snprintf(final_res, sizeof final_res, "residual: x, ");
	else
		snprintf(final_res, sizeof final_res, "residual: r%d, ", o->blocks - 1);
	put(&t, "  - norm_quantize: {in: y%d, %sgamma: gf, out: out, precision: %s}\n", o->blocks - 1,
		o->residual ? final_res : "", dt);
	put(&t, "outputs: [out]\n");
	if (!teacher) {
		put(&t, "backward: true\n");
		put(&t, "optimizer: {kind: adamw, lr: %g, betas: [0.9, 0.95], eps: 1e-8, weight_decay: 0.0}\n", o->lr);
	}
	if (t.oom) {
		free(t.s);
		return NULL;
	}
	return t.s;
}

/* learning_rate at step s (0-based): linear warmup, then cosine from lr to lr/10. */
static double learning_rate(const Options *o, int s)
{
	int warm = (int)(o->warmup * o->steps);
	if (s < warm)
		return o->lr * (s + 1) / warm;
	double p = o->steps - warm > 1 ? (double)(s - warm) / (o->steps - warm - 1) : 1.0;
	return o->lr * (0.1 + 0.45 * (1.0 + cos(3.141592653589793 * p)));
}

/* ---------------------------------------------------------------- selftest (CPU) */

static int failures;
static void expect(int ok, const char *name, const char *why)
{
	if (ok)
		printf("ok train/%s\n", name);
	else
		printf("FAIL train/%s: %s\n", name, why), failures++;
}

static int parses(const char *args, Options *o)
{
	char buf[512], *argv[32];
	int argc = 0;
	snprintf(buf, sizeof buf, "train %s", args);
	for (char *p = strtok(buf, " "); p && argc < 32; p = strtok(NULL, " "))
		argv[argc++] = p;
	FILE *devnull = fopen("/dev/null", "w");
	int rc = parse_options(argc, argv, o, devnull ? devnull : stderr);
	if (devnull)
		fclose(devnull);
	return rc;
}

static void selftest_options(void)
{
	Options o;
	expect(parses("", &o) == 0 && !strcmp(o.recipe, "bf16") && o.blocks == 4 && o.hidden == 256 && o.ffn == 768 &&
		       o.tokens == 512 && o.outliers == 4,
		"options/defaults", "the defaults changed");
	expect(parses("--recipe nvfp4 --blocks 6 --bf16-last 2 --hidden 512 --ffn 1536 --tokens 256 --steps 9 --seed 7 "
		      "--lr 1e-3 --print-every 3 --csv a.csv",
		       &o) == 0 &&
		       !strcmp(o.recipe, "nvfp4") && o.blocks == 6 && o.bf16_last == 2 && o.hidden == 512 && o.ffn == 1536 &&
		       o.tokens == 256 && o.steps == 9 && o.seed == 7 && o.lr == 1e-3 && o.print_every == 3 &&
		       !strcmp(o.csv, "a.csv") && o.outliers == 8,
		"options/all", "a value was not taken");
	expect(parses("--target-noise 0.1 --teacher-ffn 3072", &o) == 0 && o.target_noise == 0.1 && o.teacher_ffn == 3072 &&
		       teacher_options(&o).ffn == 3072 && o.ffn == 768,
		"options/teacher", "--target-noise / --teacher-ffn not taken");
	const char *bad[] = {"--recipe fp8", "--blocks 0", "--hidden 100", "--tokens 12x", "--lr -1", "--steps",
			     "--bogus", "--blocks 2 --bf16-last 3", "--outliers 300", "--warmup 2", "--teacher-ffn 100", "--act relu",
			     "--target-noise -1"};
	int all = 1;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (parses(bad[i], &o) != 2) {
			printf("  '%s' was accepted\n", bad[i]);
			all = 0;
		}
	expect(all, "options/errors", "a bad command line was accepted");
	o.steps = 100, o.warmup = 0.1, o.lr = 1.0;
	expect(fabs(learning_rate(&o, 0) - 0.1) < 1e-12 && fabs(learning_rate(&o, 9) - 1.0) < 1e-12 &&
		       fabs(learning_rate(&o, 10) - 1.0) < 1e-12 && fabs(learning_rate(&o, 99) - 0.1) < 1e-12,
		"options/schedule", "the warmup/cosine schedule is off");
}

static void selftest_data(void)
{
	enum { H = 256, T = 2048 };
	unsigned char out[H];
	outlier_channels(1234, H, 4, out);
	int n = 0;
	for (int c = 0; c < H; c++)
		n += out[c];
	expect(n == 4, "data/outlier-count", "not 4 outlier channels");
	float *x = malloc(sizeof(float) * H * T);
	if (!x) {
		expect(0, "data/alloc", "out of memory");
		return;
	}
	Rng r = {.s = 42};
	make_inputs(&r, out, T, H, x);
	/* per class of channel: mean |x|, kurtosis, share of |x| > 5 sigma */
	double abs_in = 0, abs_out = 0, m2 = 0, m4 = 0, far = 0, nin = 0, nout = 0;
	for (int t = 0; t < T; t++)
		for (int c = 0; c < H; c++) {
			double v = x[(size_t)t * H + c];
			if (out[c])
				abs_out += fabs(v), nout++;
			else
				abs_in += fabs(v), m2 += v * v, m4 += v * v * v * v, nin++;
		}
	double var = m2 / nin, kurt = m4 / nin / (var * var), sigma = sqrt(var);
	for (int t = 0; t < T; t++)
		for (int c = 0; c < H; c++)
			if (!out[c] && fabs(x[(size_t)t * H + c]) > 5 * sigma)
				far++;
	double ratio = (abs_out / nout) / (abs_in / nin);
	char why[160];
	snprintf(why, sizeof why, "outlier/normal mean |x| = %.1f, want 70..140", ratio);
	expect(ratio > 70 && ratio < 140, "data/outliers-100x", why);
	snprintf(why, sizeof why, "variance %.3f, want 5/3 (Student-t, %d dof) +- 15%%", var, STUDENT_T_DOF);
	expect(fabs(var - 5.0 / 3.0) < 0.25, "data/variance", why);
	snprintf(why, sizeof why, "kurtosis %.2f, a Gaussian's is 3; want > 5", kurt);
	expect(kurt > 5, "data/heavy-tails", why);
	snprintf(why, sizeof why, "%.2g of values beyond 5 sigma, a Gaussian has 5.7e-7; want > 1e-4", far / nin);
	expect(far / nin > 1e-4, "data/tail-mass", why);
	free(x);
}

static void selftest_teacher(void)
{
	/* one block, hidden 2, ffn 1, one token, by hand:
	 * x = (3, 4): r = x, rms = sqrt(12.5 + 1e-5), xn = x / rms * gamma (gamma = (1, 2));
	 * h = (xn . wu0, xn . wu1), act = silu(h0) h1, y = act * wd (wd = (0.5, -1));
	 * out = (y + r) / rms(y + r) * gf (gf = 1). */
	float g[2] = {1, 2}, wu[4] = {0.5f, -0.25f, 1.0f, 0.75f}, wd[2] = {0.5f, -1.0f}, gf[2] = {1, 1};
	Model m = {1, 2, 1, 2, 0, {g}, {wu}, {wd}, gf, 1};
	float x[2] = {3, 4}, out[2];
	double rs = 1.0 / sqrt(12.5 + 1e-5);
	double xn0 = 3 * rs * 1, xn1 = 4 * rs * 2;
	double h0 = 0.5 * xn0 - 0.25 * xn1, h1 = 1.0 * xn0 + 0.75 * xn1;
	double act = h0 / (1 + exp(-h0)) * h1;
	double s0 = 3 + 0.5 * act, s1 = 4 - 1.0 * act;
	double rs2 = 1.0 / sqrt((s0 * s0 + s1 * s1) / 2 + 1e-5);
	int ok = forward_host(&m, x, 1, out);
	char why[160];
	snprintf(why, sizeof why, "got (%.7g, %.7g), by hand (%.7g, %.7g)", out[0], out[1], s0 * rs2, s1 * rs2);
	expect(ok && fabs(out[0] - s0 * rs2) < 1e-6 && fabs(out[1] - s1 * rs2) < 1e-6, "teacher/by-hand", why);

	/* two blocks: the second block's residual is the first's sum */
	Options o;
	parses("--blocks 2 --hidden 128 --ffn 128", &o);
	Model t;
	float *xx = malloc(sizeof(float) * 128 * 3), *yy = malloc(sizeof(float) * 128 * 3);
	ok = xx && yy && model_init(&t, &o, 5, 0.1);
	if (ok) {
		unsigned char oc[128];
		outlier_channels(5, 128, 2, oc);
		Rng r = {.s = 9};
		make_inputs(&r, oc, 3, 128, xx);
		ok = forward_host(&t, xx, 3, yy);
		double ss = 0;
		for (int c = 0; c < 128; c++)
			ss += (double)yy[c] * yy[c];
		/* gf = 1: every output row has rms 1 (up to eps) */
		snprintf(why, sizeof why, "row rms %.6f, want 1", sqrt(ss / 128));
		expect(ok && fabs(sqrt(ss / 128) - 1) < 1e-4, "teacher/output-rms", why);
		uint16_t d[128 * 3];
		float target[128 * 3];
		for (int i = 0; i < 128 * 3; i++)
			target[i] = yy[i] + (i % 2 ? 0.5f : -0.5f);
		double loss = mse_and_grad(yy, target, 128 * 3, d);
		snprintf(why, sizeof why, "loss %.6g (want 0.25), d[0] %.6g (want %.6g)", loss, from_bf16(d[0]),
			 -2 * -0.5 / (128 * 3));
		expect(fabs(loss - 0.25) < 1e-6 && fabs(from_bf16(d[0]) - 1.0 / 384) < 1e-5, "teacher/mse", why);
		/* without the residual stream the output changes; with one block and no stream the
		 * final norm reads the block's output alone */
		float zz[128];
		t.residual = 0;
		ok = forward_host(&t, xx, 1, zz);
		double diff = 0;
		for (int c = 0; c < 128; c++)
			diff = fmax(diff, fabs((double)zz[c] - yy[c]));
		snprintf(why, sizeof why, "max |with - without| %.3g, want > 0.01", diff);
		expect(ok && diff > 0.01, "teacher/no-residual", why);
	} else
		expect(0, "teacher/output-rms", "out of memory");
	if (xx && yy)
		model_free(&t);
	free(xx), free(yy);
}

static void selftest_spec(void)
{
	Options o;
	parses("--recipe delayed --blocks 3 --bf16-last 1", &o);
	char *s = spec_text(&o, 0), *t = spec_text(&o, 1);
	expect(s && strstr(s, "backward: true") && strstr(s, "optimizer: {kind: adamw") && strstr(s, "wu1_q") &&
		       !strstr(s, "wu2_q") && strstr(s, "out: xn2, precision: bf16"),
		"spec-text/student", "the student spec lacks a part (backward, optimizer, quantized blocks 0-1, BF16 block 2)");
	expect(t && !strstr(t, "backward") && !strstr(t, "recipe") && !strstr(t, "- quantize:") && strstr(t, "dtype: fp32"),
		"spec-text/teacher", "the teacher spec should be FP32, recipe none, forward only");
	free(s), free(t);
	parses("--no-residual --blocks 2", &o);
	s = spec_text(&o, 0);
	expect(s && !strstr(s, "residual") && strstr(s, "{in: y0, gamma: g1, out: xn1"),
		"spec-text/no-residual", "--no-residual should chain the blocks without residual arguments");
	free(s);
	expect(parses("--act gelu --blocks 1", &o) == 0 && o.gelu, "options/act", "--act gelu not taken");
	s = spec_text(&o, 0);
	expect(s && strstr(s, "wu0: {shape: [ffn, hidden]") && strstr(s, "act: gelu"),
		"spec-text/gelu", "--act gelu: the up weight [ffn, hidden] and a gelu glu_amax");
	free(s);
}

static int selftest(void)
{
	selftest_options();
	selftest_data();
	selftest_teacher();
	selftest_spec();
	return failures ? 1 : 0;
}

/* ---------------------------------------------------------------- the GPU part */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* A device buffer bound by name. */
typedef struct Binding { char name[16]; void *dev; } Binding;

typedef struct Gpu {
	TgContext *ctx;
	TgLayer *student, *teacher;
	Binding bind[2 * (3 * MAX_BLOCKS + 8)]; /* both layers' */
	int nbind;
	void *sync_word;     /* 4 bytes read back to wait for the stream */
} Gpu;

#define TRY(call) \
	do { \
		if ((call) != TG_OK) { \
			fprintf(stderr, "train: %s: %s\n", #call, tg_last_error()); \
			return 0; \
		} \
	} while (0)

/* bind_new allocates bytes on the device, fills them from host (NULL: zeros) and binds them to
 * name in layer as [rows, cols] (rows 0: rank 1); returns the device pointer, NULL on failure. */
static void *bind_new(Gpu *g, TgLayer *layer, const char *name, TgDtype dt, long long rows, long long cols,
		      const void *host)
{
	size_t bytes = (size_t)((rows ? rows : 1) * cols) * (dt == TG_FP32 ? 4 : 2);
	void *dev = NULL;
	if (g->nbind == (int)(sizeof g->bind / sizeof *g->bind)) {
		fprintf(stderr, "train: more than %d buffers\n", g->nbind);
		return NULL;
	}
	if (tg_alloc(g->ctx, bytes, &dev) != TG_OK) {
		fprintf(stderr, "train: tg_alloc(%s): %s\n", name, tg_last_error());
		return NULL;
	}
	Binding *b = &g->bind[g->nbind++];
	snprintf(b->name, sizeof b->name, "%s", name);
	b->dev = dev;
	void *zeros = host ? NULL : calloc(1, bytes);
	TgTensorDesc d = {dev, dt, rows ? 2 : 1, {rows ? rows : cols, cols}, {0}};
	if ((!host && !zeros) || tg_memcpy(g->ctx, dev, host ? host : zeros, bytes, TG_HOST_TO_DEVICE) != TG_OK ||
	    tg_bind(layer, name, &d) != TG_OK) {
		fprintf(stderr, "train: binding %s: %s\n", name, host || zeros ? tg_last_error() : "out of memory");
		free(zeros);
		return NULL;
	}
	free(zeros);
	return dev;
}

/* bind_model binds a model's weights to layer, as FP32 (teacher) or BF16 (student). */
static int bind_model(Gpu *g, TgLayer *layer, const Model *m, TgDtype dt)
{
	size_t most = (size_t)m->up * m->hidden;
	uint16_t *h = malloc(most * 2);
	if (!h)
		return 0;
	int ok = 1;
	for (int b = 0; b <= m->blocks && ok; b++) {
		struct { const char *fmt; const float *w; long long rows, cols; } t[3] = {
			{"g%d", b < m->blocks ? m->gamma[b] : m->gamma_final, 0, m->hidden},
			{"wu%d", b < m->blocks ? m->w_up[b] : NULL, m->up, m->hidden},
			{"wd%d", b < m->blocks ? m->w_down[b] : NULL, m->hidden, m->ffn},
		};
		for (int k = 0; k < (b < m->blocks ? 3 : 1) && ok; k++) {
			char name[16];
			if (b < m->blocks)
				snprintf(name, sizeof name, t[k].fmt, b);
			else
				snprintf(name, sizeof name, "gf");
			size_t n = (size_t)((t[k].rows ? t[k].rows : 1) * t[k].cols);
			if (dt == TG_BF16)
				for (size_t i = 0; i < n; i++)
					h[i] = to_bf16(t[k].w[i]);
			ok = bind_new(g, layer, name, dt, t[k].rows, t[k].cols, dt == TG_BF16 ? (void *)h : (const void *)t[k].w) != NULL;
		}
	}
	free(h);
	return ok;
}

static int sync_stream(Gpu *g) /* tg_memcpy waits for the work before it on the default stream */
{
	float w;
	return tg_memcpy(g->ctx, &w, g->sync_word, sizeof w, TG_DEVICE_TO_HOST) == TG_OK;
}

/* make_layer creates, sizes and loads a layer from generated spec text. */
static int make_layer(Gpu *g, const char *name, const char *text, long long tokens, TgLayer **out)
{
	TRY(tg_layer_create(g->ctx, name, text, strlen(text), out));
	TRY(tg_layer_set_tokens(*out, tokens));
	double t0 = now_ms();
	TRY(tg_layer_load(*out));
	printf("%s: %d kernels loaded in %.1f s\n", name, tg_layer_kernel_count(*out), (now_ms() - t0) / 1e3);
	return 1;
}

/* targets: the teacher's outputs for every pool batch, computed on the GPU (FP32, recipe none),
 * checked against forward_host on the first rows of batch 0. */
static int make_targets(Gpu *g, const Options *o, const Model *teacher, const float *pool, float *targets)
{
	char *text = spec_text(o, 1);
	if (!text || !make_layer(g, "teacher", text, o->tokens, &g->teacher)) {
		free(text);
		return 0;
	}
	free(text);
	long long T = o->tokens, H = o->hidden;
	size_t batch = (size_t)(T * H);
	void *x = bind_new(g, g->teacher, "x", TG_FP32, T, H, pool);
	void *y = x ? bind_new(g, g->teacher, "out", TG_FP32, T, H, NULL) : NULL;
	if (!y || !bind_model(g, g->teacher, teacher, TG_FP32))
		return 0;
	for (int p = 0; p < o->pool; p++) {
		TRY(tg_memcpy(g->ctx, x, pool + batch * (size_t)p, batch * 4, TG_HOST_TO_DEVICE));
		TRY(tg_run(g->teacher, NULL));
		TRY(tg_memcpy(g->ctx, targets + batch * (size_t)p, y, batch * 4, TG_DEVICE_TO_HOST));
	}
	enum { CHECK_ROWS = 4 };
	float *ref = malloc(sizeof(float) * CHECK_ROWS * (size_t)H);
	if (!ref || !forward_host(teacher, pool, CHECK_ROWS, ref)) {
		free(ref);
		fprintf(stderr, "train: out of host memory\n");
		return 0;
	}
	double worst = 0; /* |diff| / (1 + |host|): the outlier channels' outputs are ~8, the rest ~0.1 */
	for (long long i = 0; i < CHECK_ROWS * H; i++)
		worst = fmax(worst, fabs((double)ref[i] - targets[i]) / (1.0 + fabs((double)ref[i])));
	free(ref);
	printf("teacher: %d batches of %d tokens on the GPU (FP32); vs the host on %d rows: max |diff|/(1+|x|) %.2g\n",
	       o->pool, o->tokens, CHECK_ROWS, worst);
	if (!(worst < 1e-3)) {
		fprintf(stderr, "train: the GPU teacher disagrees with the host forward (max |diff|/(1+|x|) %g)\n", worst);
		return 0;
	}
	return 1;
}

/* write_file writes n bytes to DIR/name; 0 on failure (message printed). */
static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(p, 1, n, f) == n;
	if (f && fclose(f))
		ok = 0;
	if (!ok)
		fprintf(stderr, "train: cannot write %s\n", path);
	return ok;
}

/* dump_run writes what python/examples/train.py needs to replay this run step for step: the
 * student spec (spec.yaml), the options (run.json), the BF16 input pool (pool.bin, [pool][T][H]),
 * the FP32 targets (targets.bin) and each initial student weight in BF16 (<name>.bin). */
static int dump_run(const Options *o, const char *spec, const uint16_t *pool16, const float *targets, const Model *m)
{
	size_t pool_n = (size_t)o->pool * (size_t)o->tokens * (size_t)o->hidden;
	char json[1024];
	snprintf(json, sizeof json,
		 "{\"recipe\": \"%s\", \"tokens\": %d, \"hidden\": %d, \"ffn\": %d, \"blocks\": %d, \"pool\": %d, "
		 "\"steps\": %d, \"lr\": %.17g, \"warmup\": %.17g, \"print_every\": %d, \"up\": %d}\n",
		 o->recipe, o->tokens, o->hidden, o->ffn, o->blocks, o->pool, o->steps, o->lr, o->warmup, o->print_every, m->up);
	if (!write_file(o->dump, "spec.yaml", spec, strlen(spec)) || !write_file(o->dump, "run.json", json, strlen(json)) ||
	    !write_file(o->dump, "pool.bin", pool16, pool_n * 2) || !write_file(o->dump, "targets.bin", targets, pool_n * 4))
		return 0;
	size_t most = (size_t)m->up * m->hidden;
	uint16_t *h = malloc(most * 2);
	int ok = h != NULL;
	for (int b = 0; b <= m->blocks && ok; b++) {
		const float *w[3] = {b < m->blocks ? m->gamma[b] : m->gamma_final, b < m->blocks ? m->w_up[b] : NULL,
				     b < m->blocks ? m->w_down[b] : NULL};
		size_t n[3] = {(size_t)m->hidden, most, (size_t)m->hidden * m->ffn};
		const char *fmt[3] = {"g%d.bin", "wu%d.bin", "wd%d.bin"};
		for (int k = 0; k < (b < m->blocks ? 3 : 1) && ok; k++) {
			char name[32];
			if (b < m->blocks)
				snprintf(name, sizeof name, fmt[k], b);
			else
				snprintf(name, sizeof name, "gf.bin");
			for (size_t i = 0; i < n[k]; i++)
				h[i] = to_bf16(w[k][i]);
			ok = write_file(o->dump, name, h, n[k] * 2);
		}
	}
	free(h);
	return ok;
}

typedef struct StepTimes { double step, gpu, fwd, bwd, opt; } StepTimes;

#define TRY_OUT(call) \
	do { \
		if ((call) != TG_OK) { \
			fprintf(stderr, "train: %s: %s\n", #call, tg_last_error()); \
			goto out; \
		} \
	} while (0)

static int train(Gpu *g, const Options *o)
{
	long long T = o->tokens, H = o->hidden;
	size_t batch = (size_t)(T * H), pool_n = batch * (size_t)o->pool;
	unsigned char *is_outlier = malloc((size_t)H);
	float *pool = malloc(pool_n * sizeof(float)), *targets = malloc(pool_n * sizeof(float));
	uint16_t *pool16 = malloc(pool_n * 2), *y16 = malloc(batch * 2), *d16 = malloc(batch * 2);
	float *y = malloc(batch * sizeof(float));
	Model teacher = {0}, student = {0};
	const Options to = teacher_options(o);
	FILE *csv = NULL;
	int ok = 0;
	if (!is_outlier || !pool || !targets || !pool16 || !y16 || !d16 || !y ||
	    !model_init(&teacher, &to, o->teacher_seed, 0.1) || !model_init(&student, o, o->seed ^ 0x5EED, 0.0)) {
		fprintf(stderr, "train: out of host memory\n");
		goto out;
	}
	outlier_channels(o->teacher_seed, (int)H, o->outliers, is_outlier);
	Rng data = {.s = o->seed * 0x2545F4914F6CDD1Dull + 17};
	make_inputs(&data, is_outlier, (int)(T * o->pool), (int)H, pool);
	for (size_t i = 0; i < pool_n; i++)
		pool16[i] = to_bf16(pool[i]);
	if (!make_targets(g, &to, &teacher, pool, targets))
		goto out;
	if (o->target_noise > 0) { /* an irreducible loss of target_noise^2, fixed per seed */
		Rng noise = {.s = o->seed * 0x9E3779B97F4A7C15ull + 99};
		for (size_t i = 0; i < pool_n; i++)
			targets[i] += (float)(o->target_noise * rng_gauss(&noise));
		printf("targets: + N(0, %g^2) noise: the loss cannot fall below %.4g\n", o->target_noise,
		       o->target_noise * o->target_noise);
	}
	tg_layer_destroy(g->teacher), g->teacher = NULL;

	char *text = spec_text(o, 0);
	if (!text || !make_layer(g, "student", text, T, &g->student) ||
	    (o->dump && !dump_run(o, text, pool16, targets, &student))) {
		free(text);
		goto out;
	}
	free(text);
	void *x = bind_new(g, g->student, "x", TG_BF16, T, H, pool16);
	void *out_dev = x ? bind_new(g, g->student, "out", TG_BF16, T, H, NULL) : NULL;
	void *d_out = out_dev ? bind_new(g, g->student, "d_out", TG_BF16, T, H, NULL) : NULL;
	void *pool_dev = NULL;
	if (!d_out || !bind_model(g, g->student, &student, TG_BF16))
		goto out;
	if (tg_alloc(g->ctx, pool_n * 2, &pool_dev) != TG_OK ||
	    tg_memcpy(g->ctx, pool_dev, pool16, pool_n * 2, TG_HOST_TO_DEVICE) != TG_OK) {
		fprintf(stderr, "train: the input pool: %s\n", tg_last_error());
		goto out;
	}
	if (g->nbind < (int)(sizeof g->bind / sizeof *g->bind))
		g->bind[g->nbind++] = (Binding){"(pool)", pool_dev};
	if (o->csv && !(csv = fopen(o->csv, "w"))) {
		fprintf(stderr, "train: cannot write %s\n", o->csv);
		goto out;
	}
	if (csv)
		fprintf(csv, "step,loss,step_ms,gpu_ms,fwd_ms,bwd_ms,opt_ms,lr\n");
	printf("training: recipe %s, %d blocks (last %d BF16, %s), hidden %lld, ffn %d, %lld tokens/step, %d steps, "
	       "seed %llu\n",
	       o->recipe, o->blocks, o->bf16_last, o->residual ? "residual stream" : "no residual stream", H, o->ffn, T,
	       o->steps, o->seed);

	StepTimes sum = {0};
	int summed = 0;
	for (int s = 0; s < o->steps; s++) {
		StepTimes st;
		double lr = learning_rate(o, s), t0 = now_ms();
		int p = s % o->pool;
		TRY_OUT(tg_memcpy(g->ctx, x, (char *)pool_dev + batch * 2 * (size_t)p, batch * 2, TG_DEVICE_TO_DEVICE));
		TRY_OUT(tg_set_learning_rate(g->student, (float)lr, NULL));
		double t1 = now_ms();
		TRY_OUT(tg_run(g->student, NULL));
		TRY_OUT(tg_memcpy(g->ctx, y16, out_dev, batch * 2, TG_DEVICE_TO_HOST)); /* waits for the forward */
		double t2 = now_ms();
		for (size_t i = 0; i < batch; i++)
			y[i] = from_bf16(y16[i]);
		double loss = mse_and_grad(y, targets + batch * (size_t)p, batch, d16);
		if (!isfinite(loss)) {
			fprintf(stderr, "train: the loss is %g at step %d\n", loss, s + 1);
			goto out;
		}
		TRY_OUT(tg_memcpy(g->ctx, d_out, d16, batch * 2, TG_HOST_TO_DEVICE));
		double t3 = now_ms();
		TRY_OUT(tg_backward(g->student, NULL));
		if (!sync_stream(g))
			goto out;
		double t4 = now_ms();
		TRY_OUT(tg_step(g->student, NULL)); /* new delayed scales first: the step casts the new weights with them */
		TRY_OUT(tg_optimizer_step(g->student, NULL));
		if (!sync_stream(g))
			goto out;
		double t5 = now_ms();
		st = (StepTimes){t5 - t0, (t2 - t1) + (t5 - t3), t2 - t1, t4 - t3, t5 - t4};
		if (s > 0) /* step 1 includes first-use allocations */
			sum.step += st.step, sum.gpu += st.gpu, sum.fwd += st.fwd, sum.bwd += st.bwd, sum.opt += st.opt, summed++;
		if (csv)
			fprintf(csv, "%d,%.8g,%.4f,%.4f,%.4f,%.4f,%.4f,%.6g\n", s + 1, loss, st.step, st.gpu, st.fwd, st.bwd,
				st.opt, lr);
		if ((s + 1) % o->print_every == 0 || s + 1 == o->steps || s == 0) {
			StepTimes a = summed ? (StepTimes){sum.step / summed, sum.gpu / summed, sum.fwd / summed,
							    sum.bwd / summed, sum.opt / summed}
					     : st;
			printf("step %6d  loss %.6g  lr %.3g  step %.3f ms (GPU phases %.3f: fwd %.3f bwd %.3f opt %.3f)\n", s + 1,
			       loss, lr, a.step, a.gpu, a.fwd, a.bwd, a.opt);
			sum = (StepTimes){0}, summed = 0;
		}
	}
	ok = 1;
out:
	if (csv && fclose(csv) != 0) {
		fprintf(stderr, "train: writing %s failed\n", o->csv);
		ok = 0;
	}
	model_free(&teacher), model_free(&student);
	free(is_outlier), free(pool), free(targets), free(pool16), free(y16), free(d16), free(y);
	return ok;
}

/* gemm_share times the student's kernels once (tg_run_timed: forward and backward) and prints the
 * GEMMs' share of that kernel time (GEMM kernels are named *gemm*). */
static void gemm_share(Gpu *g)
{
	int n = tg_layer_kernel_count(g->student);
	float *ms = calloc((size_t)(n > 0 ? n : 1), sizeof *ms);
	if (!ms || tg_run_timed(g->student, NULL, ms, n) != TG_OK) {
		printf("kernel timing unavailable: %s\n", ms ? tg_last_error() : "out of memory");
		free(ms);
		return;
	}
	double gemm = 0, other = 0;
	int timed = 0;
	for (int i = 0; i < n; i++) {
		timed += ms[i] > 0;
		const char *name = "";
		int hit, regs, spills;
		tg_layer_kernel_info(g->student, i, &name, &hit, &regs, &spills);
		if (strstr(name, "gemm"))
			gemm += ms[i];
		else
			other += ms[i];
	}
	printf("kernels (tg_run_timed: the phases it runs, %d of %d kernels): GEMMs %.3f ms (%.0f%%), other %.3f ms\n",
	       timed, n, gemm,
	       gemm + other > 0 ? 100 * gemm / (gemm + other) : 0.0, other);
	free(ms);
}

int main(int argc, char **argv)
{
	Options o;
	int rc = parse_options(argc, argv, &o, stderr);
	if (rc)
		return rc;
	if (o.selftest)
		return selftest();
	if (o.print_spec) {
		Options to = teacher_options(&o);
		char *s = o.print_spec == 2 ? spec_text(&to, 1) : spec_text(&o, 0);
		if (!s)
			return 1;
		fputs(s, stdout);
		free(s);
		return 0;
	}
	Gpu g = {0};
	if (tg_context_create(NULL, &g.ctx) != TG_OK) {
		printf("skip train: no GPU (%s)\n", tg_last_error());
		return 0;
	}
	printf("tegen %s on %s\n", tg_version(), tg_context_arch(g.ctx));
	rc = 1;
	if (tg_alloc(g.ctx, 256, &g.sync_word) == TG_OK && train(&g, &o)) {
		gemm_share(&g);
		rc = 0;
	}
	tg_layer_destroy(g.student);
	tg_layer_destroy(g.teacher);
	for (int i = 0; i < g.nbind; i++)
		tg_free(g.ctx, g.bind[i].dev);
	tg_free(g.ctx, g.sync_word);
	tg_context_destroy(g.ctx);
	return rc;
}
