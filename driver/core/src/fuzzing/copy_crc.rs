//! A CRC-32 strategy (`roce::icrc::Update`) over arbitrary bytes: the copy fused with its CRC
//! (`copy_update`, a receiver placing a payload and checking its ICRC in one pass) against a
//! plain copy and the core's software CRC, and `update` and `update_both` against the software
//! CRC. [`copy_crc`] checks the core's own strategy; the fuzz target also checks the shell's
//! (its XMM and YMM folds, `fuzz/fuzz_targets/copy_crc.rs`) with [`copy_crc_with`].

use std::vec;

use crate::roce::icrc::{Software, Update};

/// [`copy_crc_with`] the core's [`Software`] (the trait's default `copy_update`).
pub fn copy_crc(data: &[u8]) {
    copy_crc_with(data, &Software);
}

/// The properties of `crc` on one input: its first four bytes the register, the next two a
/// split point, the next the destination's shortfall and offset, the rest the source. The
/// fused copy leaves the source's bytes (what fits) in the destination and nothing else
/// changed, and returns the software CRC of what it copied; `update` is the software CRC;
/// `update_both` at the split is the software CRC of the whole.
pub fn copy_crc_with(data: &[u8], crc: &impl Update) {
    let (head, src) = data.split_at(data.len().min(7));
    let mut head7 = [0u8; 7];
    head7[..head.len()].copy_from_slice(head);
    let [r0, r1, r2, r3, s0, s1, shape] = head7;
    let register = u32::from_le_bytes([r0, r1, r2, r3]);
    let split = usize::from(u16::from_le_bytes([s0, s1])) % (src.len() + 1);
    // Bit 7: a destination shorter than the source by bits 0..=4 * 8 bytes; bits 5..=6: where
    // in a larger buffer it starts (0, 1, 7 or 31 bytes in: unaligned stores).
    let short = if shape & 0x80 != 0 {
        usize::from(shape & 0x1F) * 8
    } else {
        0
    };
    let dst_len = src.len().saturating_sub(short);
    let at = [0, 1, 7, 31][usize::from((shape >> 5) & 3)];
    let mut buffer = vec![0xA5u8; at + dst_len + 32];
    let got = crc.copy_update(register, src, &mut buffer[at..at + dst_len]);
    let n = src.len().min(dst_len);
    assert_eq!(
        got,
        Software.update(register, &src[..n]),
        "copy_update's register, {n} of {} bytes copied",
        src.len()
    );
    assert_eq!(&buffer[at..at + n], &src[..n], "the bytes copied");
    assert!(
        buffer[..at]
            .iter()
            .chain(&buffer[at + n..])
            .all(|&b| b == 0xA5),
        "a byte outside the copy changed"
    );
    let whole = Software.update(register, src);
    assert_eq!(crc.update(register, src), whole, "update");
    let (first, second) = src.split_at(split);
    assert_eq!(
        crc.update_both(register, first, second),
        whole,
        "update_both split at {split}"
    );
}
