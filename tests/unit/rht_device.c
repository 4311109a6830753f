/* rht_device.c: templates/tg_recipe.h compiled through its device branches
 * (__CUDA_ARCH__ defined) on the host, so that test_recipe can check that the
 * RHT the kernels run is the host reference's bit for bit. The CUDA intrinsics
 * those branches call are given their documented IEEE semantics in C here:
 * __fadd_rn/__fsub_rn/__fmul_rn/__fdiv_rn/__frcp_rn round to nearest even (and are never
 * contracted), __umulhi is the high word of the 64-bit product. An arch below
 * 890 keeps the FP8 conversions on the shared software path. */
#define __CUDA_ARCH__ 800
#include <stdint.h>
#include <string.h>

static inline uint32_t __float_as_uint(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }
static inline float __uint_as_float(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }
static inline uint32_t __umulhi(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __frcp_rn(float b) { return 1.0f / b; }

#include "tg_recipe.h"
#include "rht_device.h"

void rht16_device(const float x[16], uint16_t sign_mask, float y[16]) { tg_rht16(x, sign_mask, y); }

uint16_t rht_sign_mask_device(uint64_t seed) { return tg_rht_sign_mask(seed); }
