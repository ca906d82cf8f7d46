#!/usr/bin/python3
"""Browse DNS-SD services with python-zeroconf, an mDNS stack independent of avahi-daemon.

  scripts/zeroconf-browse.py [--type _camo._tcp ...] [--timeout S]

It binds to 127.0.0.1 only (mDNS on loopback), so it never sends anything on the machine's real network.
One JSON object per line on stdout, flushed at once:

  {"event": "ready", "t": 0.01, "types": [...]}                       once the browser runs
  {"event": "add" | "update", "t": ..., "type": "_camo._tcp", "name": "Desk cam", "port": 47800,
   "host": "vm.local.", "addresses": ["127.0.0.1"], "txt": {"v": "1", ...}, "txt_order": ["v", ...],
   "resolved": true}
  {"event": "remove", "t": ..., "type": "_camo._tcp", "name": "Desk cam"}
  {"event": "end", "t": ...}                                          at the timeout or on SIGTERM/SIGINT

t is seconds since start, taken when python-zeroconf reported the change (the line is printed once the
service's SRV/TXT/A records are resolved). name is the instance name. A TXT key without "=" has the value "".
python-zeroconf reports "update" right after "add" when more records arrive: treat both as upserts.
Written for python3-zeroconf 0.47 (Debian bookworm); works with newer versions too.
"""
import argparse
import asyncio
import json
import signal
import sys
import time

from zeroconf import IPVersion, ServiceStateChange
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

START = time.monotonic()
EVENT_NAMES = {
    ServiceStateChange.Added: "add",
    ServiceStateChange.Updated: "update",
    ServiceStateChange.Removed: "remove",
}


def emit(record, at=None):
    at = time.monotonic() if at is None else at
    line = json.dumps({"event": record.pop("event"), "t": round(at - START, 3), **record})
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        sys.exit(0)


def text(value):
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def instance_name(full_name, service_type):
    suffix = "." + service_type
    return full_name[: -len(suffix)] if full_name.endswith(suffix) else full_name


def short_type(service_type):
    return service_type[: -len(".local.")] if service_type.endswith(".local.") else service_type


async def main():
    # A parent can hand us blocked signals (a Swift test spawns us from a thread that blocks them, and the
    # mask survives exec): unblock them so SIGTERM ends the browser.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--type", action="append", dest="types", metavar="TYPE",
                        help="service type such as _camo._tcp (repeatable; default _camo._tcp and _camopairing._tcp)")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S",
                        help="exit after S seconds (0: run until SIGTERM or SIGINT)")
    parser.add_argument("--resolve-timeout", type=float, default=3.0, metavar="S",
                        help="how long to wait for a service's SRV/TXT/A records (default 3)")
    options = parser.parse_args()

    types = options.types or ["_camo._tcp", "_camopairing._tcp"]
    types = [t if t.endswith(".local.") else t.rstrip(".") + ".local." for t in types]

    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, done.set)

    zc = AsyncZeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
    locks = {}  # (type, name) -> asyncio.Lock: keeps each service's lines in event order
    tasks = set()

    async def report(event, service_type, full_name, at):
        lock = locks.setdefault((service_type, full_name), asyncio.Lock())
        async with lock:
            record = {"event": event, "type": short_type(service_type),
                      "name": instance_name(full_name, service_type)}
            if event != "remove":
                info = AsyncServiceInfo(service_type, full_name)
                resolved = await info.async_request(zc.zeroconf, int(options.resolve_timeout * 1000))
                record["resolved"] = bool(resolved)
                record["port"] = info.port
                record["host"] = info.server
                record["addresses"] = info.parsed_addresses() if resolved else []
                properties = info.properties or {}
                record["txt"] = {text(k): text(v) for k, v in properties.items()}
                record["txt_order"] = [text(k) for k in properties]
            emit(record, at)

    def on_change(zeroconf, service_type, name, state_change):
        task = asyncio.ensure_future(report(EVENT_NAMES[state_change], service_type, name, time.monotonic()))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    browser = AsyncServiceBrowser(zc.zeroconf, types, handlers=[on_change])
    emit({"event": "ready", "types": [short_type(t) for t in types]})
    try:
        if options.timeout > 0:
            try:
                await asyncio.wait_for(done.wait(), options.timeout)
            except asyncio.TimeoutError:
                pass
        else:
            await done.wait()
    finally:
        await browser.async_cancel()
        for task in list(tasks):
            task.cancel()
        await zc.async_close()
        emit({"event": "end"})


if __name__ == "__main__":
    asyncio.run(main())
