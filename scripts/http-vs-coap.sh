#!/usr/bin/env bash
# Object download through the emulated zigbee link (docs/experiments.md §8e), real stacks:
# HTTP/1.1, h2c (HTTP/2 with prior knowledge, SPDY's standard successor), IoT-HTTP/1.1 and
# IoT-h2c (minimal headers + TCP Fast Open, cookie from an untimed warm-up connection), and
# CoAP (CON GET, piggybacked, Block2 with 64-B blocks). Prints CSV:
#   protocol,object_bytes,download_ms,link_bytes,link_packets,syn_data_bytes,buffer_drops
# download_ms: the client's own timing (request initiated -> last byte of the object).
# link_bytes / link_packets: IPv4 packets (IP + TCP/UDP headers + payload) of the timed
# connection, both directions, as the emulator's pcap records them, up to and including the
# packet that delivers the object's last byte (no FIN teardown, no final ACK). syn_data_bytes:
# payload of the timed connection's SYN (TFO). buffer_drops: packets the bottleneck buffer
# dropped in the whole session (both ways, the emulator's `overflow` statistic). See
# docs/http-vs-coap.md.
#
# Usage: sudo scripts/http-vs-coap.sh [OUT_DIR] [SIZES...]   (root: namespaces, TUN devices)
# Environment: BUFFER_BYTES (the link's bottleneck buffer, both ways; default the zigbee
# preset's 512 B); COAPLAB (the binary; default target/release/coaplab when it has `http-get`,
# else target/debug/coaplab).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/http-vs-coap}
shift || true
sizes=${*:-10 100 200 300 400 500 600 700 800 900 1000}
bin=${COAPLAB:-}
if [ -z "$bin" ]; then
  bin=$PWD/target/release/coaplab
  "$bin" http-get --help >/dev/null 2>&1 || bin=$PWD/target/debug/coaplab
fi
command -v tshark >/dev/null || { echo "tshark is needed (apt-get install tshark)" >&2; exit 1; }
mkdir -p "$out"

# tshark fields of every IPv4 packet: time, source, IP length, TCP stream (empty for UDP),
# TCP payload length (empty for UDP).
fields() {
  tshark -r "$1" -T fields -e frame.time_relative -e ip.src -e ip.len -e tcp.stream -e tcp.len \
    -e udp.length -Y ip 2>/dev/null
}

# Bytes and packets of the last TCP stream (or of all UDP) up to the server's last payload.
count() {
  awk -F'\t' -v server=198.18.0.2 '
    { t[NR]=$1; src[NR]=$2; len[NR]=$3; st[NR]=$4; tl[NR]=$5; ul[NR]=$6
      if ($4 != "" && $4+0 > last) last=$4+0 }
    END {
      for (i=1;i<=NR;i++) {
        mine = (st[i]=="" ) ? (ul[i]!="") : (st[i]+0==last)
        if (mine && src[i]==server && ((tl[i]!="" && tl[i]+0>0) || (ul[i]!=""))) end=i
      }
      for (i=1;i<=end;i++) {
        mine = (st[i]=="" ) ? (ul[i]!="") : (st[i]+0==last)
        if (mine) { b+=len[i]; p++ }
      }
      printf "%d,%d", b, p
    }'
}

syn_data() {
  tshark -r "$1" -Y 'tcp.flags.syn==1 && tcp.flags.ack==0' -T fields -e tcp.len 2>/dev/null \
    | tail -1
}

echo "protocol,object_bytes,download_ms,link_bytes,link_packets,syn_data_bytes,buffer_drops"
for n in $sizes; do
  for proto in http1.1 h2c iot-http1.1 iot-h2c coap; do
    pcap=$out/$proto-$n.pcap
    emu=(emulate --preset zigbee --mtu 128 --pcap "$pcap")
    [ -z "${BUFFER_BYTES:-}" ] || emu+=(--buffer-bytes "$BUFFER_BYTES")
    url="http://\$COAPLAB_SERVER_ADDR/data/$n"
    case $proto in
      http1.1) server="$bin http-server --bind 0.0.0.0:80"
               client=(http-get -v --http1.1 "$url") ;;
      h2c) server="$bin http-server --bind 0.0.0.0:80"
           client=(http-get -v --http2-prior-knowledge "$url") ;;
      iot-http1.1) emu+=(--tcp-fastopen); server="$bin http-server --bind 0.0.0.0:80 --iot --tfo"
                   client=(http-get -v --iot --tfo --http1.1 "$url") ;;
      iot-h2c) emu+=(--tcp-fastopen); server="$bin http-server --bind 0.0.0.0:80 --iot --tfo"
               client=(http-get -v --iot --tfo --http2-prior-knowledge "$url") ;;
      coap) server="$bin server --no-etags"
            client=(get -v --block-size 64 "coap://\$COAPLAB_SERVER_ADDR/data/$n") ;;
    esac
    "$bin" "${emu[@]}" --server "$server" -- "$bin" "${client[@]}" \
      >"$out/$proto-$n.body" 2>"$out/$proto-$n.log"
    [ "$(stat -c %s "$out/$proto-$n.body")" = "$n" ] || { echo "$proto $n: body is not $n B" >&2; exit 1; }
    if [ "$proto" = coap ]; then
      # The endpoint clock (t=…s, from the client socket's start) of the last answer.
      ms=$(awk '/ answer /{t=$1} END{sub(/^t=/,"",t); sub(/s$/,"",t); printf "%.3f", t*1000}' \
        "$out/$proto-$n.log")
      syn=
    else
      ms=$(sed -n 's/.*download_ms=\([0-9.]*\).*/\1/p' "$out/$proto-$n.log")
      syn=$(syn_data "$pcap")
    fi
    drops=$(awk '$1=="up"||$1=="down"{d+=$6} END{print d+0}' "$out/$proto-$n.log")
    echo "$proto,$n,$ms,$(fields "$pcap" | count),$syn,$drops"
  done
done
