//! The reference answer to a work document: what every server must compute
//! (CONTRACT.md, `POST /work`), and why a document is rejected with 400.

use serde_json::{json, Map, Value};

use crate::timefmt::{format_iso_millis, parse_iso_millis};

/// Why a work document gets 400.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    #[error("the body is not JSON")]
    NotJson,
    #[error("the document is not a JSON object")]
    NotObject,
    #[error("`{0}` is missing")]
    Missing(&'static str),
    #[error("`{0}` has the wrong type")]
    WrongType(&'static str),
    #[error("`group.dates` is empty")]
    EmptyDates,
    #[error("a date is not a valid YYYY-MM-DDTHH:MM:SS.sssZ timestamp")]
    BadDate,
}

fn field<'a>(
    obj: &'a Map<String, Value>,
    key: &'static str,
    path: &'static str,
) -> Result<&'a Value, Rejection> {
    obj.get(key).ok_or(Rejection::Missing(path))
}

fn string(
    obj: &Map<String, Value>,
    key: &'static str,
    path: &'static str,
) -> Result<String, Rejection> {
    field(obj, key, path)?
        .as_str()
        .map(str::to_string)
        .ok_or(Rejection::WrongType(path))
}

/// Computes the answer to a work request body, or why it is rejected.
pub fn answer(body: &[u8]) -> Result<Value, Rejection> {
    let doc: Value = serde_json::from_slice(body).map_err(|_| Rejection::NotJson)?;
    let obj = doc.as_object().ok_or(Rejection::NotObject)?;
    let product = string(obj, "product", "product")?;
    let request_id = string(obj, "requestId", "requestId")?;
    let group = field(obj, "group", "group")?
        .as_object()
        .ok_or(Rejection::WrongType("group"))?;
    string(group, "kind", "group.kind")?;
    if !field(group, "default", "group.default")?.is_boolean() {
        return Err(Rejection::WrongType("group.default"));
    }
    let balance = field(group, "balance", "group.balance")?;
    if !balance.is_number() {
        return Err(Rejection::WrongType("group.balance"));
    }
    let dates = field(group, "dates", "group.dates")?
        .as_array()
        .ok_or(Rejection::WrongType("group.dates"))?;
    if dates.is_empty() {
        return Err(Rejection::EmptyDates);
    }
    let mut min = i64::MAX;
    let mut max = i64::MIN;
    for d in dates {
        let s = d.as_str().ok_or(Rejection::WrongType("group.dates"))?;
        let ms = parse_iso_millis(s).ok_or(Rejection::BadDate)?;
        min = min.min(ms);
        max = max.max(ms);
    }
    Ok(json!({
        "product": product,
        "requestId": request_id,
        "client": {
            "balance": balance,
            "minDate": format_iso_millis(min),
            "maxDate": format_iso_millis(max),
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"{"product":"WidgetPro-7","requestId":"r1","group":{"kind":"retail","default":true,
        "balance":1234.56,"dates":["2020-01-12T10:53:17.773Z","2019-03-01T00:00:00.000Z","2021-07-30T23:59:59.999Z"]}}"#;

    #[test]
    fn the_example_of_the_contract() {
        let a = answer(EXAMPLE.as_bytes()).unwrap();
        assert_eq!(
            a,
            json!({"product":"WidgetPro-7","requestId":"r1","client":{"balance":1234.56,
                "minDate":"2019-03-01T00:00:00.000Z","maxDate":"2021-07-30T23:59:59.999Z"}})
        );
    }

    #[test]
    fn rejections() {
        let with = |from: &str, to: &str| answer(EXAMPLE.replace(from, to).as_bytes());
        assert_eq!(answer(b"{not json"), Err(Rejection::NotJson));
        assert_eq!(answer(b"[1]"), Err(Rejection::NotObject));
        assert_eq!(
            with("\"product\"", "\"prod\""),
            Err(Rejection::Missing("product"))
        );
        assert_eq!(
            with("\"default\":true", "\"default\":\"yes\""),
            Err(Rejection::WrongType("group.default"))
        );
        assert_eq!(
            with("1234.56", "\"1234.56\""),
            Err(Rejection::WrongType("group.balance"))
        );
        assert_eq!(
            with("\"2020-01-12T10:53:17.773Z\"", "7"),
            Err(Rejection::WrongType("group.dates"))
        );
        assert_eq!(
            with("2019-03-01T00:00:00.000Z", "2020-13-45T99:00:00.000Z"),
            Err(Rejection::BadDate)
        );
        let empty = r#"{"product":"p","requestId":"r","group":{"kind":"k","default":false,"balance":0,"dates":[]}}"#;
        assert_eq!(answer(empty.as_bytes()), Err(Rejection::EmptyDates));
    }

    #[test]
    fn extra_fields_are_ignored() {
        let a = answer(
            EXAMPLE
                .replace("\"product\"", "\"extra\":[1],\"product\"")
                .as_bytes(),
        )
        .unwrap();
        assert_eq!(a["product"], "WidgetPro-7");
    }
}
