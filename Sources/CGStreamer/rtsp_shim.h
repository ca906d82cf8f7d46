// Wrappers for gst-rtsp-server (CamoLive's RTSP server).
#ifndef CAMO_CGSTREAMER_RTSP_SHIM_H
#define CAMO_CGSTREAMER_RTSP_SHIM_H
#include "shim.h"
#include <gst/rtsp-server/rtsp-server.h>
#endif
