#!/usr/bin/env bash
# The kernel as TCP oracle (issue 12, items 3-5; docs/calibration.md "The kernel as oracle"):
# runs each diverging CoAP-over-TCP cell simulated (netsim's TCP model) and emulated (Linux's
# own reno / bbr behind the TUN/netns link emulator, real time, root), then prints the
# comparison tables (compare.py). Emulated runs take their simulated duration in wall time,
# so the cells are reduced (fewer replications, one client count) and say so.
#
#   scripts/tcp-oracle/run.sh [CELL...]      CELL: bbr2500 bbr2500low reno2500 long4medium
#                                            short100 short100udp short200
#                                            (default: all); OUT=/tmp/oracle (results), REPS_*
#                                            override the replications of a cell.
#   scripts/tcp-oracle/compare.py OUT        the tables again, from the results alone
#
# Every emulated run prints one line on stderr with the emulator's write lateness (p50/p99/max
# per direction, ms) and the 1-minute load average; it is kept in OUT/CELL/emu.log and
# compare.py reports it beside the results (and flags runs whose p99 lateness exceeds 10 % of
# the 78.7-ms downlink serialization time of a full segment).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${COAPLAB:-$root/target/release/coaplab}
out=${OUT:-/tmp/oracle}
mkdir -p "$out"

# cell name -> scenario file and --set overrides (the reductions are stated here, once).
cell_args() {
    case $1 in
    bbr2500)
        # Table 6's 2,500-B BBR cell: 1 client, error-free, 102,400 B (not reduced; 20 -> 10 reps).
        echo "scenarios/pesola-tcp-calibration.toml --reps ${REPS_BBR:-10} --set network.buffer_bytes=2500 --set flows.0.cc=tcp-bbr" ;;
    bbr2500low)
        # pesola-long-lived's 1-client BBR cell at 2,500 B with the low error profile (20 -> 5
        # reps; runs cut at 400 s, flows unfinished by then count as incomplete in both modes).
        echo "scenarios/pesola-long-lived.toml --reps ${REPS_BBR_LOW:-5} --set max_sim_time_s=400 --set network.buffer_bytes=2500 --set network.loss=low --set flows.0.count=1 --set flows.0.cc=tcp-bbr" ;;
    reno2500)
        # Table 6's 2,500-B New Reno cell (20 -> 5 reps).
        echo "scenarios/pesola-tcp-calibration.toml --reps ${REPS_RENO:-5} --set network.buffer_bytes=2500 --set flows.0.cc=tcp-newreno" ;;
    long4medium)
        # pesola-long-lived: 4 clients, 2,500 B, medium errors, New Reno (20 -> 4 reps; runs cut
        # at 600 s, flows unfinished by then count as incomplete in both modes).
        echo "scenarios/pesola-long-lived.toml --reps ${REPS_LONG:-4} --set max_sim_time_s=600 --set network.buffer_bytes=2500 --set network.loss=medium --set flows.0.count=4 --set flows.0.cc=tcp-newreno" ;;
    short100)
        # pesola-short-tcp-vs-udp: 100 clients, 2,500 B, New Reno, both workloads (20 -> 2 reps).
        echo "scenarios/pesola-short-tcp-vs-udp.toml --reps ${REPS_SHORT:-2} --set network.buffer_bytes=2500 --set flows.0.count=100 --set flows.0.cc=tcp-newreno" ;;
    short100udp)
        # The UDP side of short100 (Default CoAP and CoCoA; 20 -> 1 rep).
        echo "scenarios/pesola-short-tcp-vs-udp.toml --reps ${REPS_SHORT_UDP:-1} --set network.buffer_bytes=2500 --set flows.0.count=100 --set flows.0.cc=[\"default\",\"cocoa\"]" ;;
    short200)
        # The same with 200 clients (20 -> 1 rep).
        echo "scenarios/pesola-short-tcp-vs-udp.toml --reps ${REPS_SHORT200:-1} --set network.buffer_bytes=2500 --set flows.0.count=200 --set flows.0.cc=tcp-newreno" ;;
    *) echo "unknown cell $1" >&2; return 1 ;;
    esac
}

# TRACE=FILE: record the kernel's TCP tracepoints of every socket on port 5683 (both ends of
# every emulated CoAP-over-TCP connection) into FILE while the emulated runs go on; read it
# with ktrace.py. A tracefs instance of its own, removed at exit.
tracer_pid=
trace_dir=/sys/kernel/tracing/instances/coaplab-tcp-oracle
trace_events="tcp_cong_state_set tcp_retransmit_skb tcp_probe"
stop_trace() {
    [ -n "$tracer_pid" ] || return 0
    echo 0 >"$trace_dir/tracing_on"
    for e in $trace_events; do echo 0 >"$trace_dir/events/tcp/$e/enable"; done
    sleep 1
    kill "$tracer_pid" 2>/dev/null || true
    wait "$tracer_pid" 2>/dev/null || true
    rmdir "$trace_dir"
    tracer_pid=
}
if [ -n "${TRACE:-}" ]; then
    mkdir -p "$trace_dir"
    echo 16384 >"$trace_dir/buffer_size_kb"
    echo mono >"$trace_dir/trace_clock"
    for e in $trace_events; do
        echo "sport == 5683 || dport == 5683" >"$trace_dir/events/tcp/$e/filter"
        echo 1 >"$trace_dir/events/tcp/$e/enable"
    done
    echo 1 >"$trace_dir/tracing_on"
    cat "$trace_dir/trace_pipe" >>"$TRACE" &
    tracer_pid=$!
    trap stop_trace EXIT
fi

cells=("$@")
[ ${#cells[@]} -eq 0 ] && cells=(bbr2500 bbr2500low reno2500 long4medium short100 short100udp short200)

cd "$root"
for c in "${cells[@]}"; do
    spec=$(cell_args "$c") || exit 2
    read -r -a args <<<"$spec"
    mkdir -p "$out/$c"
    echo "== $c: ${args[*]}" | tee "$out/$c/command.txt"
    [ -f "$out/$c/sim/summary.csv" ] || "$bin" run "${args[@]}" -q --out "$out/$c/sim"
    if [ ! -f "$out/$c/emu/summary.csv" ]; then
        echo "load average before: $(cat /proc/loadavg)" >"$out/$c/emu.log"
        "$bin" run "${args[@]}" --mode emulated -q --out "$out/$c/emu" 2>>"$out/$c/emu.log"
        echo "load average after: $(cat /proc/loadavg)" >>"$out/$c/emu.log"
    fi
done
stop_trace
"$bin" emulate --cleanup >/dev/null || true
python3 "$here/compare.py" "$out" "${cells[@]}"
