//! `netbench_contract::answer` (the reference answer to `POST /work`) on
//! arbitrary bodies. When it accepts a document, the answer must make sense:
//! minDate and maxDate are timestamps that parse back, minDate <= maxDate,
//! they are the earliest and latest of the document's dates, and product,
//! requestId and balance are the document's.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netbench_contract::{answer, parse_iso_millis};
use serde_json::Value;

fuzz_target!(|body: &[u8]| {
    let Ok(a) = answer(body) else {
        return;
    };
    let client = &a["client"];
    let date = |key: &str| {
        let s = client[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key} is not a string in {a}"));
        parse_iso_millis(s).unwrap_or_else(|| panic!("{key} {s:?} does not parse back"))
    };
    let (min, max) = (date("minDate"), date("maxDate"));
    assert!(min <= max, "minDate after maxDate in {a}");

    let doc: Value = serde_json::from_slice(body).expect("accepted, so JSON");
    let dates: Vec<i64> = doc["group"]["dates"]
        .as_array()
        .expect("accepted, so group.dates is an array")
        .iter()
        .map(|d| parse_iso_millis(d.as_str().expect("a string")).expect("a timestamp"))
        .collect();
    assert_eq!(
        dates.iter().min(),
        Some(&min),
        "minDate is not the earliest date"
    );
    assert_eq!(
        dates.iter().max(),
        Some(&max),
        "maxDate is not the latest date"
    );
    assert_eq!(a["product"], doc["product"]);
    assert_eq!(a["requestId"], doc["requestId"]);
    assert_eq!(client["balance"], doc["group"]["balance"]);
});
