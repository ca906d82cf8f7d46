// libswscale (ffmpeg's scaler and colour converter), used only by camo-bench as a speed reference.
#ifndef CAMO_CSWSCALE_SHIM_H
#define CAMO_CSWSCALE_SHIM_H
#include <libswscale/swscale.h>
#include <libavutil/pixfmt.h>
#endif
