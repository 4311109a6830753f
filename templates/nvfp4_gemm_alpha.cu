// nvfp4_gemm_alpha.cu: alpha and beta of one native NVFP4 GEMM, on the device.
// tegen-slots: TG_KERNEL TG_THREADS TG_ACCUMULATE
//
// cuBLASLt's NVFP4 GEMM (A/B scale mode VEC16_UE4M3) applies the E4M3 block
// scales S_dec inside the MMA; the per-tensor encode scales S_enc of both
// operands, which the NVFP4 cast kernels write to the recipe state, must come
// in through alpha. They are only known on the device, so the GEMM runs in
// cuBLASLt's device pointer mode and this kernel, planned right before it,
// writes
//     out[0] = alpha = tg_nvfp4_gemm_alpha(S_enc_a, S_enc_b) = 1 / (S_enc_a * S_enc_b)
//              (product rounded once to FP32, IEEE division; tg_recipe.h)
//     out[1] = beta  = TG_ACCUMULATE ? 1 : 0
// (in device mode cuBLASLt reads beta from the device too).
//
// Pointers: p[TG_P_SCALE] S_enc of A (float, read), p[TG_P_SCALE_B] S_enc of B
// (float, read), p[TG_P_OUT] float[2] (the GEMM output's alpha component).
// Launch: block (TG_THREADS,1,1), grid.x >= 1; thread 0 of block 0 writes, so
// the value never depends on the launch shape. n[] is unused.
#include "tg_formats.h"
#include "tg_recipe.h"
#include "tg_kernel.h"

extern "C" __global__ void __launch_bounds__(TG_THREADS) TG_KERNEL(const TgParams p)
{
	if (blockIdx.x != 0 || threadIdx.x != 0)
		return;
	const float s_a = *(const float *)p.p[TG_P_SCALE], s_b = *(const float *)p.p[TG_P_SCALE_B];
	float *out = (float *)p.p[TG_P_OUT];
	out[0] = tg_nvfp4_gemm_alpha(s_a, s_b);
	out[1] = TG_ACCUMULATE ? 1.0f : 0.0f;
}
