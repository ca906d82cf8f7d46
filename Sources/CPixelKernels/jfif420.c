// Packed 4:2:2 YUV → JPEG's Y'CbCr 4:2:0 (JFIF: full-range BT.601) in one pass, for any source matrix and range.
//
// A JPEG encoder wants full-range BT.601 planes with chroma at half height. From BGRA that is libyuv's
// ARGBToJ420; from the camera's packed 4:2:2 it is one affine map per pixel (luma takes a little of Cb and Cr
// when the source matrix is not BT.601; chroma never takes luma, since both matrices send grey to Cb = Cr = 0)
// plus the average of two rows' chroma. Reading the camera's bytes, this writes 1.5 bytes a pixel instead of
// reading the 4 of BGRA, and skips the RGB step.
//
// Same arithmetic style as packed422.c: fixed-point coefficients in 16-bit lanes, 16 pixels at a time in
// clang's portable vector extensions (SSE2 on x86-64, NEON on arm64), and a scalar tail with the same integer
// steps (saturating where the vectors saturate), so every pixel comes out the same whichever loop made it.
#include "CPixelKernels.h"

#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "jfif420.c reads pixel pairs as little-endian 16-bit lanes"
#endif

typedef int16_t i16x16 __attribute__((ext_vector_type(16)));
typedef uint16_t u16x16 __attribute__((ext_vector_type(16)));
typedef int16_t i16x8 __attribute__((ext_vector_type(8)));
typedef uint16_t u16x8 __attribute__((ext_vector_type(8)));
typedef uint8_t u8x16 __attribute__((ext_vector_type(16)));
typedef uint8_t u8x8 __attribute__((ext_vector_type(8)));

static inline int sat16(int value) { return value < -32768 ? -32768 : value > 32767 ? 32767 : value; }
static inline uint8_t clamp_byte(int value) { return (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value); }

// The scalar steps, one luma sample (with its pair's chroma, already minus 128) and one chroma pair.
static inline int luma_scalar(int y, int u, int v, struct camo_jfif_coefficients k) {
    int value = ((y * k.y_gain) >> 1) - k.y_offset;
    return clamp_byte(sat16(value + ((u * k.y_cb + v * k.y_cr) >> 2)) >> 6);
}
static inline int chroma_scalar(int own, int u, int v, int16_t from_cb, int16_t from_cr) {
    return clamp_byte(own + ((u * from_cb + v * from_cr + 128) >> 8) + 128);
}

#define CLAMP_BYTES(value) \
    __builtin_convertvector(__builtin_elementwise_max(__builtin_elementwise_min((value), (i16x16)255), (i16x16)0), u8x16)
#define CLAMP_BYTES8(value) \
    __builtin_convertvector(__builtin_elementwise_max(__builtin_elementwise_min((value), (i16x8)255), (i16x8)0), u8x8)

// Luma of 16 pixels from their 32 source bytes; `chroma` gets the row's chroma lanes (minus 128) for the caller.
static inline __attribute__((always_inline)) u8x16 luma16(const uint8_t *src, struct camo_jfif_coefficients k,
                                                           int luma_first, int cb_first, u16x16 *chroma) {
    u16x16 lanes;
    memcpy(&lanes, src, sizeof lanes);
    u16x16 luma = luma_first ? lanes & 0xff : lanes >> 8;
    *chroma = luma_first ? lanes >> 8 : lanes & 0xff;
    i16x16 c = (i16x16)*chroma - 128;  // Cb/Cr (or Cr/Cb) of pair i in lanes 2i, 2i+1
    i16x16 first = __builtin_shufflevector(c, c, 0, 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 14, 14);
    i16x16 second = __builtin_shufflevector(c, c, 1, 1, 3, 3, 5, 5, 7, 7, 9, 9, 11, 11, 13, 13, 15, 15);
    i16x16 u = cb_first ? first : second, v = cb_first ? second : first;
    i16x16 y = (i16x16)((luma * k.y_gain) >> 1) - k.y_offset;
    y = __builtin_elementwise_add_sat(y, (u * k.y_cb + v * k.y_cr) >> 2);
    return CLAMP_BYTES(y >> 6);
}

// 16 pixels of two rows: 16 luma bytes per row, 8 Cb and 8 Cr bytes from the two rows' average chroma.
static inline __attribute__((always_inline)) void block16(const uint8_t *s0, const uint8_t *s1, uint8_t *y0,
                                                           uint8_t *y1, uint8_t *cb, uint8_t *cr,
                                                           struct camo_jfif_coefficients k, int luma_first,
                                                           int cb_first, int two_rows) {
    u16x16 c0, c1;
    u8x16 l0 = luma16(s0, k, luma_first, cb_first, &c0);
    memcpy(y0, &l0, sizeof l0);
    if (two_rows) {
        u8x16 l1 = luma16(s1, k, luma_first, cb_first, &c1);
        memcpy(y1, &l1, sizeof l1);
    } else {
        c1 = c0;
    }
    i16x16 c = (i16x16)((c0 + c1 + 1) >> 1) - 128;
    i16x8 first = __builtin_shufflevector(c, c, 0, 2, 4, 6, 8, 10, 12, 14);
    i16x8 second = __builtin_shufflevector(c, c, 1, 3, 5, 7, 9, 11, 13, 15);
    i16x8 u = cb_first ? first : second, v = cb_first ? second : first;
    i16x8 b = u + ((u * k.cb_cb + v * k.cb_cr + 128) >> 8) + 128;
    i16x8 r = v + ((u * k.cr_cb + v * k.cr_cr + 128) >> 8) + 128;
    u8x8 bb = CLAMP_BYTES8(b), rr = CLAMP_BYTES8(r);
    memcpy(cb, &bb, sizeof bb);
    memcpy(cr, &rr, sizeof rr);
}

static inline __attribute__((always_inline)) void convert(const uint8_t *src, int src_stride, uint8_t *y,
                                                           int y_stride, uint8_t *cb, uint8_t *cr, int chroma_stride,
                                                           int width, int height, struct camo_jfif_coefficients k,
                                                           int luma_first, int cb_first) {
    int oy0 = luma_first ? 0 : 1, oy1 = luma_first ? 2 : 3;
    int ocb = luma_first ? (cb_first ? 1 : 3) : (cb_first ? 0 : 2), ocr = ocb ^ 2;
    for (int row = 0; row < height; row += 2) {
        int two_rows = row + 1 < height;
        const uint8_t *s0 = src + (long)row * src_stride, *s1 = two_rows ? s0 + src_stride : s0;
        uint8_t *d0 = y + (long)row * y_stride, *d1 = d0 + (two_rows ? y_stride : 0);
        uint8_t *b = cb + (long)(row / 2) * chroma_stride, *r = cr + (long)(row / 2) * chroma_stride;
        int x = 0;
        for (; x + 16 <= width; x += 16)
            block16(s0 + 2 * x, s1 + 2 * x, d0 + x, d1 + x, b + x / 2, r + x / 2, k, luma_first, cb_first, two_rows);
        for (; x < width; x += 2) {
            const uint8_t *p0 = s0 + 2 * x, *p1 = s1 + 2 * x;
            int u0 = p0[ocb] - 128, v0 = p0[ocr] - 128;
            d0[x] = (uint8_t)luma_scalar(p0[oy0], u0, v0, k);
            d0[x + 1] = (uint8_t)luma_scalar(p0[oy1], u0, v0, k);
            if (two_rows) {
                int u1 = p1[ocb] - 128, v1 = p1[ocr] - 128;
                d1[x] = (uint8_t)luma_scalar(p1[oy0], u1, v1, k);
                d1[x + 1] = (uint8_t)luma_scalar(p1[oy1], u1, v1, k);
            }
            int u = ((p0[ocb] + p1[ocb] + 1) >> 1) - 128, v = ((p0[ocr] + p1[ocr] + 1) >> 1) - 128;
            b[x / 2] = (uint8_t)chroma_scalar(u, u, v, k.cb_cb, k.cb_cr);
            r[x / 2] = (uint8_t)chroma_scalar(v, u, v, k.cr_cb, k.cr_cr);
        }
    }
}

// The loop for each byte order, built twice on x86-64: for any x86-64 CPU (SSE2), and with AVX2 allowed, which
// lets clang do each 16-lane step in one instruction instead of two (chosen at run time). Same source, same
// arithmetic: the two agree on every sample (the tests check both against the documented steps).
#define DEFINE_CONVERT(suffix, attributes)                                                                         \
    attributes static void convert_##suffix(const uint8_t *src, int src_stride, uint8_t *y, int y_stride,          \
                                            uint8_t *cb, uint8_t *cr, int chroma_stride, int width, int height,   \
                                            struct camo_jfif_coefficients k, int order) {                         \
        switch (order) {                                                                                           \
        case CAMO_PACKED422_YUYV: convert(src, src_stride, y, y_stride, cb, cr, chroma_stride, width, height, k, 1, 1); break; \
        case CAMO_PACKED422_UYVY: convert(src, src_stride, y, y_stride, cb, cr, chroma_stride, width, height, k, 0, 1); break; \
        case CAMO_PACKED422_YVYU: convert(src, src_stride, y, y_stride, cb, cr, chroma_stride, width, height, k, 1, 0); break; \
        default: convert(src, src_stride, y, y_stride, cb, cr, chroma_stride, width, height, k, 0, 0); break;      \
        }                                                                                                          \
    }

DEFINE_CONVERT(portable, )
#if defined(__x86_64__)
DEFINE_CONVERT(avx2, __attribute__((target("avx2"))))
#endif

static int within(int16_t value, int bound) { return value >= -bound && value <= bound; }

static int refused(const uint8_t *src, int src_stride, const uint8_t *y, int y_stride, const uint8_t *cb,
                   const uint8_t *cr, int chroma_stride, int width, int height, const struct camo_jfif_coefficients *k,
                   int order) {
    if (!src || !y || !cb || !cr || !k || width <= 0 || (width & 1) || height <= 0) return 1;
    if ((long)src_stride < 2L * width || y_stride < width || chroma_stride < width / 2) return 1;
    if (order < CAMO_PACKED422_YUYV || order > CAMO_PACKED422_VYUY) return 1;
    // These bounds keep every product and sum inside a signed 16-bit lane (|Cb|, |Cr| <= 128); only the luma sum
    // saturates, and only beyond what clamps anyway.
    if (k->y_gain > 255 || k->y_offset < -64 || k->y_offset > 8192 || !within(k->y_cb, 127) || !within(k->y_cr, 127) ||
        !within(k->cb_cb, 127) || !within(k->cb_cr, 127) || !within(k->cr_cb, 127) || !within(k->cr_cr, 127))
        return 1;
    return 0;
}

int camo_packed422_to_jfif420(const uint8_t *src, int src_stride, uint8_t *y, int y_stride, uint8_t *cb, uint8_t *cr,
                              int chroma_stride, int width, int height, const struct camo_jfif_coefficients *k,
                              int order) {
    if (refused(src, src_stride, y, y_stride, cb, cr, chroma_stride, width, height, k, order)) return -1;
#if defined(__x86_64__)
    if (camo_packed422_uses_avx2()) {
        convert_avx2(src, src_stride, y, y_stride, cb, cr, chroma_stride, width, height, *k, order);
        return 0;
    }
#endif
    convert_portable(src, src_stride, y, y_stride, cb, cr, chroma_stride, width, height, *k, order);
    return 0;
}

int camo_packed422_to_jfif420_portable(const uint8_t *src, int src_stride, uint8_t *y, int y_stride, uint8_t *cb,
                                       uint8_t *cr, int chroma_stride, int width, int height,
                                       const struct camo_jfif_coefficients *k, int order) {
    if (refused(src, src_stride, y, y_stride, cb, cr, chroma_stride, width, height, k, order)) return -1;
    convert_portable(src, src_stride, y, y_stride, cb, cr, chroma_stride, width, height, *k, order);
    return 0;
}
