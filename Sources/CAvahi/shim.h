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
    AvahiEntryGroup *group, const char *name, const char *type, uint16_t port, AvahiStringList *txt) {
    return avahi_entry_group_add_service_strlst(group, AVAHI_IF_UNSPEC, AVAHI_PROTO_UNSPEC, 0,
                                                name, type, NULL, NULL, port, txt);
}
#endif
