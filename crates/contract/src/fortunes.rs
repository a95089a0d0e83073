//! The contract's `fortunes` part (CONTRACT.md, "fortunes"): the seeded rows,
//! the row a server adds at request time, the order of the page, and the load
//! request with the table its answer must show.

use netbench_engine::{BodyExpect, Expect, RequestTemplate, StatusExpect, Url};

/// The path of the page.
pub const FORTUNES_PATH: &str = "/fortunes";

/// The rows contract/db/schema.sql seeds `fortune` with (TechEmpower's).
pub const FORTUNES: [(i32, &str); 12] = [
    (1, "fortune: No such file or directory"),
    (
        2,
        "A computer scientist is someone who fixes things that aren't broken.",
    ),
    (3, "After enough decimal places, nobody gives a damn."),
    (
        4,
        "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1",
    ),
    (
        5,
        "A computer program does what you tell it to do, not what you want it to do.",
    ),
    (
        6,
        "Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen",
    ),
    (7, "Any program that runs right is obsolete."),
    (
        8,
        "A list is only as strong as its weakest link. — Donald Knuth",
    ),
    (9, "Feature: A bug with seniority."),
    (10, "Computers make very fast, very accurate mistakes."),
    (
        11,
        "<script>alert(\"This should not be displayed in a browser alert box.\");</script>",
    ),
    (12, "フレームワークのベンチマーク"),
];

/// The row every page adds to what it read, with id 0.
pub const ADDED: &str = "Additional fortune added at request time.";

/// The query a server (and `verify`) reads the table with.
pub const SELECT_FORTUNES: &str = "SELECT id, message FROM fortune";

/// The page's rows for a table holding `rows`: the added one joins them, and
/// all are sorted by message (by its bytes, which for UTF-8 is by code
/// point), each as its id and message.
pub fn expected_rows<S: AsRef<str>>(rows: &[(i32, S)]) -> Vec<Vec<String>> {
    let mut all: Vec<(i32, &str)> = rows.iter().map(|(id, m)| (*id, m.as_ref())).collect();
    all.push((0, ADDED));
    all.sort_by(|a, b| a.1.as_bytes().cmp(b.1.as_bytes()));
    all.into_iter()
        .map(|(id, m)| vec![id.to_string(), m.to_string()])
        .collect()
}

/// The answer of `GET /fortunes` while the table holds what it was seeded
/// with (as under load: `verify` puts back what it changes).
pub fn fortunes_expect() -> Expect {
    Expect {
        status: StatusExpect::Exact(200),
        content_type: Some("text/html".to_string()),
        body: BodyExpect::HtmlTable(expected_rows(&FORTUNES)),
        coding: Default::default(),
    }
}

/// `GET /fortunes`, its page checked against the seeded table.
pub fn fortunes_request(url: &Url, keepalive: bool) -> RequestTemplate {
    crate::requests::get(url, FORTUNES_PATH, keepalive, fortunes_expect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::SCHEMA_SQL;

    #[test]
    fn the_rows_are_the_ones_the_schema_seeds() {
        for (id, message) in FORTUNES {
            let sql = format!("({id}, '{}')", message.replace('\'', "''"));
            assert!(SCHEMA_SQL.contains(&sql), "schema.sql lacks {sql}");
        }
    }

    #[test]
    fn the_page_is_sorted_by_message_with_the_added_row() {
        let rows = expected_rows(&FORTUNES);
        assert_eq!(rows.len(), 13);
        assert_eq!(rows[0], ["11", FORTUNES[10].1]);
        assert_eq!(rows[1], ["4", FORTUNES[3].1]);
        assert_eq!(rows[4], ["8", FORTUNES[7].1]);
        assert_eq!(rows[5], ["0", ADDED]);
        assert_eq!(rows[12], ["12", "フレームワークのベンチマーク"]);
        assert!(rows.windows(2).all(|w| w[0][1] <= w[1][1]));
    }
}
