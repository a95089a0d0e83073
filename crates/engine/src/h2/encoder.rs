//! The request side of HPACK on one connection (RFC 7541 §2.3, §6): which
//! of the run's fields the server's dynamic table holds, and each
//! request's header block written from that.
//!
//! A field is sent as a literal with incremental indexing the first time a
//! connection needs it and as a one- or two-byte index after that, as
//! h2load does; measured there, sending every field as a literal cost it
//! 15-17% of its requests/s and more CPU per request (bench/h2_clients.py).
//! The choices are the engine's own, so they are written here rather than
//! left to loona-hpack's encoder, which never indexes a value whose name is
//! in the static table (`:authority`, `content-type`) and has no table size
//! update. Nothing is ever evicted by an insertion: a field is inserted
//! only while it fits, so every index stays what it was, and a server that
//! lowers SETTINGS_HEADER_TABLE_SIZE gets a size update at the start of the
//! next block and the entries that no longer fit dropped, oldest first, as
//! its decoder drops them (§4.3, §4.4).

use std::collections::VecDeque;

/// SETTINGS_HEADER_TABLE_SIZE until the server says otherwise (RFC 9113
/// §6.5.2): what the run's indexed fields are chosen to fit.
pub(crate) const SERVER_TABLE: usize = 4096;

/// The first dynamic table index (§2.3.3): the static table has 61.
const FIRST_DYNAMIC: usize = 62;

/// One field of a request as this encoder may send it; made once per run
/// (`request.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Field {
    /// A whole static table entry, by its index (1 to 61).
    Static(u8),
    /// Sent as a literal without indexing every time.
    Literal(Vec<u8>),
    /// A field the server's table may hold. `id` numbers it among the run's
    /// indexed fields; `size` is its table size (§4.1); `insert` is its
    /// literal with incremental indexing, `literal` its literal without,
    /// for when it does not fit.
    Indexed {
        id: u16,
        size: u32,
        insert: Vec<u8>,
        literal: Vec<u8>,
    },
}

/// Not in the table.
const ABSENT: u32 = u32::MAX;

/// What the server's dynamic table holds of this connection's fields.
#[derive(Debug)]
pub(crate) struct Encoder {
    /// By field id: the insertion it was, or [`ABSENT`].
    at: Vec<u32>,
    /// The table's entries, oldest first: field id and size.
    order: VecDeque<(u16, u32)>,
    /// Insertions so far: the newest entry is insertion `inserted - 1`.
    inserted: u32,
    size: usize,
    max: usize,
    /// A size update owed at the start of the next block.
    update: Option<usize>,
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder::new()
    }
}

impl Encoder {
    pub(crate) fn new() -> Self {
        Encoder {
            at: Vec::new(),
            order: VecDeque::new(),
            inserted: 0,
            size: 0,
            max: SERVER_TABLE,
            update: None,
        }
    }

    /// A new connection: an empty table of the default size.
    pub(crate) fn reset(&mut self) {
        self.at.clear();
        self.order.clear();
        self.inserted = 0;
        self.size = 0;
        self.max = SERVER_TABLE;
        self.update = None;
    }

    /// The server's SETTINGS_HEADER_TABLE_SIZE. A larger table is left
    /// unused (an encoder may use less, §4.2); a smaller one is said in the
    /// next block and the entries past it are dropped, oldest first.
    pub(crate) fn server_table(&mut self, setting: u32) {
        let setting = setting as usize;
        if setting >= self.max {
            return;
        }
        self.max = setting;
        self.update = Some(setting);
        while self.size > self.max {
            let Some((id, size)) = self.order.pop_front() else {
                break;
            };
            self.at[id as usize] = ABSENT;
            self.size -= size as usize;
        }
    }

    /// `fields` as a header block, appended to `out`.
    pub(crate) fn encode(&mut self, fields: &[Field], out: &mut Vec<u8>) {
        if let Some(size) = self.update.take() {
            put_int(out, 0x20, 5, size);
        }
        for field in fields {
            match field {
                Field::Static(index) => out.push(0x80 | index),
                Field::Literal(bytes) => out.extend_from_slice(bytes),
                Field::Indexed {
                    id,
                    size,
                    insert,
                    literal,
                } => {
                    let id = *id as usize;
                    if id >= self.at.len() {
                        self.at.resize(id + 1, ABSENT);
                    }
                    let at = self.at[id];
                    if at != ABSENT {
                        let newer = (self.inserted - 1 - at) as usize;
                        put_int(out, 0x80, 7, FIRST_DYNAMIC + newer);
                    } else if self.size + *size as usize <= self.max {
                        out.extend_from_slice(insert);
                        self.at[id] = self.inserted;
                        self.inserted += 1;
                        self.order.push_back((id as u16, *size));
                        self.size += *size as usize;
                    } else {
                        out.extend_from_slice(literal);
                    }
                }
            }
        }
    }
}

/// An integer with a `prefix`-bit prefix under the pattern `flags` (§5.1).
pub(crate) fn put_int(out: &mut Vec<u8>, flags: u8, prefix: u8, value: usize) {
    let max = (1usize << prefix) - 1;
    if value < max {
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | max as u8);
    let mut rest = value - max;
    while rest >= 128 {
        out.push((rest % 128) as u8 | 0x80);
        rest /= 128;
    }
    out.push(rest as u8);
}

/// A literal field (§6.2): `flags` and `prefix` choose with incremental
/// indexing (0x40, 6) or without (0x00, 4); the name by its static index,
/// or written out when `name_index` is 0. Strings go raw, not Huffman: a
/// field is written so once per connection at most.
pub(crate) fn put_literal(
    out: &mut Vec<u8>,
    flags: u8,
    prefix: u8,
    name_index: usize,
    name: &[u8],
    value: &[u8],
) {
    put_int(out, flags, prefix, name_index);
    if name_index == 0 {
        put_int(out, 0, 7, name.len());
        out.extend_from_slice(name);
    }
    put_int(out, 0, 7, value.len());
    out.extend_from_slice(value);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(d: &mut loona_hpack::Decoder<'_>, block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        d.decode(block).expect("a block the server can decode")
    }

    #[test]
    fn integers_follow_rfc_7541_c_1() {
        let mut out = Vec::new();
        put_int(&mut out, 0, 5, 10);
        assert_eq!(out, [0b0000_1010]);
        out.clear();
        put_int(&mut out, 0, 5, 1337);
        assert_eq!(out, [0b0001_1111, 0b1001_1010, 0b0000_1010]);
        out.clear();
        put_int(&mut out, 0x80, 7, 127);
        assert_eq!(out, [0xff, 0x00]);
    }

    fn indexed(id: u16, name: &str, value: &str) -> Field {
        let (mut insert, mut literal) = (Vec::new(), Vec::new());
        put_literal(&mut insert, 0x40, 6, 0, name.as_bytes(), value.as_bytes());
        put_literal(&mut literal, 0, 4, 0, name.as_bytes(), value.as_bytes());
        Field::Indexed {
            id,
            size: (name.len() + value.len() + 32) as u32,
            insert,
            literal,
        }
    }

    fn plain(name: &str, value: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
        vec![(name.as_bytes().to_vec(), value.as_bytes().to_vec())]
    }

    #[test]
    fn a_field_is_inserted_once_then_indexed() {
        let fields = [
            Field::Static(2),
            indexed(0, "x-a", "1"),
            indexed(1, "x-b", "2"),
        ];
        let mut e = Encoder::new();
        let mut d = loona_hpack::Decoder::new();
        let mut first = Vec::new();
        e.encode(&fields, &mut first);
        let mut second = Vec::new();
        e.encode(&fields, &mut second);
        // x-b is the newest entry (62), x-a the one before (63).
        assert_eq!(second, [0x82, 0x80 | 63, 0x80 | 62]);
        for block in [&first, &second] {
            let want: Vec<_> = [
                plain(":method", "GET"),
                plain("x-a", "1"),
                plain("x-b", "2"),
            ]
            .concat();
            assert_eq!(decode(&mut d, block), want);
        }
    }

    #[test]
    fn a_field_that_does_not_fit_goes_as_a_literal_and_evicts_nothing() {
        let big = "v".repeat(SERVER_TABLE - 40);
        let fields = [indexed(0, "x-a", "1"), indexed(1, "x-big", &big)];
        let mut e = Encoder::new();
        let mut d = loona_hpack::Decoder::new();
        for round in 0..3 {
            let mut block = Vec::new();
            e.encode(&fields, &mut block);
            if round > 0 {
                assert_eq!(block[0], 0x80 | 62, "x-a stays indexed");
            }
            assert_eq!(
                decode(&mut d, &block),
                [plain("x-a", "1"), plain("x-big", &big)].concat()
            );
            e.encode(&fields[..1], &mut Vec::new());
            d.decode(&[0x80 | 62]).unwrap();
        }
    }

    #[test]
    fn a_smaller_server_table_is_said_first_and_its_oldest_entries_dropped() {
        let fields = [indexed(0, "x-a", "1"), indexed(1, "x-b", "2")];
        let mut e = Encoder::new();
        let mut d = loona_hpack::Decoder::new();
        let mut block = Vec::new();
        e.encode(&fields, &mut block);
        decode(&mut d, &block);
        // Room for one entry (36 octets): x-a, the oldest, goes.
        e.server_table(40);
        block.clear();
        e.encode(&fields, &mut block);
        assert_eq!(block[0], 0x20 | 31, "a size update comes first");
        assert_eq!(
            decode(&mut d, &block),
            [plain("x-a", "1"), plain("x-b", "2")].concat()
        );
        block.clear();
        e.encode(&fields, &mut block);
        assert!(block.ends_with(&[0x80 | 62]), "x-b still indexed");
        decode(&mut d, &block);
        // A larger table later changes nothing; reset starts over.
        e.server_table(65_536);
        assert_eq!(e.max, 40);
        e.reset();
        assert_eq!((e.max, e.size, e.order.len()), (SERVER_TABLE, 0, 0));
    }

    /// Many connections' worth of random requests and table sizes, each
    /// block decoded by loona-hpack as a server would.
    #[test]
    fn random_requests_and_table_sizes_decode_as_sent() {
        let mut state = 7u64;
        let mut below = |n: u64| {
            // A 64-bit LCG (Knuth's MMIX constants): enough to vary a test.
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % n
        };
        let pool: Vec<(String, String)> = (0..12)
            .map(|i| (format!("x-{i}"), "v".repeat(below(300) as usize)))
            .collect();
        for _ in 0..200 {
            let mut e = Encoder::new();
            let mut d = loona_hpack::Decoder::new();
            for _ in 0..20 {
                if below(8) == 0 {
                    let size = below(SERVER_TABLE as u64) as u32;
                    e.server_table(size);
                }
                let picked: Vec<usize> = (0..1 + below(6))
                    .map(|_| below(pool.len() as u64) as usize)
                    .collect();
                let fields: Vec<Field> = picked
                    .iter()
                    .map(|&i| indexed(i as u16, &pool[i].0, &pool[i].1))
                    .collect();
                let mut block = Vec::new();
                e.encode(&fields, &mut block);
                let want: Vec<_> = picked
                    .iter()
                    .flat_map(|&i| plain(&pool[i].0, &pool[i].1))
                    .collect();
                assert_eq!(decode(&mut d, &block), want);
            }
        }
    }
}
