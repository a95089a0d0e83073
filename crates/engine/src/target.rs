//! The target URL: a small parser for `http[s]://host[:port]/path?query` and
//! the one-time name resolution before a run.

use std::net::{IpAddr, Ipv6Addr, SocketAddr, ToSocketAddrs};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Ip(IpAddr),
    Name(String),
}

/// A parsed `http://` or `https://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// `https://`: TLS under HTTP.
    pub tls: bool,
    pub host: Host,
    pub port: u16,
    /// Path and query as sent in the request line; `/` when the URL has none.
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("`{0}` is not an http:// or https:// URL; write it as http://host[:port]/path")]
    Scheme(String),
    #[error("`{0}` has no host; write it as http://host[:port]/path")]
    NoHost(String),
    #[error("`{0}` is not a valid port (1-65535)")]
    Port(String),
    #[error(
        "`{0}` is not a valid IPv6 address; write IPv6 hosts in brackets, as http://[::1]:8080/"
    )]
    Ipv6(String),
    #[error("credentials in URLs are not supported; send an Authorization header with -H instead")]
    UserInfo,
    #[error("the path `{0}` has a space, a control character or a non-ASCII byte; percent-encode it (a space is %20, é is %C3%A9)")]
    Path(String),
    #[error("could not resolve host `{host}`: {reason}; check the name or use an IP address")]
    Resolve { host: String, reason: String },
}

pub fn parse_url(input: &str) -> Result<Url, TargetError> {
    let lower = input.to_ascii_lowercase();
    let (tls, rest) = if lower.starts_with("https://") {
        (true, &input["https://".len()..])
    } else if lower.starts_with("http://") {
        (false, &input["http://".len()..])
    } else {
        return Err(TargetError::Scheme(input.to_string()));
    };
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    // A fragment is never sent.
    let path = path.split('#').next().unwrap_or("");
    let path = match path {
        "" => "/".to_string(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_string(),
    };
    // The path goes into the request line as it is: a space or CR/LF there
    // would end the line early and let the rest inject headers.
    if path
        .bytes()
        .any(|b| b.is_ascii_whitespace() || b.is_ascii_control() || b >= 0x80)
    {
        return Err(TargetError::Path(path.escape_debug().to_string()));
    }
    if authority.contains('@') {
        return Err(TargetError::UserInfo);
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let end = v6
            .find(']')
            .ok_or_else(|| TargetError::Ipv6(authority.to_string()))?;
        let addr: Ipv6Addr = v6[..end]
            .parse()
            .map_err(|_| TargetError::Ipv6(authority.to_string()))?;
        let after = &v6[end + 1..];
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| TargetError::Ipv6(authority.to_string()))?,
            ),
        };
        (Host::Ip(IpAddr::V6(addr)), port)
    } else {
        let (h, p) = match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        if h.contains(':') {
            return Err(TargetError::Ipv6(authority.to_string()));
        }
        let host = match h.parse::<IpAddr>() {
            Ok(ip) => Host::Ip(ip),
            Err(_) => Host::Name(h.to_string()),
        };
        (host, p)
    };
    if matches!(&host, Host::Name(n) if n.is_empty()) {
        return Err(TargetError::NoHost(input.to_string()));
    }
    let port = match port {
        None => Url::default_port(tls),
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 => n,
            _ => return Err(TargetError::Port(p.to_string())),
        },
    };
    Ok(Url {
        tls,
        host,
        port,
        path,
    })
}

impl Url {
    fn default_port(tls: bool) -> u16 {
        if tls {
            443
        } else {
            80
        }
    }

    /// The host as a TLS certificate names it: a name, or an address
    /// (IPv6 without brackets).
    pub fn tls_name(&self) -> String {
        match &self.host {
            Host::Ip(ip) => ip.to_string(),
            Host::Name(n) => n.clone(),
        }
    }

    /// The Host header value: the port is left out when it is the default.
    pub fn host_header(&self) -> String {
        let host = match &self.host {
            Host::Ip(IpAddr::V6(a)) => format!("[{a}]"),
            Host::Ip(IpAddr::V4(a)) => a.to_string(),
            Host::Name(n) => n.clone(),
        };
        if self.port == Url::default_port(self.tls) {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }

    /// Resolves the host once. A name with several addresses gives the first,
    /// as the system resolver orders them.
    pub fn resolve(&self) -> Result<SocketAddr, TargetError> {
        match &self.host {
            Host::Ip(ip) => Ok(SocketAddr::new(*ip, self.port)),
            Host::Name(name) => {
                let fail = |reason: String| TargetError::Resolve {
                    host: name.clone(),
                    reason,
                };
                (name.as_str(), self.port)
                    .to_socket_addrs()
                    .map_err(|e| fail(e.to_string()))?
                    .next()
                    .ok_or_else(|| fail("no addresses".to_string()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_urls() {
        let u = parse_url("http://127.0.0.1:8080/blank?x=1").unwrap();
        assert_eq!(u.host, Host::Ip("127.0.0.1".parse().unwrap()));
        assert_eq!(u.port, 8080);
        assert_eq!(u.path, "/blank?x=1");
        assert_eq!(u.host_header(), "127.0.0.1:8080");

        let u = parse_url("HTTP://example.test").unwrap();
        assert_eq!(u.host, Host::Name("example.test".into()));
        assert_eq!(u.port, 80);
        assert_eq!(u.path, "/");
        assert_eq!(u.host_header(), "example.test");

        assert_eq!(parse_url("http://h?q=1#frag").unwrap().path, "/?q=1");
    }

    #[test]
    fn ipv6_literals() {
        let u = parse_url("http://[::1]:9000/x").unwrap();
        assert_eq!(u.host, Host::Ip("::1".parse().unwrap()));
        assert_eq!(u.port, 9000);
        assert_eq!(u.host_header(), "[::1]:9000");
        assert_eq!(u.resolve().unwrap(), "[::1]:9000".parse().unwrap());
        assert_eq!(parse_url("http://[::1]/").unwrap().port, 80);
        assert!(matches!(
            parse_url("http://[::1/"),
            Err(TargetError::Ipv6(_))
        ));
        assert!(matches!(
            parse_url("http://::1/"),
            Err(TargetError::Ipv6(_))
        ));
    }

    #[test]
    fn refusals() {
        assert!(matches!(parse_url("ftp://x/"), Err(TargetError::Scheme(_))));
        assert!(matches!(parse_url("x:80"), Err(TargetError::Scheme(_))));
        assert!(matches!(
            parse_url("http://:80/"),
            Err(TargetError::NoHost(_))
        ));
        assert!(matches!(
            parse_url("http://h:0/"),
            Err(TargetError::Port(_))
        ));
        assert!(matches!(
            parse_url("http://h:99999/"),
            Err(TargetError::Port(_))
        ));
        assert_eq!(parse_url("http://u:p@h/"), Err(TargetError::UserInfo));
        for bad in [
            "http://h/a b",
            "http://h/x\r\nX-Injected: 1",
            "http://h/?q=\t",
            "http://h/caf\u{e9}",
        ] {
            assert!(matches!(parse_url(bad), Err(TargetError::Path(_))), "{bad}");
        }
        assert!(parse_url("http://h/a%20b?x=1").is_ok());
    }

    #[test]
    fn https_defaults_to_443_and_leaves_it_out_of_host() {
        let u = parse_url("HTTPS://example.test/x").unwrap();
        assert!(u.tls);
        assert_eq!(u.port, 443);
        assert_eq!(u.host_header(), "example.test");
        let u = parse_url("https://[::1]:8443/").unwrap();
        assert_eq!(
            (u.port, u.host_header(), u.tls_name()),
            (8443, "[::1]:8443".to_string(), "::1".to_string())
        );
        let u = parse_url("https://example.test:80/").unwrap();
        assert_eq!(u.host_header(), "example.test:80");
        assert!(!parse_url("http://example.test/").unwrap().tls);
    }

    #[test]
    fn resolves_localhost() {
        let addr = parse_url("http://localhost:1234/")
            .unwrap()
            .resolve()
            .unwrap();
        assert!(addr.ip().is_loopback());
        assert_eq!(addr.port(), 1234);
    }
}
