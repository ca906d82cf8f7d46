// Packed 4:2:2 YUV → BGRA in one pass, with exact coefficients for any matrix and range.
//
// Why not libyuv: it has YUY2ToARGB/UYVYToARGB for BT.601 limited range only, and no packed 4:2:2 call that
// takes a matrix; the two-call route (unpack to I422, then I422ToARGBMatrix) costs a second pass over the
// frame. And unless libyuv is built with LIBYUV_UNLIMITED_DATA (Debian's is not), its tables hold Cb→B as a
// signed byte in 1/64 units, clamped to 2.0 where BT.709 needs 2.112, so blue is off by up to 13 levels.
// Here every coefficient is a 16-bit lane, in 1/64 units like libyuv's, so none is clamped.
//
// Each row goes 16 pixels at a time through one of two block functions with the same integer arithmetic: AVX2
// intrinsics on x86-64 CPUs that have AVX2 (chosen at run time), else clang's portable vector extensions (SSE2
// on older x86-64, NEON on arm64). A scalar loop with the same arithmetic finishes the row, so every pixel comes
// out the same whichever loop converted it. Little-endian only (the portable block reads bytes as 16-bit lanes).
#include "CPixelKernels.h"

#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "packed422.c reads pixel pairs as little-endian 16-bit lanes"
#endif

typedef int16_t i16x16 __attribute__((ext_vector_type(16)));
typedef uint16_t u16x16 __attribute__((ext_vector_type(16)));
typedef uint16_t u16x32 __attribute__((ext_vector_type(32)));

static inline uint8_t clamp_q6(int value) {
    value >>= 6;
    return (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value);
}

// One pixel pair; y0, y1, cb, cr are the byte offsets of its samples.
static inline __attribute__((always_inline)) void pair_scalar(const uint8_t *p, uint8_t *out,
                                                               struct camo_yuv_coefficients k, int y0, int y1, int cb,
                                                               int cr) {
    int u = p[cb] - 128, v = p[cr] - 128;
    int b = k.cb_to_b * u, g = -(k.cb_to_g * u + k.cr_to_g * v), r = k.cr_to_r * v;
    for (int i = 0; i < 2; i++) {
        int y = ((p[i ? y1 : y0] * k.y_gain) >> 1) - k.y_offset;
        out[4 * i] = clamp_q6(y + b);
        out[4 * i + 1] = clamp_q6(y + g);
        out[4 * i + 2] = clamp_q6(y + r);
        out[4 * i + 3] = 255;
    }
}

// One channel in 1/64 units to 0...255, still one value per 16-bit lane. (A macro: a function taking a 256-bit
// vector would change the calling convention between the SSE2 and AVX2 builds, which clang warns about.)
#define CLAMP_LANES_Q6(value) \
    ((u16x16)__builtin_elementwise_max(__builtin_elementwise_min((value) >> 6, (i16x16)255), (i16x16)0))

// 16 pixels: 32 source bytes, read as sixteen little-endian 16-bit lanes (one luma and one chroma byte each),
// and 64 destination bytes. `luma_first`: YUYV/YVYU, else UYVY/VYUY; `cb_first`: Cb is the first chroma byte of
// a pair (YUYV, UYVY). Both are constants after inlining. Every step is lane-wise or a 16-bit shuffle, which
// SSE2, AVX2 and NEON all do in one or two instructions.
static inline __attribute__((always_inline)) void block16(const uint8_t *src, uint8_t *dst,
                                                           struct camo_yuv_coefficients k, int luma_first,
                                                           int cb_first) {
    u16x16 lanes;
    memcpy(&lanes, src, sizeof lanes);
    u16x16 luma = luma_first ? lanes & 0xff : lanes >> 8;
    i16x16 chroma = (i16x16)(luma_first ? lanes >> 8 : lanes & 0xff) - 128;  // Cb/Cr of pair i in lanes 2i, 2i+1
    i16x16 first = __builtin_shufflevector(chroma, chroma, 0, 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 14, 14);
    i16x16 second = __builtin_shufflevector(chroma, chroma, 1, 1, 3, 3, 5, 5, 7, 7, 9, 9, 11, 11, 13, 13, 15, 15);
    i16x16 u = cb_first ? first : second, v = cb_first ? second : first;
    // Y x gain in 1/128 units fits 16 unsigned bits (255 x 255); halved, it is in 1/64 units and fits a signed lane.
    i16x16 y = (i16x16)((luma * k.y_gain) >> 1) - k.y_offset;
    u16x16 b = CLAMP_LANES_Q6(__builtin_elementwise_add_sat(y, u * k.cb_to_b));
    u16x16 g = CLAMP_LANES_Q6(__builtin_elementwise_sub_sat(y, u * k.cb_to_g + v * k.cr_to_g));
    u16x16 r = CLAMP_LANES_Q6(__builtin_elementwise_add_sat(y, v * k.cr_to_r));
    u16x16 bg = b | (g << 8), ra = r | 0xff00;
    u16x32 out = __builtin_shufflevector(bg, ra, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8, 24, 9, 25, 10,
                                         26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    memcpy(dst, &out, sizeof out);
}

#if defined(__x86_64__)
#include <immintrin.h>

// The same 16 pixels with AVX2 intrinsics, in fewer instructions than clang makes of block16. As in libyuv's
// YUY2ToARGBRow_AVX2, each pixel's (Cb, Cr) pair becomes two signed bytes, and one pmaddubsw per channel
// multiplies them by the channel's two coefficients (unsigned bytes, 0...255: nothing needs clamping) and adds
// the products. The 64-bit quarters of the source are reordered first (pixels 0-3, 8-11 | 4-7, 12-15), so that
// after the in-lane work the two halves of the BGRA interleave come out as pixels 0-7 and 8-15, ready to store.
static inline __attribute__((always_inline, target("avx2"))) void block16_avx2(const uint8_t *src, uint8_t *dst,
                                                                              struct camo_yuv_coefficients k,
                                                                              int luma_first, int cb_first) {
    const __m256i low_bytes = _mm256_set1_epi16(0x00ff);
    // Per 128-bit lane (8 pixels): the Cb and Cr bytes of each pixel's pair.
    const char cb = luma_first ? (cb_first ? 1 : 3) : (cb_first ? 0 : 2), cr = cb ^ 2;
#define PAIR(n) cb + 4 * (n), cr + 4 * (n), cb + 4 * (n), cr + 4 * (n)
    const __m256i chroma_index = _mm256_setr_epi8(PAIR(0), PAIR(1), PAIR(2), PAIR(3), PAIR(0), PAIR(1), PAIR(2), PAIR(3));
#undef PAIR
    // Packed B (or R) bytes 0-7 then G (or A) bytes 0-7, per lane, into B G B G ... pairs.
    const __m256i pair_index = _mm256_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15,
                                                0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    // (Cb, Cr) coefficient byte pairs, little-endian 16-bit: Cb's in the low byte.
    const __m256i to_b = _mm256_set1_epi16((short)k.cb_to_b);
    const __m256i to_g = _mm256_set1_epi16((short)(k.cb_to_g | k.cr_to_g << 8));
    const __m256i to_r = _mm256_set1_epi16((short)(k.cr_to_r << 8));
    __m256i in = _mm256_permute4x64_epi64(_mm256_loadu_si256((const __m256i *)src), 0xd8);
    __m256i luma = luma_first ? _mm256_and_si256(in, low_bytes) : _mm256_srli_epi16(in, 8);
    __m256i chroma = _mm256_xor_si256(_mm256_shuffle_epi8(in, chroma_index), _mm256_set1_epi8((char)0x80));  // - 128
    __m256i y = _mm256_sub_epi16(_mm256_srli_epi16(_mm256_mullo_epi16(luma, _mm256_set1_epi16((short)k.y_gain)), 1),
                                 _mm256_set1_epi16(k.y_offset));
    __m256i b = _mm256_adds_epi16(y, _mm256_maddubs_epi16(to_b, chroma));
    __m256i g = _mm256_subs_epi16(y, _mm256_maddubs_epi16(to_g, chroma));
    __m256i r = _mm256_adds_epi16(y, _mm256_maddubs_epi16(to_r, chroma));
    // >> 6, then packus clamps to 0...255.
    __m256i bg = _mm256_shuffle_epi8(_mm256_packus_epi16(_mm256_srai_epi16(b, 6), _mm256_srai_epi16(g, 6)), pair_index);
    __m256i ra = _mm256_shuffle_epi8(_mm256_packus_epi16(_mm256_srai_epi16(r, 6), low_bytes), pair_index);
    _mm256_storeu_si256((__m256i *)dst, _mm256_unpacklo_epi16(bg, ra));
    _mm256_storeu_si256((__m256i *)(dst + 32), _mm256_unpackhi_epi16(bg, ra));
}
#endif

// Rows of pixels with one 16-pixel block function; the scalar pairs finish each row. `luma_first` and `cb_first`
// as for block16; they are constants in each of the four calls below.
#define DEFINE_CONVERT(suffix, attributes, block)                                                                  \
    static inline __attribute__((always_inline)) attributes void rows_##suffix(                                   \
        const uint8_t *src, int src_stride, uint8_t *dst, int dst_stride, int width, int height,                  \
        struct camo_yuv_coefficients k, int luma_first, int cb_first) {                                            \
        int y0 = luma_first ? 0 : 1, y1 = luma_first ? 2 : 3;                                                      \
        int cb = luma_first ? (cb_first ? 1 : 3) : (cb_first ? 0 : 2), cr = cb ^ 2;                                \
        for (int row = 0; row < height; row++) {                                                                   \
            const uint8_t *s = src + (long)row * src_stride;                                                       \
            uint8_t *d = dst + (long)row * dst_stride;                                                             \
            int x = 0;                                                                                             \
            for (; x + 32 <= width; x += 32) { /* two blocks per turn: less loop overhead per pixel */             \
                block(s + 2 * x, d + 4 * x, k, luma_first, cb_first);                                              \
                block(s + 2 * x + 32, d + 4 * x + 64, k, luma_first, cb_first);                                    \
            }                                                                                                      \
            for (; x + 16 <= width; x += 16) block(s + 2 * x, d + 4 * x, k, luma_first, cb_first);                 \
            for (; x < width; x += 2) pair_scalar(s + 2 * x, d + 4 * x, k, y0, y1, cb, cr);                        \
        }                                                                                                          \
    }                                                                                                              \
    attributes static void convert_##suffix(const uint8_t *src, int src_stride, uint8_t *dst, int dst_stride,      \
                                            int width, int height, struct camo_yuv_coefficients k, int order) {   \
        switch (order) {                                                                                           \
        case CAMO_PACKED422_YUYV: rows_##suffix(src, src_stride, dst, dst_stride, width, height, k, 1, 1); break;  \
        case CAMO_PACKED422_UYVY: rows_##suffix(src, src_stride, dst, dst_stride, width, height, k, 0, 1); break;  \
        case CAMO_PACKED422_YVYU: rows_##suffix(src, src_stride, dst, dst_stride, width, height, k, 1, 0); break;  \
        default: rows_##suffix(src, src_stride, dst, dst_stride, width, height, k, 0, 0); break;                   \
        }                                                                                                          \
    }

DEFINE_CONVERT(portable, , block16)
#if defined(__x86_64__)
DEFINE_CONVERT(avx2, __attribute__((target("avx2"))), block16_avx2)
#endif

int camo_packed422_uses_avx2(void) {
#if defined(__x86_64__)
    // Computed once; relaxed atomics, since every thread that races here computes the same value.
    static int avx2 = -1;
    int use = __atomic_load_n(&avx2, __ATOMIC_RELAXED);
    if (use < 0) {
        __builtin_cpu_init();
        use = __builtin_cpu_supports("avx2") ? 1 : 0;
        __atomic_store_n(&avx2, use, __ATOMIC_RELAXED);
    }
    return use;
#else
    return 0;
#endif
}

static int in_range(int16_t value) { return value >= 0 && value <= 255; }

static int refused(const uint8_t *src, int src_stride, const uint8_t *dst, int dst_stride, int width, int height,
                   const struct camo_yuv_coefficients *k, int order) {
    if (!src || !dst || !k || width <= 0 || (width & 1) || height <= 0) return 1;
    if ((long)src_stride < 2L * width || (long)dst_stride < 4L * width) return 1;
    if (order < CAMO_PACKED422_YUYV || order > CAMO_PACKED422_VYUY) return 1;
    // These bounds keep every intermediate inside a signed 16-bit lane (or saturating where it cannot matter),
    // so both loops and the scalar tail agree.
    return k->y_gain > 255 || k->y_offset < -64 || k->y_offset > 8192 || !in_range(k->cb_to_b) ||
           !in_range(k->cb_to_g) || !in_range(k->cr_to_g) || !in_range(k->cr_to_r) || k->cb_to_g + k->cr_to_g > 255;
}

int camo_packed422_to_bgra(const uint8_t *src, int src_stride, uint8_t *dst, int dst_stride, int width, int height,
                           const struct camo_yuv_coefficients *k, int order) {
    if (refused(src, src_stride, dst, dst_stride, width, height, k, order)) return -1;
#if defined(__x86_64__)
    if (camo_packed422_uses_avx2()) {
        convert_avx2(src, src_stride, dst, dst_stride, width, height, *k, order);
        return 0;
    }
#endif
    convert_portable(src, src_stride, dst, dst_stride, width, height, *k, order);
    return 0;
}

int camo_packed422_to_bgra_portable(const uint8_t *src, int src_stride, uint8_t *dst, int dst_stride, int width,
                                    int height, const struct camo_yuv_coefficients *k, int order) {
    if (refused(src, src_stride, dst, dst_stride, width, height, k, order)) return -1;
    convert_portable(src, src_stride, dst, dst_stride, width, height, *k, order);
    return 0;
}
