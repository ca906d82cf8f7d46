// Thin shim over libpng's simplified API (png_image_*), which reports errors in png_image.message and needs
// no setjmp. Swift cannot import libpng's function-like macros, so the few we use are wrapped here.
#ifndef CAMO_CPNG_SHIM_H
#define CAMO_CPNG_SHIM_H
#include <stddef.h>
#include <png.h>

/// PNG_IMAGE_VERSION: the png_image layout this code was built against.
static const png_uint_32 CAMO_PNG_IMAGE_VERSION = PNG_IMAGE_VERSION;
/// PNG_FORMAT_GRAY: one 8-bit gray sample per pixel.
static const png_uint_32 CAMO_PNG_FORMAT_GRAY = PNG_FORMAT_GRAY;
/// PNG_FORMAT_BGRA: B, G, R, A bytes per pixel (alpha not premultiplied for 8-bit output).
static const png_uint_32 CAMO_PNG_FORMAT_BGRA = PNG_FORMAT_BGRA;
/// PNG_IMAGE_FLAG_16BIT_sRGB: 16-bit files without a gAMA chunk are sRGB, like 8-bit ones (not linear).
static const png_uint_32 CAMO_PNG_IMAGE_FLAG_16BIT_sRGB = PNG_IMAGE_FLAG_16BIT_sRGB;

/// PNG_IMAGE_ROW_STRIDE: the components (bytes, for 8-bit formats) in one row of `image`.
static inline png_uint_32 camo_png_image_row_stride(const png_image *image) {
    return PNG_IMAGE_ROW_STRIDE(*image);
}

/// PNG_IMAGE_SIZE: the bytes of the whole decoded `image` at the minimum row stride.
static inline size_t camo_png_image_size(const png_image *image) {
    return PNG_IMAGE_SIZE(*image);
}

/// PNG_IMAGE_PNG_SIZE_MAX: an upper bound on the bytes of the PNG file png_image_write_to_memory makes.
static inline size_t camo_png_image_png_size_max(const png_image *image) {
    return PNG_IMAGE_PNG_SIZE_MAX(*image);
}
#endif
