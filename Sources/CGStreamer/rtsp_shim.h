// Wrappers for gst-rtsp-server (CamoLive's RTSP server): its variadic calls (tokens, factory roles), the macros
// it is configured with, and the few GLib forms the server needs that shim.h does not have.
#ifndef CAMO_CGSTREAMER_RTSP_SHIM_H
#define CAMO_CGSTREAMER_RTSP_SHIM_H
#include "shim.h"
#include <gst/rtsp-server/rtsp-server.h>

/// g_signal_connect_data with a destroy notify: the handler's user data is released when the handler goes
/// (its object is finalized or the handler is disconnected).
static inline gulong camo_g_signal_connect_notify(gpointer instance, const char *signal, GCallback handler,
                                                  gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, handler, data, destroy, (GConnectFlags)0);
}

/// A token that grants the media factory role `role` (gst_rtsp_token_new is variadic).
static inline GstRTSPToken *camo_rtsp_token_new_factory_role(const char *role) {
    return gst_rtsp_token_new(GST_RTSP_TOKEN_MEDIA_FACTORY_ROLE, G_TYPE_STRING, role, NULL);
}

/// Lets `role` access the factory's media and construct it (gst_rtsp_media_factory_add_role is variadic).
static inline void camo_rtsp_media_factory_allow_role(GstRTSPMediaFactory *factory, const char *role) {
    gst_rtsp_media_factory_add_role(factory, role,
                                    GST_RTSP_PERM_MEDIA_FACTORY_ACCESS, G_TYPE_BOOLEAN, TRUE,
                                    GST_RTSP_PERM_MEDIA_FACTORY_CONSTRUCT, G_TYPE_BOOLEAN, TRUE, NULL);
}

static inline GstRTSPFilterResult camo_rtsp_remove_client(GstRTSPServer *server, GstRTSPClient *client,
                                                          gpointer user_data) {
    (void)server;
    (void)client;
    (void)user_data;
    return GST_RTSP_FILTER_REMOVE;
}

/// Closes every client of `server` (and with them their sessions).
static inline void camo_rtsp_server_close_clients(GstRTSPServer *server) {
    GList *kept = gst_rtsp_server_client_filter(server, camo_rtsp_remove_client, NULL);
    g_list_free_full(kept, gst_object_unref);
}

static inline gboolean camo_rtsp_session_pool_cleanup_tick(gpointer pool) {
    gst_rtsp_session_pool_cleanup((GstRTSPSessionPool *)pool);
    return G_SOURCE_CONTINUE;
}

/// A source that removes the server's expired sessions (clients that vanished without TEARDOWN, e.g. over UDP)
/// every `seconds`, attached to the default main context. Destroy and unref it to stop.
static inline GSource *camo_rtsp_session_cleanup_source(GstRTSPServer *server, guint seconds) {
    GstRTSPSessionPool *pool = gst_rtsp_server_get_session_pool(server);
    GSource *source = g_timeout_source_new_seconds(seconds);
    g_source_set_callback(source, camo_rtsp_session_pool_cleanup_tick, pool, g_object_unref);
    g_source_attach(source, NULL);
    return source;
}

/// The running time of `element`'s pipeline now: clock time minus base time, when the element is PLAYING with a
/// clock. Returns FALSE (and leaves `running_time` alone) otherwise.
static inline gboolean camo_gst_element_running_time(GstElement *element, GstClockTime *running_time) {
    GstState state = GST_STATE_NULL;
    GST_OBJECT_LOCK(element);
    state = GST_STATE(element);
    GST_OBJECT_UNLOCK(element);
    if (state != GST_STATE_PLAYING) return FALSE;
    GstClock *clock = gst_element_get_clock(element);
    if (clock == NULL) return FALSE;
    GstClockTime now = gst_clock_get_time(clock);
    gst_object_unref(clock);
    GstClockTime base = gst_element_get_base_time(element);
    if (!GST_CLOCK_TIME_IS_VALID(now) || !GST_CLOCK_TIME_IS_VALID(base) || now < base) return FALSE;
    *running_time = now - base;
    return TRUE;
}

/// Bytes queued in an appsrc (given as a plain element).
static inline guint64 camo_app_src_level_bytes(GstElement *appsrc) {
    return gst_app_src_get_current_level_bytes(GST_APP_SRC(appsrc));
}

/// gst_app_src_push_buffer on a plain element; takes the buffer.
static inline GstFlowReturn camo_app_src_push(GstElement *appsrc, GstBuffer *buffer) {
    return gst_app_src_push_buffer(GST_APP_SRC(appsrc), buffer);
}

/// A buffer holding a copy of `size` bytes at `data`, stamped with `pts` and `duration`; a delta unit (not a
/// keyframe) when `delta` is TRUE.
static inline GstBuffer *camo_gst_buffer_new_stamped(const void *data, gsize size, GstClockTime pts,
                                                     GstClockTime duration, gboolean delta) {
    GstBuffer *buffer = gst_buffer_new_memdup(data, size);
    GST_BUFFER_PTS(buffer) = pts;
    GST_BUFFER_DTS(buffer) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION(buffer) = duration;
    if (delta) GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
    return buffer;
}

/// The error's message, or NULL.
static inline const char *camo_g_error_message(const GError *error) { return error ? error->message : NULL; }
#endif
