/* rht_device.h: tg_rht16 and tg_rht_sign_mask as compiled for the device
 * (rht_device.c builds tg_recipe.h's __CUDA_ARCH__ branches on the host). */
#ifndef RHT_DEVICE_H
#define RHT_DEVICE_H

#include <stdint.h>

/* tg_rht16 through the device branches. */
void rht16_device(const float x[16], uint16_t sign_mask, float y[16]);
/* tg_rht_sign_mask through the device branches. */
uint16_t rht_sign_mask_device(uint64_t seed);

#endif
