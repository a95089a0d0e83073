//! Pass or fail for one case, from what came back: a pure function of the
//! case's expectation and the prober's `Seen`, with a one-line reason that
//! says what came back and what was expected.

use super::cases::{Expect, Order};
use super::probe::{End, Seen};

/// The judge's word on one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub pass: bool,
    pub reason: String,
}

fn verdict(pass: bool, reason: String) -> Verdict {
    Verdict { pass, reason }
}

/// What came back, in a few words: "400, then closed".
pub fn describe(s: &Seen) -> String {
    let mut parts = Vec::new();
    if !s.interim.is_empty() {
        let codes: Vec<String> = s.interim.iter().map(u16::to_string).collect();
        parts.push(format!("interim {}", codes.join(", ")));
    }
    if s.answers.is_empty() {
        parts.push("no answer".to_string());
    } else {
        let codes: Vec<String> = s
            .answers
            .iter()
            .map(|a| {
                if a.chunked {
                    format!("{} (chunked)", a.status)
                } else {
                    a.status.to_string()
                }
            })
            .collect();
        parts.push(codes.join(", "));
    }
    parts.push(match &s.end {
        End::Closed => "then closed".to_string(),
        End::Reset => "then reset".to_string(),
        End::Open => "connection still open at the deadline".to_string(),
        End::NotWatched => "connection kept".to_string(),
        End::Garbage(e) => format!("then bytes that are no answer ({e})"),
    });
    if s.alive_after == Some(false) {
        parts.push("and a fresh connection was not answered after it".to_string());
    }
    parts.join(", ")
}

fn ended(s: &Seen) -> bool {
    matches!(s.end, End::Closed | End::Reset)
}

fn status_list(codes: &[u16]) -> String {
    let c: Vec<String> = codes.iter().map(u16::to_string).collect();
    c.join(" or ")
}

/// Judges one case.
pub fn judge(expect: &Expect, s: &Seen) -> Verdict {
    let saw = describe(s);
    if let End::Garbage(_) = s.end {
        return verdict(false, format!("{saw}; expected well-formed answers"));
    }
    let first = s.answers.first().map(|a| a.status);
    match expect {
        Expect::Reject { statuses, close } => {
            let want = format!(
                "{}{}",
                status_list(statuses),
                if *close { ", then closed" } else { "" }
            );
            let pass = first.is_some_and(|c| statuses.contains(&c)) && (!close || ended(s));
            verdict(pass, format!("{saw}; expected {want}"))
        }
        Expect::RejectOrClose => {
            // 400 names the broken framing; another status (404, 405) says
            // the request was routed, so only a close shows the server did
            // not read on from bytes it could not frame.
            let pass = match first {
                Some(c) => c == 400 || ended(s),
                None => false,
            };
            verdict(
                pass,
                format!("{saw}; expected 400, or an answer and then the close"),
            )
        }
        Expect::AnswerThenClose => verdict(
            first.is_some() && ended(s),
            format!("{saw}; expected an answer, then the connection closed"),
        ),
        Expect::Accept => verdict(
            first.is_some_and(|c| c < 400),
            format!("{saw}; expected an answer below 400"),
        ),
        Expect::Answered => verdict(
            first.is_some(),
            format!("{saw}; expected an answer (400, or served)"),
        ),
        Expect::BodyThenNext => verdict(
            s.answers.len() >= 2 && first != Some(400),
            format!("{saw}; expected the body accepted (no 400) and the next request answered"),
        ),
        Expect::Limit => {
            let refused = match first {
                Some(c) => [400, 413, 414, 431].contains(&c),
                None => ended(s),
            };
            let pass = refused && s.alive_after != Some(false);
            verdict(
                pass,
                format!(
                    "{saw}; expected 414/431/400/413 (or a close), and the server still answering"
                ),
            )
        }
        Expect::Http10 { keep_alive } => {
            let chunked = s.answers.iter().any(|a| a.chunked);
            let pass = !chunked
                && match (keep_alive, s.answers.len()) {
                    (_, 0) => false,
                    (false, _) => ended(s),
                    (true, 1) => ended(s),
                    (true, _) => true,
                };
            let want = if *keep_alive {
                "both answered, or the first and then the close; no chunked coding to HTTP/1.0"
            } else {
                "an answer without chunked coding, then the connection closed"
            };
            verdict(pass, format!("{saw}; expected {want}"))
        }
        Expect::Continue => {
            let pass = match first {
                Some(_) => s.interim.iter().all(|&c| c == 100),
                None => false,
            };
            verdict(
                pass,
                format!("{saw}; expected 100 Continue then a final answer, or a final answer"),
            )
        }
        Expect::NoInterim => verdict(
            first.is_some() && s.interim.is_empty(),
            format!("{saw}; expected a final answer and no 100 to an HTTP/1.0 request"),
        ),
        Expect::InOrder(order) => in_order(order, s, saw),
        Expect::HeadThenGet => verdict(
            s.answers.len() >= 2,
            format!("{saw}; expected two answers (a HEAD answer carries no content)"),
        ),
    }
}

fn in_order(order: &Order, s: &Seen, saw: String) -> Verdict {
    if s.answers.len() < 3 {
        return verdict(false, format!("{saw}; expected three answers"));
    }
    match order {
        Order::Bodies(want) => {
            let got: Vec<String> = s
                .answers
                .iter()
                .map(|a| String::from_utf8_lossy(&a.body).into_owned())
                .collect();
            verdict(
                got[..3] == want[..],
                format!("bodies {got:?}; expected {want:?} in the order asked"),
            )
        }
        Order::Statuses => {
            let c: Vec<u16> = s.answers.iter().map(|a| a.status).collect();
            if c[1] != 404 && c[0] < 400 && c[2] < 400 && c[1] < 400 {
                // Every path is served: the order cannot be told apart.
                return verdict(
                    true,
                    format!("{saw}; three answers (order not observable: every path served)"),
                );
            }
            verdict(
                c[0] < 400 && c[1] == 404 && c[2] < 400,
                format!("{saw}; expected ok, 404, ok in the order asked"),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::probe::Answer;
    use super::*;

    fn seen(codes: &[u16], end: End) -> Seen {
        Seen {
            interim: Vec::new(),
            answers: codes
                .iter()
                .map(|&status| Answer {
                    status,
                    chunked: false,
                    body: Vec::new(),
                })
                .collect(),
            end,
            write_error: None,
            alive_after: None,
        }
    }

    const REJECT_CLOSE: Expect = Expect::Reject {
        statuses: &[400],
        close: true,
    };

    #[test]
    fn a_rejection_that_must_close_fails_when_the_connection_stays() {
        assert!(judge(&REJECT_CLOSE, &seen(&[400], End::Closed)).pass);
        assert!(judge(&REJECT_CLOSE, &seen(&[400], End::Reset)).pass);
        let open = judge(&REJECT_CLOSE, &seen(&[400], End::Open));
        assert!(!open.pass);
        assert!(open.reason.contains("still open"), "{}", open.reason);
        assert!(!judge(&REJECT_CLOSE, &seen(&[200], End::Closed)).pass);
        assert!(!judge(&REJECT_CLOSE, &seen(&[], End::Closed)).pass);
    }

    #[test]
    fn broken_framing_passes_on_a_400_or_a_close_and_fails_when_read_on() {
        let e = Expect::RejectOrClose;
        assert!(judge(&e, &seen(&[400], End::Open)).pass);
        assert!(judge(&e, &seen(&[200], End::Closed)).pass);
        assert!(!judge(&e, &seen(&[200], End::Open)).pass);
        // A 404 is the route's answer, not a refusal of the framing.
        assert!(!judge(&e, &seen(&[404], End::Open)).pass);
        assert!(!judge(&e, &seen(&[], End::Closed)).pass);
    }

    #[test]
    fn limits_pass_on_a_refusal_or_close_and_fail_when_served_or_crashed() {
        let mut s = seen(&[431], End::Closed);
        s.alive_after = Some(true);
        assert!(judge(&Expect::Limit, &s).pass);
        s.alive_after = Some(false);
        assert!(!judge(&Expect::Limit, &s).pass);
        let mut served = seen(&[404], End::Open);
        served.alive_after = Some(true);
        assert!(!judge(&Expect::Limit, &served).pass);
        let mut closed = seen(&[], End::Reset);
        closed.alive_after = Some(true);
        assert!(judge(&Expect::Limit, &closed).pass);
        let mut silent = seen(&[], End::Open);
        silent.alive_after = Some(true);
        assert!(!judge(&Expect::Limit, &silent).pass);
    }

    #[test]
    fn http10_answers_must_close_and_never_be_chunked() {
        let close = Expect::Http10 { keep_alive: false };
        assert!(judge(&close, &seen(&[200], End::Closed)).pass);
        assert!(!judge(&close, &seen(&[200], End::Open)).pass);
        let mut chunked = seen(&[200], End::Closed);
        chunked.answers[0].chunked = true;
        assert!(!judge(&close, &chunked).pass);
        let ka = Expect::Http10 { keep_alive: true };
        assert!(judge(&ka, &seen(&[200, 200], End::NotWatched)).pass);
        assert!(judge(&ka, &seen(&[200], End::Closed)).pass);
        assert!(!judge(&ka, &seen(&[200], End::Open)).pass);
    }

    #[test]
    fn expect_continue_wants_a_final_answer_and_http10_no_interim() {
        let mut s = seen(&[200], End::NotWatched);
        assert!(judge(&Expect::Continue, &s).pass);
        s.interim = vec![100];
        assert!(judge(&Expect::Continue, &s).pass);
        assert!(!judge(&Expect::NoInterim, &s).pass);
        assert!(!judge(&Expect::Continue, &seen(&[], End::Open)).pass);
    }

    #[test]
    fn order_is_told_by_bodies_or_by_the_missing_path() {
        let bodies = Order::Bodies(vec!["p1".into(), "p2".into(), "p3".into()]);
        let mut s = seen(&[200, 200, 200], End::NotWatched);
        for (a, b) in s.answers.iter_mut().zip(["p1", "p2", "p3"]) {
            a.body = b.as_bytes().to_vec();
        }
        assert!(judge(&Expect::InOrder(bodies.clone()), &s).pass);
        s.answers.swap(0, 1);
        assert!(!judge(&Expect::InOrder(bodies), &s).pass);
        let st = Expect::InOrder(Order::Statuses);
        assert!(judge(&st, &seen(&[200, 404, 200], End::NotWatched)).pass);
        assert!(!judge(&st, &seen(&[404, 200, 200], End::NotWatched)).pass);
        assert!(!judge(&st, &seen(&[200, 404], End::Open)).pass);
    }

    #[test]
    fn garbage_fails_whatever_was_expected() {
        let s = seen(&[200], End::Garbage("invalid status line".into()));
        assert!(!judge(&Expect::Answered, &s).pass);
        assert!(!judge(&Expect::HeadThenGet, &s).pass);
    }
}
