// stream_mix.cu: the DRAM ceiling of a streaming kernel by its read:write mix (H100 has no single "copy" number for
// a kernel that reads 1 byte and writes 2). Each thread reads R 16-byte vectors (one from each of R input planes)
// and writes W (one to each of W output planes), grid-stride with tegen's launch shape (256 threads, 32 CTAs a SM).
// Build and run (device): nvcc -O3 -arch=sm_90a -o /tmp/stream_mix bench/stream_mix.cu && /tmp/stream_mix
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>

template <int R, int W>
__global__ void __launch_bounds__(256) mix(const uint4 *__restrict__ in, uint4 *__restrict__ out, long long n)
{
	for (long long i = (long long)blockIdx.x * 256 + threadIdx.x; i < n; i += (long long)gridDim.x * 256) {
		uint4 a = make_uint4((unsigned)i, 1u, 2u, 3u);
#pragma unroll
		for (int r = 0; r < R; r++) {
			const uint4 v = in[r * n + i];
			a.x ^= v.x, a.y ^= v.y, a.z ^= v.z, a.w ^= v.w;
		}
		if (W == 0 && a.x == 0x9E3779B9u && a.y == 0x7F4A7C15u) // never: keeps a read-only kernel's loads
			out[i] = a;
#pragma unroll
		for (int w = 0; w < W; w++)
			out[w * n + i] = make_uint4(a.x + w, a.y, a.z, a.w);
	}
}

template <int R, int W> static void run(uint4 *in, uint4 *out, size_t bytes, int sms)
{
	const long long n = (long long)(bytes / 16 / (R + W > 0 ? R + W : 1));
	const int grid = sms * 32;
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	std::vector<float> t;
	for (int it = 0; it < 23; it++) {
		cudaEventRecord(e0);
		mix<R, W><<<grid, 256>>>(in, out, n);
		cudaEventRecord(e1);
		cudaEventSynchronize(e1);
		float ms;
		cudaEventElapsedTime(&ms, e0, e1);
		if (it >= 3)
			t.push_back(ms);
	}
	std::sort(t.begin(), t.end());
	const double gbs = (double)(R + W) * 16 * n / (t[t.size() / 2] * 1e-3) / 1e9;
	printf("mix read:write %d:%d  %.0f GB/s  (median of 20, %lld MB moved)\n", R, W, gbs, (long long)((R + W) * 16 * n >> 20));
}

int main()
{
	int sms = 0;
	cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
	const size_t bytes = (size_t)3 << 30; // 3 GiB moved a launch, split over the planes
	uint4 *in, *out;
	if (cudaMalloc(&in, bytes) || cudaMalloc(&out, bytes)) {
		printf("cudaMalloc failed\n");
		return 1;
	}
	cudaMemset(in, 1, bytes);
	cudaMemset(out, 0, bytes);
	run<1, 1>(in, out, bytes, sms);
	run<2, 2>(in, out, bytes, sms);
	run<1, 2>(in, out, bytes, sms);
	run<2, 1>(in, out, bytes, sms);
	run<2, 3>(in, out, bytes, sms);
	run<3, 2>(in, out, bytes, sms);
	run<3, 5>(in, out, bytes, sms);
	run<1, 3>(in, out, bytes, sms);
	run<3, 1>(in, out, bytes, sms);
	run<1, 0>(in, out, bytes, sms);
	run<0, 1>(in, out, bytes, sms);
	run<1, 1>(in, out, bytes, sms);
	return 0;
}
