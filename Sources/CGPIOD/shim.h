// libgpiod v1 (Debian bookworm's 1.6): the chip and line calls the doorbell uses are plain functions Swift imports
// as they are; the shim only adds what Swift cannot express (a timeout as a struct timespec built in C, the event
// kinds as plain ints) so the wrapper file stays small.
#ifndef CAMO_GPIOD_SHIM_H
#define CAMO_GPIOD_SHIM_H

#include <gpiod.h>
#include <stdint.h>
#include <time.h>

/// gpiod_line_event_wait with a timeout in nanoseconds: 1 when an event (or a hang-up) is waiting, 0 on timeout,
/// -1 on error (errno says which).
static inline int camo_gpiod_wait(struct gpiod_line *line, uint64_t timeout_ns) {
    struct timespec timeout = { .tv_sec = (time_t)(timeout_ns / 1000000000u), .tv_nsec = (long)(timeout_ns % 1000000000u) };
    return gpiod_line_event_wait(line, &timeout);
}

/// The event's kernel timestamp in nanoseconds (CLOCK_MONOTONIC since Linux 5.7).
static inline uint64_t camo_gpiod_event_ns(const struct gpiod_line_event *event) {
    return (uint64_t)event->ts.tv_sec * 1000000000u + (uint64_t)event->ts.tv_nsec;
}

/// Whether the event is a rising edge of the line's logical value (the active state when the line was requested
/// active-low).
static inline int camo_gpiod_event_is_rising(const struct gpiod_line_event *event) {
    return event->event_type == GPIOD_LINE_EVENT_RISING_EDGE;
}

/// The request flag that makes the line's logical value the inverse of its level.
static inline int camo_gpiod_flag_active_low(void) { return GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW; }

#endif
