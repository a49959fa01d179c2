//! RFC 8323 §5 signalling messages: CSM, Ping, Pong, Release and Abort.
//!
//! Signalling option numbers are scoped to their code (RFC 8323 §5.2): option 2 is
//! Max-Message-Size in a CSM, Custody in a Ping or Pong, Alternative-Address in a Release and
//! Bad-CSM-Option in an Abort.

use core::fmt;

use crate::code::Code;
use crate::frame::{Frame, FrameBuf};
use crate::option::{uint, ReadOptions};
use crate::token::Token;

/// CSM option 2: Max-Message-Size, uint 0–4 (RFC 8323 §5.3.1).
pub const MAX_MESSAGE_SIZE: u16 = 2;
/// CSM option 4: Block-Wise-Transfer, empty (RFC 8323 §5.3.2).
pub const BLOCK_WISE_TRANSFER: u16 = 4;
/// Ping/Pong option 2: Custody, empty (RFC 8323 §5.4.1).
pub const CUSTODY: u16 = 2;
/// Release option 2: Alternative-Address, string 1–255, repeatable (RFC 8323 §5.5).
pub const ALTERNATIVE_ADDRESS: u16 = 2;
/// Release option 4: Hold-Off, uint 0–3 seconds (RFC 8323 §5.5).
pub const HOLD_OFF: u16 = 4;
/// Abort option 2: Bad-CSM-Option, uint 0–2 (RFC 8323 §5.6).
pub const BAD_CSM_OPTION: u16 = 2;

/// Max-Message-Size assumed before a peer's CSM arrives (RFC 8323 §5.3.1).
pub const DEFAULT_MAX_MESSAGE_SIZE: u32 = 1152;

/// A signalling message's meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// 7.01 Capabilities and Settings Message.
    Csm {
        /// Largest message the sender can receive; `None` keeps the current value.
        max_message_size: Option<u32>,
        /// The sender supports block-wise transfers (BERT included).
        block_wise_transfer: bool,
    },
    /// 7.02 Ping.
    Ping {
        /// Ask the peer to send the Pong only after it processed everything before the Ping.
        custody: bool,
    },
    /// 7.03 Pong.
    Pong {
        /// Echoes Custody.
        custody: bool,
    },
    /// 7.04 Release: the sender wants to close the connection gracefully.
    Release {
        /// Where to reconnect, e.g. `example.org:5683`.
        alternative_addresses: Vec<String>,
        /// Seconds to wait before reconnecting.
        hold_off_s: Option<u32>,
    },
    /// 7.05 Abort: the sender closes the connection because of an error.
    Abort {
        /// The CSM option that could not be processed.
        bad_csm_option: Option<u16>,
    },
}

/// A decoded signalling message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalMessage {
    /// What it says.
    pub signal: Signal,
    /// The token (a Pong echoes the Ping's).
    pub token: Token,
    /// Diagnostic payload (UTF-8 text in Release and Abort).
    pub diagnostic: Vec<u8>,
    /// The first critical option the receiver does not know: RFC 8323 §5.3 has a CSM with one
    /// answered by an Abort naming it.
    pub unknown_critical: Option<u16>,
}

/// Why a frame is not a valid signalling message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalError {
    /// The code is not 7.01–7.05.
    UnknownSignal(Code),
    /// An option value of the wrong length (RFC 8323 §5.3–5.6 formats).
    BadOption {
        /// The option number within the signal.
        number: u16,
        /// Its length.
        len: usize,
    },
}

impl fmt::Display for SignalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignalError::UnknownSignal(c) => {
                write!(f, "code {c} is not a signal (RFC 8323 §5: 7.01-7.05)")
            }
            SignalError::BadOption { number, len } => write!(
                f,
                "signalling option {number} of {len} bytes has the wrong format (RFC 8323 §5)"
            ),
        }
    }
}

impl std::error::Error for SignalError {}

/// A single uint option of at most `max_len` bytes.
fn uint_opt(f: &Frame<'_>, number: u16, max_len: usize) -> Result<Option<u32>, SignalError> {
    match f.first(number) {
        None => Ok(None),
        Some(v) if v.len() <= max_len => Ok(Some(uint::decode(v) as u32)),
        Some(v) => Err(SignalError::BadOption {
            number,
            len: v.len(),
        }),
    }
}

/// An empty option used as a flag.
fn flag_opt(f: &Frame<'_>, number: u16) -> Result<bool, SignalError> {
    match f.first(number) {
        None => Ok(false),
        Some([]) => Ok(true),
        Some(v) => Err(SignalError::BadOption {
            number,
            len: v.len(),
        }),
    }
}

impl SignalMessage {
    /// Interprets a frame with a 7.xx code.
    pub fn from_frame(f: &Frame<'_>) -> Result<SignalMessage, SignalError> {
        let (signal, known): (Signal, &[u16]) = match f.code {
            Code::CSM => (
                Signal::Csm {
                    max_message_size: uint_opt(f, MAX_MESSAGE_SIZE, 4)?,
                    block_wise_transfer: flag_opt(f, BLOCK_WISE_TRANSFER)?,
                },
                &[MAX_MESSAGE_SIZE, BLOCK_WISE_TRANSFER],
            ),
            Code::PING => (
                Signal::Ping {
                    custody: flag_opt(f, CUSTODY)?,
                },
                &[CUSTODY],
            ),
            Code::PONG => (
                Signal::Pong {
                    custody: flag_opt(f, CUSTODY)?,
                },
                &[CUSTODY],
            ),
            Code::RELEASE => {
                let mut addrs = Vec::new();
                for v in f.all(ALTERNATIVE_ADDRESS) {
                    let bad = SignalError::BadOption {
                        number: ALTERNATIVE_ADDRESS,
                        len: v.len(),
                    };
                    if v.is_empty() || v.len() > 255 {
                        return Err(bad);
                    }
                    addrs.push(String::from_utf8(v.to_vec()).map_err(|_| bad)?);
                }
                (
                    Signal::Release {
                        alternative_addresses: addrs,
                        hold_off_s: uint_opt(f, HOLD_OFF, 3)?,
                    },
                    &[ALTERNATIVE_ADDRESS, HOLD_OFF],
                )
            }
            Code::ABORT => (
                Signal::Abort {
                    bad_csm_option: uint_opt(f, BAD_CSM_OPTION, 2)?.map(|v| v as u16),
                },
                &[BAD_CSM_OPTION],
            ),
            other => return Err(SignalError::UnknownSignal(other)),
        };
        Ok(SignalMessage {
            signal,
            token: f.token(),
            diagnostic: f.payload.to_vec(),
            unknown_critical: f.first_unknown_critical(|n| known.contains(&n)),
        })
    }

    /// A signalling message with an empty token and no diagnostic.
    pub fn new(signal: Signal) -> Self {
        SignalMessage {
            signal,
            token: Token::EMPTY,
            diagnostic: Vec::new(),
            unknown_critical: None,
        }
    }

    /// The code of this signal.
    pub fn code(&self) -> Code {
        match self.signal {
            Signal::Csm { .. } => Code::CSM,
            Signal::Ping { .. } => Code::PING,
            Signal::Pong { .. } => Code::PONG,
            Signal::Release { .. } => Code::RELEASE,
            Signal::Abort { .. } => Code::ABORT,
        }
    }

    /// The frame that carries it.
    pub fn to_frame(&self) -> FrameBuf {
        let mut fb = FrameBuf::new(self.code(), self.token);
        let o = &mut fb.options;
        match &self.signal {
            Signal::Csm {
                max_message_size,
                block_wise_transfer,
            } => {
                if let Some(m) = max_message_size {
                    o.push_uint(MAX_MESSAGE_SIZE, *m);
                }
                if *block_wise_transfer {
                    o.push(BLOCK_WISE_TRANSFER, []);
                }
            }
            Signal::Ping { custody } | Signal::Pong { custody } => {
                if *custody {
                    o.push(CUSTODY, []);
                }
            }
            Signal::Release {
                alternative_addresses,
                hold_off_s,
            } => {
                for a in alternative_addresses {
                    o.push(ALTERNATIVE_ADDRESS, a.as_bytes());
                }
                if let Some(h) = hold_off_s {
                    o.push_uint(HOLD_OFF, *h);
                }
            }
            Signal::Abort { bad_csm_option } => {
                if let Some(b) = bad_csm_option {
                    o.push_uint(BAD_CSM_OPTION, *b as u32);
                }
            }
        }
        fb.payload = self.diagnostic.clone();
        fb
    }
}
