//! One browser's session with the contract's `app`, as a connection keeps
//! it: the cookie the server set, the request that goes next (a page with
//! the cookie, or the logout that ends the session), and whether each page
//! follows the one before (`visits` one more, `since` and the cookie the
//! same). Plain state with no I/O; `conn.rs` calls it when a request is
//! queued, at its answer's head and at its end.

use crate::app_page::PageSession;
use crate::error_kind::ErrorKind;

/// The longest `name=value` kept from a `Set-Cookie`: the contract allows a
/// value of 128 bytes, and a name beside it.
pub(crate) const MAX_COOKIE: usize = 192;

/// The contract's bounds on a session cookie's value.
const COOKIE_VALUE: std::ops::RangeInclusive<usize> = 16..=128;

/// How far a new session's `since` may stand from the client's clock: the
/// server runs on the same machine, so anything further is not its time of
/// creation.
const SINCE_SLACK_MS: i64 = 60_000;

/// `InFlight::template` of the logout request, which is the session plan's,
/// not one of the plan's page templates.
pub(crate) const LOGOUT: u32 = u32::MAX;

/// A connection's session. Boxed in the connection only for plans that have
/// sessions, so other runs pay nothing per connection.
#[derive(Debug)]
pub(crate) struct Session {
    /// The cookie sent with each request (`name=value`); empty before the
    /// first page, and after a logout or a broken session.
    cookie: Cookie,
    /// What the answer under way set, copied at its head (its bytes are gone
    /// by the time its body is checked).
    offered: Offered,
    /// The last page's counter and the session's time of creation.
    visits: u64,
    since: i64,
    /// Pages answered on this session.
    pages: u32,
}

/// A cookie pair kept inline: a connection's session never allocates.
#[derive(Debug, Clone, Copy)]
struct Cookie {
    bytes: [u8; MAX_COOKIE],
    len: usize,
}

impl Cookie {
    const EMPTY: Cookie = Cookie {
        bytes: [0; MAX_COOKIE],
        len: 0,
    };

    fn get(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// The `Set-Cookie` headers of the answer under way.
#[derive(Debug, Clone, Copy)]
enum Offered {
    None,
    /// Exactly one, a cookie the contract allows.
    One(Cookie),
    /// More than one, or one the contract does not allow.
    Bad,
}

impl Default for Session {
    fn default() -> Self {
        Session {
            cookie: Cookie::EMPTY,
            offered: Offered::None,
            visits: 0,
            since: 0,
            pages: 0,
        }
    }
}

impl Session {
    /// Whether the next request is the logout: the session has had its
    /// `pages` pages.
    pub(crate) fn logout_due(&self, pages: u32) -> bool {
        self.cookie.len > 0 && self.pages >= pages
    }

    /// Appends `template` (a request without a body, ending in the blank
    /// line) to `out`, with the session's cookie when it has one.
    pub(crate) fn write_request(&self, template: &[u8], out: &mut Vec<u8>) {
        if self.cookie.len == 0 {
            out.extend_from_slice(template);
            return;
        }
        // Before the blank line that ends the head.
        let head = &template[..template.len() - 2];
        out.reserve(head.len() + self.cookie.len + 12);
        out.extend_from_slice(head);
        out.extend_from_slice(b"Cookie: ");
        out.extend_from_slice(self.cookie.get());
        out.extend_from_slice(b"\r\n\r\n");
    }

    /// An answer's head came with `count` `Set-Cookie` headers, the first
    /// of them `first`.
    pub(crate) fn on_head(&mut self, first: Option<&[u8]>, count: usize) {
        self.offered = match (count, first.and_then(cookie_pair)) {
            (0, _) => Offered::None,
            (1, Some(pair)) => {
                let mut c = Cookie::EMPTY;
                c.bytes[..pair.len()].copy_from_slice(pair);
                c.len = pair.len();
                Offered::One(c)
            }
            _ => Offered::Bad,
        };
    }

    /// A page was answered showing `shown`: whether it follows the session
    /// (a new one set its cookie and starts at 1, near the client's clock,
    /// `wall_ms`, asked only then; a running one keeps its cookie and
    /// `since` and counts one more). A page that does not ends the session,
    /// so the next one starts anew.
    pub(crate) fn on_page(
        &mut self,
        shown: PageSession,
        wall_ms: impl FnOnce() -> i64,
    ) -> Result<(), ErrorKind> {
        let offered = std::mem::replace(&mut self.offered, Offered::None);
        let follows = if self.cookie.len == 0 {
            match offered {
                Offered::One(cookie)
                    if shown.visits == 1 && (shown.since - wall_ms()).abs() <= SINCE_SLACK_MS =>
                {
                    self.cookie = cookie;
                    self.since = shown.since;
                    true
                }
                _ => false,
            }
        } else {
            let same_cookie = match offered {
                Offered::None => true,
                Offered::One(c) => c.get() == self.cookie.get(),
                Offered::Bad => false,
            };
            same_cookie && shown.visits == self.visits + 1 && shown.since == self.since
        };
        if !follows {
            self.end();
            return Err(ErrorKind::Session);
        }
        self.visits = shown.visits;
        self.pages += 1;
        Ok(())
    }

    /// The session is over (logged out, broken, or its connection gone): the
    /// next page goes without a cookie and makes a new one.
    pub(crate) fn end(&mut self) {
        self.cookie.len = 0;
        self.offered = Offered::None;
        self.visits = 0;
        self.pages = 0;
    }
}

/// The `name=value` a `Set-Cookie` value starts with (RFC 6265 §4.1.1), if
/// it is one the contract allows: a token for a name and 16 to 128
/// cookie-octets for a value.
pub fn cookie_pair(header: &[u8]) -> Option<&[u8]> {
    let end = header
        .iter()
        .position(|&b| b == b';')
        .unwrap_or(header.len());
    let pair = header[..end].trim_ascii();
    let eq = pair.iter().position(|&b| b == b'=')?;
    let (name, value) = (&pair[..eq], &pair[eq + 1..]);
    let token = |b: &u8| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(b);
    let octet = |b: &u8| matches!(b, 0x21 | 0x23..=0x2B | 0x2D..=0x3A | 0x3C..=0x5B | 0x5D..=0x7E);
    let ok = !name.is_empty()
        && name.iter().all(token)
        && COOKIE_VALUE.contains(&value.len())
        && value.iter().all(octet)
        && pair.len() <= MAX_COOKIE;
    ok.then_some(pair)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &[u8] = b"GET /app?page=7 HTTP/1.1\r\nHost: h\r\nAccept-Encoding: gzip\r\n\r\n";
    const ID: &[u8] = b"sid=0123456789abcdef0123";
    const NOW: i64 = 1_764_315_969_123;

    fn shown(visits: u64, since: i64) -> PageSession {
        PageSession { visits, since }
    }

    fn started() -> Session {
        let mut s = Session::default();
        s.on_head(Some(b"sid=0123456789abcdef0123; Path=/; HttpOnly"), 1);
        assert_eq!(s.on_page(shown(1, NOW), || NOW + 5), Ok(()));
        s
    }

    #[test]
    fn a_session_starts_with_its_cookie_then_sends_it_with_each_page() {
        let mut s = Session::default();
        let mut out = Vec::new();
        s.write_request(PAGE, &mut out);
        assert_eq!(out, PAGE, "no cookie before the first page");
        s = started();
        out.clear();
        s.write_request(PAGE, &mut out);
        assert_eq!(
            out,
            b"GET /app?page=7 HTTP/1.1\r\nHost: h\r\nAccept-Encoding: gzip\r\nCookie: sid=0123456789abcdef0123\r\n\r\n"
        );
        // The same cookie again, or none, on the pages that follow.
        s.on_head(Some(ID), 1);
        assert_eq!(s.on_page(shown(2, NOW), || unreachable!()), Ok(()));
        s.on_head(None, 0);
        assert_eq!(s.on_page(shown(3, NOW), || unreachable!()), Ok(()));
        assert!(!s.logout_due(4) && s.logout_due(3));
        s.end();
        out.clear();
        s.write_request(PAGE, &mut out);
        assert_eq!(out, PAGE, "a logout forgets the cookie");
    }

    #[test]
    fn a_page_that_breaks_the_session_is_a_session_error_and_ends_it() {
        // A new session without a cookie, with two, with one too short, not
        // at 1, or far from now.
        let cases: [(Option<&[u8]>, usize, PageSession); 5] = [
            (None, 0, shown(1, NOW)),
            (Some(ID), 2, shown(1, NOW)),
            (Some(b"sid=short"), 1, shown(1, NOW)),
            (Some(ID), 1, shown(2, NOW)),
            (Some(ID), 1, shown(1, NOW - 3_600_000)),
        ];
        for (cookie, count, page) in cases {
            let mut s = Session::default();
            s.on_head(cookie, count);
            assert_eq!(s.on_page(page, || NOW), Err(ErrorKind::Session));
        }
        // A running one answered with another cookie, a counter that did not
        // move by one (another session's page, or a cached one), or another
        // time of creation.
        let cases: [(Option<&[u8]>, PageSession); 4] = [
            (Some(b"sid=ffffffffffffffffffff"), shown(2, NOW)),
            (None, shown(1, NOW)),
            (None, shown(3, NOW)),
            (None, shown(2, NOW + 1)),
        ];
        for (cookie, page) in cases {
            let mut s = started();
            s.on_head(cookie, usize::from(cookie.is_some()));
            assert_eq!(s.on_page(page, || NOW), Err(ErrorKind::Session));
            let mut out = Vec::new();
            s.write_request(PAGE, &mut out);
            assert_eq!(out, PAGE, "a broken session is left for a new one");
        }
    }

    #[test]
    fn cookie_pairs_follow_rfc_6265_and_the_contracts_bounds() {
        assert_eq!(
            cookie_pair(b" sid=0123456789abcdef ; Path=/"),
            Some(&b"sid=0123456789abcdef"[..])
        );
        let long = format!("s={}", "a".repeat(128));
        assert!(cookie_pair(long.as_bytes()).is_some());
        for bad in [
            &b"0123456789abcdef"[..],
            b"=0123456789abcdef",
            b"sid=0123456789abcde",
            b"sid=0123456789 abcdef",
            b"sid=0123456789,abcdef",
            b"s d=0123456789abcdef",
        ] {
            assert_eq!(cookie_pair(bad), None, "{}", String::from_utf8_lossy(bad));
        }
        let too_long = format!("s={}", "a".repeat(129));
        assert_eq!(cookie_pair(too_long.as_bytes()), None);
    }
}
