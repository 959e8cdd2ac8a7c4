//! What a hook's process and its warm server say to each other, one call a connection:
//! the [`Request`] (a JSON header, then the hook input's bytes), then the [`Reply`].
//!
//! Every length is read before what it measures, and refused past its limit: a peer that
//! sends garbage gets an error, not an allocation of what it claims.

use std::io::{Read, Write};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::hook::{CallEnv, MAX_INPUT_BYTES};

/// The protocol's version, first in every request: a server of another refuses the call.
pub(crate) const VERSION: u32 = 1;

/// Longest request header (the store's path, the command line, the environment).
const MAX_HEADER: u32 = 1024 * 1024;

/// Longest reply part (a plan put back is a few kilobytes; a warning a line).
const MAX_REPLY_PART: u32 = 64 * 1024 * 1024;

/// The buffer each end reads the other's message through: a request or reply of a usual
/// call fits, and is read in one system call.
pub(crate) const READ_BUFFER: usize = 16 * 1024;

/// Who asks, of which store, and what.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Header {
    /// [`VERSION`].
    pub(crate) version: u32,
    /// Which planlog sent it ([`super::identity`]): the server runs only its own build's calls.
    pub(crate) identity: String,
    /// The store, as the asking process resolved it (absolute).
    pub(crate) store: PathBuf,
    /// What is asked.
    pub(crate) asked: Asked,
}

/// What a request asks of the server.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) enum Asked {
    /// Run a hook call (its input follows the header).
    Call(CallAsked),
    /// Let the store go ([`super::let_go`]).
    LetGo,
}

/// A hook call, but for its input.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct CallAsked {
    /// Whether the user named the store (`--db`, `PLANLOG_DB`) or it is the default one.
    pub(crate) named: bool,
    /// The hook's command line after the program, as `planlog install` writes it.
    pub(crate) words: Vec<String>,
    /// What the call reads from its process's environment.
    pub(crate) env: CallEnv,
    /// The call's seed ([`crate::hook::Call::seed`]), as text.
    pub(crate) seed: String,
    /// When the call's storing must be done by, in microseconds since the Unix epoch: the
    /// hook's own deadline less the time it keeps to spool the call itself should the
    /// server not answer. A server that reads the request later runs nothing.
    pub(crate) deadline_us: u64,
}

/// A request read: its header and the hook input's bytes (none for [`Asked::LetGo`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Request {
    /// Who, where, what.
    pub(crate) header: Header,
    /// The hook's JSON, as read from stdin.
    pub(crate) raw: Vec<u8>,
}

impl Request {
    /// The bytes of the request of `header` and the hook input `raw`, sent whole: built
    /// before the connection is made, they reach the server with it, so that the thread
    /// woken by the connection finds them there instead of waiting again.
    pub(crate) fn frame(header: &Header, raw: &[u8]) -> std::io::Result<Vec<u8>> {
        let header = serde_json::to_vec(header)?;
        let mut frame = Vec::with_capacity(header.len() + raw.len() + 12);
        frame.extend_from_slice(&u32::try_from(header.len()).map_err(too_long)?.to_le_bytes());
        frame.extend_from_slice(&header);
        frame.extend_from_slice(&(raw.len() as u64).to_le_bytes());
        frame.extend_from_slice(raw);
        Ok(frame)
    }

    /// Reads one from `from` (read it through a buffer: its parts are small).
    pub(crate) fn read(from: &mut impl Read) -> std::io::Result<Self> {
        let header = read_part(from, MAX_HEADER)?;
        let header: Header = serde_json::from_slice(&header)?;
        let mut len = [0; 8];
        from.read_exact(&mut len)?;
        let len = u64::from_le_bytes(len);
        if len > MAX_INPUT_BYTES + 1 {
            return Err(bad(format!("a hook input of {len} bytes claimed")));
        }
        // Within the limit just checked: one allocation of what follows.
        let mut raw = Vec::with_capacity(
            usize::try_from(len)
                .map_err(|_| bad(format!("a hook input of {len} bytes claimed")))?,
        );
        from.take(len).read_to_end(&mut raw)?;
        if raw.len() as u64 != len {
            return Err(bad("the hook input ended early".to_owned()));
        }
        Ok(Self { header, raw })
    }
}

/// The server's answer to one request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    /// The call ran: the process's exit code and what it would have printed.
    Ran {
        /// The exit code.
        code: u8,
        /// Its stdout.
        stdout: Vec<u8>,
        /// Its stderr.
        stderr: Vec<u8>,
    },
    /// The server did not run it (another build, another store, too many calls at once):
    /// why. The hook's process runs the call itself.
    Refused(String),
}

impl Reply {
    /// Writes it to `to`.
    pub(crate) fn write(&self, to: &mut impl Write) -> std::io::Result<()> {
        let mut frame = Vec::new();
        match self {
            Reply::Ran {
                code,
                stdout,
                stderr,
            } => {
                frame.extend_from_slice(&[0, *code]);
                for part in [stdout, stderr] {
                    frame.extend_from_slice(
                        &u32::try_from(part.len()).map_err(too_long)?.to_le_bytes(),
                    );
                    frame.extend_from_slice(part);
                }
            }
            Reply::Refused(why) => {
                frame.extend_from_slice(&[1, 0]);
                frame.extend_from_slice(&u32::try_from(why.len()).map_err(too_long)?.to_le_bytes());
                frame.extend_from_slice(why.as_bytes());
            }
        }
        to.write_all(&frame)?;
        to.flush()
    }

    /// Reads one from `from` (read it through a buffer: its parts are small).
    pub(crate) fn read(from: &mut impl Read) -> std::io::Result<Self> {
        let mut kind = [0; 2];
        from.read_exact(&mut kind)?;
        match kind {
            [0, code] => {
                let stdout = read_part(from, MAX_REPLY_PART)?;
                let stderr = read_part(from, MAX_REPLY_PART)?;
                Ok(Reply::Ran {
                    code,
                    stdout,
                    stderr,
                })
            }
            [1, _] => {
                let why = read_part(from, MAX_REPLY_PART)?;
                Ok(Reply::Refused(String::from_utf8_lossy(&why).into_owned()))
            }
            [other, _] => Err(bad(format!("a reply of kind {other}"))),
        }
    }
}

/// A length (4 bytes, little-endian) and that many bytes, at most `max`.
fn read_part(from: &mut impl Read, max: u32) -> std::io::Result<Vec<u8>> {
    let mut len = [0; 4];
    from.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len);
    if len > max {
        return Err(bad(format!("a part of {len} bytes claimed, over {max}")));
    }
    let mut part = vec![0; len as usize];
    from.read_exact(&mut part)?;
    Ok(part)
}

fn bad(what: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what)
}

fn too_long(_: std::num::TryFromIntError) -> std::io::Error {
    bad("a part over 4 GiB".to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;

    fn request() -> Request {
        Request {
            header: Header {
                version: VERSION,
                identity: "planlog 1 x".to_owned(),
                store: PathBuf::from("/tmp/s.redb"),
                asked: Asked::Call(CallAsked {
                    named: true,
                    words: vec!["hook".to_owned(), "claude-code".to_owned()],
                    env: CallEnv {
                        cwd: PathBuf::from("/home/u/p"),
                        home: Some(PathBuf::from("/home/u")),
                        copilot_home: None,
                        task_list_id: Some("team".to_owned()),
                    },
                    seed: "01JZ0000000000000000000000".to_owned(),
                    deadline_us: 1_800_000_000_000_000,
                }),
            },
            raw: br#"{"hook_event_name":"PostToolUse"}"#.to_vec(),
        }
    }

    fn sent(request: &Request) -> Vec<u8> {
        Request::frame(&request.header, &request.raw).unwrap()
    }

    #[test]
    fn a_request_and_a_reply_read_back_as_written() {
        let bytes = sent(&request());
        assert_eq!(Request::read(&mut bytes.as_slice()).unwrap(), request());
        let let_go = Request {
            header: Header {
                asked: Asked::LetGo,
                ..request().header
            },
            raw: Vec::new(),
        };
        assert_eq!(
            Request::read(&mut sent(&let_go).as_slice()).unwrap(),
            let_go
        );
        for reply in [
            Reply::Ran {
                code: 2,
                stdout: b"{}\n".to_vec(),
                stderr: b"planlog hook: x\n".to_vec(),
            },
            Reply::Refused("another build".to_owned()),
        ] {
            let mut bytes = Vec::new();
            reply.write(&mut bytes).unwrap();
            assert_eq!(Reply::read(&mut bytes.as_slice()).unwrap(), reply);
        }
    }

    #[test]
    fn a_cut_or_oversized_frame_is_an_error_not_an_allocation() {
        let bytes = sent(&request());
        for cut in [0, 3, 10, bytes.len() - 1] {
            assert!(Request::read(&mut &bytes[..cut]).is_err(), "cut at {cut}");
        }
        let huge = u32::MAX.to_le_bytes();
        let e = Request::read(&mut huge.as_slice()).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        let mut reply = vec![0, 0];
        reply.extend_from_slice(&u32::MAX.to_le_bytes());
        let e = Reply::read(&mut reply.as_slice()).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        assert!(Reply::read(&mut [7u8, 0].as_slice()).is_err());
    }
}
