//! `NDIS_OBJECT_HEADER`: the 4-byte header that opens every versioned NDIS structure
//! (shared/spec/ndis-dcb-ndk.md §1.1).
//!
//! | offset | type   | field    |
//! |--------|--------|----------|
//! | 0      | UCHAR  | Type     |
//! | 1      | UCHAR  | Revision |
//! | 2      | USHORT | Size     |
//!
//! `Size` is the total size of the containing structure, header included. A consumer accepts a
//! structure whose revision is at least the one it understands and whose size is at least that
//! revision's `NDIS_SIZEOF_*` (later revisions only append members).

use super::{Error, Result, bytes};

mod field {
    pub const TYPE: usize = 0;
    pub const REVISION: usize = 1;
    pub const SIZE: usize = 2;
    /// One past the last byte of the header.
    pub const END: usize = 4;
}

/// A read/write view of an `NDIS_OBJECT_HEADER` at the start of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> ObjectHeader<T> {
    /// The size of the header in bytes.
    pub const LEN: usize = field::END;

    /// Wraps a buffer without checking its length; call [`check_len`](Self::check_len) before
    /// trusting the accessors.
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Wraps a buffer, failing if it is too short to hold the header.
    ///
    /// # Errors
    /// [`Error::Truncated`] with `needed = 4` when the buffer is shorter than the header.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let view = Self::new_unchecked(buffer);
        view.check_len()?;
        Ok(view)
    }

    /// Checks that the buffer holds the whole header.
    ///
    /// # Errors
    /// [`Error::Truncated`] with `needed = 4` when it does not.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < field::END {
            return Err(Error::Truncated { needed: field::END });
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// `Type`: the `NDIS_OBJECT_TYPE_*` of the containing structure.
    #[must_use]
    pub fn object_type(&self) -> u8 {
        bytes::read_u8(self.buffer.as_ref(), field::TYPE).unwrap_or(0)
    }

    /// `Revision` of the containing structure.
    #[must_use]
    pub fn revision(&self) -> u8 {
        bytes::read_u8(self.buffer.as_ref(), field::REVISION).unwrap_or(0)
    }

    /// `Size`: the total size of the containing structure in bytes.
    #[must_use]
    pub fn size(&self) -> u16 {
        bytes::read_u16(self.buffer.as_ref(), field::SIZE).unwrap_or(0)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ObjectHeader<T> {
    /// Sets `Type`.
    pub fn set_object_type(&mut self, value: u8) {
        let _fits = bytes::write_at(self.buffer.as_mut(), field::TYPE, &[value]);
    }

    /// Sets `Revision`.
    pub fn set_revision(&mut self, value: u8) {
        let _fits = bytes::write_at(self.buffer.as_mut(), field::REVISION, &[value]);
    }

    /// Sets `Size`.
    pub fn set_size(&mut self, value: u16) {
        let _fits = bytes::write_at(self.buffer.as_mut(), field::SIZE, &value.to_le_bytes());
    }
}

/// Why a header does not announce the structure a consumer expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// `Type` is not the expected `NDIS_OBJECT_TYPE_*`.
    WrongType {
        /// The type found in the buffer.
        found: u8,
        /// The type expected.
        expected: u8,
    },
    /// `Revision` is older than the oldest revision the consumer understands.
    RevisionTooOld {
        /// The revision found in the buffer.
        found: u8,
        /// The minimum revision accepted.
        minimum: u8,
    },
    /// `Size` is smaller than that revision's `NDIS_SIZEOF_*`.
    SizeTooSmall {
        /// The size found in the buffer.
        found: u16,
        /// The minimum size accepted.
        minimum: u16,
    },
}

/// The value of an `NDIS_OBJECT_HEADER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ObjectHeaderRepr {
    /// `Type`: an `NDIS_OBJECT_TYPE_*` value.
    pub object_type: u8,
    /// `Revision` of the containing structure.
    pub revision: u8,
    /// `Size` of the containing structure in bytes.
    pub size: u16,
}

impl ObjectHeaderRepr {
    /// Builds a header value.
    #[must_use]
    pub const fn new(object_type: u8, revision: u8, size: u16) -> Self {
        Self {
            object_type,
            revision,
            size,
        }
    }

    /// Reads the header from a checked view.
    ///
    /// # Errors
    /// [`Error::Truncated`] when the view's buffer is shorter than the header.
    pub fn parse<T: AsRef<[u8]>>(view: &ObjectHeader<T>) -> Result<Self> {
        view.check_len()?;
        Ok(Self {
            object_type: view.object_type(),
            revision: view.revision(),
            size: view.size(),
        })
    }

    /// The number of bytes [`emit`](Self::emit) writes.
    #[must_use]
    pub const fn buffer_len(&self) -> usize {
        field::END
    }

    /// Writes the header into the view.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, view: &mut ObjectHeader<T>) {
        view.set_object_type(self.object_type);
        view.set_revision(self.revision);
        view.set_size(self.size);
    }

    /// The 4 bytes of the header.
    #[must_use]
    pub fn to_bytes(&self) -> [u8; 4] {
        let [s0, s1] = self.size.to_le_bytes();
        [self.object_type, self.revision, s0, s1]
    }

    /// Checks that the header announces `expected_type` at `minimum_revision` or later with a
    /// `Size` of at least `minimum_size`, the rule every versioned NDIS structure follows.
    ///
    /// # Errors
    /// The first [`HeaderError`] found, in the order type, revision, size.
    pub fn expect(
        &self,
        expected_type: u8,
        minimum_revision: u8,
        minimum_size: u16,
    ) -> core::result::Result<(), HeaderError> {
        if self.object_type != expected_type {
            return Err(HeaderError::WrongType {
                found: self.object_type,
                expected: expected_type,
            });
        }
        if self.revision < minimum_revision {
            return Err(HeaderError::RevisionTooOld {
                found: self.revision,
                minimum: minimum_revision,
            });
        }
        if self.size < minimum_size {
            return Err(HeaderError::SizeTooSmall {
                found: self.size,
                minimum: minimum_size,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NDIS_QOS_PARAMETERS revision 1 header: {0xB6, 1, 52} (spec §1.3).
    static QOS_PARAMETERS_HEADER: [u8; 4] = [0xB6, 0x01, 0x34, 0x00];

    #[test]
    fn deconstruct() {
        let view = ObjectHeader::new_checked(&QOS_PARAMETERS_HEADER[..]).unwrap();
        assert_eq!(view.object_type(), 0xB6);
        assert_eq!(view.revision(), 1);
        assert_eq!(view.size(), 52);
    }

    #[test]
    fn construct() {
        let mut bytes = [0u8; 4];
        let mut view = ObjectHeader::new_unchecked(&mut bytes[..]);
        view.set_object_type(0xB6);
        view.set_revision(1);
        view.set_size(52);
        assert_eq!(bytes, QOS_PARAMETERS_HEADER);
    }

    #[test]
    fn parse_emit_round_trip() {
        let repr = ObjectHeaderRepr::parse(
            &ObjectHeader::new_checked(&QOS_PARAMETERS_HEADER[..]).unwrap(),
        )
        .unwrap();
        assert_eq!(repr, ObjectHeaderRepr::new(0xB6, 1, 52));
        let mut out = [0u8; 4];
        repr.emit(&mut ObjectHeader::new_unchecked(&mut out[..]));
        assert_eq!(out, QOS_PARAMETERS_HEADER);
        assert_eq!(repr.to_bytes(), QOS_PARAMETERS_HEADER);
        assert_eq!(repr.buffer_len(), 4);
    }

    #[test]
    fn short_buffers_are_rejected_with_the_needed_length() {
        for len in 0..4 {
            let buf = [0u8; 4];
            assert_eq!(
                ObjectHeader::new_checked(&buf[..len]).unwrap_err(),
                Error::Truncated { needed: 4 }
            );
        }
    }

    #[test]
    fn unchecked_short_view_reads_zero_instead_of_panicking() {
        let view = ObjectHeader::new_unchecked(&[0xB6u8][..]);
        assert_eq!(view.object_type(), 0xB6);
        assert_eq!(view.size(), 0);
        let repr = ObjectHeaderRepr::parse(&view);
        assert!(repr.is_err());
    }

    #[test]
    fn expect_checks_type_then_revision_then_size() {
        let h = ObjectHeaderRepr::new(0xB6, 1, 52);
        assert_eq!(h.expect(0xB6, 1, 52), Ok(()));
        assert_eq!(
            h.expect(0xB5, 1, 52),
            Err(HeaderError::WrongType {
                found: 0xB6,
                expected: 0xB5
            })
        );
        assert_eq!(
            h.expect(0xB6, 2, 52),
            Err(HeaderError::RevisionTooOld {
                found: 1,
                minimum: 2
            })
        );
        assert_eq!(
            h.expect(0xB6, 1, 53),
            Err(HeaderError::SizeTooSmall {
                found: 52,
                minimum: 53
            })
        );
        // A later revision with a larger size is accepted by a revision-1 consumer.
        assert_eq!(
            ObjectHeaderRepr::new(0xB6, 2, 60).expect(0xB6, 1, 52),
            Ok(())
        );
    }
}
