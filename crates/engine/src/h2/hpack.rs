//! HPACK header block decoding (RFC 7541) for answers: integers, string
//! literals (Huffman by httlib-huffman), the static table and a bounded
//! dynamic table, each field handed to a callback borrowed.
//!
//! Written by hand because it is the HTTP/2 client's hot path: loona-hpack's
//! decoder builds a Huffman table (HashMaps) for every Huffman string, which
//! perf measured at about three quarters of the client's CPU per request
//! (bench/h2_clients.py: 4 to 10 times h2load's). This one allocates nothing
//! once its scratch and table entries have grown. Requests are encoded by
//! `encoder.rs`; loona-hpack's decoder is this one's cross-check in the
//! tests and in the `hpack_decode` fuzz target.

use std::collections::VecDeque;

/// The table size this client's SETTINGS leaves at its default (§6.5.2 of
/// RFC 9113): a server's size update may not exceed it.
pub(crate) const TABLE_LIMIT: usize = 4096;

/// Why a header block was refused: each is a COMPRESSION_ERROR (RFC 9113
/// §4.3), so the connection ends and the kind is counted as `h2_protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HpackError {
    /// The block ends inside a field.
    Truncated,
    /// An integer longer than any table, string or size could need.
    IntegerOverflow,
    /// Index 0, or past the static and dynamic tables.
    BadIndex,
    /// A Huffman string with a bad code, EOS, or padding that is not ones.
    Huffman,
    /// A table size update above the limit.
    SizeUpdate,
    /// A table size update after the block's first field (§4.2: it must
    /// come first).
    LateSizeUpdate,
}

/// One dynamic table entry; kept and reused when evicted, so a table that
/// has reached its size stops allocating.
#[derive(Default)]
struct Entry {
    name: Vec<u8>,
    value: Vec<u8>,
}

impl Entry {
    /// RFC 7541 §4.1: an entry's size counts 32 octets of overhead.
    fn size(&self) -> usize {
        self.name.len() + self.value.len() + 32
    }
}

/// A connection's decoding state: the dynamic table and the scratch that
/// Huffman strings are decoded into.
pub(crate) struct Decoder {
    /// Newest first: index 62 is `table[0]`.
    table: VecDeque<Entry>,
    size: usize,
    max_size: usize,
    spare: Vec<Entry>,
    name: Vec<u8>,
    value: Vec<u8>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

/// Where a field's name comes from before it is handed over.
#[derive(Clone, Copy)]
enum Name {
    Static(usize),
    Dynamic(usize),
    Literal,
}

impl Decoder {
    pub(crate) fn new() -> Self {
        Decoder {
            table: VecDeque::new(),
            size: 0,
            max_size: TABLE_LIMIT,
            spare: Vec::new(),
            name: Vec::new(),
            value: Vec::new(),
        }
    }

    /// Back to a new connection's state, keeping what was allocated.
    pub(crate) fn reset(&mut self) {
        self.spare.extend(self.table.drain(..));
        self.size = 0;
        self.max_size = TABLE_LIMIT;
    }

    /// Decodes one whole header block (HEADERS and its CONTINUATIONs joined),
    /// calling `field` with each name and value in order. On an error the
    /// table may be part-updated: the connection must end (RFC 9113 §4.3).
    pub(crate) fn decode(
        &mut self,
        mut block: &[u8],
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let mut fields_seen = false;
        while let Some(&first) = block.first() {
            if first & 0x80 != 0 {
                // §6.1: an indexed field.
                let index = integer(&mut block, 7)?;
                let (name, value) = self.get(index)?;
                field(name, value);
                fields_seen = true;
            } else if first & 0xe0 == 0x20 {
                // §6.3: a table size update, only before the first field.
                let size = integer(&mut block, 5)?;
                if fields_seen {
                    return Err(HpackError::LateSizeUpdate);
                }
                if size > TABLE_LIMIT {
                    return Err(HpackError::SizeUpdate);
                }
                self.max_size = size;
                self.evict_to(size);
            } else {
                // §6.2: a literal, added to the table (01), or not (0000,
                // 0001: never indexed is the same to a client).
                let indexing = first & 0x40 != 0;
                let index = integer(&mut block, if indexing { 6 } else { 4 })?;
                let name = match index {
                    0 => {
                        string(&mut block, &mut self.name)?;
                        Name::Literal
                    }
                    i if i <= STATIC.len() => Name::Static(i - 1),
                    i if i - STATIC.len() <= self.table.len() => {
                        Name::Dynamic(i - STATIC.len() - 1)
                    }
                    _ => return Err(HpackError::BadIndex),
                };
                string(&mut block, &mut self.value)?;
                let name_bytes: &[u8] = match name {
                    Name::Static(i) => STATIC[i].0.as_bytes(),
                    Name::Dynamic(i) => &self.table[i].name,
                    Name::Literal => &self.name,
                };
                field(name_bytes, &self.value);
                fields_seen = true;
                if indexing {
                    self.insert(name);
                }
            }
        }
        Ok(())
    }

    fn get(&self, index: usize) -> Result<(&[u8], &[u8]), HpackError> {
        match index {
            0 => Err(HpackError::BadIndex),
            i if i <= STATIC.len() => {
                let (name, value) = STATIC[i - 1];
                Ok((name.as_bytes(), value.as_bytes()))
            }
            i => self
                .table
                .get(i - STATIC.len() - 1)
                .map(|e| (&e.name[..], &e.value[..]))
                .ok_or(HpackError::BadIndex),
        }
    }

    /// Adds the field just decoded (its value in `self.value`) as the newest
    /// entry. The name is copied before anything is evicted, since it may
    /// name the entry the insertion evicts (§4.4).
    fn insert(&mut self, name: Name) {
        let mut entry = self.spare.pop().unwrap_or_default();
        entry.name.clear();
        match name {
            Name::Static(i) => entry.name.extend_from_slice(STATIC[i].0.as_bytes()),
            Name::Dynamic(i) => entry.name.extend_from_slice(&self.table[i].name),
            Name::Literal => entry.name.extend_from_slice(&self.name),
        }
        entry.value.clear();
        entry.value.extend_from_slice(&self.value);
        let size = entry.size();
        if size > self.max_size {
            // §4.4: an entry larger than the table empties it and is not
            // added.
            self.evict_to(0);
            self.spare.push(entry);
            return;
        }
        self.evict_to(self.max_size - size);
        self.size += size;
        self.table.push_front(entry);
    }

    fn evict_to(&mut self, limit: usize) {
        while self.size > limit {
            let Some(old) = self.table.pop_back() else {
                break;
            };
            self.size -= old.size();
            self.spare.push(old);
        }
    }
}

/// §5.1: an integer with an `prefix`-bit prefix, taken off the front of
/// `block`. Anything past 2^28 is refused: no index, string or size here
/// is near it.
fn integer(block: &mut &[u8], prefix: u8) -> Result<usize, HpackError> {
    let (&first, mut rest) = block.split_first().ok_or(HpackError::Truncated)?;
    let mask = (1u16 << prefix) as usize - 1;
    let mut value = usize::from(first) & mask;
    if value == mask {
        let mut shift = 0;
        loop {
            let (&byte, after) = rest.split_first().ok_or(HpackError::Truncated)?;
            rest = after;
            value += usize::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 21 {
                return Err(HpackError::IntegerOverflow);
            }
        }
    }
    *block = rest;
    Ok(value)
}

/// §5.2: a string literal, raw or Huffman, into `out` (cleared first).
fn string(block: &mut &[u8], out: &mut Vec<u8>) -> Result<(), HpackError> {
    let huffman = block.first().is_some_and(|b| b & 0x80 != 0);
    let len = integer(block, 7)?;
    if block.len() < len {
        return Err(HpackError::Truncated);
    }
    let (bytes, rest) = block.split_at(len);
    *block = rest;
    out.clear();
    if huffman {
        httlib_huffman::decode(bytes, out, httlib_huffman::DecoderSpeed::FiveBits)
            .map_err(|_| HpackError::Huffman)?;
        padding_is_eos(bytes, out)?;
    } else {
        out.extend_from_slice(bytes);
    }
    Ok(())
}

/// §5.2's padding rule, which httlib-huffman checks only in part (it takes
/// zero bits as padding): the codes of what was decoded must leave at most
/// 7 bits of the last byte, and those must be ones (EOS's first bits).
fn padding_is_eos(bytes: &[u8], decoded: &[u8]) -> Result<(), HpackError> {
    let table = &httlib_huffman::encoder::table::ENCODE_TABLE;
    let bits: usize = decoded
        .iter()
        .map(|&b| usize::from(table[usize::from(b)].0))
        .sum();
    let pad = (bytes.len() * 8)
        .checked_sub(bits)
        .ok_or(HpackError::Huffman)?;
    if pad > 7 {
        return Err(HpackError::Huffman);
    }
    let ones = (1u8 << pad) - 1;
    match bytes.last() {
        Some(&last) if last & ones != ones => Err(HpackError::Huffman),
        _ => Ok(()),
    }
}

/// RFC 7541 Appendix A: the static table, index 1 first.
pub(crate) const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// A block's fields as owned bytes, for comparing decoders.
#[doc(hidden)]
pub type Fields = Vec<(Vec<u8>, Vec<u8>)>;

/// Decodes `blocks` in turn with one decoder of each kind, this one and
/// loona-hpack's, so the fuzz target can compare them: each block's result
/// and whether the two agree, up to the first block either refuses (their
/// tables mean nothing after). Two differences are allowed, both rules
/// where RFC 7541 leaves room and the decoders chose apart: a size update
/// after a field (§4.2 says it comes first: refused here, taken there) and
/// a block that ends in a size update (taken here, refused there).
#[doc(hidden)]
pub fn fuzz_both(blocks: &[&[u8]]) -> Vec<(Result<Fields, HpackError>, bool)> {
    use loona_hpack::decoder::DecoderError;
    let mut ours = Decoder::new();
    let mut theirs = loona_hpack::Decoder::new();
    theirs.set_max_allowed_table_size(TABLE_LIMIT);
    let mut results = Vec::new();
    for block in blocks {
        let mut fields = Vec::new();
        let got = ours
            .decode(block, |n, v| fields.push((n.to_vec(), v.to_vec())))
            .map(|()| fields);
        let mut other = Vec::new();
        let their = theirs.decode_with_cb(block, |n, v| other.push((n.to_vec(), v.to_vec())));
        let agreed = match (&got, &their) {
            (Ok(fields), Ok(())) => *fields == other,
            (Err(_), Err(_))
            | (Err(HpackError::LateSizeUpdate), Ok(()))
            | (Ok(_), Err(DecoderError::SizeUpdateAtEnd)) => true,
            _ => false,
        };
        let stop = got.is_err() || their.is_err();
        results.push((got, agreed));
        if stop {
            break;
        }
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(d: &mut Decoder, block: &[u8]) -> Result<Vec<(String, String)>, HpackError> {
        let mut out = Vec::new();
        d.decode(block, |n, v| {
            out.push((
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ))
        })?;
        Ok(out)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn integers_follow_rfc_7541_c_1() {
        // C.1.1: 10 in a 5-bit prefix; C.1.2: 1337; C.1.3: 42 in 8 bits.
        let mut b: &[u8] = &[0b0000_1010];
        assert_eq!(integer(&mut b, 5), Ok(10));
        let mut b: &[u8] = &[0b0001_1111, 0b1001_1010, 0b0000_1010];
        assert_eq!(integer(&mut b, 5), Ok(1337));
        assert!(b.is_empty());
        let mut b: &[u8] = &[0b0010_1010];
        assert_eq!(integer(&mut b, 8), Ok(42));
        let mut b: &[u8] = &[0x1f, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert_eq!(integer(&mut b, 5), Err(HpackError::IntegerOverflow));
        let mut b: &[u8] = &[0x1f, 0x9a];
        assert_eq!(integer(&mut b, 5), Err(HpackError::Truncated));
    }

    #[test]
    fn every_static_entry_matches_loona_hpack() {
        let mut ours = Decoder::new();
        let mut theirs = loona_hpack::Decoder::new();
        for i in 1..=61u8 {
            let block = [0x80 | i];
            let mut want = Vec::new();
            theirs
                .decode_with_cb(&block, |n, v| want.push((n.to_vec(), v.to_vec())))
                .unwrap();
            let mut got = Vec::new();
            ours.decode(&block, |n, v| got.push((n.to_vec(), v.to_vec())))
                .unwrap();
            assert_eq!(got, want, "static index {i}");
        }
        assert_eq!(decode_all(&mut ours, &[0x80]), Err(HpackError::BadIndex));
        assert_eq!(
            decode_all(&mut ours, &[0x80 | 62]),
            Err(HpackError::BadIndex)
        );
    }

    #[test]
    fn literals_index_evict_and_reference_the_dynamic_table() {
        // RFC 7541 C.2.1's literal with indexing, then the entry referenced
        // as index 62, then a literal whose name is that entry.
        let mut d = Decoder::new();
        let mut block = vec![0x40, 10];
        block.extend_from_slice(b"custom-key");
        block.push(13);
        block.extend_from_slice(b"custom-header");
        assert_eq!(
            decode_all(&mut d, &block).unwrap(),
            pairs(&[("custom-key", "custom-header")])
        );
        assert_eq!(d.size, 55);
        // 0x0f 0x2f = index 15 + 47 = 62 without indexing, value "x".
        let got = decode_all(&mut d, &[0x80 | 62, 0x0f, 0x2f, 1, b'x']).unwrap();
        assert_eq!(
            got,
            pairs(&[("custom-key", "custom-header"), ("custom-key", "x")])
        );
        // A size update to 0 empties the table; then 62 is gone.
        assert_eq!(decode_all(&mut d, &[0x20]).unwrap(), vec![]);
        assert_eq!(decode_all(&mut d, &[0x80 | 62]), Err(HpackError::BadIndex));
        // Updates above the limit, or after a field, are refused.
        assert_eq!(
            decode_all(&mut d, &[0x3f, 0xe2, 0x1f]),
            Err(HpackError::SizeUpdate)
        );
        assert_eq!(
            decode_all(&mut d, &[0x88, 0x20]),
            Err(HpackError::LateSizeUpdate)
        );
    }

    #[test]
    fn an_insertion_may_evict_the_entry_its_name_came_from() {
        let mut d = Decoder::new();
        // Table of 60 octets: one entry "ab: c" (35) fits, two do not.
        decode_all(&mut d, &[0x3f, 0x1d]).unwrap(); // size update to 60
        decode_all(&mut d, &[0x40, 2, b'a', b'b', 1, b'c']).unwrap();
        // With indexing, name index 62 ("ab"), value "d": evicts "ab: c".
        let got = decode_all(&mut d, &[0x7e, 1, b'd', 0x80 | 62]).unwrap();
        assert_eq!(got, pairs(&[("ab", "d"), ("ab", "d")]));
        assert_eq!(d.table.len(), 1);
        // An entry larger than the table empties it.
        let mut big = vec![0x40, 40];
        big.extend_from_slice(&[b'n'; 40]);
        big.push(0);
        decode_all(&mut d, &big).unwrap();
        assert!(d.table.is_empty());
        assert_eq!(d.size, 0);
    }

    #[test]
    fn huffman_strings_decode_and_bad_padding_is_refused() {
        // RFC 7541 C.4.1's Huffman "www.example.com" under :authority.
        let block = [
            0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
        ];
        let mut d = Decoder::new();
        assert_eq!(
            decode_all(&mut d, &block).unwrap(),
            pairs(&[(":authority", "www.example.com")])
        );
        // Padding that ends in a zero bit (not EOS's ones) is refused.
        let mut bad = block;
        bad[13] = 0xfe;
        assert_eq!(
            decode_all(&mut Decoder::new(), &bad),
            Err(HpackError::Huffman)
        );
        // Eight bits of padding (a whole byte of ones) is refused too.
        let long_pad = [0x41, 0x81, 0xff];
        assert_eq!(
            decode_all(&mut Decoder::new(), &long_pad),
            Err(HpackError::Huffman)
        );
        assert_eq!(
            decode_all(&mut Decoder::new(), &block[..8]),
            Err(HpackError::Truncated)
        );
    }

    #[test]
    fn agrees_with_loona_hpack_on_what_its_encoder_writes() {
        let lists: [&[(&[u8], &[u8])]; 3] = [
            &[
                (b":status", b"200"),
                (b"content-type", b"application/json"),
                (b"content-length", b"75"),
            ],
            &[
                (b":status", b"200"),
                (b"content-type", b"application/json"),
                (b"x-long", &[b'v'; 300]),
            ],
            &[(b"grpc-status", b"0"), (b"grpc-message", b"")],
        ];
        let mut enc = loona_hpack::Encoder::new();
        let blocks: Vec<Vec<u8>> = lists
            .iter()
            .map(|l| enc.encode(l.iter().copied()))
            .collect();
        let refs: Vec<&[u8]> = blocks.iter().map(|b| &b[..]).collect();
        for (i, (got, agreed)) in fuzz_both(&refs).into_iter().enumerate() {
            assert!(agreed, "block {i}");
            let got = got.unwrap();
            let want: Vec<(Vec<u8>, Vec<u8>)> = lists[i]
                .iter()
                .map(|(n, v)| (n.to_vec(), v.to_vec()))
                .collect();
            assert_eq!(got, want);
        }
    }
}
