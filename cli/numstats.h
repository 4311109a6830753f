/* numstats.h: how far a quantized copy is from the value it came from, the
 * error of a layer output, and the input generators of `tegen numerics`. */
#ifndef TG_NUMSTATS_H
#define TG_NUMSTATS_H

#include "gen.h"
#include "interp.h"

/* The statistics of one quantized copy q of a tensor against the value x it came from. */
typedef struct NumStats {
	long n;                      /* finite elements judged */
	double sqnr_db;              /* 10 log10(sum x^2 / sum (x-q)^2): INFINITY when q == x, NAN when x is all zero */
	double max_rel, mean_rel;    /* |x-q| / |x| over the nonzero x (0 when none) */
	double underflow;            /* share of the nonzero x whose q is zero */
	double saturated;            /* share of all x whose code is the format's largest and |x| > |q| (clipped) */
	long blocks;                 /* scale blocks: one per scale a row of the copy uses (per-tensor: 1) */
	double tiny_blocks;          /* share of blocks whose scale is at its floor: an FP32 scale_inv below
	                              * FLT_MIN, an E8M0 exponent 0, a zero or subnormal E4M3 NVFP4 scale */
	double vanished_blocks;      /* share of blocks with a nonzero x whose q are all zero */
	double scale_min, scale_max; /* range of the dequantization multipliers over the blocks (nonzero ones) */
} NumStats;

/* numerics_copy_stats: the statistics of copy (COMP_DATA or COMP_DATA_T) of quantized tensor
 * t, with r as the interpreter left it (r->value is the FP32 value it was quantized from;
 * a Hadamard-transformed columnwise copy is judged against the transformed value). */
void numerics_copy_stats(const Graph *g, const long *dims, const Tensor *t, const RefTensor *r, Component copy,
	NumStats *s);
/* numerics_error: relative Frobenius error ||got-ref|| / ||ref|| and SQNR in dB of got
 * against ref over n values (non-finite pairs skipped; INFINITY when equal). */
void numerics_error(const float *ref, const float *got, size_t n, double *rel_frob, double *sqnr_db);

/* The built-in input generators. */
typedef enum { NUM_GAUSSIAN, NUM_STUDENT, NUM_OUTLIERS } NumInput;
/* numerics_fill: x [rows][cols] with mean 0 and standard deviation std: Gaussian; Student-t
 * with 3 degrees of freedom (heavy tails) scaled to std; or Gaussian with a few outlier
 * channels (columns c with numerics_outlier_channel) 100x larger. Element i is a function
 * of (seed, i) alone. */
void numerics_fill(float *x, long rows, long cols, NumInput kind, double std, uint64_t seed);
/* numerics_outlier_channel: is column c of cols an outlier channel (about 1 in 512, and cols/3)? */
bool numerics_outlier_channel(long c, long cols);

#endif
