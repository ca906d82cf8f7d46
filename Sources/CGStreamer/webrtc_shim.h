// Wrappers for webrtcbin (CamoLive's WebRTC viewers): its action signals are called through
// g_signal_emit_by_name, which is variadic.
#ifndef CAMO_CGSTREAMER_WEBRTC_SHIM_H
#define CAMO_CGSTREAMER_WEBRTC_SHIM_H
#include "shim.h"
#define GST_USE_UNSTABLE_API 1
#include <gst/sdp/sdp.h>
#include <gst/webrtc/webrtc.h>
#endif
