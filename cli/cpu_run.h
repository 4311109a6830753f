/* cpu_run.h: `tegen run --cpu` (see cpu_run.c). */
#ifndef TG_CPU_RUN_H
#define TG_CPU_RUN_H

/* cmd_run_cpu runs spec at tokens through the reference interpreter (inputs from in_dir
 * where it has them), prints the time and writes the outputs to out_dir (NULL: none) as
 * a GPU run's --out does. Returns the exit code (0, or 1 with the error printed). */
int cmd_run_cpu(const char *spec, long tokens, const char *in_dir, const char *out_dir);

#endif
