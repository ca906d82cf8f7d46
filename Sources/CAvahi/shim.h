// Thin shim over libavahi-client. avahi_entry_group_add_service is variadic
// (a NULL-terminated TXT list), which Swift cannot call; the wrapper takes an
// AvahiStringList instead.
#ifndef CAMO_CAVAHI_SHIM_H
#define CAMO_CAVAHI_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <avahi-client/client.h>
#include <avahi-client/publish.h>
#include <avahi-client/lookup.h>
#include <avahi-common/thread-watch.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/strlst.h>
#include <avahi-common/alternative.h>

static inline int camo_avahi_entry_group_add_service_strlst(
    AvahiEntryGroup *group, int32_t interface, const char *name, const char *type, uint16_t port, AvahiStringList *txt) {
    return avahi_entry_group_add_service_strlst(group, interface, AVAHI_PROTO_UNSPEC, 0,
                                                name, type, NULL, NULL, port, txt);
}

// --- Additions for CamoDiscovery: timers on an AvahiPoll (its vtable is a struct of function pointers),
// address formatting and service-name checks.
#include <avahi-common/address.h>
#include <avahi-common/domain.h>
#include <avahi-common/timeval.h>

/// A timeout on `api` that fires `msec` milliseconds from now; msec < 0 creates it disabled.
static inline AvahiTimeout *camo_avahi_timeout_new(const AvahiPoll *api, int msec, AvahiTimeoutCallback callback,
                                                   void *userdata) {
    struct timeval tv;
    if (msec < 0)
        return api->timeout_new(api, NULL, callback, userdata);
    return api->timeout_new(api, avahi_elapse_time(&tv, (unsigned) msec, 0), callback, userdata);
}

/// Re-arms `timeout` to fire `msec` milliseconds from now; msec < 0 disables it.
static inline void camo_avahi_timeout_update(const AvahiPoll *api, AvahiTimeout *timeout, int msec) {
    struct timeval tv;
    api->timeout_update(timeout, msec < 0 ? NULL : avahi_elapse_time(&tv, (unsigned) msec, 0));
}

static inline void camo_avahi_timeout_free(const AvahiPoll *api, AvahiTimeout *timeout) {
    api->timeout_free(timeout);
}

/// The printable form of an address ("127.0.0.1", "fe80::1"), or 0 when it cannot be formatted.
static inline int camo_avahi_address_string(const AvahiAddress *address, char *buffer, size_t size) {
    return avahi_address_snprint(buffer, size, address) != NULL;
}

static inline size_t camo_avahi_address_string_max(void) { return AVAHI_ADDRESS_STR_MAX; }
#endif
