// Thin shim over ALSA's <alsa/asoundlib.h>.
//
// Swift cannot define a C variadic function, and ALSA's error handler is one
// (`snd_lib_error_handler_t` ends in `const char *fmt, ...`). The shim supplies the variadic
// trampoline: it formats the message and passes the finished text to one plain function pointer
// that Swift sets with `camo_alsa_set_log_sink`.
#ifndef CAMO_CALSA_SHIM_H
#define CAMO_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>

/// Receives one formatted ALSA library message (file, line, function, errno-style code, text).
typedef void (*camo_alsa_log_sink)(const char *file, int line, const char *function, int err, const char *message);

static inline camo_alsa_log_sink *camo_alsa_log_sink_slot(void) {
    static camo_alsa_log_sink slot = 0;
    return &slot;
}

static void camo_alsa_error_trampoline(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    char message[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    camo_alsa_log_sink sink = *camo_alsa_log_sink_slot();
    if (sink) sink(file, line, function, err, message);
}

/// Routes ALSA's own messages to `sink` (NULL restores ALSA's default: print to stderr).
static inline int camo_alsa_set_log_sink(camo_alsa_log_sink sink) {
    *camo_alsa_log_sink_slot() = sink;
    return snd_lib_error_set_handler(sink ? camo_alsa_error_trampoline : 0);
}

#endif
