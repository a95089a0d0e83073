//! HTTP/1.x response parsing as pure functions over byte slices: the head
//! (status line and headers, framing rules of RFC 9112 §6.3) and an
//! incremental chunked-body decoder. No I/O, so both can be tested and fuzzed
//! alone.

/// The most headers an answer may carry; more is treated as malformed.
const MAX_HEADERS: usize = 64;

/// How the body of an answer is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body (HEAD, 1xx, 204, 304, or Content-Length: 0).
    Empty,
    ContentLength(u64),
    Chunked,
    /// No length given: the body runs until the server closes the connection.
    UntilClose,
}

/// The parts of a response head the engine acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseHead<'b> {
    pub status: u16,
    pub framing: Framing,
    /// The server will close the connection after this answer.
    pub close: bool,
    pub content_type: Option<&'b [u8]>,
    /// The `Content-Encoding` header's value, as sent.
    pub content_encoding: Option<&'b [u8]>,
    /// The first `Set-Cookie` header's value, and how many came (at most
    /// [`MAX_HEADERS`]).
    pub set_cookie: Option<&'b [u8]>,
    pub set_cookies: usize,
    /// Length of the head in bytes, including the blank line.
    pub len: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HeadError {
    #[error("invalid status line or header syntax")]
    Syntax,
    #[error("more than {MAX_HEADERS} headers")]
    TooManyHeaders,
    #[error("invalid or conflicting Content-Length")]
    ContentLength,
    #[error("a Transfer-Encoding other than chunked")]
    TransferEncoding,
}

/// Parses a response head from the start of `buf`. `Ok(None)` means more bytes
/// are needed. `head_request` says the request was HEAD, whose answer has no
/// body whatever its headers say.
pub fn parse_head(buf: &[u8], head_request: bool) -> Result<Option<ResponseHead<'_>>, HeadError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let len = match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(HeadError::TooManyHeaders),
        Err(_) => return Err(HeadError::Syntax),
    };
    let status = resp.code.ok_or(HeadError::Syntax)?;
    let http10 = resp.version == Some(0);

    let mut content_length: Option<u64> = None;
    let mut chunked = false;
    let mut close = http10;
    let mut content_type = None;
    let mut content_encoding = None;
    let mut set_cookie = None;
    let mut set_cookies = 0;
    for h in resp.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = parse_decimal(h.value).ok_or(HeadError::ContentLength)?;
            if content_length.is_some_and(|c| c != n) {
                return Err(HeadError::ContentLength);
            }
            content_length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            // Only chunked may be last; anything else cannot be framed here.
            let last = h.value.rsplit(|&b| b == b',').next().unwrap_or(b"");
            if trim(last).eq_ignore_ascii_case(b"chunked") {
                chunked = true;
            } else {
                return Err(HeadError::TransferEncoding);
            }
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in h.value.split(|&b| b == b',') {
                let token = trim(token);
                if token.eq_ignore_ascii_case(b"close") {
                    close = true;
                } else if token.eq_ignore_ascii_case(b"keep-alive") && http10 {
                    close = false;
                }
            }
        } else if name.eq_ignore_ascii_case(b"content-type") {
            content_type = Some(h.value);
        } else if name.eq_ignore_ascii_case(b"content-encoding") {
            content_encoding = Some(h.value);
        } else if name.eq_ignore_ascii_case(b"set-cookie") {
            set_cookie = set_cookie.or(Some(h.value));
            set_cookies += 1;
        }
    }

    let no_body = head_request || (100..200).contains(&status) || status == 204 || status == 304;
    let framing = if no_body {
        Framing::Empty
    } else if chunked {
        Framing::Chunked
    } else {
        match content_length {
            Some(0) => Framing::Empty,
            Some(n) => Framing::ContentLength(n),
            None => Framing::UntilClose,
        }
    };
    Ok(Some(ResponseHead {
        status,
        framing,
        close,
        content_type,
        content_encoding,
        set_cookie,
        set_cookies,
        len,
    }))
}

fn parse_decimal(v: &[u8]) -> Option<u64> {
    let v = trim(v);
    if v.is_empty() || v.len() > 19 {
        return None;
    }
    v.iter().try_fold(0u64, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + u64::from(b - b'0'))
    })
}

fn trim(v: &[u8]) -> &[u8] {
    let start = v
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &v[start..end]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ChunkError {
    #[error("invalid chunk size line")]
    Size,
    #[error("chunk data not followed by CRLF")]
    Delimiter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    /// Reading hex digits of a chunk size; `digits` counts them.
    Size {
        digits: u8,
    },
    /// Skipping a chunk extension up to the end of the line.
    Extension,
    /// Saw CR after the size line, want LF.
    SizeLf,
    Data,
    DataCr,
    DataLf,
    /// At the start of a trailer line (or the final blank line).
    TrailerStart,
    TrailerLine,
    TrailerLf,
    Done,
}

/// Incremental decoder of a chunked body. Feed it bytes as they arrive; it
/// hands out the data and says how much it consumed.
#[derive(Debug, Clone)]
pub struct ChunkedDecoder {
    state: ChunkState,
    size: u64,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        ChunkedDecoder {
            state: ChunkState::Size { digits: 0 },
            size: 0,
        }
    }
}

impl ChunkedDecoder {
    pub fn is_done(&self) -> bool {
        self.state == ChunkState::Done
    }

    /// Decodes from `input`, passing chunk data to `data`. Returns how many
    /// bytes were consumed; stops early once the body is complete, leaving the
    /// rest (the next response) unconsumed.
    pub fn decode(
        &mut self,
        input: &[u8],
        mut data: impl FnMut(&[u8]),
    ) -> Result<usize, ChunkError> {
        let mut i = 0;
        while i < input.len() && self.state != ChunkState::Done {
            if self.state == ChunkState::Data {
                let take = (self.size.min((input.len() - i) as u64)) as usize;
                data(&input[i..i + take]);
                i += take;
                self.size -= take as u64;
                if self.size == 0 {
                    self.state = ChunkState::DataCr;
                }
                continue;
            }
            let b = input[i];
            i += 1;
            self.state = match self.state {
                ChunkState::Size { digits } => match hex_value(b) {
                    Some(v) => {
                        if digits >= 15 {
                            return Err(ChunkError::Size);
                        }
                        self.size = self.size * 16 + u64::from(v);
                        ChunkState::Size { digits: digits + 1 }
                    }
                    None if digits == 0 => return Err(ChunkError::Size),
                    None => match b {
                        b';' | b' ' | b'\t' => ChunkState::Extension,
                        b'\r' => ChunkState::SizeLf,
                        b'\n' => self.after_size_line(),
                        _ => return Err(ChunkError::Size),
                    },
                },
                ChunkState::Extension => match b {
                    b'\n' => self.after_size_line(),
                    _ => ChunkState::Extension,
                },
                ChunkState::SizeLf => match b {
                    b'\n' => self.after_size_line(),
                    _ => return Err(ChunkError::Size),
                },
                ChunkState::DataCr => match b {
                    b'\r' => ChunkState::DataLf,
                    b'\n' => ChunkState::Size { digits: 0 },
                    _ => return Err(ChunkError::Delimiter),
                },
                ChunkState::DataLf => match b {
                    b'\n' => ChunkState::Size { digits: 0 },
                    _ => return Err(ChunkError::Delimiter),
                },
                ChunkState::TrailerStart => match b {
                    b'\r' => ChunkState::TrailerLf,
                    b'\n' => ChunkState::Done,
                    _ => ChunkState::TrailerLine,
                },
                ChunkState::TrailerLine => match b {
                    b'\n' => ChunkState::TrailerStart,
                    _ => ChunkState::TrailerLine,
                },
                ChunkState::TrailerLf => match b {
                    b'\n' => ChunkState::Done,
                    _ => return Err(ChunkError::Delimiter),
                },
                ChunkState::Data | ChunkState::Done => unreachable!("handled above"),
            };
        }
        Ok(i)
    }

    fn after_size_line(&mut self) -> ChunkState {
        if self.size == 0 {
            ChunkState::TrailerStart
        } else {
            ChunkState::Data
        }
    }
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(s: &str) -> ResponseHead<'_> {
        parse_head(s.as_bytes(), false).unwrap().unwrap()
    }

    #[test]
    fn content_length_head() {
        let text = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nOK";
        let h = head(text);
        assert_eq!(h.status, 200);
        assert_eq!(h.framing, Framing::ContentLength(2));
        assert!(!h.close);
        assert_eq!(h.content_type, Some(&b"text/plain"[..]));
        assert_eq!(h.len, text.len() - 2);
    }

    #[test]
    fn partial_head_needs_more() {
        assert_eq!(
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Len", false),
            Ok(None)
        );
        assert_eq!(parse_head(b"", false), Ok(None));
    }

    #[test]
    fn garbage_is_an_error() {
        assert_eq!(
            parse_head(b"HELLO WORLD\r\n\r\n", false),
            Err(HeadError::Syntax)
        );
        assert_eq!(
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", false),
            Err(HeadError::ContentLength)
        );
        assert_eq!(
            parse_head(
                b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                false
            ),
            Err(HeadError::ContentLength)
        );
        assert_eq!(
            parse_head(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false),
            Err(HeadError::TransferEncoding)
        );
    }

    #[test]
    fn framing_rules() {
        assert_eq!(
            head("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n").framing,
            Framing::Empty
        );
        assert_eq!(
            head("HTTP/1.1 304 Not Modified\r\n\r\n").framing,
            Framing::Empty
        );
        assert_eq!(
            head("HTTP/1.1 100 Continue\r\n\r\n").framing,
            Framing::Empty
        );
        assert_eq!(head("HTTP/1.1 200 OK\r\n\r\n").framing, Framing::UntilClose);
        assert_eq!(
            head("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").framing,
            Framing::Empty
        );
        assert_eq!(
            head(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 3\r\n\r\n"
            )
            .framing,
            Framing::Chunked
        );
        let h = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", true)
            .unwrap()
            .unwrap();
        assert_eq!(h.framing, Framing::Empty);
    }

    #[test]
    fn connection_close_and_http10() {
        assert!(head("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\n\r\n").close);
        assert!(head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").close);
        assert!(
            !head("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n").close
        );
    }

    fn decode_all(pieces: &[&[u8]]) -> Result<(Vec<u8>, bool, usize), ChunkError> {
        let mut d = ChunkedDecoder::default();
        let mut out = Vec::new();
        let mut consumed = 0;
        for p in pieces {
            consumed += d.decode(p, |b| out.extend_from_slice(b))?;
        }
        Ok((out, d.is_done(), consumed))
    }

    #[test]
    fn chunked_in_one_piece() {
        let body = b"2\r\nOK\r\n5;ext=1\r\nhello\r\n0\r\n\r\nNEXT";
        let (out, done, consumed) = decode_all(&[body]).unwrap();
        assert_eq!(out, b"OKhello");
        assert!(done);
        assert_eq!(consumed, body.len() - 4);
    }

    #[test]
    fn chunked_byte_by_byte_with_trailers() {
        let body = b"A\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n";
        let pieces: Vec<&[u8]> = body.chunks(1).collect();
        let (out, done, consumed) = decode_all(&pieces).unwrap();
        assert_eq!(out, b"0123456789");
        assert!(done);
        assert_eq!(consumed, body.len());
    }

    #[test]
    fn chunked_errors() {
        assert_eq!(decode_all(&[b"zz\r\n"]), Err(ChunkError::Size));
        assert_eq!(decode_all(&[b"\r\n"]), Err(ChunkError::Size));
        assert_eq!(decode_all(&[b"2\r\nOKX"]), Err(ChunkError::Delimiter));
        assert_eq!(
            decode_all(&[b"ffffffffffffffff\r\n"]),
            Err(ChunkError::Size)
        );
    }

    #[test]
    fn chunked_incomplete_is_not_done() {
        let (out, done, _) = decode_all(&[b"5\r\nhel"]).unwrap();
        assert_eq!(out, b"hel");
        assert!(!done);
    }
}
