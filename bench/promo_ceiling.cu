// promo_ceiling.cu: what MXFP8's per-k32 promotion costs on its own (issue 22 stage 3). Two consumer warpgroups of a
// 128 x 192 tile (256 threads, 96 accumulators a thread, one CTA a SM) do, for each k32 step, what a promoting
// MXFP8 GEMM's consumers must do besides the wgmma: read the step's B scales of their 48 columns (12 LDS.128) and A
// scales of their two rows, then total += acc * (sa * sb) for every accumulator (an FMUL and an FFMA: the scale
// product differs per element). No MMA runs (an empty asm marks acc as rewritten each step), so the time is a ceiling:
// the GEMM cannot promote faster than this.
// Prints the k32 steps a second and the FLOP/s of the MMAs they would promote (128 x 192 x 32 x 2 a step a CTA).
// Build: nvcc -O3 -arch=sm_90a bench/promo_ceiling.cu -o promo_ceiling
#include <cstdio>
#include <cuda_runtime.h>

__global__ void __launch_bounds__(256, 1) promo(float *out, int steps)
{
	__shared__ float4 sb[2][64][12]; // two stages of each step's B scales: 48 columns a thread (per warp lane group)
	__shared__ float2 sa[2][128];
	const int t = threadIdx.x;
	for (int i = t; i < 2 * 64 * 12; i += 256)
		(&sb[0][0][0])[i] = make_float4(1.0f + i, 2.0f, 0.5f, 0.25f);
	for (int i = t; i < 256; i += 256)
		(&sa[0][0])[i] = make_float2(1.0f, 2.0f);
	__syncthreads();
	float acc[96], tot[96];
#pragma unroll
	for (int i = 0; i < 96; i++) {
		acc[i] = 1.0f + t * 1e-3f + i * 1e-4f;
		tot[i] = 0.0f;
	}
	for (int k = 0; k < steps; k++) {
		const int s = k & 1;
		float2 a;
		float b[48];
		// ld.shared by asm volatile: the loads stay in the loop (a step's scales are new data in the GEMM)
		asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(a.x), "=f"(a.y) : "r"((unsigned)__cvta_generic_to_shared(&sa[s][t % 128])));
#pragma unroll
		for (int j = 0; j < 12; j++)
			asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
			             : "=f"(b[4 * j]), "=f"(b[4 * j + 1]), "=f"(b[4 * j + 2]), "=f"(b[4 * j + 3])
			             : "r"((unsigned)__cvta_generic_to_shared(&sb[s][(t / 4) % 64][j])));
#pragma unroll
		for (int i = 0; i < 96; i++) // fragment i: row (i % 4 >= 2), column pair i / 4: the wgmma layout
			tot[i] = fmaf(acc[i], ((i % 4) >= 2 ? a.y : a.x) * b[(i / 4) * 2 + (i % 2)], tot[i]);
#pragma unroll
		for (int i = 0; i < 96; i++) // the next step's partial sums come from the MMA: no instruction, a new value
			asm volatile("" : "+f"(acc[i]));
	}
	float sum = 0.0f;
#pragma unroll
	for (int i = 0; i < 96; i++)
		sum += tot[i];
	out[blockIdx.x * 256 + t] = sum;
}

int main()
{
	int sms = 0;
	cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
	float *out;
	cudaMalloc(&out, sms * 256 * sizeof(float));
	const int steps = 20000;
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	promo<<<sms, 256>>>(out, 100);
	float best = 1e30f;
	for (int r = 0; r < 5; r++) {
		cudaEventRecord(e0);
		promo<<<sms, 256>>>(out, steps);
		cudaEventRecord(e1);
		cudaEventSynchronize(e1);
		float ms;
		cudaEventElapsedTime(&ms, e0, e1);
		best = ms < best ? ms : best;
	}
	const double steps_s = (double)steps * sms / (best * 1e-3);
	printf("promotion alone: %d SMs, %.3f ms for %d k32 steps a CTA: %.3g steps/s, ceiling %.0f TFLOP/s of promoted MMAs "
	       "(the MMAs' own issue not counted)\n",
	       sms, best, steps, steps_s, steps_s * 128.0 * 192 * 32 * 2 / 1e12);
	cudaFree(out);
	return 0;
}
