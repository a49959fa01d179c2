//! Ground truth for unnecessary retransmissions of one connection end: per data segment, the
//! copies sent and the first copy that reached the receiver.
//!
//! A connection cuts its data segments in increasing sequence order and retransmits a segment
//! with the same first sequence number, so the log is a vector sorted by sequence number: a new
//! segment is appended, a copy is found by binary search, an arrival by the position its packet
//! carries (checked; searched when an insertion moved it). Nothing is hashed per packet.

/// The data segments sent by one end of a connection.
#[derive(Debug, Default)]
pub(super) struct CopyLog {
    /// (first sequence number, copies sent, first copy delivered), sorted by sequence number.
    segments: Vec<(u64, u32, Option<u32>)>,
}

impl CopyLog {
    /// A copy of the segment starting at `seq` is sent: its number (1 = the original) and
    /// the segment's position in the log, a hint for [`CopyLog::delivered`].
    pub(super) fn sent(&mut self, seq: u64) -> (u32, u32) {
        let i = match self.segments.last() {
            Some(&(last, _, _)) if last < seq => self.segments.len(),
            _ => match self.segments.binary_search_by_key(&seq, |s| s.0) {
                Ok(i) => {
                    self.segments[i].1 += 1;
                    return (self.segments[i].1, i as u32);
                }
                Err(i) => i,
            },
        };
        self.segments.insert(i, (seq, 1, None));
        (1, i as u32)
    }

    /// Copy `copy` of the segment starting at `seq` reached the receiver; `hint` is the
    /// position [`CopyLog::sent`] gave.
    pub(super) fn delivered(&mut self, seq: u64, copy: u32, hint: u32) {
        let i = match self.segments.get(hint as usize) {
            Some(s) if s.0 == seq => Ok(hint as usize),
            _ => self.segments.binary_search_by_key(&seq, |s| s.0),
        };
        if let Ok(i) = i {
            self.segments[i].2.get_or_insert(copy);
        }
    }

    /// Copies sent after one had already reached the receiver.
    pub(super) fn unnecessary(&self) -> u64 {
        self.segments
            .iter()
            .map(|&(_, sent, first)| first.map_or(0, |d| u64::from(sent - d)))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_after_the_first_delivered_one_are_unnecessary() {
        let mut log = CopyLog::default();
        assert_eq!(log.sent(1), (1, 0));
        assert_eq!(log.sent(257), (1, 1));
        assert_eq!(log.sent(1), (2, 0)); // retransmitted
        log.delivered(1, 1, 0); // the original arrived after all
        log.delivered(1, 2, 0);
        assert_eq!(log.sent(1), (3, 0));
        assert_eq!(log.sent(513), (1, 2));
        // Segment 1: copies 2 and 3 after copy 1 arrived; 257 never arrived; 513 not yet.
        assert_eq!(log.unnecessary(), 2);
        // A segment trimmed by a partial ACK is resent from a new number in the middle: the
        // log stays sorted, and a hint moved by the insertion is searched for.
        assert_eq!(log.sent(100), (1, 1));
        assert_eq!(log.sent(100), (2, 1));
        log.delivered(100, 1, 1);
        log.delivered(513, 1, 2); // now at 3
        assert_eq!(log.unnecessary(), 3);
        assert_eq!(log.sent(513), (2, 3));
        assert_eq!(log.unnecessary(), 4);
    }
}
