//! The contract's `app` part (CONTRACT.md, "app"): the item rows of page K
//! as the formula makes them, the stylesheet and script a page carries byte
//! for byte, and the load plan of a browser per connection (pages asking for
//! gzip, the logout after a session's pages).

use netbench_engine::{
    AppPage, BodyExpect, Coding, Expect, RequestTemplate, SessionPlan, StatusExpect, Url,
};

use crate::rng::SplitMix64;

/// The page and the logout.
pub const APP_PATH: &str = "/app";
pub const LOGOUT_PATH: &str = "/app/logout";

/// The pages there are: `K` from 1 to this.
pub const MAX_PAGE: u32 = 100_000;

/// Item rows on every page.
pub const ITEMS: u32 = 50;

/// What a page must carry byte for byte (contract/app/).
pub const APP_CSS: &str = include_str!("../../../contract/app/app.css");
pub const APP_JS: &str = include_str!("../../../contract/app/app.js");

/// The item names' first words: text a template must escape.
pub const LABELS: [&str; 5] = [
    "Tom & Jerry's cheese board",
    "<b>bold</b> move of the week",
    "\"Quoted\" goods, boxed",
    "O'Brien's pick for winter",
    "a < b > c, the ordered set",
];

/// Pages on one session under load before the browser logs out (the
/// contract's "next 19 pages": 20 in all).
pub const PAGES_PER_SESSION: u32 = 20;

/// Distinct pages a load asks for: enough that no server keeps a handful of
/// rendered pages, few enough that the expected rows stay small.
pub const LOAD_PAGES: usize = 100;

/// `cents` written as the contract writes money: whole units, a point, two
/// digits.
pub fn money(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// The item rows of page `k` (1 to [`MAX_PAGE`]): number, item, quantity,
/// price and total, each as the page's cell reads back.
pub fn item_rows(k: u32) -> Vec<Vec<String>> {
    let k = u64::from(k);
    (1..=u64::from(ITEMS))
        .map(|i| {
            let quantity = (k * 7 + i * 13) % 100 + 1;
            let cents = (k * 7919 + i * 104_729) % 100_000;
            vec![
                ((k - 1) * u64::from(ITEMS) + i).to_string(),
                format!("{}, no. {k}.{i}", LABELS[((k + i) % 5) as usize]),
                quantity.to_string(),
                money(cents),
                money(quantity * cents),
            ]
        })
        .collect()
}

/// What page `k` must show besides its session.
pub fn app_page(k: u32) -> AppPage {
    AppPage {
        items: item_rows(k),
        verbatim: vec![APP_CSS.as_bytes().to_vec(), APP_JS.as_bytes().to_vec()],
    }
}

/// The path of page `k`.
pub fn page_path(k: u32) -> String {
    format!("{APP_PATH}?page={k}")
}

/// A page's answer: the page of `k`, in gzip when `coding` asks for it.
pub fn page_expect(k: u32, coding: Coding) -> Expect {
    Expect {
        status: StatusExpect::Exact(200),
        content_type: Some("text/html".to_string()),
        body: BodyExpect::AppPage(app_page(k)),
        coding,
    }
}

/// A browser per connection: `pages` requests of pages drawn from `seed`
/// (each asking for gzip, as a browser does), and the session plan that
/// sends each with its cookie and logs out after [`PAGES_PER_SESSION`].
pub fn app_load(url: &Url, seed: u64, pages: usize) -> (Vec<RequestTemplate>, SessionPlan) {
    let mut rng = SplitMix64::new(seed ^ 0xa99);
    let requests = (0..pages.max(1))
        .map(|_| {
            let k = 1 + rng.below(u64::from(MAX_PAGE)) as u32;
            crate::requests::template_with(
                url,
                "GET",
                &page_path(k),
                b"",
                true,
                page_expect(k, Coding::Gzip),
                &[("Accept-Encoding", "gzip")],
            )
        })
        .collect();
    let logout = crate::requests::template_with(
        url,
        "POST",
        LOGOUT_PATH,
        b"",
        true,
        Expect {
            status: StatusExpect::Exact(200),
            ..Expect::default()
        },
        &[],
    );
    (
        requests,
        SessionPlan {
            pages: PAGES_PER_SESSION,
            logout,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rows_follow_the_contracts_example() {
        let rows = item_rows(4711);
        assert_eq!(rows.len(), 50);
        // CONTRACT.md's first row of page 4711.
        assert_eq!(
            rows[0],
            [
                "235501",
                "\"Quoted\" goods, boxed, no. 4711.1",
                "91",
                "111.38",
                "10135.58"
            ]
        );
        assert_eq!(rows[49][0], "235550");
        // The largest values fit 32 bits, as the contract promises.
        let top = u64::from(MAX_PAGE) * 7919 + 50 * 104_729;
        assert!(top < i32::MAX as u64);
        assert_eq!(money(5), "0.05");
        assert_eq!(money(99_999), "999.99");
    }

    #[test]
    fn the_files_hold_nothing_an_escaper_changes() {
        for file in [APP_CSS, APP_JS] {
            assert!(!file.contains(['<', '>', '&', '"', '\'', '+']), "{file}");
            assert!(file.len() > 1000);
        }
    }

    #[test]
    fn a_load_asks_for_gzip_pages_and_logs_out_with_an_empty_post() {
        let url = netbench_engine::parse_url("http://127.0.0.1:8080/").unwrap();
        let (pages, session) = app_load(&url, 7, 10);
        assert_eq!(pages.len(), 10);
        let head = String::from_utf8(pages[0].bytes.clone()).unwrap();
        assert!(head.starts_with("GET /app?page="), "{head}");
        assert!(head.contains("Accept-Encoding: gzip\r\n"), "{head}");
        assert!(head.ends_with("\r\n\r\n"));
        let logout = String::from_utf8(session.logout.bytes.clone()).unwrap();
        assert!(
            logout.starts_with("POST /app/logout HTTP/1.1\r\n"),
            "{logout}"
        );
        assert!(logout.contains("Content-Length: 0\r\n"), "{logout}");
        assert!(logout.ends_with("\r\n\r\n"));
        assert_eq!(session.pages, PAGES_PER_SESSION);
    }
}
