//! `POST /work`: the document, its checks, the earliest and latest date, the
//! answer. No I/O here: actix-web's `web::Json` extractor reads the body and
//! deserializes it (with `serde_json::from_slice`), and the answer is
//! serialized by `HttpResponse::json`.

use std::fmt;
use std::marker::PhantomData;

use chrono::{DateTime, SecondsFormat, Timelike, Utc};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Number;

/// Why a document that is JSON of the right shape was refused; answered with
/// `400` and this text. (Bodies that are not JSON, or JSON of the wrong
/// shape, are refused by the extractor with `400` before the handler runs.)
#[derive(Debug, PartialEq, Eq)]
pub enum BadRequest {
    EmptyDates,
    BadDate(String),
}

impl fmt::Display for BadRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadRequest::EmptyDates => f.write_str("group.dates is empty"),
            BadRequest::BadDate(s) => {
                let shown: String = s.chars().take(40).collect();
                write!(f, "group.dates: not a valid UTC timestamp: {shown:?}")
            }
        }
    }
}

impl std::error::Error for BadRequest {}

/// The request document: a JSON object only (see [`object`]). Unknown fields
/// are ignored (the contract allows them); `null` for a field is an error.
pub struct Doc(Fields);

impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        object(deserializer).map(Doc)
    }
}

#[derive(Deserialize)]
struct Fields {
    product: String,
    #[serde(rename = "requestId")]
    request_id: String,
    #[serde(deserialize_with = "object")]
    group: Group,
}

#[derive(Deserialize)]
struct Group {
    /// Required and checked to be a string, though the answer does not use it.
    #[allow(dead_code)]
    kind: String,
    /// Required and checked to be a boolean, though the answer does not use it.
    #[allow(dead_code)]
    #[serde(rename = "default")]
    is_default: bool,
    balance: Number,
    dates: Vec<String>,
}

#[derive(Serialize)]
pub struct Answer<'a> {
    product: &'a str,
    #[serde(rename = "requestId")]
    request_id: &'a str,
    client: Client<'a>,
}

#[derive(Serialize)]
struct Client<'a> {
    /// The parsed number as it is: serde_json writes the shortest spelling
    /// that reads back as the same value (1234.56 stays 1234.56).
    balance: &'a Number,
    #[serde(rename = "minDate")]
    min_date: String,
    #[serde(rename = "maxDate")]
    max_date: String,
}

/// The answer to a document: every date parsed, the earliest and the latest.
pub fn answer(doc: &Doc) -> Result<Answer<'_>, BadRequest> {
    let doc = &doc.0;
    let mut dates = doc.group.dates.iter();
    let first = parse_date(dates.next().ok_or(BadRequest::EmptyDates)?)?;
    let (mut min, mut max) = (first, first);
    for s in dates {
        let t = parse_date(s)?;
        min = min.min(t);
        max = max.max(t);
    }
    Ok(Answer {
        product: &doc.product,
        request_id: &doc.request_id,
        client: Client {
            balance: &doc.group.balance,
            min_date: format_date(min),
            max_date: format_date(max),
        },
    })
}

/// A contract timestamp, exactly `YYYY-MM-DDTHH:MM:SS.sssZ` in UTC. The
/// shape is checked here; chrono's RFC 3339 parser checks the calendar and the
/// clock (`2020-13-45T99:00:00.000Z` and February 30th fail). chrono takes
/// second 60 as a leap second: refused, as the other reference servers do.
pub fn parse_date(s: &str) -> Result<DateTime<Utc>, BadRequest> {
    const SHAPE: &[u8; 24] = b"dddd-dd-ddTdd:dd:dd.dddZ";
    let bad = || BadRequest::BadDate(s.to_owned());
    let shaped = s.len() == SHAPE.len()
        && s.bytes().zip(SHAPE).all(|(c, &want)| match want {
            b'd' => c.is_ascii_digit(),
            _ => c == want,
        });
    if !shaped {
        return Err(bad());
    }
    let t = DateTime::parse_from_rfc3339(s).map_err(|_| bad())?;
    if t.nanosecond() >= 1_000_000_000 {
        return Err(bad()); // chrono's representation of a leap second
    }
    Ok(t.with_timezone(&Utc))
}

/// `YYYY-MM-DDTHH:MM:SS.sssZ`: always three digits of milliseconds.
pub fn format_date(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Deserializes `T` from a JSON object only. A derived `Deserialize` for a
/// struct also accepts a JSON array of its fields in order, which the
/// contract forbids (`"group": [...]` is a field of the wrong type).
fn object<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct ObjectOnly<T>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectOnly<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }

    deserializer.deserialize_map(ObjectOnly(PhantomData))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    const EXAMPLE: &str = r#"{
      "product": "WidgetPro-7",
      "requestId": "5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59",
      "group": {
        "kind": "retail",
        "default": true,
        "balance": 1234.56,
        "dates": ["2020-01-12T10:53:17.773Z", "2019-03-01T00:00:00.000Z", "2021-07-30T23:59:59.999Z"]
      }
    }"#;

    fn doc(balance: &str, dates: &str) -> String {
        format!(
            r#"{{"product":"p","requestId":"r","group":{{"kind":"k","default":false,"balance":{balance},"dates":[{dates}]}}}}"#
        )
    }

    /// As the `web::Json` extractor does it: `serde_json::from_slice`.
    fn run(body: &str) -> Result<Vec<u8>, String> {
        let doc: Doc = serde_json::from_slice(body.as_bytes()).map_err(|e| e.to_string())?;
        let answer = answer(&doc).map_err(|e| e.to_string())?;
        Ok(serde_json::to_vec(&answer).unwrap())
    }

    fn answer_json(body: &str) -> Value {
        serde_json::from_slice(&run(body).expect("accepted")).unwrap()
    }

    #[test]
    fn contract_example() {
        assert_eq!(
            answer_json(EXAMPLE),
            json!({
                "product": "WidgetPro-7",
                "requestId": "5f0c6a3e-2b1d-4c8e-9a7f-0e1d2c3b4a59",
                "client": {
                    "balance": 1234.56,
                    "minDate": "2019-03-01T00:00:00.000Z",
                    "maxDate": "2021-07-30T23:59:59.999Z"
                }
            })
        );
    }

    #[test]
    fn exact_output_text() {
        let out = run(&doc(
            "1234.56",
            r#""2022-05-05T05:05:05.000Z","2001-01-01T00:00:00.000Z""#,
        ))
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"product":"p","requestId":"r","client":{"balance":1234.56,"minDate":"2001-01-01T00:00:00.000Z","maxDate":"2022-05-05T05:05:05.000Z"}}"#
        );
    }

    #[test]
    fn balance_keeps_its_value() {
        let date = r#""2020-01-01T00:00:00.000Z""#;
        let balance = |b: &str| answer_json(&doc(b, date))["client"]["balance"].to_string();
        assert_eq!(balance("1.23456e3"), "1234.56");
        assert_eq!(balance("-7"), "-7");
        assert_eq!(balance("0.1"), "0.1");
    }

    #[test]
    fn one_date_is_min_and_max() {
        let got = answer_json(&doc("1", r#""2000-02-29T12:00:00.000Z""#));
        assert_eq!(got["client"]["minDate"], "2000-02-29T12:00:00.000Z");
        assert_eq!(got["client"]["maxDate"], "2000-02-29T12:00:00.000Z");
    }

    #[test]
    fn extra_fields_are_ignored() {
        let got = answer_json(
            r#"{"x":[1,{}],"product":"p","requestId":"r","group":{"kind":"k","default":true,
               "balance":0,"dates":["2020-01-01T00:00:00.001Z"],"extra":null}}"#,
        );
        assert_eq!(got.as_object().unwrap().len(), 3);
        assert_eq!(got["client"]["maxDate"], "2020-01-01T00:00:00.001Z");
    }

    #[test]
    fn dates_round_trip_with_milliseconds() {
        for s in [
            "2019-03-01T00:00:00.000Z",
            "2021-07-30T23:59:59.999Z",
            "1970-01-01T00:00:00.010Z",
            "2000-02-29T12:34:56.789Z",
            "0001-01-01T00:00:00.000Z",
            "9999-12-31T23:59:59.999Z",
        ] {
            assert_eq!(format_date(parse_date(s).unwrap()), s);
        }
    }

    #[test]
    fn bad_documents_are_refused() {
        let good_group =
            r#""kind":"k","default":true,"balance":1,"dates":["2020-01-01T00:00:00.000Z"]"#;
        let cases = [
            String::new(),
            "not json".into(),
            "[]".into(),
            "42".into(),
            "null".into(),
            r#"{"product":"#.into(),
            format!(r#"{{"product":"p","requestId":"r","group":{{{good_group}}}}} trailing"#),
            format!(r#"["p","r",{{{good_group}}}]"#),
            format!(r#"{{"requestId":"r","group":{{{good_group}}}}}"#),
            format!(r#"{{"product":1,"requestId":"r","group":{{{good_group}}}}}"#),
            format!(r#"{{"product":null,"requestId":"r","group":{{{good_group}}}}}"#),
            format!(r#"{{"product":"p","group":{{{good_group}}}}}"#),
            r#"{"product":"p","requestId":"r"}"#.into(),
            r#"{"product":"p","requestId":"r","group":["k",true,1,["2020-01-01T00:00:00.000Z"]]}"#.into(),
            r#"{"product":"p","requestId":"r","group":{"default":true,"balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}"#.into(),
            r#"{"product":"p","requestId":"r","group":{"kind":"k","default":"yes","balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}"#.into(),
            r#"{"product":"p","requestId":"r","group":{"kind":"k","balance":1,"dates":["2020-01-01T00:00:00.000Z"]}}"#.into(),
            r#"{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":"1","dates":["2020-01-01T00:00:00.000Z"]}}"#.into(),
            r#"{"product":"p","requestId":"r","group":{"kind":"k","default":true,"dates":["2020-01-01T00:00:00.000Z"]}}"#.into(),
            r#"{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1}}"#.into(),
            r#"{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":"2020-01-01T00:00:00.000Z"}}"#.into(),
            doc("1", ""),
            doc("1", "1577836800000"),
            doc("1", "null"),
            doc("1", r#""2020-13-45T99:00:00.000Z""#),
            doc("1", r#""yesterday""#),
            doc("1", r#""2019-02-29T00:00:00.000Z""#),
            doc("1", r#""2020-01-01T00:00:00.000+01:00""#),
            doc("1", r#""2020-01-01T00:00:00.000""#),
            doc("1", r#""2020-01-01T00:00:00.000Z","""#),
            doc("1", r#""2016-12-31T23:59:60.500Z""#),
            doc("1e400", r#""2020-01-01T00:00:00.000Z""#),
            doc("1", r#""2020-01-01T00:00:00Z""#),
            doc("1", r#""2020-01-01T00:00:00.5Z""#),
            doc("1", r#""2020-01-01T00:00:00.0000Z""#),
            doc("1", r#""2020-01-01T00:00:00,000Z""#),
            doc("1", r#""2020-01-01t00:00:00.000z""#),
            doc("1", r#""2020-01-01T24:00:00.000Z""#),
            doc("1", r#""2021-02-30T00:00:00.000Z""#),
            doc("1", r#""2020-01-01 00:00:00.000Z""#),
            doc("1", r#""+2020-01-01T00:00:00.000Z""#),
        ];
        for body in &cases {
            assert!(run(body).is_err(), "accepted: {body}");
        }
    }
}
