//! One answer checked as it arrives, whatever carried it (an HTTP/1.1
//! connection, an HTTP/2 stream): what its head says against what its
//! request expects, its body compared as it comes or kept no further than
//! its check needs, and the verdict at its end. No I/O and no framing: the
//! protocols hand it a status, two header values and body pieces.

use crate::app_page::{read_app_page, PageSession};
use crate::check::{content_type_matches, is_brotli, BodyExpect, Coding, Expect, CODED_BODY_CAP};
use crate::error_kind::ErrorKind;

/// What an answer's head says, judged against its request's expectation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AnswerHead {
    status: u16,
    content_type_ok: bool,
    /// How much of the body the check needs kept; 0 when it needs none.
    keep_limit: usize,
    /// The body is compared as it arrives with the exact bytes expected.
    exact: bool,
    /// The coding the answer must come in (its body is then kept, coded,
    /// and checked once decoded), and whether its header says so.
    coding: Coding,
    coding_ok: bool,
    /// The answer said `Content-Encoding: br`.
    brotli: bool,
}

impl AnswerHead {
    pub(crate) fn new(
        status: u16,
        content_type: Option<&[u8]>,
        content_encoding: Option<&[u8]>,
        expect: &Expect,
    ) -> Self {
        AnswerHead {
            status,
            content_type_ok: match (&expect.content_type, &expect.body) {
                (None, _) => true,
                // gRPC's answers are `application/grpc` with any suffix
                // (`+proto`, as grpc-js always sends), and parameters.
                (Some(_), BodyExpect::Grpc { .. } | BodyExpect::GrpcError { .. }) => {
                    content_type.is_some_and(is_grpc_type)
                }
                (Some(want), _) => content_type.is_some_and(|ct| content_type_matches(want, ct)),
            },
            keep_limit: match expect.coding {
                Coding::Any => expect.body.keep_limit(),
                _ => CODED_BODY_CAP,
            },
            exact: expect.coding == Coding::Any && matches!(expect.body, BodyExpect::Exact(_)),
            coding: expect.coding,
            coding_ok: expect.coding.matches(content_encoding),
            brotli: is_brotli(content_encoding),
        }
    }
}

/// Whether a Content-Type is gRPC's: `application/grpc`, alone or with a
/// `+` suffix or parameters (the gRPC over HTTP/2 protocol).
fn is_grpc_type(ct: &[u8]) -> bool {
    const GRPC: &[u8] = b"application/grpc";
    let media = ct.split(|&b| b == b';').next().unwrap_or(b"").trim_ascii();
    media.len() >= GRPC.len()
        && media[..GRPC.len()].eq_ignore_ascii_case(GRPC)
        && (media.len() == GRPC.len() || media[GRPC.len()] == b'+')
}

/// The body of the answer under way: compared with the exact bytes
/// expected as it arrives (nothing copied), kept up to the head's limit for
/// the check at its end, or nowhere. Its buffer's capacity stays for the
/// next answer.
#[derive(Debug, Default)]
pub(crate) struct AnswerBody {
    /// The body so far, kept only when the answer's check needs it, and
    /// only up to what the check can use.
    kept: Vec<u8>,
    /// The body ran past what the check keeps, or differed from the exact
    /// bytes expected: it cannot match.
    over: bool,
    /// Body bytes compared so far with the exact bytes expected.
    at: usize,
}

impl AnswerBody {
    /// A new answer begins.
    pub(crate) fn start(&mut self) {
        self.kept.clear();
        self.over = false;
        self.at = 0;
    }

    /// The next piece of the body.
    pub(crate) fn take(&mut self, head: &AnswerHead, expect: &Expect, data: &[u8]) {
        if self.over {
            return;
        }
        if head.exact {
            if let BodyExpect::Exact(want) = &expect.body {
                let end = self.at + data.len();
                if want.get(self.at..end) != Some(data) {
                    self.over = true;
                }
                self.at = end;
                return;
            }
        }
        if head.keep_limit == 0 {
            return;
        }
        if self.kept.len() + data.len() > head.keep_limit {
            self.over = true;
            self.kept.clear();
            return;
        }
        self.kept.extend_from_slice(data);
    }

    /// The whole answer against what its request expects; a page of the
    /// app also says what session it shows, for the connection's session to
    /// judge.
    pub(crate) fn judge(
        &self,
        head: &AnswerHead,
        expect: &Expect,
    ) -> Result<Option<PageSession>, ErrorKind> {
        if !expect.status.matches(head.status) {
            return Err(ErrorKind::Status);
        }
        if !head.content_type_ok {
            return Err(ErrorKind::ContentType);
        }
        if !head.coding_ok {
            return Err(ErrorKind::Encoding);
        }
        if head.exact {
            let whole = matches!(&expect.body, BodyExpect::Exact(want) if self.at == want.len());
            return if self.over || !whole {
                Err(ErrorKind::Body)
            } else {
                Ok(None)
            };
        }
        // Kept coded, bounded; decoded once whole. An allocation per
        // answer, which only compressed endpoints pay.
        let mut plain = Vec::new();
        let body = if head.coding != Coding::Any {
            if self.over
                || !head
                    .coding
                    .decode(head.brotli, &self.kept, CODED_BODY_CAP, &mut plain)
            {
                return Err(ErrorKind::Encoding);
            }
            &plain
        } else if head.keep_limit == 0 {
            return Ok(None);
        } else if self.over {
            return Err(ErrorKind::Body);
        } else {
            &self.kept
        };
        match &expect.body {
            BodyExpect::AppPage(page) => read_app_page(body, page, &mut Vec::new())
                .map(Some)
                .map_err(|_| ErrorKind::Body),
            other if other.matches(body) => Ok(None),
            _ => Err(ErrorKind::Body),
        }
    }

    /// The kept body's capacity: what a connection holds between answers.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.kept.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_answers_may_name_their_message_encoding() {
        for ok in [
            &b"application/grpc"[..],
            b"application/grpc+proto",
            b"Application/GRPC; charset=utf-8",
        ] {
            assert!(is_grpc_type(ok), "{}", String::from_utf8_lossy(ok));
        }
        for bad in [
            &b"application/grpcx"[..],
            b"application/json",
            b"application/grp",
            b"",
        ] {
            assert!(!is_grpc_type(bad), "{}", String::from_utf8_lossy(bad));
        }
    }
}
