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
    /// The text so far.
    #[must_use]
    pub fn as_str(&self) -> &str {
        let bytes = self.bytes.get(..self.len).unwrap_or(&[]);
        core::str::from_utf8(bytes).unwrap_or("")
    }
}

impl<const N: usize> fmt::Write for FixedText<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            let mut utf8 = [0u8; 4];
            let encoded = c.encode_utf8(&mut utf8).as_bytes();
            let end = self.len.saturating_add(encoded.len());
            let Some(dst) = self.bytes.get_mut(self.len..end) else {
                return Err(fmt::Error);
            };
            dst.copy_from_slice(encoded);
            self.len = end;
        }
        Ok(())
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
}
