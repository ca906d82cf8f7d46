// Thin shim over FFmpeg's libavcodec, libavformat and libavutil (Debian's 5.1 -dev packages).
// No pkgConfig in Package.swift: the module map links the three libraries directly (as CYUV does),
// because SwiftPM refuses some of the flags their .pc files carry.
// The static inline functions below are what Swift cannot use from the headers as they are:
// function-like macros (AVERROR, AVERROR_EOF, AV_NOPTS_VALUE) and the version macros.
#ifndef CAMO_CFFMPEG_SHIM_H
#define CAMO_CFFMPEG_SHIM_H
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libavutil/samplefmt.h>
// Only for X264_BUILD (the version libavcodec's libx264 wrapper was built against); nothing of x264 is linked.
#include <x264.h>

/// AVERROR(EAGAIN): the codec wants the other call (send or receive) first.
static inline int camo_averror_eagain(void) { return AVERROR(EAGAIN); }
/// AVERROR_EOF: the codec or muxer has been drained.
static inline int camo_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR(errno) for any errno value.
static inline int camo_averror(int errnum) { return AVERROR(errnum); }
/// AV_NOPTS_VALUE: no timestamp.
static inline int64_t camo_av_nopts_value(void) { return AV_NOPTS_VALUE; }

/// libavcodec's message for an error code ("Invalid data found when processing input").
static inline void camo_av_strerror(int errnum, char *buffer, size_t size) {
    if (av_strerror(errnum, buffer, size) < 0) snprintf(buffer, size, "error %d", errnum);
}

/// Formats one av_log message (its format and va_list, as the log callback receives them) into `buffer`.
static inline int camo_av_vformat(char *buffer, size_t size, const char *format, va_list arguments) {
    return vsnprintf(buffer, size, format, arguments);
}

/// The x264 build (the "164" of "libx264 0.164") of the headers libavcodec's wrapper was built against.
static inline int camo_x264_build(void) { return X264_BUILD; }

/// LIBAVCODEC_VERSION_MAJOR etc. as one "59.37.100" in `buffer`, for the library loaded at run time.
static inline void camo_avcodec_version_string(char *buffer, size_t size) {
    unsigned version = avcodec_version();
    snprintf(buffer, size, "%u.%u.%u", version >> 16, (version >> 8) & 0xFF, version & 0xFF);
}
#endif
