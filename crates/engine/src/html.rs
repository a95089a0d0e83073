//! The HTML table check behind the contract's `fortunes`: the data cells of
//! a page, read back as text, against the rows expected. Hand-written, not
//! an HTML library's: it is a check of the product (what a server may and
//! may not send), it must be strict where a browser is lenient (a raw `<`
//! in a cell is a failure, not a tag to recover from), and it is a pure
//! function over the bytes, fuzzed (`fuzz/fuzz_targets/html_table.rs`).

use std::fmt;

/// Why a page's table is not the one expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableMismatch {
    /// A `<td>` that never closes.
    Unclosed { row: usize },
    /// A `<` inside a cell that is not its `</td>`: markup, or text that
    /// was not escaped (`<script>` from the database).
    RawMarkup { row: usize },
    /// A `&` that starts no character reference HTML knows here.
    BadReference { row: usize },
    /// Rows with data cells: how many came, how many were expected.
    Rows { got: usize, want: usize },
    /// A row whose cells differ from the expected ones (1-based row).
    Row {
        row: usize,
        got: Vec<String>,
        want: Vec<String>,
    },
}

impl fmt::Display for TableMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableMismatch::Unclosed { row } => write!(f, "a <td> of data row {row} has no </td>"),
            TableMismatch::RawMarkup { row } => write!(
                f,
                "data row {row} has a raw `<` inside a cell: text must be escaped (&lt;)"
            ),
            TableMismatch::BadReference { row } => write!(
                f,
                "data row {row} has a `&` that starts no character reference: text must be escaped (&amp;)"
            ),
            TableMismatch::Rows { got, want } => {
                write!(f, "{got} table rows with <td> cells, want {want}")
            }
            TableMismatch::Row { row, got, want } => {
                write!(f, "data row {row} is {got:?}, want {want:?}")
            }
        }
    }
}

/// Whether `body`'s table rows (those with `<td>` cells, in order) are
/// exactly `want`, each cell's text compared once its character references
/// are decoded and the white space at its ends trimmed.
pub fn table_problem(body: &[u8], want: &[Vec<String>]) -> Option<TableMismatch> {
    let rows = match table_rows(body) {
        Ok(rows) => rows,
        Err(m) => return Some(m),
    };
    if rows.len() != want.len() {
        return Some(TableMismatch::Rows {
            got: rows.len(),
            want: want.len(),
        });
    }
    for (i, (got, want)) in rows.iter().zip(want).enumerate() {
        let same = got.len() == want.len() && got.iter().zip(want).all(|(g, w)| g == w.as_bytes());
        if !same {
            return Some(TableMismatch::Row {
                row: i + 1,
                got: got
                    .iter()
                    .map(|c| String::from_utf8_lossy(c).into_owned())
                    .collect(),
                want: want.clone(),
            });
        }
    }
    None
}

/// The decoded text of every `<td>` cell, by `<tr>` row; rows without data
/// cells (a header of `<th>`) are left out.
pub fn table_rows(body: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, TableMismatch> {
    let mut rows: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut scratch = Vec::new();
    scan_cells(body, &mut scratch, |row, _col, text| {
        if rows.len() == row {
            rows.push(Vec::new());
        }
        rows[row].push(text.to_vec());
        true
    })?;
    Ok(rows)
}

/// Hands every `<td>` cell's decoded, trimmed text to `visit` with its
/// row (counting only rows with data cells, from 0) and column, in order,
/// decoding into `scratch` so that a page checked cell by cell allocates
/// nothing once `scratch` has grown; `visit` returns false to stop early.
/// The number of rows seen, or the first cell that breaks the rules.
pub(crate) fn scan_cells(
    body: &[u8],
    scratch: &mut Vec<u8>,
    mut visit: impl FnMut(usize, usize, &[u8]) -> bool,
) -> Result<usize, TableMismatch> {
    let mut rows = 0;
    let mut col = 0;
    let mut pos = 0;
    while let Some(at) = find(body, pos, b'<') {
        let rest = &body[at..];
        if starts_tag(rest, b"<tr") {
            if col > 0 {
                rows += 1;
                col = 0;
            }
            pos = at + 3;
        } else if starts_tag(rest, b"<td") {
            let row = rows + 1;
            let open_end = find(body, at, b'>').ok_or(TableMismatch::Unclosed { row })? + 1;
            let close = find_close_td(body, open_end).ok_or(TableMismatch::Unclosed { row })?;
            let raw = &body[open_end..close];
            if raw.contains(&b'<') {
                return Err(TableMismatch::RawMarkup { row });
            }
            if !decode_text(raw, scratch) {
                return Err(TableMismatch::BadReference { row });
            }
            if !visit(rows, col, scratch.trim_ascii()) {
                return Ok(rows + 1);
            }
            col += 1;
            pos = close + 5;
        } else {
            pos = at + 1;
        }
    }
    Ok(rows + usize::from(col > 0))
}

fn find(hay: &[u8], from: usize, b: u8) -> Option<usize> {
    hay.get(from..)?
        .iter()
        .position(|&c| c == b)
        .map(|i| from + i)
}

/// Whether `s` opens the tag `name` (`<td`, case-insensitive): the name is
/// followed by `>`, `/` or white space, so `<track>` is not `<tr>`.
fn starts_tag(s: &[u8], name: &[u8]) -> bool {
    s.len() > name.len()
        && s[..name.len()].eq_ignore_ascii_case(name)
        && matches!(
            s[name.len()],
            b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c'
        )
}

/// Where the `</td>` closing the cell that starts at `from` begins.
fn find_close_td(body: &[u8], from: usize) -> Option<usize> {
    let mut pos = from;
    while let Some(at) = find(body, pos, b'<') {
        let rest = &body[at..];
        if rest.len() >= 5 && rest[..4].eq_ignore_ascii_case(b"</td") && rest[4] == b'>' {
            return Some(at);
        }
        pos = at + 1;
    }
    None
}

/// `raw` with its character references decoded into `out` (cleared
/// first); false when a `&` starts none (a raw `&` would make the text
/// ambiguous: `&lt;` might be the message's own four characters).
fn decode_text(raw: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    let mut i = 0;
    while i < raw.len() {
        let Some(amp) = raw[i..].iter().position(|&c| c == b'&') else {
            out.extend_from_slice(&raw[i..]);
            break;
        };
        out.extend_from_slice(&raw[i..i + amp]);
        i += amp;
        let Some(semi) = raw[i..].iter().take(12).position(|&c| c == b';') else {
            return false;
        };
        let Some(ch) = reference(&raw[i + 1..i + semi]) else {
            return false;
        };
        let mut utf8 = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut utf8).as_bytes());
        i += semi + 1;
    }
    true
}

/// The character a reference's name (between `&` and `;`) stands for: the
/// named ones template engines write, and any decimal or hex one.
fn reference(name: &[u8]) -> Option<char> {
    let named = match name {
        b"lt" => Some('<'),
        b"gt" => Some('>'),
        b"amp" => Some('&'),
        b"quot" => Some('"'),
        b"apos" => Some('\''),
        b"nbsp" => Some('\u{a0}'),
        _ => None,
    };
    if named.is_some() {
        return named;
    }
    let digits = name.strip_prefix(b"#")?;
    let (digits, radix) = match digits.first() {
        Some(b'x' | b'X') => (&digits[1..], 16),
        _ => (digits, 10),
    };
    if digits.is_empty() || digits.len() > 7 {
        return None;
    }
    let code = u32::from_str_radix(std::str::from_utf8(digits).ok()?, radix).ok()?;
    char::from_u32(code).filter(|&c| c != '\0')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn want(rows: &[(&str, &str)]) -> Vec<Vec<String>> {
        rows.iter()
            .map(|(a, b)| vec![a.to_string(), b.to_string()])
            .collect()
    }

    const PAGE: &str = "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>\
        <tr><th>id</th><th>message</th></tr>\
        <tr><td>11</td><td>&lt;script&gt;alert(&quot;x&quot;);&lt;/script&gt;</td></tr>\
        <tr><td>12</td><td>フレームワーク</td></tr></table></body></html>";

    #[test]
    fn a_page_reads_back_as_its_rows_whatever_the_escaping_style() {
        let rows = want(&[
            ("11", "<script>alert(\"x\");</script>"),
            ("12", "フレームワーク"),
        ]);
        assert_eq!(table_problem(PAGE.as_bytes(), &rows), None);
        // Go's html/template, numeric references, spacing and case.
        let other = "<TABLE>\n <tr>\n  <td class=\"id\"> 11 </td>\n  \
            <TD>&#60;script&#x3E;alert(&#34;x&#34;);&lt;/script&gt;</TD>\n </tr>\n \
            <tr><td>12</td><td>&#12501;レームワーク</td></tr></TABLE>";
        assert_eq!(table_problem(other.as_bytes(), &rows), None);
    }

    #[test]
    fn unescaped_text_wrong_rows_and_broken_cells_are_told_apart() {
        let rows = want(&[
            ("11", "<script>alert(\"x\");</script>"),
            ("12", "フレームワーク"),
        ]);
        let raw = PAGE.replace("&lt;script&gt;", "<script>");
        assert_eq!(
            table_problem(raw.as_bytes(), &rows),
            Some(TableMismatch::RawMarkup { row: 1 })
        );
        let amp = PAGE.replace("フレームワーク", "a & b");
        assert_eq!(
            table_problem(amp.as_bytes(), &rows),
            Some(TableMismatch::BadReference { row: 2 })
        );
        let short = PAGE.replace("<tr><td>12</td><td>フレームワーク</td></tr>", "");
        assert_eq!(
            table_problem(short.as_bytes(), &rows),
            Some(TableMismatch::Rows { got: 1, want: 2 })
        );
        let swapped = want(&[
            ("12", "フレームワーク"),
            ("11", "<script>alert(\"x\");</script>"),
        ]);
        assert!(matches!(
            table_problem(PAGE.as_bytes(), &swapped),
            Some(TableMismatch::Row { row: 1, .. })
        ));
        let cut = &PAGE[..PAGE.find("</td></tr></table>").unwrap()];
        assert_eq!(
            table_problem(cut.as_bytes(), &rows),
            Some(TableMismatch::Unclosed { row: 2 })
        );
    }

    #[test]
    fn references_decode_or_are_refused() {
        let mut out = Vec::new();
        assert!(decode_text(b"a &amp; b &#39;&#x27;&apos;", &mut out));
        assert_eq!(out, b"a & b '''");
        for bad in [
            &b"&"[..],
            b"&;",
            b"&#;",
            b"&#x;",
            b"&bogus;",
            b"&#0;",
            b"&#xD800;",
            b"&#99999999;",
        ] {
            assert!(
                !decode_text(bad, &mut out),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(!starts_tag(b"<track>", b"<tr"));
        assert!(starts_tag(b"<TR class=x>", b"<tr"));
    }
}
