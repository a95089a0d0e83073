//! `POST /work`: parse the document, validate it, find the earliest and latest
//! date, serialize the answer. Pure: no I/O, so it is tested on its own.

use std::fmt;
use std::marker::PhantomData;

use chrono::{DateTime, SecondsFormat, Timelike, Utc};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Number;

/// Why a body was refused; answered with `400` and this text.
#[derive(Debug)]
pub enum BadRequest {
    /// Not JSON at all (syntax error, truncated, trailing bytes).
    NotJson(serde_json::Error),
    /// JSON of the wrong shape: not an object, a missing field, a wrong type.
    Shape(serde_json::Error),
    EmptyDates,
    BadDate(String),
}

impl fmt::Display for BadRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadRequest::NotJson(e) => write!(f, "body is not JSON: {e}"),
            BadRequest::Shape(e) => write!(f, "bad document: {e}"),
            BadRequest::EmptyDates => f.write_str("group.dates is empty"),
            BadRequest::BadDate(s) => {
                let shown: String = s.chars().take(40).collect();
                write!(f, "group.dates: not a valid UTC timestamp: {shown:?}")
            }
        }
    }
}

impl std::error::Error for BadRequest {}

/// The request document. Unknown fields are ignored (the contract allows them).
#[derive(Deserialize)]
struct Doc {
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
struct Answer<'a> {
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

/// The answer's body for a request body.
pub fn answer(body: &[u8]) -> Result<Vec<u8>, BadRequest> {
    let doc = parse(body)?;
    let (min, max) = earliest_and_latest(&doc.group.dates)?;
    let answer = Answer {
        product: &doc.product,
        request_id: &doc.request_id,
        client: Client {
            balance: &doc.group.balance,
            min_date: format_date(min),
            max_date: format_date(max),
        },
    };
    Ok(serde_json::to_vec(&answer).expect("the answer always serializes"))
}

/// The earliest and the latest of `dates`, each parsed (gRPC's Compute
/// shares this with `/work`).
pub fn earliest_and_latest(dates: &[String]) -> Result<(DateTime<Utc>, DateTime<Utc>), BadRequest> {
    let mut dates = dates.iter();
    let first = parse_date(dates.next().ok_or(BadRequest::EmptyDates)?)?;
    let (mut min, mut max) = (first, first);
    for s in dates {
        let t = parse_date(s)?;
        min = min.min(t);
        max = max.max(t);
    }
    Ok((min, max))
}

fn parse(body: &[u8]) -> Result<Doc, BadRequest> {
    let classify = |e: serde_json::Error| match e.classify() {
        serde_json::error::Category::Data => BadRequest::Shape(e),
        _ => BadRequest::NotJson(e),
    };
    let mut de = serde_json::Deserializer::from_slice(body);
    let doc = object(&mut de).map_err(classify)?;
    de.end().map_err(classify)?; // nothing but whitespace after the document
    Ok(doc)
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

    fn answer_json(body: &str) -> Value {
        serde_json::from_slice(&answer(body.as_bytes()).expect("accepted")).unwrap()
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
        let out = answer(
            doc(
                "1234.56",
                r#""2022-05-05T05:05:05.000Z","2001-01-01T00:00:00.000Z""#,
            )
            .as_bytes(),
        )
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
        assert_eq!(balance("18446744073709551615"), "18446744073709551615");
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
            doc("1", r#""2020-01-01t00:00:00.000z""#),
            doc("1", r#""2020-01-01T24:00:00.000Z""#),
            doc("1", r#""2021-02-30T00:00:00.000Z""#),
            doc("1", r#""2020-01-01 00:00:00.000Z""#),
            doc("1", r#""+2020-01-01T00:00:00.000Z""#),
        ];
        for body in &cases {
            assert!(answer(body.as_bytes()).is_err(), "accepted: {body}");
        }
    }
}
