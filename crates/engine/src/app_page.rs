//! The page check behind the contract's `app`: a page's table read back
//! cell by cell (`html.rs`'s rules: escaped text, references decoded) as
//! its session's two rows, then the item rows expected, and the files it
//! must carry byte for byte. Pure and allocation-free once its scratch
//! buffer has grown: the engine runs it on every page under load, `verify`
//! on the pages it fetches, and it is fuzzed (`fuzz/fuzz_targets/app_page.rs`).

use std::fmt;

use crate::html::{scan_cells, TableMismatch};

/// What a page of the contract's `app` must show besides its session: the
/// item rows of its `page` (the contract's formula, made by the caller), and
/// the bytes it must hold verbatim (the contract's stylesheet and script).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppPage {
    pub items: Vec<Vec<String>>,
    pub verbatim: Vec<Vec<u8>>,
}

/// The session a page shows: its counter after this request and when it was
/// made (milliseconds since the Unix epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSession {
    pub visits: u64,
    pub since: i64,
}

/// The names of the session rows' first cells, in the page's order.
const SESSION_ROWS: [&[u8]; 2] = [b"visits", b"since"];

/// Why a page is not the one expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageMismatch {
    /// The table breaks the rules every cell keeps (unescaped, unclosed).
    Table(TableMismatch),
    /// Session row `row` (1: visits, 2: since) is not its name and a
    /// whole number.
    SessionRow { row: usize },
    /// Rows with data cells: how many came, how many were expected.
    Rows { got: usize, want: usize },
    /// Item row `item` (1-based) differs from the formula's.
    Item { item: usize },
    /// The page lacks the `index`th verbatim file (0: the stylesheet, 1:
    /// the script).
    Verbatim { index: usize },
}

impl fmt::Display for PageMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PageMismatch::Table(m) => m.fmt(f),
            PageMismatch::SessionRow { row } => write!(
                f,
                "data row {row} is not `{}` and a whole number",
                String::from_utf8_lossy(SESSION_ROWS[row - 1])
            ),
            PageMismatch::Rows { got, want } => {
                write!(
                    f,
                    "{got} table rows with <td> cells, want {want} (2 session rows and the items)"
                )
            }
            PageMismatch::Item { item } => {
                write!(f, "item row {item} differs from the contract's formula")
            }
            PageMismatch::Verbatim { index } => write!(
                f,
                "the page lacks contract/app/{} byte for byte",
                ["app.css", "app.js"].get(*index).unwrap_or(&"(a file)")
            ),
        }
    }
}

/// Reads `body` as a page of `page`: its session's two rows, then exactly
/// `page`'s items, with every verbatim file in it. `scratch` holds each
/// decoded cell in turn.
pub fn read_app_page(
    body: &[u8],
    page: &AppPage,
    scratch: &mut Vec<u8>,
) -> Result<PageSession, PageMismatch> {
    let mut reader = Reader {
        page,
        session: [None; 2],
        row: 0,
        cells: 0,
        bad: None,
    };
    let rows = scan_cells(body, scratch, |row, col, text| reader.cell(row, col, text))
        .map_err(PageMismatch::Table)?;
    if reader.bad.is_none() {
        reader.end_row();
    }
    if let Some(m) = reader.bad {
        return Err(m);
    }
    let want = SESSION_ROWS.len() + page.items.len();
    if rows != want {
        return Err(PageMismatch::Rows { got: rows, want });
    }
    for (index, file) in page.verbatim.iter().enumerate() {
        if memchr::memmem::find(body, file).is_none() {
            return Err(PageMismatch::Verbatim { index });
        }
    }
    match reader.session {
        [Some(visits), Some(since)] => Ok(PageSession {
            visits: visits as u64,
            since,
        }),
        [None, _] => Err(PageMismatch::SessionRow { row: 1 }),
        [_, None] => Err(PageMismatch::SessionRow { row: 2 }),
    }
}

/// The page's cells as they come: each checked against its place, and
/// each row's count of cells once the next begins.
struct Reader<'a> {
    page: &'a AppPage,
    /// The session rows' numbers, once read.
    session: [Option<i64>; 2],
    /// The row under way and the cells it has had.
    row: usize,
    cells: usize,
    bad: Option<PageMismatch>,
}

impl Reader<'_> {
    fn cell(&mut self, row: usize, col: usize, text: &[u8]) -> bool {
        if row != self.row {
            self.end_row();
            self.row = row;
            self.cells = 0;
        }
        self.cells += 1;
        if self.bad.is_none() {
            let ok = match row.checked_sub(SESSION_ROWS.len()) {
                None => self.session_cell(row, col, text),
                Some(item) => self.item_cell(item, col, text),
            };
            if !ok {
                self.bad = Some(self.mismatch(row));
            }
        }
        self.bad.is_none()
    }

    /// A session row's cell: its name first, then a whole number.
    fn session_cell(&mut self, row: usize, col: usize, text: &[u8]) -> bool {
        match col {
            0 => text == SESSION_ROWS[row],
            1 => {
                self.session[row] = whole_number(text);
                self.session[row].is_some()
            }
            _ => false,
        }
    }

    /// An item row's cell against the formula's; rows past the expected
    /// ones are left for the count to tell.
    fn item_cell(&self, item: usize, col: usize, text: &[u8]) -> bool {
        match self.page.items.get(item) {
            Some(want) => want.get(col).is_some_and(|w| w.as_bytes() == text),
            None => true,
        }
    }

    /// The row under way ended: it must have had every cell.
    fn end_row(&mut self) {
        let want = match self.row.checked_sub(SESSION_ROWS.len()) {
            None => 2,
            Some(item) => match self.page.items.get(item) {
                Some(cells) => cells.len(),
                None => return,
            },
        };
        if self.bad.is_none() && self.cells > 0 && self.cells != want {
            self.bad = Some(self.mismatch(self.row));
        }
    }

    fn mismatch(&self, row: usize) -> PageMismatch {
        match row.checked_sub(SESSION_ROWS.len()) {
            None => PageMismatch::SessionRow { row: row + 1 },
            Some(item) => PageMismatch::Item { item: item + 1 },
        }
    }
}

/// A non-negative decimal integer of at most 18 digits.
fn whole_number(text: &[u8]) -> Option<i64> {
    if text.is_empty() || text.len() > 18 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> AppPage {
        AppPage {
            items: vec![
                vec!["1".into(), "Tom & Jerry".into()],
                vec!["2".into(), "a < b".into()],
            ],
            verbatim: vec![
                b"body { margin: 0; }".to_vec(),
                b"(function () {})();".to_vec(),
            ],
        }
    }

    fn html(visits: &str, since: &str, items: &str) -> String {
        format!(
            "<!DOCTYPE html><html><head><style>\nbody {{ margin: 0; }}\n</style></head><body>\
             <table class=\"session\"><tr><td>visits</td><td>{visits}</td></tr>\
             <tr><td>since</td><td>{since}</td></tr></table>\
             <table><tr><th>#</th><th>item</th></tr>{items}</table>\
             <script>\n(function () {{}})();\n</script></body></html>"
        )
    }

    const ITEMS: &str =
        "<tr><td>1</td><td>Tom &amp; Jerry</td></tr>\n<tr><td>2</td><td>a &lt; b</td></tr>";

    #[test]
    fn a_page_reads_as_its_session_when_every_item_and_file_is_there() {
        let mut scratch = Vec::new();
        let got = read_app_page(
            html("3", "1764315969123", ITEMS).as_bytes(),
            &page(),
            &mut scratch,
        );
        assert_eq!(
            got,
            Ok(PageSession {
                visits: 3,
                since: 1_764_315_969_123
            })
        );
    }

    #[test]
    fn each_way_a_page_can_be_wrong_is_told_apart() {
        let p = page();
        let mut s = Vec::new();
        let read = |body: String, s: &mut Vec<u8>| read_app_page(body.as_bytes(), &p, s);
        assert_eq!(
            read(html("three", "1", ITEMS), &mut s),
            Err(PageMismatch::SessionRow { row: 1 })
        );
        assert_eq!(
            read(html("3", "-1", ITEMS), &mut s),
            Err(PageMismatch::SessionRow { row: 2 })
        );
        assert_eq!(
            read(html("3", "1", &ITEMS.replace("Jerry", "Spike")), &mut s),
            Err(PageMismatch::Item { item: 1 })
        );
        assert_eq!(
            read(html("3", "1", &ITEMS.replace("&lt;", "<")), &mut s),
            Err(PageMismatch::Table(TableMismatch::RawMarkup { row: 4 }))
        );
        let one_item = &ITEMS[..ITEMS.find('\n').unwrap()];
        assert_eq!(
            read(html("3", "1", one_item), &mut s),
            Err(PageMismatch::Rows { got: 3, want: 4 })
        );
        let extra = format!("{ITEMS}<tr><td>3</td><td>more</td></tr>");
        assert_eq!(
            read(html("3", "1", &extra), &mut s),
            Err(PageMismatch::Rows { got: 5, want: 4 })
        );
        let short_cells = ITEMS.replace("<td>Tom &amp; Jerry</td>", "");
        assert_eq!(
            read(html("3", "1", &short_cells), &mut s),
            Err(PageMismatch::Item { item: 1 })
        );
        assert_eq!(
            read(
                html("3", "1", ITEMS).replace("margin: 0", "margin:0"),
                &mut s
            ),
            Err(PageMismatch::Verbatim { index: 0 })
        );
        assert_eq!(
            read(
                html("3", "1", ITEMS).replace("<script>\n(function () {})();\n</script>", ""),
                &mut s
            ),
            Err(PageMismatch::Verbatim { index: 1 })
        );
        // The session rows come first, in their order.
        let swapped =
            html("3", "1", ITEMS).replace("<td>visits</td><td>3</td>", "<td>since</td><td>1</td>");
        assert_eq!(
            read(swapped, &mut s),
            Err(PageMismatch::SessionRow { row: 1 })
        );
    }
}
