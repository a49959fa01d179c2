#!/usr/bin/env bash
# The README's two commands on a fresh machine: a minimal Debian 12 made by debootstrap, with
# nothing but build-essential, curl, git and rustup's minimal toolchain, as the Quick start
# promises. Command 1 runs as a new user, command 2 (which installs the test peers) as root.
#
#   sudo scripts/fresh-machine.sh [DIR] [1|2|both]     # DIR default /var/tmp/coaplab-fresh
#
# The chroot is made once (debootstrap needs deb.debian.org) and kept: run again, it clones
# this checkout's HEAD afresh into it and runs the commands again (the toolchain and the
# Debian packages command 2 installed stay). Logs: DIR.cmd1.log, DIR.cmd2.log, each ending
# with bash's `time` and `rc=`. Needs root (debootstrap, chroot, mount, unshare).
# Command 2 runs in a private mount namespace in which the chroot is bound on itself, so
# that its / is a mount point (`ip netns exec` makes / a slave mount, as on a real machine).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${1:-/var/tmp/coaplab-fresh}"
WHICH="${2:-both}"
[ "$(id -u)" = 0 ] || { echo "fresh-machine.sh: run as root" >&2; exit 2; }

if [ ! -x "$DIR/usr/bin/apt-get" ]; then
  command -v debootstrap >/dev/null || apt-get install -y debootstrap
  mkdir -p "$DIR"
  debootstrap --variant=minbase bookworm "$DIR" http://deb.debian.org/debian
fi
mountpoint -q "$DIR/proc" || mount -t proc proc "$DIR/proc"
mountpoint -q "$DIR/sys" || mount --rbind /sys "$DIR/sys"
mountpoint -q "$DIR/dev" || mount --rbind /dev "$DIR/dev"
mkdir -p "$DIR/src"
mountpoint -q "$DIR/src" || { mount --bind "$ROOT" "$DIR/src" && mount -o remount,bind,ro "$DIR/src"; }
cp /etc/resolv.conf "$DIR/etc/resolv.conf"
# A host behind a TLS-inspecting proxy: its extra CAs, so that rustup and crates.io verify.
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
  cp /usr/local/share/ca-certificates/*.crt "$DIR/usr/local/share/ca-certificates/"
fi
in_chroot() { chroot "$DIR" env -i HOME=/root TERM=dumb \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
if [ ! -x "$DIR/usr/bin/gcc" ]; then
  in_chroot bash -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    build-essential curl ca-certificates git && update-ca-certificates'
fi
install_rustup='[ -x ~/.cargo/bin/cargo ] || { curl -sSfo /tmp/rustup-init \
  https://static.rust-lang.org/rustup/dist/x86_64-unknown-linux-gnu/rustup-init \
  && chmod +x /tmp/rustup-init && /tmp/rustup-init -y --profile minimal; }
  git config --global --add safe.directory "*"
  rm -rf ~/coaplab && git clone -q /src ~/coaplab && cd ~/coaplab && git log --oneline -1'

if [ "$WHICH" = 1 ] || [ "$WHICH" = both ]; then
  in_chroot bash -c 'id newuser >/dev/null 2>&1 || useradd -m newuser'
  in_chroot su - newuser -s /bin/bash -c "$install_rustup && . ~/.cargo/env && cat /proc/loadavg \
    && time cargo run --release -- run scenarios/quickstart.toml; echo rc=\$?" 2>&1 \
    | tee "$DIR.cmd1.log"
fi
if [ "$WHICH" = 2 ] || [ "$WHICH" = both ]; then
  unshare --mount --propagation private bash -c "mount --rbind '$DIR' '$DIR' && chroot '$DIR' \
    env -i HOME=/root TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c '$install_rustup && . ~/.cargo/env && cat /proc/loadavg && time ./scripts/test.sh; echo rc=\$?'" \
    2>&1 | tee "$DIR.cmd2.log"
fi
