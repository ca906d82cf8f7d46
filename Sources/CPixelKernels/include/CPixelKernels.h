// Two conversions libyuv (as Debian builds it) cannot do accurately in a single pass, from packed 4:2:2 YUV
// (YUYV, UYVY, YVYU, VYUY) with any matrix and range: to BGRA (packed422.c says why and how), and to JPEG's
// full-range BT.601 4:2:0 planes (jfif420.c).
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

/// 1 when camo_packed422_to_bgra and camo_packed422_to_jfif420 use their AVX2 loops on this CPU, else 0 (the
/// portable loops).
int camo_packed422_uses_avx2(void);

/// Y'CbCr → JPEG's Y'CbCr (JFIF: full-range BT.601) coefficients for one source matrix and range: luma in
/// 1/64 units as in camo_yuv_coefficients, the rest in 1/256. With Cb and Cr minus 128 (chroma averaged over
/// the two rows of a 4:2:0 sample):
///   Y  = (((Y * y_gain) >> 1) - y_offset + ((y_cb Cb + y_cr Cr) >> 2)) >> 6
///   Cb = Cb + ((cb_cb Cb + cb_cr Cr + 128) >> 8) + 128          (cb_cb: the Cb gain minus 1)
///   Cr = Cr + ((cr_cb Cb + cr_cr Cr + 128) >> 8) + 128          (cr_cr: the Cr gain minus 1)
/// each clamped to 0...255 (the luma sum saturates at 16 bits first, which only happens beyond the clamp).
/// y_gain must be in 0...255, y_offset in -64...8192, the six others in -127...127. BT.709 limited range is
/// 149, 1160, 30, 57, 32, -32, -21, 31.
struct camo_jfif_coefficients {
    uint16_t y_gain;
    int16_t y_offset;
    int16_t y_cb;
    int16_t y_cr;
    int16_t cb_cb;
    int16_t cb_cr;
    int16_t cr_cb;
    int16_t cr_cr;
};

/// Converts `height` rows of `width` pixels (even) of packed 4:2:2 to three planes: Y (`width` x `height`), Cb
/// and Cr (`width / 2` x `(height + 1) / 2`; an odd last row is its own chroma). Returns 0, or -1 for a bad
/// argument (nothing written): null pointers, an odd or non-positive width, a non-positive height, strides too
/// small, coefficients out of range, an unknown order.
int camo_packed422_to_jfif420(const uint8_t *src, int src_stride, uint8_t *y, int y_stride, uint8_t *cb, uint8_t *cr,
                              int chroma_stride, int width, int height, const struct camo_jfif_coefficients *k,
                              int order);

/// The same with the portable loop whatever the CPU (as for camo_packed422_to_bgra_portable).
int camo_packed422_to_jfif420_portable(const uint8_t *src, int src_stride, uint8_t *y, int y_stride, uint8_t *cb,
                                       uint8_t *cr, int chroma_stride, int width, int height,
                                       const struct camo_jfif_coefficients *k, int order);

#ifdef __cplusplus
}
#endif
#endif
