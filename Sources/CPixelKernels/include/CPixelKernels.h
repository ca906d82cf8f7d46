// One conversion libyuv (as Debian builds it) cannot do accurately in a single pass: packed 4:2:2 YUV
// (YUYV, UYVY, YVYU, VYUY) to BGRA with any matrix and range. See packed422.c for why and how.
#ifndef CAMO_CPIXELKERNELS_H
#define CAMO_CPIXELKERNELS_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// YCbCr → RGB coefficients in 1/64 units (6 fractional bits), for one matrix and range.
///   Y' = ((Y * y_gain) >> 1) - y_offset      (y_gain: the luma gain in 1/128 units; y_offset: the black
///                                              level times the gain, in 1/64 units, minus 32 to round the
///                                              final >> 6)
///   B = Y' + cb_to_b (Cb - 128)
///   G = Y' - cb_to_g (Cb - 128) - cr_to_g (Cr - 128)
///   R = Y' + cr_to_r (Cr - 128)
/// and each channel is (value >> 6) clamped to 0...255. y_gain and the four chroma coefficients must be
/// in 0...255 (they are magnitudes; the signs are in the formulas), cb_to_g + cr_to_g at most 255, and
/// y_offset in -64...8192. Real matrices are far inside: BT.709 limited range is 149, 1160, 135, 14, 34, 115.
struct camo_yuv_coefficients {
    uint16_t y_gain;
    int16_t y_offset;
    int16_t cb_to_b;
    int16_t cb_to_g;
    int16_t cr_to_g;
    int16_t cr_to_r;
};

/// Byte order of one packed 4:2:2 pixel pair.
enum camo_packed422_order {
    CAMO_PACKED422_YUYV = 0,
    CAMO_PACKED422_UYVY = 1,
    CAMO_PACKED422_YVYU = 2,
    CAMO_PACKED422_VYUY = 3,
};

/// Converts `height` rows of `width` pixels (even) of packed 4:2:2 to BGRA (B, G, R, A = 255 in memory).
/// Returns 0, or -1 for a bad argument (nothing written): null pointers, an odd or non-positive width,
/// a non-positive height, strides too small for the width, coefficients out of range, an unknown order.
int camo_packed422_to_bgra(const uint8_t *src, int src_stride, uint8_t *dst, int dst_stride, int width, int height,
                           const struct camo_yuv_coefficients *k, int order);

/// The same with the portable loop whatever the CPU (the one non-AVX2 CPUs run): for tests that check both
/// loops agree, and for benchmarks.
int camo_packed422_to_bgra_portable(const uint8_t *src, int src_stride, uint8_t *dst, int dst_stride, int width,
                                    int height, const struct camo_yuv_coefficients *k, int order);

/// 1 when camo_packed422_to_bgra uses its AVX2 loop on this CPU, else 0 (the portable loop).
int camo_packed422_uses_avx2(void);

#ifdef __cplusplus
}
#endif
#endif
