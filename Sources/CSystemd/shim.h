// SPDX-License-Identifier: GPL-2.0-or-later
// sd-bus, sd-event and sd-daemon for Swift. The SD_BUS_VTABLE_* macros are designated initialisers Swift
// cannot import, so each vtable entry is built here, zero-filled as sd-bus-vtable.h demands.
#pragma once
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <systemd/sd-journal.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <poll.h>
#include <string.h>

static inline sd_bus_vtable csd_vtable_start(uint64_t flags) {
    sd_bus_vtable v;
    memset(&v, 0, sizeof v);
    v.type = _SD_BUS_VTABLE_START;
    v.flags = flags;
    v.x.start.element_size = sizeof(sd_bus_vtable);
    v.x.start.features = _SD_BUS_VTABLE_PARAM_NAMES;
    v.x.start.vtable_format_reference = &sd_bus_object_vtable_format;
    return v;
}

// names: NUL-separated argument names, in then out ("text\0answer\0"); strings must outlive the vtable.
static inline sd_bus_vtable csd_vtable_method(const char *member, const char *signature, const char *result,
                                              const char *names, sd_bus_message_handler_t handler,
                                              uint64_t flags) {
    sd_bus_vtable v;
    memset(&v, 0, sizeof v);
    v.type = _SD_BUS_VTABLE_METHOD;
    v.flags = flags;
    v.x.method.member = member;
    v.x.method.signature = signature;
    v.x.method.result = result;
    v.x.method.handler = handler;
    v.x.method.names = names;
    return v;
}

static inline sd_bus_vtable csd_vtable_property(const char *member, const char *signature,
                                                sd_bus_property_get_t getter, sd_bus_property_set_t setter,
                                                uint64_t flags) {
    sd_bus_vtable v;
    memset(&v, 0, sizeof v);
    v.type = setter ? _SD_BUS_VTABLE_WRITABLE_PROPERTY : _SD_BUS_VTABLE_PROPERTY;
    v.flags = flags;
    v.x.property.member = member;
    v.x.property.signature = signature;
    v.x.property.get = getter;
    v.x.property.set = setter;
    return v;
}

static inline sd_bus_vtable csd_vtable_signal(const char *member, const char *signature, const char *names,
                                              uint64_t flags) {
    sd_bus_vtable v;
    memset(&v, 0, sizeof v);
    v.type = _SD_BUS_VTABLE_SIGNAL;
    v.flags = flags;
    v.x.signal.member = member;
    v.x.signal.signature = signature;
    v.x.signal.names = names;
    return v;
}

static inline sd_bus_vtable csd_vtable_end(void) {
    sd_bus_vtable v;
    memset(&v, 0, sizeof v);
    v.type = _SD_BUS_VTABLE_END;
    return v;
}

// Flag values are enum constants of mixed types; give Swift plain uint64_t.
static inline uint64_t csd_flag_unprivileged(void) { return SD_BUS_VTABLE_UNPRIVILEGED; }
static inline uint64_t csd_flag_emits_change(void) { return SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE; }
static inline uint64_t csd_flag_const(void) { return SD_BUS_VTABLE_PROPERTY_CONST; }
