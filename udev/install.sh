#!/usr/bin/env bash
# Installs camo-agent as a system service: the binary, the camo-agent system user and group, the udev rules,
# the systemd units and /etc/camo-agent/config.json.example; reloads udev and systemd when they run, and enables
# and starts the service.
#
#   udev/install.sh [--binary PATH] [--prefix DIR] [--no-enable] [--root DIR]
#   udev/install.sh --studio [--studio-binary PATH] [--prefix DIR] [--root DIR]
#   udev/install.sh --uninstall [--prefix DIR] [--root DIR]
#
# --binary PATH  the camo-agent executable to install (default: .build/release/camo-agent of this package)
# --prefix DIR   where the binary goes: DIR/bin/camo-agent (default /usr/local); the units are rewritten to match
# --no-enable    install and reload, but do not enable or start the service
# --studio       on a Linux studio: install the USB link's studio-side rule and camo-usb-link, camo-studio (when
#                built), the user unit camo-studio-camera@.service (/etc/systemd/user) and its desktop entry
#                (DIR/share/applications); no agent, no system service
# --studio-binary PATH  the camo-studio executable (default: .build/release/camo-studio of this package)
# --root DIR     stage into DIR (for packaging or tests): no user creation, no reloads, no starting; the service
#                is enabled by its multi-user.target.wants link unless --no-enable
# --uninstall    stop and disable the service and remove what install put in place; the camo-agent user and
#                /var/lib/camo-agent (the agent's identity and paired studios) and /etc/camo-agent/config.json
#                are kept
set -euo pipefail

PROG=install.sh
HERE=$(cd "$(dirname "$0")" && pwd)
NAME=camo-agent
BINARY=$HERE/../.build/release/camo-agent
STUDIO_BINARY=$HERE/../.build/release/camo-studio
PREFIX=/usr/local
ROOT=""
ENABLE=1
UNINSTALL=0
STUDIO=0
ARGS=$*

die() { echo "$PROG: error: $*" >&2; exit 1; }
say() { echo "$PROG: $*"; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

while (($#)); do
    case $1 in
        --binary | --prefix | --root | --studio-binary) (($# >= 2)) || die "$1 needs a value" ;;
    esac
    case $1 in
        --binary) BINARY=$2; shift 2 ;;
        --studio-binary) STUDIO_BINARY=$2; shift 2 ;;
        --prefix) PREFIX=$2; shift 2 ;;
        --root) ROOT=$2; shift 2 ;;
        --no-enable) ENABLE=0; shift ;;
        --uninstall) UNINSTALL=1; shift ;;
        --studio) STUDIO=1; shift ;;
        -h | --help) usage; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) BINARY=$1; shift ;;
    esac
done
[[ $PREFIX == /* ]] || die "--prefix must be an absolute path, not '$PREFIX'"
PREFIX=${PREFIX%/}
if [[ -n $ROOT ]]; then
    mkdir -p "$ROOT" || die "cannot create the staging directory $ROOT"
    ROOT=$(cd "$ROOT" && pwd -P)
    [[ $ROOT != / ]] || ROOT=""
fi
LIVE=$([[ -z $ROOT ]] && echo 1 || echo 0)

BIN_PATH=$PREFIX/bin/$NAME
RULES_PATH=/etc/udev/rules.d/60-camo-agent.rules
GADGET_RULES=70-camo-usb-gadget.rules
STUDIO_RULES=70-camo-usb-studio.rules
LIBEXEC=$PREFIX/lib/$NAME
LINK_TOOL=$LIBEXEC/camo-usb-link
UNIT_DIR=/etc/systemd/system
SERVICE=$NAME.service
RESCAN=$NAME-rescan@.service
USB_SERVICE=$NAME-usb.service
WANTS_LINK=$UNIT_DIR/multi-user.target.wants/$SERVICE
USB_WANTS_LINK=$UNIT_DIR/multi-user.target.wants/$USB_SERVICE
# The studio's side: camo-studio, its user unit (for every user) and desktop entry.
STUDIO_BIN_PATH=$PREFIX/bin/camo-studio
USER_UNIT_DIR=/etc/systemd/user
STUDIO_UNIT=camo-studio-camera@.service
DESKTOP_DIR=$PREFIX/share/applications
DESKTOP_ENTRY=camo-studio-camera.desktop
# The unit's ConfigurationDirectory=: the agent reads config.json here; the example is only a starting point.
CONFIG_DIR=/etc/$NAME
CONFIG_EXAMPLE=$CONFIG_DIR/config.json.example

# A udev rule with the path of camo-usb-link filled in.
install_rules() {
    mkdir -p "$ROOT/etc/udev/rules.d"
    sed "s#@LIBEXEC@#$LIBEXEC#g" "$HERE/$1" > "$ROOT/etc/udev/rules.d/$1.tmp"
    chmod 0644 "$ROOT/etc/udev/rules.d/$1.tmp"
    mv "$ROOT/etc/udev/rules.d/$1.tmp" "$ROOT/etc/udev/rules.d/$1"
    say "installed $ROOT/etc/udev/rules.d/$1"
}

if ((LIVE)) && [[ $(id -u) != 0 ]]; then
    die "installing into the system needs root: run sudo $0 $ARGS (or stage with --root DIR)"
fi
systemd_running() { ((LIVE)) && [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null; }
# (in a chroot, udevadm control succeeds without doing anything: look for udevd's control socket first)
udev_running() { ((LIVE)) && [[ -S /run/udev/control ]] && udevadm control --ping >/dev/null 2>&1; }

reload_udev() {
    if udev_running; then
        udevadm control --reload
        # Existing nodes get (or lose) the group ACL now; "change" does not start the rescan unit.
        udevadm trigger --action=change --subsystem-match=video4linux --subsystem-match=sound
        say "reloaded the udev rules and re-applied them to the present video and sound devices"
    elif ((LIVE)); then
        say "udev is not running: the rules apply from its next start"
    fi
}

if ((UNINSTALL)); then
    if systemd_running; then
        for unit in "$SERVICE" "$USB_SERVICE"; do
            if systemctl is-enabled --quiet "$unit" 2>/dev/null || systemctl is-active --quiet "$unit"; then
                systemctl disable --now "$unit"
                say "stopped and disabled $unit"
            fi
        done
    fi
    for f in "$WANTS_LINK" "$USB_WANTS_LINK" "$UNIT_DIR/$SERVICE" "$UNIT_DIR/$RESCAN" "$UNIT_DIR/$USB_SERVICE" "$RULES_PATH" \
        "/etc/udev/rules.d/$GADGET_RULES" "/etc/udev/rules.d/$STUDIO_RULES" "$LINK_TOOL" "$BIN_PATH" "$CONFIG_EXAMPLE" \
        "$USER_UNIT_DIR/$STUDIO_UNIT" "$DESKTOP_DIR/$DESKTOP_ENTRY" "$STUDIO_BIN_PATH"; do
        if [[ -e $ROOT$f || -L $ROOT$f ]]; then
            rm -f "$ROOT$f"
            say "removed $ROOT$f"
        else
            say "not present: $ROOT$f"
        fi
        # In a staging root, also drop the folders that are now empty (never the root itself).
        d=$(dirname "$f")
        while [[ -n $ROOT && $d != / ]] && rmdir "$ROOT$d" 2>/dev/null; do d=$(dirname "$d"); done
    done
    if systemd_running; then
        systemctl daemon-reload
        say "reloaded systemd"
    fi
    if ((LIVE)) && command -v setfacl >/dev/null && getent group "$NAME" >/dev/null; then
        for node in /dev/video* /dev/snd/*; do
            if [[ -c $node ]]; then setfacl -x "g:$NAME" "$node" 2>/dev/null || true; fi
        done
        say "removed the $NAME group's ACL entries from /dev/video* and /dev/snd/*"
    fi
    reload_udev
    # /etc/camo-agent goes when nothing else is in it (staging already dropped it above).
    if ((LIVE)); then rmdir "$CONFIG_DIR" 2>/dev/null || true; fi
    if [[ -e $ROOT$CONFIG_DIR/config.json ]]; then
        say "kept $ROOT$CONFIG_DIR/config.json (your settings); remove it with: rm -r $ROOT$CONFIG_DIR"
    fi
    say "kept the $NAME user and group and /var/lib/$NAME (identity key, paired studios);" \
        "remove them with: userdel $NAME; rm -rf /var/lib/$NAME"
    exit 0
fi

for f in 60-camo-agent.rules "$SERVICE" "$RESCAN" "$USB_SERVICE" "$GADGET_RULES" "$STUDIO_RULES" camo-usb-link config.json.example \
    "$STUDIO_UNIT" "$DESKTOP_ENTRY"; do
    [[ -f $HERE/$f ]] || die "$HERE/$f is missing: run this script from a complete camo-agent checkout"
done
if ((STUDIO)); then
    install -D -m 0755 "$HERE/camo-usb-link" "$ROOT$LINK_TOOL"
    say "installed $ROOT$LINK_TOOL"
    install_rules "$STUDIO_RULES"
    if [[ -f $STUDIO_BINARY && -x $STUDIO_BINARY ]]; then
        install -D -m 0755 "$STUDIO_BINARY" "$ROOT$STUDIO_BIN_PATH"
        say "installed $ROOT$STUDIO_BIN_PATH"
    else
        say "note: no camo-studio executable at $STUDIO_BINARY (build it with 'swift build -c release' or pass" \
            "--studio-binary PATH); the unit and the desktop entry expect it at $STUDIO_BIN_PATH"
    fi
    mkdir -p "$ROOT$USER_UNIT_DIR" "$ROOT$DESKTOP_DIR"
    sed "s#/usr/local/bin/camo-studio #$STUDIO_BIN_PATH #" "$HERE/$STUDIO_UNIT" > "$ROOT$USER_UNIT_DIR/$STUDIO_UNIT.tmp"
    sed "s#/usr/local/bin/camo-studio #$STUDIO_BIN_PATH #" "$HERE/$DESKTOP_ENTRY" > "$ROOT$DESKTOP_DIR/$DESKTOP_ENTRY.tmp"
    chmod 0644 "$ROOT$USER_UNIT_DIR/$STUDIO_UNIT.tmp" "$ROOT$DESKTOP_DIR/$DESKTOP_ENTRY.tmp"
    mv "$ROOT$USER_UNIT_DIR/$STUDIO_UNIT.tmp" "$ROOT$USER_UNIT_DIR/$STUDIO_UNIT"
    mv "$ROOT$DESKTOP_DIR/$DESKTOP_ENTRY.tmp" "$ROOT$DESKTOP_DIR/$DESKTOP_ENTRY"
    say "installed $ROOT$USER_UNIT_DIR/$STUDIO_UNIT: as your user, systemctl --user daemon-reload;" \
        "systemctl --user enable --now camo-studio-camera@AGENT (after sudo camo-studio setup and pairing)"
    say "installed $ROOT$DESKTOP_DIR/$DESKTOP_ENTRY"
    if udev_running; then
        udevadm control --reload
        say "reloaded the udev rules: plug the webcam host in (or replug it) and its link appears as camo<6 hex digits>"
    fi
    exit 0
fi
if [[ ! -f $BINARY || ! -x $BINARY ]]; then
    die "no camo-agent executable at $BINARY: build it with 'swift build -c release' or pass --binary PATH"
fi
if ! command -v setfacl >/dev/null; then
    if ((LIVE)); then
        die "setfacl not found: the udev rules need it to give the $NAME group access to devices; install the acl package (apt-get install acl)"
    fi
    say "note: setfacl is not on this machine; the target system needs the acl package"
fi

if ((LIVE)); then
    if ! getent group "$NAME" >/dev/null; then
        groupadd --system "$NAME"
        say "created the system group $NAME"
    fi
    if ! getent passwd "$NAME" >/dev/null; then
        useradd --system --gid "$NAME" --home-dir "/var/lib/$NAME" --no-create-home \
            --shell /usr/sbin/nologin --comment "Camo agent" "$NAME"
        say "created the system user $NAME"
    fi
fi

install -D -m 0755 "$BINARY" "$ROOT$BIN_PATH"
say "installed $ROOT$BIN_PATH"
install -D -m 0644 "$HERE/60-camo-agent.rules" "$ROOT$RULES_PATH"
say "installed $ROOT$RULES_PATH"
install -D -m 0755 "$HERE/camo-usb-link" "$ROOT$LINK_TOOL"
say "installed $ROOT$LINK_TOOL"
install_rules "$GADGET_RULES"
install -D -m 0644 "$HERE/config.json.example" "$ROOT$CONFIG_EXAMPLE"
say "installed $ROOT$CONFIG_EXAMPLE (copy it to $CONFIG_DIR/config.json to use it)"
for unit in "$SERVICE" "$RESCAN" "$USB_SERVICE"; do
    mkdir -p "$ROOT$UNIT_DIR"
    sed "s#/usr/local/bin/$NAME #$BIN_PATH #" "$HERE/$unit" > "$ROOT$UNIT_DIR/$unit.tmp"
    chmod 0644 "$ROOT$UNIT_DIR/$unit.tmp"
    mv "$ROOT$UNIT_DIR/$unit.tmp" "$ROOT$UNIT_DIR/$unit"
    say "installed $ROOT$UNIT_DIR/$unit"
done

reload_udev
if systemd_running; then
    systemctl daemon-reload
    say "reloaded systemd"
    if ((ENABLE)); then
        systemctl enable "$SERVICE" "$USB_SERVICE"
        systemctl restart "$SERVICE"
        say "enabled and (re)started $SERVICE; enabled $USB_SERVICE (it makes the USB gadget at boot where there is a UDC)"
    fi
elif ((ENABLE)); then
    mkdir -p "$ROOT$UNIT_DIR/multi-user.target.wants"
    ln -sfn "$UNIT_DIR/$SERVICE" "$ROOT$WANTS_LINK"
    say "enabled $SERVICE ($ROOT$WANTS_LINK)"
    ln -sfn "$UNIT_DIR/$USB_SERVICE" "$ROOT$USB_WANTS_LINK"
    say "enabled $USB_SERVICE ($ROOT$USB_WANTS_LINK)"
    if ((LIVE)); then say "systemd is not running here: the service starts at the next boot"; fi
fi
if ((LIVE)); then
    say "check it with: systemctl status $SERVICE; $BIN_PATH status --runtime-dir /run/$NAME; getfacl /dev/video0"
fi
