// Thin shim over libpipewire (Debian's libpipewire-0.3-dev) for camo-studio's virtual microphone as a PipeWire
// source. SPA's pod builder is made of static inline functions and macros, which Swift cannot use: the one format
// this source offers is built here.
#ifndef CAMO_CPIPEWIRE_SHIM_H
#define CAMO_CPIPEWIRE_SHIM_H

#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>
#include <spa/pod/builder.h>

// The stream's one format, interleaved S16LE at `rate` with two channels (FL, FR), built into `buffer`.
static inline const struct spa_pod *camo_pw_s16_stereo_format(uint8_t *buffer, uint32_t size, uint32_t rate) {
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_audio_info_raw info = {0};
    info.format = SPA_AUDIO_FORMAT_S16_LE;
    info.rate = rate;
    info.channels = 2;
    info.position[0] = SPA_AUDIO_CHANNEL_FL;
    info.position[1] = SPA_AUDIO_CHANNEL_FR;
    return spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info);
}

// PW_VERSION_STREAM_EVENTS, as a value.
static inline uint32_t camo_pw_stream_events_version(void) { return PW_VERSION_STREAM_EVENTS; }

// The flags this source connects with: buffers mapped, process called on PipeWire's data thread, and no
// autoconnect (a source is linked by whoever records it, through the session manager).
static inline enum pw_stream_flags camo_pw_source_flags(void) {
    return (enum pw_stream_flags)(PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS);
}

#endif
