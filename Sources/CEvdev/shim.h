// The kernel's input event interface (evdev) for the doorbell button as an input key: struct input_event read from
// /dev/input/eventN. Swift cannot call the variadic ioctl() nor import the _IOW/_IOR request macros, so the two
// requests are wrapped here, and the event's fields are read through functions (its time field is a macro on some
// architectures).
#ifndef CAMO_EVDEV_SHIM_H
#define CAMO_EVDEV_SHIM_H

#include <errno.h>
#include <linux/input.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <time.h>

_Static_assert(sizeof(struct input_event) == 24, "struct input_event is 24 bytes on 64-bit Linux");

/// The size of one struct input_event, as read() returns them.
static inline int camo_evdev_event_size(void) { return (int)sizeof(struct input_event); }

/// Asks the device to stamp its events with CLOCK_MONOTONIC (EVIOCSCLOCKID). Returns 0 or an errno.
static inline int camo_evdev_use_monotonic_clock(int fd) {
    int clock = CLOCK_MONOTONIC;
    return ioctl(fd, EVIOCSCLOCKID, &clock) < 0 ? errno : 0;
}

/// Whether the device can send key `code` (EVIOCGBIT for EV_KEY). Returns 1, 0, or -errno when the query fails.
static inline int camo_evdev_has_key(int fd, unsigned code) {
    unsigned char bits[KEY_MAX / 8 + 1] = {0};
    if (code > KEY_MAX) return 0;
    if (ioctl(fd, EVIOCGBIT(EV_KEY, sizeof bits), bits) < 0) return -errno;
    return (bits[code / 8] >> (code % 8)) & 1;
}

/// The device's name (EVIOCGNAME) into `buffer`; returns 0 or an errno.
static inline int camo_evdev_name(int fd, char *buffer, int size) {
    if (size <= 0) return EINVAL;
    int n = ioctl(fd, EVIOCGNAME(size - 1), buffer);
    if (n < 0) return errno;
    buffer[n < size ? n : size - 1] = 0;
    return 0;
}

/// The fields of the `index`th event in a buffer of events read from the device.
static inline uint64_t camo_evdev_event_ns(const void *events, int index) {
    const struct input_event *e = (const struct input_event *)events + index;
    return (uint64_t)e->input_event_sec * 1000000000u + (uint64_t)e->input_event_usec * 1000u;
}
static inline uint16_t camo_evdev_event_type(const void *events, int index) { return ((const struct input_event *)events + index)->type; }
static inline uint16_t camo_evdev_event_code(const void *events, int index) { return ((const struct input_event *)events + index)->code; }
static inline int32_t camo_evdev_event_value(const void *events, int index) { return ((const struct input_event *)events + index)->value; }

/// EV_KEY, the event type of keys and buttons.
static inline uint16_t camo_evdev_key_type(void) { return EV_KEY; }

#endif
