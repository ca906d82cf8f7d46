// Wrappers for webrtcbin (CamoLive's WebRTC viewers): its action signals are called through
// g_signal_emit_by_name and its properties read through g_object_get, both variadic; promise replies and
// session descriptions are read through GstStructure getters that are variadic too.
#ifndef CAMO_CGSTREAMER_WEBRTC_SHIM_H
#define CAMO_CGSTREAMER_WEBRTC_SHIM_H
#include "shim.h"
#define GST_USE_UNSTABLE_API 1
#include <gst/sdp/sdp.h>
#include <gst/webrtc/webrtc.h>

/// g_object_get for an int or enum property.
static inline gint camo_g_object_get_int(gpointer object, const char *name) {
    gint value = 0;
    g_object_get(object, name, &value, NULL);
    return value;
}
/// g_object_get for a guint property.
static inline guint camo_g_object_get_uint(gpointer object, const char *name) {
    guint value = 0;
    g_object_get(object, name, &value, NULL);
    return value;
}
/// g_object_get for an object property (a new reference, or NULL; unref with gst_object_unref / g_object_unref).
static inline gpointer camo_g_object_get_object(gpointer object, const char *name) {
    gpointer value = NULL;
    g_object_get(object, name, &value, NULL);
    return value;
}
/// g_signal_connect_data with a destroy notify for the user data (released when the handler goes away).
static inline gulong camo_g_signal_connect_full(gpointer instance, const char *signal, GCallback handler, gpointer data,
                                                GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, handler, data, destroy, (GConnectFlags)0);
}

/// A session description of `type` from SDP text, or NULL when the text does not parse.
static inline GstWebRTCSessionDescription *camo_webrtc_description_from_text(GstWebRTCSDPType type, const char *text) {
    GstSDPMessage *sdp = NULL;
    if (gst_sdp_message_new_from_text(text, &sdp) != GST_SDP_OK || sdp == NULL) {
        if (sdp != NULL) gst_sdp_message_free(sdp);
        return NULL;
    }
    return gst_webrtc_session_description_new(type, sdp);
}
/// The SDP text of a webrtcbin description property ("local-description", "remote-description", ...), or NULL.
/// Free with g_free.
static inline gchar *camo_webrtc_description_text(GstElement *webrtc, const char *property) {
    GstWebRTCSessionDescription *description = NULL;
    g_object_get(webrtc, property, &description, NULL);
    if (description == NULL) return NULL;
    gchar *text = description->sdp != NULL ? gst_sdp_message_as_text(description->sdp) : NULL;
    gst_webrtc_session_description_free(description);
    return text;
}

/// webrtcbin's "set-remote-description" action (the description stays the caller's).
static inline void camo_webrtc_set_remote_description(GstElement *webrtc, GstWebRTCSessionDescription *description,
                                                      GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "set-remote-description", description, promise);
}
/// webrtcbin's "set-local-description" action (the description stays the caller's).
static inline void camo_webrtc_set_local_description(GstElement *webrtc, GstWebRTCSessionDescription *description,
                                                     GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "set-local-description", description, promise);
}
/// webrtcbin's "create-answer" action, without options.
static inline void camo_webrtc_create_answer(GstElement *webrtc, GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "create-answer", NULL, promise);
}
/// webrtcbin's "create-offer" action, without options.
static inline void camo_webrtc_create_offer(GstElement *webrtc, GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "create-offer", NULL, promise);
}
/// webrtcbin's "add-ice-candidate" action: an "a=candidate:" value (without "a=") for m-line `mline`.
static inline void camo_webrtc_add_ice_candidate(GstElement *webrtc, guint mline, const char *candidate) {
    g_signal_emit_by_name(webrtc, "add-ice-candidate", mline, candidate);
}
/// webrtcbin's "add-transceiver" action; the transceiver is not kept.
static inline void camo_webrtc_add_transceiver(GstElement *webrtc, GstWebRTCRTPTransceiverDirection direction,
                                               GstCaps *caps) {
    GstWebRTCRTPTransceiver *transceiver = NULL;
    g_signal_emit_by_name(webrtc, "add-transceiver", direction, caps, &transceiver);
    if (transceiver != NULL) gst_object_unref(transceiver);
}

/// Whether a settled promise (one whose change function ran) was answered without an error. When not, `*message`
/// gets a description (free with g_free).
static inline gboolean camo_webrtc_promise_succeeded(GstPromise *promise, gchar **message) {
    GstPromiseResult result = gst_promise_wait(promise);
    if (result != GST_PROMISE_RESULT_REPLIED) {
        *message = g_strdup(result == GST_PROMISE_RESULT_INTERRUPTED ? "interrupted" : "expired");
        return FALSE;
    }
    const GstStructure *reply = gst_promise_get_reply(promise);
    if (reply != NULL && gst_structure_has_field(reply, "error")) {
        GError *error = NULL;
        if (gst_structure_get(reply, "error", G_TYPE_ERROR, &error, NULL) && error != NULL) {
            *message = g_strdup(error->message);
            g_error_free(error);
        } else {
            *message = g_strdup("unknown error");
        }
        return FALSE;
    }
    return TRUE;
}
/// The session description in a create-offer / create-answer reply (`field` "offer" or "answer"), or NULL.
/// Free with gst_webrtc_session_description_free.
static inline GstWebRTCSessionDescription *camo_webrtc_promise_description(GstPromise *promise, const char *field) {
    const GstStructure *reply = gst_promise_get_reply(promise);
    if (reply == NULL) return NULL;
    GstWebRTCSessionDescription *description = NULL;
    if (!gst_structure_get(reply, field, GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &description, NULL)) return NULL;
    return description;
}

/// The "media" field of a pad's current caps ("audio", "video"), or NULL. Free with g_free.
static inline gchar *camo_pad_caps_media(GstPad *pad) {
    GstCaps *caps = gst_pad_get_current_caps(pad);
    if (caps == NULL) caps = gst_pad_query_caps(pad, NULL);
    if (caps == NULL) return NULL;
    gchar *media = NULL;
    if (gst_caps_get_size(caps) > 0) {
        const gchar *value = gst_structure_get_string(gst_caps_get_structure(caps, 0), "media");
        if (value != NULL) media = g_strdup(value);
    }
    gst_caps_unref(caps);
    return media;
}
/// Wraps `element` in a new pipeline unless it is one (gst_parse_launch returns a lone element as itself).
/// Takes the element's reference; returns the pipeline's.
static inline GstElement *camo_gst_as_pipeline(GstElement *element) {
    if (GST_IS_PIPELINE(element)) return element;
    GstElement *pipeline = gst_pipeline_new(NULL);
    gst_bin_add(GST_BIN(pipeline), element);
    return pipeline;
}
/// The text of an error message (GST_MESSAGE_ERROR / WARNING) and its debug details. Free both with g_free.
static inline void camo_message_error_text(GstMessage *message, gchar **text, gchar **debug) {
    GError *error = NULL;
    *text = NULL;
    *debug = NULL;
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) gst_message_parse_error(message, &error, debug);
    else if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_WARNING) gst_message_parse_warning(message, &error, debug);
    if (error != NULL) {
        *text = g_strdup(error->message);
        g_error_free(error);
    }
}
/// GST_MESSAGE_TYPE and GST_MESSAGE_SRC (macros).
static inline GstMessageType camo_message_type(GstMessage *message) { return GST_MESSAGE_TYPE(message); }
static inline GstObject *camo_message_source(GstMessage *message) { return GST_MESSAGE_SRC(message); }
/// A new buffer holding a copy of `size` bytes.
static inline GstBuffer *camo_gst_buffer_new_copy(const void *data, gsize size) {
    GstBuffer *buffer = gst_buffer_new_allocate(NULL, size, NULL);
    if (buffer != NULL && size > 0) gst_buffer_fill(buffer, 0, data, size);
    return buffer;
}
/// A buffer sharing `buffer`'s memory with its own timestamps.
static inline GstBuffer *camo_gst_buffer_retimed(GstBuffer *buffer, GstClockTime pts) {
    GstBuffer *copy = gst_buffer_copy(buffer);
    GST_BUFFER_PTS(copy) = pts;
    GST_BUFFER_DTS(copy) = GST_CLOCK_TIME_NONE;
    return copy;
}
static inline GstClockTime camo_gst_buffer_duration(GstBuffer *buffer) { return GST_BUFFER_DURATION(buffer); }
/// The buffer of an appsink sample (a new reference), or NULL.
static inline GstBuffer *camo_sample_take_buffer(GstSample *sample) {
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    if (buffer != NULL) gst_buffer_ref(buffer);
    gst_sample_unref(sample);
    return buffer;
}
#endif
