/* cold_time.h: a launch timed from a cold, clean L2 (`tegen run`'s "alone" column, `tegen tune`'s
 * sweeps, and the size-matched copy beside them). Before each timed launch a kernel streams a
 * buffer of twice the L2's size through it by loads: the lines earlier work left dirty are written
 * back then, not inside the timed launch, and none of the timed launch's data is cached. (A flush
 * by writes, the method before the thirty-second session, left the L2 full of dirty lines that the
 * timed launch wrote back: about 50 MB on an H100, as much as a 64 MB kernel's own traffic.) */
#ifndef TG_COLD_TIME_H
#define TG_COLD_TIME_H

#include "cudrv.h"
#include "tegen.h"

#include <stddef.h>

/* The flush kernel: CUDA C++ for NVRTC, entry cold_read_entry(const uint4 *p, unsigned long long n). */
extern const char cold_read_src[], cold_read_entry[];

/* One launch to time on stream s (the default stream); an error is recorded by the launcher. */
typedef TgStatus (*ColdLaunch)(void *arg, CUstream s);

/* cold_time: 3 untimed launches, then iters launches, each after `read` (cold_read_src's kernel,
 * loaded by the caller) streamed flush [flush_bytes, 16-byte words, zeroed: cold_flush_alloc], with
 * CUDA events around the launch alone; median_us gets the median. TG_ERR_CUDA with a message in err,
 * or the launcher's status. flush_bytes 0: no flush. */
TgStatus cold_time(CUfunction read, CUdeviceptr flush, size_t flush_bytes, ColdLaunch launch, void *arg, int iters,
	float *median_us, char *err, size_t errlen);

/* timing_median sorts v[0..n) (n >= 1) and returns its median, the mean of the middle two when n is
 * even: the one median of every timing tegen reports (`tegen run`, kernel and copy times, GEMM candidates). */
float timing_median(float *v, int n);

/* The flush buffer for device dev: twice its L2, zeroed, into *buf and *bytes (0 and 0 where the driver
 * names no L2). TG_ERR_CUDA with a message in err. */
TgStatus cold_flush_alloc(CUdevice dev, CUdeviceptr *buf, size_t *bytes, char *err, size_t errlen);

#endif
