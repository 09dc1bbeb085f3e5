//! Fixed-capacity text for messages built where there is no allocator (event log entries).

use core::fmt;

/// Up to `N` bytes of UTF-8 text; writing more truncates at a character boundary, never panics.
#[derive(Clone, Copy)]
pub struct FixedText<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Default for FixedText<N> {
    fn default() -> Self {
        Self {
            bytes: [0; N],
            len: 0,
        }
    }
}

impl<const N: usize> FixedText<N> {
    /// Appends `s`, as many whole characters as fit; `false` when it was cut short.
    pub fn push_str(&mut self, s: &str) -> bool {
        for c in s.chars() {
            let mut utf8 = [0u8; 4];
            let encoded = c.encode_utf8(&mut utf8).as_bytes();
            let end = self.len.saturating_add(encoded.len());
            let Some(dst) = self.bytes.get_mut(self.len..end) else {
                return false;
            };
            dst.copy_from_slice(encoded);
            self.len = end;
        }
        true
    }

    /// Appends `value` in decimal; `false` when it was cut short. (Without `core::fmt`: the
    /// driver's image has no formatting machinery, whose calls through function pointers its
    /// stack check cannot follow.)
    pub fn push_u32(&mut self, value: u32) -> bool {
        let mut digits = [0u8; 10];
        let mut at = digits.len();
        let mut rest = value;
        loop {
            at = at.saturating_sub(1);
            if let Some(d) = digits.get_mut(at) {
                // A decimal digit: the remainder of a division by 10.
                *d = b'0'.saturating_add(u8::try_from(rest % 10).unwrap_or(0));
            }
            rest /= 10;
            if rest == 0 || at == 0 {
                break;
            }
        }
        let text = digits
            .get(at..)
            .and_then(|d| core::str::from_utf8(d).ok())
            .unwrap_or("");
        self.push_str(text)
    }

    /// The text so far.
    #[must_use]
    pub fn as_str(&self) -> &str {
        let bytes = self.bytes.get(..self.len).unwrap_or(&[]);
        core::str::from_utf8(bytes).unwrap_or("")
    }
}

impl<const N: usize> fmt::Write for FixedText<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.push_str(s) {
            Ok(())
        } else {
            Err(fmt::Error)
        }
    }
}

impl<const N: usize> fmt::Debug for FixedText<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write;

    #[test]
    fn truncates_at_a_character_boundary() {
        let mut t = FixedText::<5>::default();
        let tail = "é€";
        assert!(write!(t, "ab{tail}").is_err());
        assert_eq!(t.as_str(), "abé");
        let mut t = FixedText::<8>::default();
        let (n, x) = (12, "x");
        write!(t, "{n}-{x}").unwrap();
        assert_eq!(t.as_str(), "12-x");
    }

    #[test]
    fn numbers_are_written_in_decimal_as_fmt_writes_them() {
        for value in [0, 7, 10, 99, 1000, 4_294_967_295, 123_456_789] {
            let mut ours = FixedText::<16>::default();
            assert!(ours.push_u32(value));
            let mut theirs = FixedText::<16>::default();
            write!(theirs, "{value}").unwrap();
            assert_eq!(ours.as_str(), theirs.as_str());
        }
        let mut short = FixedText::<3>::default();
        assert!(!short.push_u32(12_345));
        assert_eq!(short.as_str(), "123");
    }
}
