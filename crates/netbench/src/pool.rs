//! Reading a body pool: one JSON object per line, each a request body with
//! the answer it must get.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// One line of a pool file. `None` fields fall back to the command line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PoolEntry {
    pub body: Vec<u8>,
    /// The body came from `body_json`, so it is JSON.
    pub is_json: bool,
    pub expect_status: Option<u16>,
    pub expect_content_type: Option<String>,
    pub expect_body: Option<Vec<u8>>,
    pub expect_json: Option<Value>,
}

pub(crate) fn read_pool(path: &Path) -> Result<Vec<PoolEntry>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading body pool {}", path.display()))?;
    let entries = parse_pool(&text).with_context(|| format!("in body pool {}", path.display()))?;
    if entries.is_empty() {
        bail!(
            "body pool {} has no entries; write one JSON object per line",
            path.display()
        );
    }
    Ok(entries)
}

pub(crate) fn parse_pool(text: &str) -> Result<Vec<PoolEntry>> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let entry = parse_entry(line).with_context(|| format!("line {}", n + 1))?;
        out.push(entry);
    }
    Ok(out)
}

fn parse_entry(line: &str) -> Result<PoolEntry> {
    let v: Value = serde_json::from_str(line).context("not valid JSON")?;
    let Value::Object(mut obj) = v else {
        bail!("expected a JSON object such as {{\"body\": \"...\", \"expect_body\": \"...\"}}");
    };
    const KEYS: [&str; 6] = [
        "body",
        "body_json",
        "expect_status",
        "expect_content_type",
        "expect_body",
        "expect_json",
    ];
    if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
        bail!("unknown key `{k}`; the keys are {}", KEYS.join(", "));
    }
    let (body, is_json) = match (obj.remove("body"), obj.remove("body_json")) {
        (Some(Value::String(s)), None) => (s.into_bytes(), false),
        (None, Some(v)) => (serde_json::to_vec(&v)?, true),
        (Some(_), Some(_)) => bail!("give either `body` or `body_json`, not both"),
        (Some(_), None) => bail!("`body` must be a string; use `body_json` for a JSON document"),
        (None, None) => bail!("each line needs `body` (text) or `body_json` (JSON)"),
    };
    let expect_status = match obj.remove("expect_status") {
        None => None,
        Some(Value::Number(n)) => match n.as_u64() {
            Some(s @ 100..=599) => Some(s as u16),
            _ => bail!("`expect_status` must be a status code between 100 and 599"),
        },
        Some(_) => bail!("`expect_status` must be a number"),
    };
    let expect_content_type = match obj.remove("expect_content_type") {
        None => None,
        Some(Value::String(s)) => Some(s),
        Some(_) => bail!("`expect_content_type` must be a string"),
    };
    let expect_body = match obj.remove("expect_body") {
        None => None,
        Some(Value::String(s)) => Some(s.into_bytes()),
        Some(_) => bail!("`expect_body` must be a string; use `expect_json` for a JSON document"),
    };
    let expect_json = obj.remove("expect_json");
    if expect_body.is_some() && expect_json.is_some() {
        bail!("give either `expect_body` or `expect_json`, not both");
    }
    Ok(PoolEntry {
        body,
        is_json,
        expect_status,
        expect_content_type,
        expect_body,
        expect_json,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_of_both_kinds() {
        let pool = parse_pool(
            "{\"body\": \"hi\", \"expect_body\": \"HI\"}\n\n\
             {\"body_json\": {\"a\": 1}, \"expect_json\": {\"b\": 2}, \"expect_status\": 201}\n",
        )
        .unwrap();
        assert_eq!(pool.len(), 2);
        assert_eq!(pool[0].body, b"hi");
        assert!(!pool[0].is_json);
        assert_eq!(pool[0].expect_body.as_deref(), Some(&b"HI"[..]));
        assert_eq!(pool[1].body, br#"{"a":1}"#);
        assert!(pool[1].is_json);
        assert_eq!(pool[1].expect_json, Some(json!({"b": 2})));
        assert_eq!(pool[1].expect_status, Some(201));
    }

    #[test]
    fn mistakes_name_the_line() {
        let err = parse_pool("{\"body\": \"ok\"}\n{\"bdy\": 1}").unwrap_err();
        assert!(format!("{err:#}").contains("line 2"));
        assert!(format!("{err:#}").contains("unknown key `bdy`"));
        assert!(parse_pool("[1]").is_err());
        assert!(parse_pool("{\"body\": 1}").is_err());
        assert!(parse_pool("{}").is_err());
        assert!(parse_pool("{\"body\": \"x\", \"expect_status\": 42}").is_err());
        assert!(
            parse_pool("{\"body\": \"x\", \"expect_body\": \"a\", \"expect_json\": 1}").is_err()
        );
    }
}
