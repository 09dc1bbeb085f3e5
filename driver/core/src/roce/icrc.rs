//! The Invariant CRC of a RoCEv2 packet (shared/spec/ndkpi.md §7.6), and the CRC-32 it is made of.
//!
//! The ICRC is the Ethernet CRC-32 (IEEE 802.3: polynomial 0x04C11DB7, reflected, register
//! preset to all-ones, result inverted) over:
//!
//! 1. 8 bytes of 0xFF, standing for the InfiniBand LRH that RoCEv2 has no room for (Linux rxe
//!    starts its CRC from the register this leaves, [`AFTER_LRH`] = 0xDEBB20E3);
//! 2. the IP header, UDP header and BTH with the fields a router may change set to all-ones
//!    ([`mask_headers`]): IPv4 TOS, TTL and header checksum; IPv6 traffic class, flow label and
//!    hop limit; the UDP checksum; the BTH's reserved byte 4;
//! 3. the extension headers, payload and pad as they are.
//!
//! On the wire the CRC-32's result (already inverted, as for an Ethernet FCS) is sent least
//! significant byte first ([`compute`] returns the number; the frame writes `to_le_bytes`).
//! rxe stores `~crc` of its raw, non-inverting `crc32_le` into the packet as a native (x86:
//! little-endian) `u32`, which is the same bytes.
//!
//! # Speed
//!
//! The CRC runs over every payload byte sent and received, so it is table-driven with
//! *slicing-by-16* (Kounavis and Berry, "A Systematic Approach to Building High Performance
//! Software-based CRC Generators", 2005; the by-16 form is the one zlib-ng and crc32fast use
//! without CRC instructions): sixteen 256-entry tables ([`TABLES`], 16 KiB, built at compile
//! time into a `static`, never on the stack) let one step fold 16 input bytes into the register
//! with 16 independent lookups instead of 16 dependent byte-at-a-time steps; an 8-byte step and
//! single bytes finish the tail. Slicing-by-8 measured about half the speed (`bench/benches/roce.rs`,
//! which sets it beside `memcpy`; the figures are in bench/README.md). From 256
//! bytes on, a braided loop (zlib's: five independent CRCs over interleaved 8-byte words) keeps
//! more lookups in flight. No `unsafe` and no CPU-specific instructions here: the core forbids
//! both. A caller that has CRC instructions (the shell: carry-less multiply on x64, the ARMv8
//! CRC32 instructions on ARM64, `dcbndk`'s `resources::crc`) hands them in as an [`Update`]
//! to [`compute_with`], [`verify_with`] and `roce::frame::{build_with, parse_with}`; every other
//! caller (the fuzz targets, the core's tests) gets [`Software`], this module's loops.

use crate::wire::bytes::array_at;

/// The reflected CRC-32 polynomial (IEEE 802.3's 0x04C11DB7, bits reversed).
pub const POLY: u32 = 0xEDB8_8320;

/// The CRC register after the 8 bytes of 0xFF that stand for the LRH (rxe's seed).
pub const AFTER_LRH: u32 = 0xDEBB_20E3;

/// The length of the ICRC trailer.
pub const ICRC_LEN: usize = 4;

/// The fixed IPv4 header the ICRC covers (RoCEv2 packets carry no IPv4 options).
pub const IPV4_HEADER_LEN: usize = 20;
/// The IPv6 header.
pub const IPV6_HEADER_LEN: usize = 40;
/// The UDP header.
pub const UDP_HEADER_LEN: usize = 8;

/// The slicing-by-16 tables: `TABLES[0]` is the classic byte table; `TABLES[k][n]` is the
/// register contribution of byte `n` followed by `k` zero bytes.
pub static TABLES: [[u32; 256]; 16] = tables();

/// Builds [`TABLES`] at compile time (indexing here is checked by the compiler's const
/// evaluation: an out-of-bounds index fails the build, it cannot panic at run time).
#[allow(
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    reason = "run only by const evaluation, to build a static table: an out-of-bounds index or an overflow fails the build"
)]
const fn tables() -> [[u32; 256]; 16] {
    let mut t = [[0u32; 256]; 16];
    let mut n: u32 = 0;
    while n < 256 {
        let mut c = n;
        let mut bit = 0;
        while bit < 8 {
            c = if c & 1 != 0 { POLY ^ (c >> 1) } else { c >> 1 };
            bit += 1;
        }
        t[0][n as usize] = c;
        n += 1;
    }
    let mut k = 1;
    while k < 16 {
        let mut n = 0;
        while n < 256 {
            let prev = t[k - 1][n];
            t[k][n] = (prev >> 8) ^ t[0][(prev & 0xFF) as usize];
            n += 1;
        }
        k += 1;
    }
    t
}

/// Braids of the long-data loop ([`Crc32::update`]): that many independent CRCs, each over
/// every `BRAIDS`-th 8-byte word, so that their table lookups do not wait on each other (the
/// slicing-by-16 loop's lookups all wait on the one register). zlib's braided CRC, its N = 5,
/// W = 8 (crc32.c, "braided" loop).
const BRAIDS: usize = 5;
/// The bytes of one block: a word of each braid.
const BLOCK: usize = BRAIDS * 8;
/// From this many bytes the braided loop is used (its end, which combines the braids with a
/// byte at a time over a block, costs more than it saves on shorter data: a 64-byte message's
/// packet stays on slicing-by-16).
const BRAID_FROM: usize = 256;

/// The braid tables: `BRAID_TABLES[k][n]` is the register (from 0) after byte `n` at place
/// `k` of an 8-byte word followed by the rest of its block and then another block's worth
/// of zeros but a word (`BLOCK - 1 - k` zero bytes): where a braid's CRC stands when its next
/// word comes.
static BRAID_TABLES: [[u32; 256]; 8] = braid_tables();

/// Builds [`BRAID_TABLES`] from the byte table, at compile time (as [`tables`]).
#[allow(
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    reason = "run only by const evaluation, to build a static table: an out-of-bounds index or an overflow fails the build"
)]
const fn braid_tables() -> [[u32; 256]; 8] {
    let t0 = tables()[0];
    let mut t = [[0u32; 256]; 8];
    let mut k = 0;
    while k < 8 {
        let mut n = 0;
        while n < 256 {
            let mut c = t0[n];
            let mut zeros = BLOCK - 1 - k;
            while zeros > 0 {
                c = (c >> 8) ^ t0[(c & 0xFF) as usize];
                zeros -= 1;
            }
            t[k][n] = c;
            n += 1;
        }
        k += 1;
    }
    t
}

/// The register after the 8 bytes of `word` (little-endian) from a register of 0: a byte at a
/// time, for the braids' last block. Inlined always in an optimized build only: a debug build
/// keeps it a frame of its own, so that the braided loop's frame stays small on the deep paths
/// `cargo xtask pe` measures (2 KiB more in the dev image otherwise, over its budget).
#[cfg_attr(debug_assertions, inline)]
#[cfg_attr(not(debug_assertions), inline(always))]
fn crc_word(word: u64, t0: &[u32; 256]) -> u32 {
    let mut c = word;
    for _ in 0..8 {
        let [low, ..] = c.to_le_bytes();
        c = (c >> 8) ^ u64::from(look(t0, low));
    }
    // The upper half is zero after 8 steps (each shifts in 8 zero bits).
    u32::try_from(c & 0xFFFF_FFFF).unwrap_or(0)
}

/// One braid's step: the 8 lookups of `word` (the braid's CRC folded into its first 4 bytes).
/// Inlined as [`crc_word`] is.
#[cfg_attr(debug_assertions, inline)]
#[cfg_attr(not(debug_assertions), inline(always))]
fn braid_step(word: u64, t: &[[u32; 256]; 8]) -> u32 {
    let [b0, b1, b2, b3, b4, b5, b6, b7] = word.to_le_bytes();
    let [t0, t1, t2, t3, t4, t5, t6, t7] = t;
    look(t0, b0)
        ^ look(t1, b1)
        ^ look(t2, b2)
        ^ look(t3, b3)
        ^ look(t4, b4)
        ^ look(t5, b5)
        ^ look(t6, b6)
        ^ look(t7, b7)
}

/// Folds the whole blocks of `data` into `crc` by braids; returns the register and the bytes
/// after the last whole block. The last block combines the braids: word by word, each word
/// with its braid's CRC and the register so far, a byte at a time.
fn braided(crc: u32, data: &[u8]) -> (u32, &[u8]) {
    let (blocks, rest) = data.as_chunks::<BLOCK>();
    let Some((last, blocks)) = blocks.split_last() else {
        return (crc, data);
    };
    let t = &BRAID_TABLES;
    let mut c = [crc, 0, 0, 0, 0];
    for block in blocks {
        let [w0, w1, w2, w3, w4] = words(block);
        let [c0, c1, c2, c3, c4] = c;
        c = [
            braid_step(w0 ^ u64::from(c0), t),
            braid_step(w1 ^ u64::from(c1), t),
            braid_step(w2 ^ u64::from(c2), t),
            braid_step(w3 ^ u64::from(c3), t),
            braid_step(w4 ^ u64::from(c4), t),
        ];
    }
    let t0 = &TABLES[0];
    let mut comb = 0u32;
    for (word, braid) in words(last).into_iter().zip(c) {
        comb = crc_word(word ^ u64::from(braid ^ comb), t0);
    }
    (comb, rest)
}

/// A block's five 8-byte words, little-endian. Inlined as [`crc_word`] is.
#[cfg_attr(debug_assertions, inline)]
#[cfg_attr(not(debug_assertions), inline(always))]
fn words(block: &[u8; BLOCK]) -> [u64; BRAIDS] {
    match block.as_chunks::<8>() {
        ([a, b, c, d, e], _) => [
            u64::from_le_bytes(*a),
            u64::from_le_bytes(*b),
            u64::from_le_bytes(*c),
            u64::from_le_bytes(*d),
            u64::from_le_bytes(*e),
        ],
        // A block is five words: no other shape exists.
        _ => [0; BRAIDS],
    }
}

/// One table lookup. The index is a byte, so the `get` never fails and the compiler drops
/// the check.
#[inline(always)]
fn look(table: &[u32; 256], byte: u8) -> u32 {
    table.get(usize::from(byte)).copied().unwrap_or(0)
}

/// A CRC-32 (IEEE 802.3) in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crc32 {
    /// The register (not inverted).
    state: u32,
}

impl Default for Crc32 {
    fn default() -> Self {
        Self::new()
    }
}

impl Crc32 {
    /// A CRC with the register preset to all-ones.
    #[must_use]
    pub const fn new() -> Self {
        Self { state: u32::MAX }
    }

    /// A CRC resumed from a register value (e.g. [`AFTER_LRH`]).
    #[must_use]
    pub const fn from_register(state: u32) -> Self {
        Self { state }
    }

    /// The register (not inverted).
    #[must_use]
    pub const fn register(&self) -> u32 {
        self.state
    }

    /// Folds `data` into the register: from `BRAID_FROM` bytes on, whole 40-byte blocks by
    /// five braids; then 16 bytes per step, then 8, then the tail byte by byte.
    #[inline]
    pub fn update(&mut self, data: &[u8]) {
        let data = if data.len() >= BRAID_FROM {
            let (crc, rest) = braided(self.state, data);
            self.state = crc;
            rest
        } else {
            data
        };
        let [
            t0,
            t1,
            t2,
            t3,
            t4,
            t5,
            t6,
            t7,
            t8,
            t9,
            t10,
            t11,
            t12,
            t13,
            t14,
            t15,
        ] = &TABLES;
        let (blocks, tail) = data.as_chunks::<16>();
        let mut crc = self.state;
        for &[
            b0,
            b1,
            b2,
            b3,
            b4,
            b5,
            b6,
            b7,
            b8,
            b9,
            b10,
            b11,
            b12,
            b13,
            b14,
            b15,
        ] in blocks
        {
            let [c0, c1, c2, c3] = crc.to_le_bytes();
            crc = look(t15, b0 ^ c0)
                ^ look(t14, b1 ^ c1)
                ^ look(t13, b2 ^ c2)
                ^ look(t12, b3 ^ c3)
                ^ look(t11, b4)
                ^ look(t10, b5)
                ^ look(t9, b6)
                ^ look(t8, b7)
                ^ look(t7, b8)
                ^ look(t6, b9)
                ^ look(t5, b10)
                ^ look(t4, b11)
                ^ look(t3, b12)
                ^ look(t2, b13)
                ^ look(t1, b14)
                ^ look(t0, b15);
        }
        let (blocks, tail) = tail.as_chunks::<8>();
        for &[b0, b1, b2, b3, b4, b5, b6, b7] in blocks {
            let [c0, c1, c2, c3] = crc.to_le_bytes();
            crc = look(t7, b0 ^ c0)
                ^ look(t6, b1 ^ c1)
                ^ look(t5, b2 ^ c2)
                ^ look(t4, b3 ^ c3)
                ^ look(t3, b4)
                ^ look(t2, b5)
                ^ look(t1, b6)
                ^ look(t0, b7);
        }
        for &b in tail {
            let [c0, ..] = crc.to_le_bytes();
            crc = (crc >> 8) ^ look(t0, b ^ c0);
        }
        self.state = crc;
    }

    /// The CRC value: the register inverted.
    #[must_use]
    pub const fn finish(&self) -> u32 {
        !self.state
    }
}

/// A way to fold bytes into a CRC-32 register: [`Software`] (this module's tables), or a
/// faster one a caller with CRC instructions hands in (the core cannot use them: it forbids
/// `unsafe`). Static dispatch: the frame code is generic over it, so a caller pays for no
/// pointer and the Windows image's call graph sees every call (`cargo xtask pe`).
pub trait Update {
    /// `register` (not inverted) after the bytes of `data`: exactly what
    /// [`Crc32::update`] leaves, for every register and every `data`.
    fn update(&self, register: u32, data: &[u8]) -> u32;

    /// `register` after the bytes of `first` and then those of `second`, as two
    /// [`Update::update`]s leave it. A folding CRC overrides it to carry its lanes from one to
    /// the other where `first` is whole 16-byte blocks, reducing once rather than twice
    /// ([`compute_with`]: the masked headers and the rest of a packet).
    #[inline]
    fn update_both(&self, register: u32, first: &[u8], second: &[u8]) -> u32 {
        self.update(self.update(register, first), second)
    }

    /// Copies `src` to the start of `dst` and returns `register` after the bytes copied: one
    /// pass over the payload where the receiver places it and checks its ICRC. A `dst` shorter
    /// than `src` takes what fits, and only that is folded. The default copies, then folds the
    /// copy; a folding CRC overrides it to fold each block as it moves it.
    #[inline]
    fn copy_update(&self, register: u32, src: &[u8], dst: &mut [u8]) -> u32 {
        let len = src.len().min(dst.len());
        match (src.get(..len), dst.get_mut(..len)) {
            (Some(from), Some(to)) => {
                to.copy_from_slice(from);
                self.update(register, to)
            }
            _ => register,
        }
    }
}

/// The core's own CRC-32: [`Crc32::update`] (slicing-by-16 and braids, no CPU instructions).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Software;

impl Update for Software {
    #[inline]
    fn update(&self, register: u32, data: &[u8]) -> u32 {
        let mut crc = Crc32::from_register(register);
        crc.update(data);
        crc.register()
    }
}

/// The CRC-32 of `data` (IEEE 802.3, as an Ethernet FCS or zlib's `crc32`).
#[must_use]
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = Crc32::new();
    crc.update(data);
    crc.finish()
}

/// The most header bytes [`mask_headers`] copies: IPv6 + UDP + BTH.
pub const MAX_MASKED_LEN: usize = IPV6_HEADER_LEN + UDP_HEADER_LEN + super::headers::BTH_LEN;

/// Copies the IP, UDP and BTH headers at the start of `packet` (which begins at the IP header)
/// into `out` with the variant fields set to all-ones (spec §7.6's table); returns how many bytes
/// that is (40 for IPv4, 60 for IPv6), or `None` if the IP version nibble is neither 4 nor 6, an
/// IPv4 header has options (IHL != 5), or `packet` is shorter than the headers.
#[must_use]
pub fn mask_headers(packet: &[u8], out: &mut [u8; MAX_MASKED_LEN]) -> Option<usize> {
    let version = packet.first()? >> 4;
    let ip_len = match version {
        4 if packet.first()? & 0x0F == 5 => IPV4_HEADER_LEN,
        6 => IPV6_HEADER_LEN,
        _ => return None,
    };
    let len = ip_len
        .checked_add(UDP_HEADER_LEN)?
        .checked_add(super::headers::BTH_LEN)?;
    let dst = out.get_mut(..len)?;
    dst.copy_from_slice(packet.get(..len)?);
    let ones = |dst: &mut [u8], from: usize, to: usize| {
        if let Some(f) = dst.get_mut(from..to) {
            f.fill(0xFF);
        }
    };
    if version == 4 {
        ones(dst, 1, 2); // TOS (DSCP + ECN)
        ones(dst, 8, 9); // TTL
        ones(dst, 10, 12); // header checksum
    } else {
        // Traffic class (low nibble of byte 0, high nibble of byte 1) and flow label (the rest
        // of bytes 1..4): rxe sets the priority nibble to 0xF and the 3 flow bytes to 0xFF.
        if let Some(b) = dst.get_mut(0) {
            *b |= 0x0F;
        }
        ones(dst, 1, 4);
        ones(dst, 7, 8); // hop limit
    }
    let udp = ip_len;
    ones(dst, udp.saturating_add(6), udp.saturating_add(8)); // UDP checksum
    let bth = udp.saturating_add(UDP_HEADER_LEN);
    ones(dst, bth.saturating_add(4), bth.saturating_add(5)); // BTH reserved byte
    Some(len)
}

/// The ICRC of a RoCEv2 packet: `packet` runs from the first byte of the IP header to the last
/// byte of the pad (the ICRC itself excluded). `None` when its headers cannot be masked (see
/// [`mask_headers`]). The wire carries `compute(..).to_le_bytes()`.
#[must_use]
pub fn compute(packet: &[u8]) -> Option<u32> {
    compute_with(packet, &Software)
}

/// The bytes of 0xFF that stand for the LRH.
const LRH_LEN: usize = 8;

/// [`compute`] with the CRC-32 of `crc`: the LRH's 8 bytes of 0xFF and the masked headers (48
/// or 68 bytes), then the rest of the packet, in one [`Update::update_both`]. The 0xFF bytes go
/// with the headers rather than as [`AFTER_LRH`]: over IPv4 that makes three whole 16-byte
/// blocks, from which a folding CRC goes on into the rest with no byte left between (the
/// shell's: `resources::crc`).
#[must_use]
pub fn compute_with<C: Update + ?Sized>(packet: &[u8], crc: &C) -> Option<u32> {
    register_through(packet, packet.len(), crc).map(|register| !register)
}

/// The CRC register of [`compute_with`] after the first `end` bytes of `packet` (the masked
/// headers and what follows them up to `end`, which is at least the headers' end): a receiver
/// that folds the rest as it copies it goes on from here with [`Update::update`], and the ICRC
/// is the complement of the register after the last byte of the pad.
#[inline(always)]
#[must_use]
pub fn register_through<C: Update + ?Sized>(packet: &[u8], end: usize, crc: &C) -> Option<u32> {
    let mut lrh_and_headers = [0xFFu8; LRH_LEN + MAX_MASKED_LEN];
    let (_, headers) = lrh_and_headers.split_last_chunk_mut::<MAX_MASKED_LEN>()?;
    let len = mask_headers(packet, headers)?;
    Some(crc.update_both(
        u32::MAX,
        lrh_and_headers.get(..LRH_LEN.checked_add(len)?)?,
        packet.get(len..end)?,
    ))
}

/// Whether `packet` (from the IP header through the ICRC) ends with the ICRC of what precedes
/// it.
#[must_use]
pub fn verify(packet: &[u8]) -> bool {
    verify_with(packet, &Software)
}

/// [`verify`] with the CRC-32 of `crc`.
#[must_use]
pub fn verify_with<C: Update + ?Sized>(packet: &[u8], crc: &C) -> bool {
    let Some(body_len) = packet.len().checked_sub(ICRC_LEN) else {
        return false;
    };
    let (Some(body), Some(trailer)) = (packet.get(..body_len), array_at::<4>(packet, body_len))
    else {
        return false;
    };
    compute_with(body, crc) == Some(u32::from_le_bytes(trailer))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook one-bit-at-a-time CRC-32, the reference the tables must agree with.
    fn bitwise(seed: u32, data: &[u8]) -> u32 {
        let mut c = seed;
        for &b in data {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 != 0 { POLY ^ (c >> 1) } else { c >> 1 };
            }
        }
        c
    }

    /// Deterministic bytes for the tests (xorshift).
    fn noise(len: usize, seed: u64) -> std::vec::Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x.to_le_bytes()[3]
            })
            .collect()
    }

    #[test]
    fn the_check_value_of_the_crc_catalogue() {
        // CRC-32/ISO-HDLC's "check" (the CRC of the ASCII digits 1..9), from the catalogue of
        // parametrised CRC algorithms; zlib, Ethernet and PKZIP give the same.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn slicing_by_16_agrees_with_the_bitwise_crc_at_every_length_and_offset() {
        let data = noise(300, 7);
        for start in 0..17 {
            for end in start..data.len() {
                let part = &data[start..end];
                assert_eq!(
                    crc32(part),
                    !bitwise(u32::MAX, part),
                    "bytes {start}..{end}"
                );
            }
        }
    }

    #[test]
    fn the_braided_loop_agrees_with_the_bitwise_crc_around_its_threshold_and_blocks() {
        let data = noise(1300, 11);
        let lengths = (BRAID_FROM - 2..BRAID_FROM + 3 * BLOCK + 2).chain([1024, 1061, 1199]);
        for start in 0..9 {
            for len in lengths.clone() {
                let part = &data[start..start + len];
                assert_eq!(
                    crc32(part),
                    !bitwise(u32::MAX, part),
                    "{len} bytes at {start}"
                );
                // From any register, as the ICRC's update after the masked headers is.
                let mut c = Crc32::from_register(AFTER_LRH);
                c.update(part);
                assert_eq!(
                    c.register(),
                    bitwise(AFTER_LRH, part),
                    "{len} bytes at {start}"
                );
            }
        }
    }

    #[test]
    fn updates_in_pieces_equal_one_update() {
        let data = noise(1000, 3);
        for cut in [0, 1, 7, 8, 9, 500, 999, 1000] {
            let mut c = Crc32::new();
            c.update(&data[..cut]);
            c.update(&data[cut..]);
            assert_eq!(c.finish(), crc32(&data), "cut at {cut}");
        }
    }

    #[test]
    fn the_lrh_placeholder_leaves_rxes_seed() {
        let mut c = Crc32::new();
        c.update(&[0xFF; 8]);
        assert_eq!(c.register(), AFTER_LRH);
        assert_eq!(bitwise(u32::MAX, &[0xFF; 8]), AFTER_LRH);
    }

    /// An IPv4 RoCEv2 packet (IP header through pad) with every variant field set to
    /// `variant`.
    fn ipv4_packet(variant: u8) -> std::vec::Vec<u8> {
        let mut p = noise(20 + 8 + 12 + 16, 11);
        p[0] = 0x45;
        p[1] = variant;
        p[8] = variant;
        p[10] = variant;
        p[11] = variant.wrapping_add(3);
        p[20 + 6] = variant;
        p[20 + 7] = variant;
        p[20 + 8 + 4] = variant;
        p
    }

    #[test]
    fn variant_fields_do_not_change_the_icrc_and_invariant_ones_do() {
        let base = compute(&ipv4_packet(0)).unwrap();
        assert_eq!(compute(&ipv4_packet(0x5A)).unwrap(), base);
        for at in 0..ipv4_packet(0).len() {
            if [1, 8, 10, 11, 26, 27, 32].contains(&at) {
                continue;
            }
            let mut p = ipv4_packet(0);
            p[at] ^= 0x01;
            if at == 0 {
                // IHL 4: not a maskable header at all.
                assert_eq!(compute(&p), None);
            } else {
                assert_ne!(compute(&p).unwrap(), base, "byte {at}");
            }
        }
        let mut v6 = noise(40 + 8 + 12 + 4, 5);
        v6[0] = 0x60;
        let base6 = compute(&v6).unwrap();
        let mut varied = v6.clone();
        varied[0] = 0x6F;
        varied[1..4].copy_from_slice(&[0x12, 0x34, 0x56]);
        varied[7] = 1;
        varied[46] ^= 0xFF;
        varied[52] ^= 0xFF;
        assert_eq!(compute(&varied).unwrap(), base6);
        varied[4] ^= 1; // payload length
        assert_ne!(compute(&varied).unwrap(), base6);
    }

    #[test]
    fn the_icrc_is_the_crc_of_the_masked_pseudo_packet() {
        // Built the long way: 8 x 0xFF, the masked headers, the rest.
        let p = ipv4_packet(0x33);
        let mut pseudo = std::vec![0xFFu8; 8];
        pseudo.extend_from_slice(&p);
        for at in [1, 8, 10, 11, 26, 27, 32] {
            pseudo[8 + at] = 0xFF;
        }
        assert_eq!(compute(&p), Some(!bitwise(u32::MAX, &pseudo)));
        let mut sealed = p.clone();
        sealed.extend_from_slice(&compute(&p).unwrap().to_le_bytes());
        assert!(verify(&sealed));
        sealed[45] ^= 0x80;
        assert!(!verify(&sealed));
    }

    #[test]
    fn short_or_foreign_packets_have_no_icrc() {
        assert_eq!(compute(&[]), None);
        assert_eq!(compute(&[0x45; 39]), None, "one byte short of IPv4+UDP+BTH");
        assert!(compute(&[0x45; 40]).is_some());
        assert_eq!(compute(&[0x46; 80]), None, "IPv4 options");
        assert_eq!(compute(&[0x50; 80]), None, "version 5");
        assert_eq!(compute(&[0x60; 59]), None);
        assert!(compute(&[0x60; 60]).is_some());
        assert!(!verify(&[0x45; 3]));
        assert!(!verify(&[]));
    }
}
