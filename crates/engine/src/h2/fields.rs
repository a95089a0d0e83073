//! What the connection keeps of an answer's decoded header block: only the
//! fields its checks read, in buffers reused block after block, so decoding
//! stops allocating once a connection has seen its answers' shapes.

/// What a finished header block said that the checks read; one per
/// connection, cleared for each block, so its buffers stop allocating.
#[derive(Debug, Default)]
pub(super) struct HeadFields {
    pub status: Option<u16>,
    /// How many `:status` fields the block carried: a response has exactly
    /// one in its head and none in its trailers (RFC 9113 §8.3.2, §8.1);
    /// anything else makes the answer malformed (§8.1.1), not a status
    /// error.
    pub status_fields: u8,
    pub content_type: Option<Vec<u8>>,
    pub content_encoding: Option<Vec<u8>>,
    pub grpc_status: Option<u32>,
    /// Buffers kept while the fields above are `None`.
    spare: Vec<Vec<u8>>,
}

impl HeadFields {
    pub fn clear(&mut self) {
        self.status = None;
        self.status_fields = 0;
        self.grpc_status = None;
        self.spare.extend(self.content_type.take());
        self.spare.extend(self.content_encoding.take());
    }

    fn keep(spare: &mut Vec<Vec<u8>>, slot: &mut Option<Vec<u8>>, value: &[u8]) {
        let mut buf = slot.take().or_else(|| spare.pop()).unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(value);
        *slot = Some(buf);
    }

    /// Keeps what the checks read of one decoded field.
    pub fn read(&mut self, name: &[u8], value: &[u8]) {
        match name {
            b":status" => {
                self.status_fields = self.status_fields.saturating_add(1);
                self.status = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            b"content-type" => Self::keep(&mut self.spare, &mut self.content_type, value),
            b"content-encoding" => Self::keep(&mut self.spare, &mut self.content_encoding, value),
            b"grpc-status" => {
                self.grpc_status = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
    }
}
