/* replay.c: a main() for a fuzz target where libFuzzer is not available: runs
 * LLVMFuzzerTestOneInput once on each file named on the command line (the seed
 * corpus, or a crash file) and prints "replayed N inputs". Built with the
 * sanitizers by tests/fuzz.sh; no mutation, so it only replays what exists. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int n = 0;
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 1;
		}
		size_t cap = 1 << 16, len = 0, got;
		uint8_t *buf = malloc(cap);
		while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0)
			if ((len += got) == cap) {
				uint8_t *more = realloc(buf, cap *= 2);
				if (!more)
					free(buf);
				buf = more;
			}
		fclose(f);
		if (!buf) {
			fprintf(stderr, "replay: out of memory\n");
			return 1;
		}
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		n++;
	}
	printf("replayed %d inputs\n", n);
	return 0;
}
