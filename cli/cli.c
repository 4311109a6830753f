/* cli.c: the commands' shared helpers (see cli.h): a spec file read with a
 * size limit and plain errors, the GPU present (through the driver, if any),
 * the planner's view of it and its tuning DB, the pipeline front, and the
 * argument parser every command with flags uses. */
#include "cli.h"

#include "cache.h"
#include "commands.h"
#include "cudrv.h"
#include "pipeline.h"

#include <errno.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SPEC_BYTES (4u << 20)


/* Reads a whole file into the arena (NUL-terminated). NULL and a message in err on failure. */
static char *read_file(Arena *a, const char *path, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: error: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		snprintf(err, errlen, "%s: error: is a directory, expected a spec file", path);
		return NULL;
	}
	char *buf = arena_alloc(a, MAX_SPEC_BYTES + 1);
	size_t n = fread(buf, 1, MAX_SPEC_BYTES + 1, f);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		snprintf(err, errlen, "%s: error: cannot read: %s", path, strerror(errno));
		return NULL;
	}
	if (n > MAX_SPEC_BYTES) {
		snprintf(err, errlen, "%s: error: larger than %u bytes; not a spec", path, MAX_SPEC_BYTES);
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

char *cli_read_file(Arena *a, const char *path, size_t *len)
{
	char err[512];
	char *text = read_file(a, path, len, err, sizeof err);
	if (!text)
		fprintf(stderr, "%s\n", err);
	return text;
}

Arch cli_default_arch(void)
{
	Arch a = {90, true};
	if (cudrv_load(NULL, 0) == 0) {
		CUdevice d;
		int maj = 0, min = 0;
		if (!cu.cuDeviceGet(&d, 0) && !cu.cuDeviceGetAttribute(&maj, TG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) &&
			!cu.cuDeviceGetAttribute(&min, TG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d))
			a = (Arch){maj * 10 + min, maj * 10 + min >= 90};
	}
	return a;
}

PlanOptions *cli_plan_options(Arena *a, const char *cachedir, long tokens)
{
	PlanOptions *o = arena_alloc(a, sizeof *o);
	o->tokens = tokens;
	char dir[4096], path[4096];
	if (!cache_dir_resolve(cachedir, dir, sizeof dir) && !cache_tuning_path(dir, path, sizeof path))
		o->tuning_file = arena_strdup(a, path);
	int major = 0, minor = 0;
	CUdevice d;
	char name[256];
	if (cudrv_load(NULL, 0) || cu.cuDeviceGet(&d, 0) || cu.cuDeviceGetName(name, sizeof name, d) ||
		cu.cuDeviceGetAttribute(&o->sms, TG_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d) ||
		cu.cuDriverGetVersion(&o->cuda) || nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
		return o; /* no GPU: heuristic only */
	o->gpu = arena_strdup(a, name);
	o->nvrtc = arena_printf(a, "%d.%d", major, minor);
	return o;
}

Graph *cli_load_graph(Arena *a, const char *path)
{
	size_t len;
	char *text = cli_read_file(a, path, &len);
	Diag *d = arena_alloc(a, sizeof *d);
	Graph *g = text ? pipeline_graph(a, d, path, text, len, cli_default_arch(), false) : NULL;
	if (text && !g)
		fputs(d->msg, stderr);
	return g;
}

const Plan *cli_load_plan(Arena *a, const char *path, const PlanOptions *o)
{
	size_t len;
	char *text = cli_read_file(a, path, &len);
	Diag *d = arena_alloc(a, sizeof *d);
	const Plan *p = text ? pipeline_plan(a, d, path, text, len, cli_default_arch(), false, o) : NULL;
	if (text && !p)
		fputs(d->msg, stderr);
	return p;
}

const Plan *cli_load_plan_targets(Arena *a, const char *path, const char *const *archs, int narch,
	const PlanOptions *o)
{
	size_t len;
	char *text = cli_read_file(a, path, &len);
	Diag *d = arena_alloc(a, sizeof *d);
	const Plan *p = text ? pipeline_plan_targets(a, d, path, text, len, archs, narch, "--arch", o) : NULL;
	if (text && !p)
		fputs(d->msg, stderr);
	return p;
}

int cli_usage(const char *usage)
{
	fputs(usage, stderr);
	return 2;
}

static bool graph_dynamic(const Graph *g)
{
	for (int d = 0; d < g->ndims; d++)
		if (g->dims[d].value < 0)
			return true;
	return false;
}

int cli_static_tokens(const Graph *g, const char *spec, long tokens)
{
	if (graph_dynamic(g) || !tokens)
		return 0;
	fprintf(stderr, "tegen: %s has no dynamic dim (every extent is fixed); --tokens does not apply: drop it, or "
		"make the token dim `dynamic`\n", spec);
	return 1;
}

int cli_run_tokens(const Graph *g, const char *spec, long *tokens)
{
	if (cli_static_tokens(g, spec, *tokens))
		return 1;
	if (!*tokens)
		*tokens = 1024;
	return 0;
}

const char *cli_tokens_label(const Graph *g, long tokens, char *buf, size_t n)
{
	if (graph_dynamic(g))
		snprintf(buf, n, "tokens=%ld", tokens);
	else
		snprintf(buf, n, "static shapes");
	return buf;
}

long cli_tokens(const char *s)
{
	char *end;
	errno = 0;
	long v = s[0] >= '0' && s[0] <= '9' ? strtol(s, &end, 10) : 0;
	if (v < 1 || *end || errno || v > CLI_MAX_TOKENS) {
		fprintf(stderr, "tegen: --tokens: '%.64s' is not a whole number from 1 to %ld\n", s, CLI_MAX_TOKENS);
		return 0;
	}
	return v;
}

int cli_make_dir(const char *dir)
{
	char part[4096]; /* its parents first, as mkdir -p (an existing one is fine; the last mkdir reports) */
	size_t n = strlen(dir);
	if (n < sizeof part)
		for (size_t i = 1; i < n; i++)
			if (dir[i] == '/' && dir[i - 1] != '/') {
				memcpy(part, dir, i);
				part[i] = 0;
				(void)mkdir(part, 0777);
			}
	if (mkdir(dir, 0777) == 0)
		return 0;
	int e = errno;
	struct stat st;
	if (e == EEXIST) /* fine if it is a directory we may write to */
		e = stat(dir, &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : access(dir, W_OK) != 0 ? errno : 0;
	if (e)
		fprintf(stderr, "tegen: cannot create %s: %s\n", dir, strerror(e));
	return e ? -1 : 0;
}

int cli_parse(const CliArgs *c, int argc, char **argv)
{
	bool bad = false;
	for (int i = 0; i < argc; i++) {
		const CliFlag *f = NULL;
		for (int j = 0; j < c->nflags && !f; j++)
			if (!strcmp(argv[i], c->flags[j].name) && (c->flags[j].kind == FLAG_SWITCH || i + 1 < argc))
				f = &c->flags[j];
		if (!f && (argv[i][0] == '-' || !c->positional || *c->positional)) {
			bad = true; /* unknown, without its value, or a positional too many */
			if (!c->read_all)
				break;
		} else if (!f)
			*c->positional = argv[i];
		else if (f->kind == FLAG_SWITCH)
			*(int *)f->out = f->value;
		else if (f->kind == FLAG_STRING)
			*(const char **)f->out = argv[++i];
		else if (f->kind == FLAG_INT)
			*(int *)f->out = atoi(argv[++i]);
		else if (!(*(long *)f->out = cli_tokens(argv[++i])))
			return 2;
	}
	if (bad || (c->required && !*c->positional))
		return cli_usage(c->usage);
	return 0;
}
