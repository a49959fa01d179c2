"""Default CoAP (RFC 7252 §4.2) rewritten in Python: the built-in `default`, event for event.

    coaplab suite run suites/smoke.toml --cc default --cc-from examples/python-algorithm/default_coap.py

It takes the built-in algorithm's parameters (`params_of = "default"`: ack_timeout_s, backoff,
timer_max_s, the Contiki first-timer variants, and presets such as fasor18), draws the same
random numbers in the same order and does the same f64 arithmetic; the simulator rounds every
returned timer to the microsecond as the built-in one rounds its own. So its runs are the
built-in algorithm's byte for byte (python/tests/test_algorithm.py compares flows.csv), except
where a preset sets a key for named algorithms only (rathod-contiki's ACK_TIMEOUT of 3 s is for
`default`, `default-fb1`, `default-fb2` and `gst`, not for `py-default`).
"""

import math


def _round_half_away(v):
    """Rust's f64::round for v >= 0 (Python's round() rounds half to even)."""
    f = math.floor(v)
    return f + 1.0 if v - f >= 0.5 else f


class DefaultCoap:
    """Per-destination state: the parameters only; Default CoAP learns nothing."""

    name = "py-default"
    summary = "Default CoAP in Python: dithered first timer, binary backoff (RFC 7252; examples/python-algorithm)"
    params_of = "default"

    def __init__(self, params):
        self.ack_random_factor = params["ack_random_factor"]
        self.backoff = params["backoff"]  # RFC 7252 §4.2: the timer doubles
        self.timer_max_s = params["timer_max_s"]
        variant = params["variant"]
        if variant == "rfc":
            self.ack_timeout_s = params["ack_timeout_s"]  # ACK_TIMEOUT, RFC 7252 §4.8
            self.ticks_per_s = None
        else:  # Contiki's er-coap draws whole clock ticks (docs/algorithms.md, ambiguity #5)
            self.ack_timeout_s = params["contiki_ack_timeout_s"]
            self.ticks_per_s = float(params["contiki_ticks"]) if variant == "contiki" else 1000.0

    def start(self, now_s, x, rng):
        if self.ticks_per_s is None:
            # Drawn from [ACK_TIMEOUT, ACK_TIMEOUT * ACK_RANDOM_FACTOR), RFC 7252 §4.2.
            t0 = self.ack_timeout_s * (1.0 + (self.ack_random_factor - 1.0) * rng.uniform01())
        else:
            base = _round_half_away(self.ack_timeout_s * self.ticks_per_s)
            mask = math.floor(base * (self.ack_random_factor - 1.0) + 0.5) + 1
            t0 = (base + rng.below(mask)) / self.ticks_per_s
        return min(t0, self.timer_max_s)

    def expired(self, now_s, x, rng):
        # x.retransmissions is the retransmission about to be sent (1, 2, ...); x.timer_s the
        # timer that expired.
        return min(self.backoff * x.timer_s, self.timer_max_s)

    def completed(self, c, x, rng):
        pass

    def rto(self):
        return self.ack_timeout_s


ALGORITHMS = [DefaultCoap]
