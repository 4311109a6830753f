// convert.cu: a high-precision tensor converted to another high-precision dtype.
// tegen-slots: TG_KERNEL TG_THREADS TG_IN_DTYPE TG_OUT_DTYPE
//
// Used for a GEMM bias whose dtype is not the one cuBLASLt's epilogue reads (BF16 for
// FP8 inputs, FP16 for an FP16 output, the output's dtype for high-precision inputs):
// the planner converts it into the tensor's `bias` component right before the GEMM.
// TG_IN_DTYPE / TG_OUT_DTYPE: 0 fp32, 1 bf16, 2 fp16. FP32 -> BF16/FP16 rounds to
// nearest even (tg_formats.h), like every other cast.
// n[0] = rows, n[1] = cols; pointers p[TG_P_IN], p[TG_P_OUT]. Any launch shape
// (grid-stride over elements).
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"

__device__ __forceinline__ float cv_load(const void *p, long long i)
{
	if (TG_IN_DTYPE == TG_DTYPE_F32)
		return ((const float *)p)[i];
	const uint16_t h = ((const uint16_t *)p)[i];
	return TG_IN_DTYPE == TG_DTYPE_BF16 ? tg_bf16_to_f32(h) : tg_f16_to_f32(h);
}

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	const long long n = p.n[0] * p.n[1];
	for (long long i = (long long)blockIdx.x * TG_THREADS + threadIdx.x; i < n; i += (long long)gridDim.x * TG_THREADS) {
		const float v = cv_load(p.p[TG_P_IN], i);
		if (TG_OUT_DTYPE == TG_DTYPE_F32)
			((float *)p.p[TG_P_OUT])[i] = v;
		else
			((uint16_t *)p.p[TG_P_OUT])[i] = TG_OUT_DTYPE == TG_DTYPE_BF16 ? tg_f32_to_bf16(v) : tg_f32_to_f16(v);
	}
}
