//! `GET /fortunes` (contract 1.3, "fortunes"): the fortune table read for
//! each request through the db pool, the added row joined, sorted by
//! message, and rendered by askama, whose `.html` templates escape every
//! value.

use askama::Template;
use deadpool_postgres::Pool;
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::HeaderValue;
use hyper::{Response, StatusCode};

use crate::db::{failed, no_database, DbError};
use crate::{respond, TEXT};

const ALL: &str = "SELECT id, message FROM fortune";
const ADDED: &str = "Additional fortune added at request time.";
const HTML: HeaderValue = HeaderValue::from_static("text/html; charset=utf-8");

struct Fortune {
    id: i32,
    message: String,
}

#[derive(Template)]
#[template(path = "fortunes.html")]
struct Page {
    fortunes: Vec<Fortune>,
}

/// The page for the rows read: the added one joins them, and Rust's `str`
/// order (by bytes, so by code point) sorts them as the contract does.
fn render(mut fortunes: Vec<Fortune>) -> Result<String, askama::Error> {
    fortunes.push(Fortune {
        id: 0,
        message: ADDED.to_string(),
    });
    fortunes.sort_by(|a, b| a.message.cmp(&b.message));
    Page { fortunes }.render()
}

async fn read(pool: &Pool) -> Result<Vec<Fortune>, DbError> {
    let client = pool.get().await?;
    let statement = client.prepare_cached(ALL).await?;
    let rows = client.query(&statement, &[]).await?;
    Ok(rows
        .iter()
        .map(|r| Fortune {
            id: r.get(0),
            message: r.get(1),
        })
        .collect())
}

/// The answer to `GET /fortunes`.
pub async fn page(pool: Option<&Pool>) -> Response<Full<Bytes>> {
    let Some(pool) = pool else {
        return no_database();
    };
    match read(pool).await {
        Ok(rows) => match render(rows) {
            Ok(page) => respond(StatusCode::OK, HTML, page),
            Err(e) => respond(StatusCode::INTERNAL_SERVER_ERROR, TEXT, e.to_string()),
        },
        Err(e) => failed(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_sorted_and_escaped() {
        let page = render(vec![
            Fortune {
                id: 11,
                message: "<script>alert(\"x\");</script>".into(),
            },
            Fortune {
                id: 1,
                message: "fortune: & more".into(),
            },
        ])
        .unwrap();
        // askama writes `<` as `&#60;` and `&` as `&#38;`.
        assert!(!page.contains("<script>"), "{page}");
        let script = page.find("script&#62;alert").expect("escaped script row");
        let added = page.find(ADDED).unwrap();
        let amp = page.find("fortune: &#38; more").expect("escaped ampersand");
        assert!(script < added && added < amp, "{page}");
    }
}
