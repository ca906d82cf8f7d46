// Thin shim over libyuv (Debian's libyuv-dev has no pkg-config file, hence
// `link "yuv"` in the module map). libyuv's headers are C++-aware and plain C.
#ifndef CAMO_CYUV_SHIM_H
#define CAMO_CYUV_SHIM_H
#include <stdint.h>
#include <libyuv/compare.h>
#include <libyuv/convert_argb.h>
#include <libyuv/convert_from_argb.h>
#include <libyuv/planar_functions.h>
#include <libyuv/rotate_argb.h>
#include <libyuv/scale_argb.h>
#include <libyuv/version.h>

// libyuv's struct YuvConstants is incomplete in its public headers, so Swift cannot name the
// kYuv*Constants globals the *Matrix conversions take; this returns their addresses.
// matrix: 0 = BT.601, 1 = BT.709, 2 = BT.2020; full_range: 0 = limited, 1 = full;
// swap_uv: 1 gives the kYvu* variant (reads U as V and V as U, for formats that store Cr first).
static inline const struct YuvConstants *camo_yuv_constants(int matrix, int full_range, int swap_uv) {
    switch (matrix) {
    case 1:
        if (swap_uv) return full_range ? &kYvuF709Constants : &kYvuH709Constants;
        return full_range ? &kYuvF709Constants : &kYuvH709Constants;
    case 2:
        if (swap_uv) return full_range ? &kYvuV2020Constants : &kYvu2020Constants;
        return full_range ? &kYuvV2020Constants : &kYuv2020Constants;
    default:
        if (swap_uv) return full_range ? &kYvuJPEGConstants : &kYvuI601Constants;
        return full_range ? &kYuvJPEGConstants : &kYuvI601Constants;
    }
}
#endif
