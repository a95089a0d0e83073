//! The io_uring backend's provided buffers: the ring the kernel picks a
//! receive's buffer from, incremental where the kernel has it (Linux 6.12),
//! and the bookkeeping that hands a buffer back once the kernel and every
//! reader are done with it; and the kernel release check.

use std::io;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::types::BufRingEntry;

/// Provided buffers the kernel fills incrementally (IOU_PBUF_RING_INC, Linux
/// 6.12): each receive takes what the socket holds, up to the rest of the
/// buffer at the ring's head, so a 64 KB answer is one or two completions
/// (with 1 KiB buffers it was 64, which cost twice wrk's CPU per request),
/// and small answers from many connections pack one buffer.
pub(crate) const INC_BUF_SIZE: usize = 64 * 1024;
/// At most 16 MiB of buffers per ring, reserved as address space and
/// resident only as far as the kernel has written into them.
pub(crate) const INC_MAX_BUFS: u16 = 256;
/// Buffer bytes a ring starts with per connection (as many as the 1 KiB
/// buffers gave), from 128 KiB to 4 MiB; a turn whose receives found none
/// left doubles them, up to [`INC_MAX_BUFS`], since everything that arrives
/// during a turn is received before the loop reads it.
pub(crate) const INC_BYTES_PER_SLOT: usize = 2 * 1024;
pub(crate) const INC_MIN_BYTES: usize = 128 * 1024;
pub(crate) const INC_START_MAX_BYTES: usize = 4 * 1024 * 1024;
/// Kernels without incremental buffers: each receive takes a whole buffer,
/// so they stay small. With DEFER_TASKRUN every receive of a turn takes one
/// before the loop hands them back, so up to one per connection (two are
/// given, as an answer may come in pieces: with one, 1,000 connections
/// measured 5% more CPU per request); past this many a turn's receives may
/// find none, end with ENOBUFS and are armed again (one more entry), which
/// costs less than 1 KiB per connection.
pub(crate) const SMALL_BUF_SIZE: usize = 1024;
pub(crate) const SMALL_MAX_BUFS: usize = 4096;
/// `IOU_PBUF_RING_INC`, which the io-uring crate does not export.
pub(crate) const IOU_PBUF_RING_INC: u16 = 2;
pub(crate) const BUF_GROUP: u16 = 0;

/// The kernel release as (major, minor), from uname.
pub(crate) fn kernel_release() -> Option<(u32, u32)> {
    // SAFETY: an all-zero utsname is valid for uname to fill.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    let release: String = u
        .release
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8 as char)
        .collect();
    parse_release(&release)
}

/// `6.18.44-fc-v669` as (6, 18).
pub(crate) fn parse_release(release: &str) -> Option<(u32, u32)> {
    let mut it = release.split(['.', '-']).map(|p| p.parse::<u32>().ok());
    Some((it.next()??, it.next()??))
}

/// The provided buffers and the ring the kernel picks them from.
///
/// A buffer goes back to the kernel once the kernel has moved on from it and
/// the worker has read every piece of it: with incremental buffers one
/// buffer holds the answers of several connections in turn.
pub(crate) struct BufRing {
    pub(crate) ring: *mut BufRingEntry,
    pub(crate) ring_layout: std::alloc::Layout,
    /// `entries` buffers of `size` bytes, mapped lazily (MAP_NORESERVE): a
    /// page is resident once the kernel has written to it.
    pub(crate) data: *mut u8,
    pub(crate) size: usize,
    pub(crate) entries: u16,
    /// Buffers 0..active are in use; the rest are reserve for [`Self::grow`].
    pub(crate) active: u16,
    pub(crate) incremental: bool,
    pub(crate) tail: u16,
    /// Per buffer: bytes the kernel has written into it since it was given.
    pub(crate) filled: Vec<u32>,
    /// Per buffer: pieces received and not yet read out.
    pub(crate) unread: Vec<u32>,
    /// Per buffer: the kernel will write no more into it.
    pub(crate) spent: Vec<bool>,
}

impl BufRing {
    /// A ring of `entries` buffers (a power of two) of `size` bytes, of
    /// which the first `active` are handed to the kernel.
    pub(crate) fn new(
        entries: u16,
        active: u16,
        size: usize,
        incremental: bool,
    ) -> io::Result<Self> {
        let ring_layout = std::alloc::Layout::from_size_align(
            entries as usize * std::mem::size_of::<BufRingEntry>(),
            4096,
        )
        .map_err(io::Error::other)?;
        // SAFETY: a non-zero size with a valid alignment.
        let ring = unsafe { std::alloc::alloc_zeroed(ring_layout) }.cast::<BufRingEntry>();
        if ring.is_null() {
            return Err(io::Error::from(io::ErrorKind::OutOfMemory));
        }
        let len = entries as usize * size;
        // SAFETY: an anonymous private mapping; the result is checked.
        let data = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if data == libc::MAP_FAILED {
            let e = io::Error::last_os_error();
            // SAFETY: allocated above with this layout.
            unsafe { std::alloc::dealloc(ring.cast(), ring_layout) };
            return Err(e);
        }
        let n = entries as usize;
        let mut b = BufRing {
            ring,
            ring_layout,
            data: data.cast(),
            size,
            entries,
            active: 0,
            incremental,
            tail: 0,
            filled: vec![0; n],
            unread: vec![0; n],
            spent: vec![false; n],
        };
        b.grow_to(active);
        Ok(b)
    }

    pub(crate) fn grow_to(&mut self, active: u16) {
        let active = active.min(self.entries);
        for bid in self.active..active {
            self.give_back(bid);
        }
        self.active = self.active.max(active);
    }

    /// Doubles the buffers the kernel may fill, up to the ring's size.
    pub(crate) fn grow(&mut self) {
        self.grow_to(self.active.saturating_mul(2));
    }

    /// Notes `len` bytes the kernel wrote into buffer `bid` (`more`: it
    /// keeps filling the buffer); returns where they start in it. A
    /// completion does not say where its bytes are: they follow the
    /// buffer's earlier ones, since receives fill a buffer one after the
    /// other and their completions are posted in that order (an overflowing
    /// completion queue keeps the order too).
    pub(crate) fn received(&mut self, bid: u16, len: u32, more: bool) -> u32 {
        let b = bid as usize;
        let start = self.filled[b];
        debug_assert!(
            start as usize + len as usize <= self.size,
            "past the buffer"
        );
        self.filled[b] = (start + len).min(self.size as u32);
        self.unread[b] += 1;
        if !(self.incremental && more) {
            self.spent[b] = true;
        }
        start
    }

    /// A piece of buffer `bid` was read out (or will never be).
    pub(crate) fn release(&mut self, bid: u16) {
        let b = bid as usize;
        self.unread[b] -= 1;
        if self.unread[b] == 0 && self.spent[b] {
            self.recycle(bid);
        }
    }

    /// A completion that carried buffer `bid` but no bytes.
    pub(crate) fn received_nothing(&mut self, bid: u16) {
        // A whole buffer is consumed by a receive whatever it got; an
        // incremental one only by the bytes written, so it stays with the
        // kernel.
        if !self.incremental && self.unread[bid as usize] == 0 {
            self.recycle(bid);
        }
    }

    pub(crate) fn recycle(&mut self, bid: u16) {
        let b = bid as usize;
        self.filled[b] = 0;
        self.spent[b] = false;
        self.give_back(bid);
    }

    pub(crate) fn bytes(&self, bid: u16, start: u32, len: u32) -> &[u8] {
        let from = bid as usize * self.size + start as usize;
        let len = (len as usize).min(self.size - (start as usize).min(self.size));
        // SAFETY: inside buffer `bid` of the mapping, which lives as long
        // as `self`; the kernel writes only to buffers it holds, and a
        // received piece is read before its buffer is given back.
        unsafe { std::slice::from_raw_parts(self.data.add(from), len) }
    }

    /// Hands buffer `bid` back to the kernel.
    pub(crate) fn give_back(&mut self, bid: u16) {
        let mask = self.entries - 1;
        // SAFETY: the index is masked into the ring, which holds `entries`
        // entries; the address is inside the mapping, which lives as long as
        // the ring registration (the IoUring is dropped first).
        unsafe {
            let e = &mut *self.ring.add((self.tail & mask) as usize);
            e.set_addr(self.data.add(bid as usize * self.size) as u64);
            e.set_len(self.size as u32);
            e.set_bid(bid);
        }
        self.tail = self.tail.wrapping_add(1);
        // SAFETY: the tail field of a ring of at least one initialised entry;
        // the kernel reads it, so it is published with release ordering.
        unsafe {
            let tail = BufRingEntry::tail(self.ring).cast_mut();
            (*tail.cast::<AtomicU16>()).store(self.tail, Ordering::Release);
        }
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: allocated and mapped in `new` with these sizes.
        unsafe {
            std::alloc::dealloc(self.ring.cast(), self.ring_layout);
            libc::munmap(self.data.cast(), self.entries as usize * self.size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_releases_read_as_major_minor() {
        assert_eq!(parse_release("6.18.44-fc-v669"), Some((6, 18)));
        assert_eq!(parse_release("5.15.0-91-generic"), Some((5, 15)));
        assert_eq!(parse_release("6.1"), Some((6, 1)));
        assert_eq!(parse_release("weird"), None);
        assert!(
            parse_release("5.19.2").unwrap() < (6, 0),
            "too old for multishot receive"
        );
    }
}
