/* test_nccl.c: the NCCL loader and tegen.h's communicator calls, no GPU needed.
 *   test_nccl            TEGEN_NCCL_LIB pointing nowhere: every call fails with a message naming
 *                        what was looked for; argument errors come first (TG_ERR_ARG).
 *   test_nccl --real     the system's NCCL when there is one (libnccl.so.2): loads, makes an id;
 *                        a skip line where it is not installed (CI). */
#include "nccl.h"
#include "tegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;

static void expect(int ok, const char *name, const char *why)
{
	if (ok)
		printf("ok nccl/%s\n", name);
	else {
		printf("FAIL nccl/%s: %s\n", name, why);
		fails++;
	}
}

int main(int argc, char **argv)
{
	char err[512] = "";
	if (argc > 1 && !strcmp(argv[1], "--real")) {
		if (nccl_load(err, sizeof err)) {
			printf("skip nccl/real: %s\n", err);
			return 0;
		}
		unsigned char id[128];
		expect(tg_nccl_unique_id(id) == TG_OK, "real/unique-id", tg_last_error());
		return fails ? 1 : 0;
	}
	setenv("TEGEN_NCCL_LIB", "/nonexistent/libnccl.so.2", 1);
	expect(nccl_load(err, sizeof err) == -1 && strstr(err, "/nonexistent/libnccl.so.2") && strstr(err, "TEGEN_NCCL_LIB"),
		"missing/load", err);
	expect(nccl_group_start(err, sizeof err) == -1 && strstr(err, "NCCL is not available"), "missing/group", err);
	unsigned char id[128];
	expect(tg_nccl_unique_id(id) == TG_ERR_UNSUPPORTED && strstr(tg_last_error(), "NCCL is not available"),
		"missing/unique-id", tg_last_error());
	void *comm = (void *)1;
	expect(tg_nccl_comm_create(2, id, 0, &comm) == TG_ERR_UNSUPPORTED && comm == NULL, "missing/comm-create",
		tg_last_error());
	expect(tg_nccl_comm_create(2, id, 2, &comm) == TG_ERR_ARG, "args/rank-out-of-range", tg_last_error());
	expect(tg_nccl_comm_create(0, id, 0, &comm) == TG_ERR_ARG, "args/no-ranks", tg_last_error());
	expect(tg_nccl_unique_id(NULL) == TG_ERR_ARG, "args/null-id", tg_last_error());
	expect(tg_layer_set_comm(NULL, NULL, TG_REDUCE_ALL) == TG_ERR_ARG, "args/null-layer", tg_last_error());
	tg_nccl_comm_destroy(NULL); /* a no-op */
	return fails ? 1 : 0;
}
