//! Bounds-checked little-endian reads and writes at byte offsets.
//!
//! These are the only primitives the views use to touch a buffer. Each returns `None` (or
//! `false`) instead of panicking when the field does not fit, so a view stays panic-free even if
//! a caller skipped `check_len()`.

/// Reads the byte at `at`.
#[must_use]
pub fn read_u8(buf: &[u8], at: usize) -> Option<u8> {
    buf.get(at).copied()
}

/// Reads a little-endian `u16` at byte offset `at`.
#[must_use]
pub fn read_u16(buf: &[u8], at: usize) -> Option<u16> {
    array_at::<2>(buf, at).map(u16::from_le_bytes)
}

/// Reads a little-endian `u32` at byte offset `at`.
#[must_use]
pub fn read_u32(buf: &[u8], at: usize) -> Option<u32> {
    array_at::<4>(buf, at).map(u32::from_le_bytes)
}

/// Reads a little-endian `u64` at byte offset `at`.
#[must_use]
pub fn read_u64(buf: &[u8], at: usize) -> Option<u64> {
    array_at::<8>(buf, at).map(u64::from_le_bytes)
}

/// Copies `N` bytes starting at `at`.
#[must_use]
pub fn array_at<const N: usize>(buf: &[u8], at: usize) -> Option<[u8; N]> {
    let end = at.checked_add(N)?;
    let bytes = buf.get(at..end)?;
    let mut out = [0u8; N];
    out.copy_from_slice(bytes);
    Some(out)
}

/// Writes `bytes` at byte offset `at`; returns `false` (writing nothing) if they do not fit.
#[must_use]
pub fn write_at(buf: &mut [u8], at: usize, bytes: &[u8]) -> bool {
    let Some(end) = at.checked_add(bytes.len()) else {
        return false;
    };
    match buf.get_mut(at..end) {
        Some(dst) => {
            dst.copy_from_slice(bytes);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_little_endian_and_unaligned() {
        let buf = [0xAAu8, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08];
        assert_eq!(read_u8(&buf, 0), Some(0xAA));
        assert_eq!(read_u16(&buf, 1), Some(0x0201));
        assert_eq!(read_u32(&buf, 1), Some(0x0403_0201));
        assert_eq!(read_u64(&buf, 1), Some(0x0807_0605_0403_0201));
    }

    #[test]
    fn out_of_bounds_is_none_never_a_panic() {
        let buf = [0u8; 4];
        assert_eq!(read_u32(&buf, 1), None);
        assert_eq!(read_u16(&buf, 3), None);
        assert_eq!(read_u8(&buf, 4), None);
        assert_eq!(read_u64(&buf, usize::MAX), None);
        assert_eq!(array_at::<2>(&buf, usize::MAX - 1), None);
    }

    #[test]
    fn write_at_checks_the_end() {
        let mut buf = [0u8; 4];
        assert!(write_at(&mut buf, 2, &[1, 2]));
        assert_eq!(buf, [0, 0, 1, 2]);
        assert!(!write_at(&mut buf, 3, &[9, 9]));
        assert!(!write_at(&mut buf, usize::MAX, &[9]));
        assert_eq!(buf, [0, 0, 1, 2], "a failed write changes nothing");
    }
}
