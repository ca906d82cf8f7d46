// Thin shim over GStreamer (Debian's libgstreamer1.0-dev and friends), shared by CamoLive's WebRTC viewers and
// RTSP server. GLib's g_object_set, g_signal_connect and g_signal_emit_by_name are variadic or macros, which
// Swift cannot call: typed static inline wrappers stand in for the forms we use. The WebRTC and RTSP parts keep
// their own wrappers in webrtc_shim.h and rtsp_shim.h.
#ifndef CAMO_CGSTREAMER_SHIM_H
#define CAMO_CGSTREAMER_SHIM_H
#include <stdint.h>
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>

static inline void camo_g_object_set_int(gpointer object, const char *name, gint value) {
    g_object_set(object, name, value, NULL);
}
static inline void camo_g_object_set_uint(gpointer object, const char *name, guint value) {
    g_object_set(object, name, value, NULL);
}
static inline void camo_g_object_set_uint64(gpointer object, const char *name, guint64 value) {
    g_object_set(object, name, value, NULL);
}
static inline void camo_g_object_set_int64(gpointer object, const char *name, gint64 value) {
    g_object_set(object, name, value, NULL);
}
static inline void camo_g_object_set_bool(gpointer object, const char *name, gboolean value) {
    g_object_set(object, name, value, NULL);
}
static inline void camo_g_object_set_double(gpointer object, const char *name, gdouble value) {
    g_object_set(object, name, value, NULL);
}
static inline void camo_g_object_set_string(gpointer object, const char *name, const char *value) {
    g_object_set(object, name, value, NULL);
}
static inline void camo_g_object_set_pointer(gpointer object, const char *name, gpointer value) {
    g_object_set(object, name, value, NULL);
}
/// g_object_set for an enum property given by its nick (e.g. "downstream"), through gst_util_set_object_arg.
static inline void camo_g_object_set_arg(gpointer object, const char *name, const char *value) {
    gst_util_set_object_arg(G_OBJECT(object), name, value);
}
/// g_signal_connect (a macro).
static inline gulong camo_g_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data) {
    return g_signal_connect_data(instance, signal, handler, data, NULL, (GConnectFlags)0);
}
/// GST_BUFFER_PTS / DTS / DURATION (macros).
static inline void camo_gst_buffer_set_times(GstBuffer *buffer, GstClockTime pts, GstClockTime duration) {
    GST_BUFFER_PTS(buffer) = pts;
    GST_BUFFER_DTS(buffer) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION(buffer) = duration;
}
static inline GstClockTime camo_gst_buffer_pts(GstBuffer *buffer) { return GST_BUFFER_PTS(buffer); }
static inline void camo_gst_buffer_set_flags(GstBuffer *buffer, guint flags) { GST_BUFFER_FLAG_SET(buffer, flags); }
/// gst_object_unref / g_object_unref taking any pointer.
static inline void camo_gst_object_unref(gpointer object) { gst_object_unref(object); }
static inline GstElement *camo_gst_bin_get_by_name(GstElement *bin, const char *name) {
    return gst_bin_get_by_name(GST_BIN(bin), name);
}
static inline GstClockTime camo_gst_clock_time_none(void) { return GST_CLOCK_TIME_NONE; }
static inline GstClockTime camo_gst_second(void) { return GST_SECOND; }
#endif
