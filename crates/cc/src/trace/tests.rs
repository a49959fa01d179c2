//! Tests of the trace engine: the RFC 7252 §4.2 example as CSV, tie-breaking, resets and input
//! errors.

use super::*;
use crate::rng::ScriptedRandom;
use crate::testutil::build;

/// The RFC 7252 §4.2 schedule with u = 0.4 up to the fifth expiry (74.4 s), which the capped and
/// the default configuration share: the first five timers stay below the 60 s cap.
const RFC_FIRST_FIVE_TRANSMISSIONS: &str = "\
time_s,event,exchange,transmission,timer_s,rto_s,state
0.000000,transmit,1,1,2.400000,,
2.400000,expire,1,1,,,
2.400000,transmit,1,2,4.800000,,
7.200000,expire,1,2,,,
7.200000,transmit,1,3,9.600000,,
16.800000,expire,1,3,,,
16.800000,transmit,1,4,19.200000,,
36.000000,expire,1,4,,,
36.000000,transmit,1,5,38.400000,,
74.400000,expire,1,5,,,
";

#[test]
fn rfc_example_with_60_s_cap_prints_every_transmission() {
    // RFC 7252 §4.2: u = 0.4, TIMER_MAX 60 s, MAX_RETRANSMIT 20; answered at 200 s.
    let mut alg = build("default", &["timer_max_s=60", "max_retransmit=20"]);
    let csv = run_text(
        alg.as_mut(),
        "# RFC 7252 §4.2 example\n0 send\n200 ack   # after 7 retransmissions\n",
        &mut ScriptedRandom::new(&[0.4]),
    )
    .unwrap();
    assert_eq!(
        csv,
        RFC_FIRST_FIVE_TRANSMISSIONS.to_owned()
            + "\
74.400000,transmit,1,6,60.000000,,
134.400000,expire,1,6,,,
134.400000,transmit,1,7,60.000000,,
194.400000,expire,1,7,,,
194.400000,transmit,1,8,60.000000,,
200.000000,complete,1,,,2.000000,
"
    );
}

#[test]
fn rfc_defaults_give_up_at_74_4_s() {
    // RFC 7252 §4.2: MAX_RETRANSMIT 4, no cap: the exchange gives up at 74.4 s.
    let mut alg = build("default", &[]);
    let csv = run_text(alg.as_mut(), "0 send\n", &mut ScriptedRandom::new(&[0.4])).unwrap();
    assert_eq!(
        csv,
        RFC_FIRST_FIVE_TRANSMISSIONS.to_owned()
            + "\
74.400000,giveup,1,5,,,
"
    );
}

#[test]
fn ack_at_the_expiry_instant_is_processed_first() {
    let mut alg = build("default", &[]);
    let rows = run(
        alg.as_mut(),
        &parse("0 send\n2.4 ack 1\n").unwrap(),
        &mut ScriptedRandom::new(&[0.4]),
    )
    .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].kind, RowKind::Complete);
    assert_eq!(rows[1].transmission, Some(1));
}

#[test]
fn fb1_carries_the_timer_in_force_across_a_reset() {
    let mut alg = build("default-fb1", &[]);
    let csv = run_text(
        alg.as_mut(),
        "0 send\n6 ack 2\n10 send\n11 ack\n12 reset\n",
        &mut ScriptedRandom::new(&[0.2]),
    )
    .unwrap();
    assert_eq!(
        csv,
        "\
time_s,event,exchange,transmission,timer_s,rto_s,state
0.000000,transmit,1,1,2.200000,,
2.200000,expire,1,1,,,
2.200000,transmit,1,2,4.400000,,
6.000000,complete,1,2,,4.400000,
10.000000,transmit,2,1,4.400000,,
11.000000,complete,2,,,2.000000,
12.000000,reset,,,,,
"
    );
}

fn err(text: &str) -> String {
    let mut alg = build("default", &[]);
    run_text(alg.as_mut(), text, &mut ScriptedRandom::new(&[0.4, 0.4]))
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_input_names_the_line() {
    assert_eq!(
        err("0 send\nabc ack\n"),
        "line 2: 'abc' is not a time in seconds (expected e.g. 2.4)"
    );
    assert_eq!(
        err("0 sned\n"),
        "line 1: unknown event 'sned' (expected send, ack [N] or reset)"
    );
    assert_eq!(
        err("# c\n\n1 ack\n"),
        "line 3: ack, but no exchange is in flight"
    );
    assert_eq!(
        err("0 send\n1 send\n"),
        "line 2: send, but exchange 1 is still in flight (one at a time)"
    );
    assert_eq!(
        err("5 send\n4 ack\n"),
        "line 2: time 4.000000 s is before the previous event at 5.000000 s"
    );
    assert_eq!(
        err("0 send\n1 ack 2\n"),
        "line 2: ack 2, but the exchange in flight has sent 1 transmission(s) (1 = original)"
    );
    assert_eq!(
        err("0 send\n1 ack 0\n"),
        "line 2: '0' is not a transmission ordinal (1 = original)"
    );
    assert_eq!(err("0 send 3\n"), "line 1: too many fields after 'send'");
    assert_eq!(
        err("0 send\n1 reset\n"),
        "line 2: reset, but exchange 1 is still in flight"
    );
    assert_eq!(
        err("-1 send\n"),
        "line 1: '-1' is not a time in seconds (expected e.g. 2.4)"
    );
    assert_eq!(
        err("1\n"),
        "line 1: missing event after the time (expected send, ack [N] or reset)"
    );
}

#[test]
fn an_ack_after_give_up_is_an_error() {
    assert_eq!(
        err("0 send\n100 ack\n"),
        "line 2: ack, but no exchange is in flight"
    );
}
