/* bench_cmd.h: `tegen bench`, GEMM speed per pass and precision (see bench_cmd.c). */
#ifndef TG_BENCH_CMD_H
#define TG_BENCH_CMD_H

/* cmd_bench: `tegen bench --shapes ... | --hidden ... | --spec ...`; 0 ok, 1 no GPU or a failure, 2 bad usage. */
int cmd_bench(int argc, char **argv);

#endif
