"""RFC 6298's retransmission timer, written in Python, for CoAP: a smoothed RTT and its
variation from clean samples (Karn's rule), the first timer dithered as CoAP's (RFC 7252 §4.2),
binary backoff.

    coaplab suite run suites/smoke.toml --cc default cocoa --cc-from examples/python-algorithm/rfc6298.py

Per exchange, `x.state` keeps nothing: the first timer is in `x.timer_s` at the first expiry,
and the backoff doubles the timer armed.
"""

ALPHA = 1 / 8  # RFC 6298 §2.3
BETA = 1 / 4  # RFC 6298 §2.3
K = 4  # RFC 6298 §2.2
G_S = 0.001  # clock granularity G: the simulator's microsecond timers, taken as 1 ms
INITIAL_RTO_S = 1.0  # RFC 6298 §2.1
MIN_RTO_S = 1.0  # RFC 6298 §2.4
MAX_RTO_S = 60.0  # RFC 6298 §2.5: a maximum of at least 60 s may be placed


class Rfc6298:
    name = "py-rfc6298"
    summary = "RFC 6298 RTO in Python, Karn sampling, dithered first timer (examples/python-algorithm)"

    def __init__(self, params):
        self.ack_random_factor = params["ack_random_factor"]
        self.srtt_s = None
        self.rttvar_s = None
        self.rto_s = INITIAL_RTO_S

    def start(self, now_s, x, rng):
        # Dithered as CoAP's first timer (RFC 7252 §4.2), so clients started together spread out.
        return min(self.rto_s * (1.0 + (self.ack_random_factor - 1.0) * rng.uniform01()), MAX_RTO_S)

    def expired(self, now_s, x, rng):
        return min(2.0 * x.timer_s, MAX_RTO_S)  # RFC 6298 §5.5

    def completed(self, c, x, rng):
        if c.retransmissions > 0:
            return  # Karn's rule (RFC 6298 §3): an ambiguous sample is not taken
        r = c.rtt_s
        if self.srtt_s is None:  # RFC 6298 §2.2
            self.srtt_s, self.rttvar_s = r, r / 2
        else:  # RFC 6298 §2.3: RTTVAR first, with the old SRTT
            self.rttvar_s = (1 - BETA) * self.rttvar_s + BETA * abs(self.srtt_s - r)
            self.srtt_s = (1 - ALPHA) * self.srtt_s + ALPHA * r
        self.rto_s = min(max(self.srtt_s + max(G_S, K * self.rttvar_s), MIN_RTO_S), MAX_RTO_S)

    def rto(self):
        return self.rto_s

    def snapshot(self):
        return {"srtt_s": self.srtt_s or 0.0, "rttvar_s": self.rttvar_s or 0.0}


ALGORITHMS = [Rfc6298]
