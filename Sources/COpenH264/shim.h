// Thin shim over libopenh264 (Debian's libopenh264-dev; no pkg-config file used, the module map links it).
// In C, wels/codec_api.h declares the encoder as a pointer to a vtable of function pointers
// (ISVCEncoder is `const ISVCEncoderVtbl *`); the static inline functions below make each call one
// plain C function, and reach into the fixed-size arrays Swift would see as 4- or 128-element tuples.
#ifndef CAMO_COPENH264_SHIM_H
#define CAMO_COPENH264_SHIM_H
#include <stdbool.h>
#include <stdint.h>
#include <wels/codec_api.h>
#include <wels/codec_app_def.h>
#include <wels/codec_def.h>

static inline int camo_wels_get_default_params(ISVCEncoder *encoder, SEncParamExt *param) {
    return (*encoder)->GetDefaultParams(encoder, param);
}
static inline int camo_wels_initialize_ext(ISVCEncoder *encoder, const SEncParamExt *param) {
    return (*encoder)->InitializeExt(encoder, param);
}
static inline int camo_wels_uninitialize(ISVCEncoder *encoder) {
    return (*encoder)->Uninitialize(encoder);
}
static inline int camo_wels_encode_frame(ISVCEncoder *encoder, const SSourcePicture *picture, SFrameBSInfo *info) {
    return (*encoder)->EncodeFrame(encoder, picture, info);
}
static inline int camo_wels_force_intra_frame(ISVCEncoder *encoder, bool idr) {
    return (*encoder)->ForceIntraFrame(encoder, idr);
}
static inline int camo_wels_set_option(ISVCEncoder *encoder, ENCODER_OPTION option, void *value) {
    return (*encoder)->SetOption(encoder, option, value);
}

/// &param->sSpatialLayers[index] (index < MAX_SPATIAL_LAYER_NUM).
static inline SSpatialLayerConfig *_Nonnull camo_wels_spatial_layer(SEncParamExt *param, int index) {
    return &param->sSpatialLayers[index];
}
/// &info->sLayerInfo[index] (index < info->iLayerNum).
static inline const SLayerBSInfo *_Nonnull camo_wels_layer(const SFrameBSInfo *info, int index) {
    return &info->sLayerInfo[index];
}
/// Sets the picture's three I420 planes and their strides.
static inline void camo_wels_set_planes(SSourcePicture *picture, uint8_t *y, int yStride, uint8_t *u, int uStride,
                                        uint8_t *v, int vStride) {
    picture->pData[0] = y; picture->iStride[0] = yStride;
    picture->pData[1] = u; picture->iStride[1] = uStride;
    picture->pData[2] = v; picture->iStride[2] = vStride;
    picture->pData[3] = 0; picture->iStride[3] = 0;
}
#endif
