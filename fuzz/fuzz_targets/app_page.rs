//! The app page check and the session cookie on any bytes: neither panics;
//! a page that reads back has its two session rows and every item row the
//! page wants; and a cookie pair taken from a header is a part of it, of
//! the contract's bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netbench_engine::{read_app_page, session_cookie, table_rows, AppPage};

fuzz_target!(|input: &[u8]| {
    let page = AppPage {
        items: vec![
            vec!["1".into(), "a < b".into()],
            vec!["2".into(), "Tom & Jerry".into()],
        ],
        verbatim: vec![b"/*css*/".to_vec()],
    };
    let mut scratch = Vec::new();
    if read_app_page(input, &page, &mut scratch).is_ok() {
        let rows = table_rows(input).expect("a page that reads back is a table");
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[2], [b"1".to_vec(), b"a < b".to_vec()]);
        assert_eq!(rows[3], [b"2".to_vec(), b"Tom & Jerry".to_vec()]);
    }
    if let Some(pair) = session_cookie(input) {
        assert!(pair.len() <= 192 && pair.contains(&b'='));
        assert!(input.windows(pair.len()).any(|w| w == pair));
    }
});
