//! TOML errors as one line that says where: `line L, column C: message`.

/// `e`'s message with the line and column (1-based) of its span in `text`.
pub(crate) fn describe(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    match e.span() {
        Some(span) => {
            let (line, column) = line_column(text, span.start);
            format!("line {line}, column {column}: {message}")
        }
        None => message.to_string(),
    }
}

/// 1-based line and column (in characters) of byte offset `at`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_at_the_offending_key() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct T {
            a: u32,
        }
        let text = "# comment\na = \"x\"\n";
        let e = toml::from_str::<T>(text).unwrap_err();
        let d = describe(text, &e);
        assert!(d.starts_with("line 2, column 5: "), "{d}");
    }

    #[test]
    fn offsets_past_the_end_and_multibyte() {
        assert_eq!(line_column("é\nab", 4), (2, 2));
        assert_eq!(line_column("ab", 99), (1, 3));
    }
}
