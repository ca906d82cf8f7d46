// Thin shim over libyuv (Debian's libyuv-dev has no pkg-config file, hence
// `link "yuv"` in the module map). libyuv's headers are C++-aware and plain C.
#ifndef CAMO_CYUV_SHIM_H
#define CAMO_CYUV_SHIM_H
#include <stdint.h>
#include <libyuv/convert_argb.h>
#include <libyuv/convert_from_argb.h>
#include <libyuv/planar_functions.h>
#include <libyuv/scale_argb.h>
#include <libyuv/version.h>
#endif
