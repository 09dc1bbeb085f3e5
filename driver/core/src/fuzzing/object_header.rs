//! The `object_header` target's properties: `NDIS_OBJECT_HEADER` views.

use crate::wire::{Error, ObjectHeader, ObjectHeaderRepr};

/// `NDIS_OBJECT_HEADER` over arbitrary bytes: viewing, parsing and emitting never panic; a view
/// and a parse succeed exactly when the buffer holds 4 bytes; what is parsed emits back to the
/// same 4 bytes; [`ObjectHeaderRepr::expect`] agrees with a plain comparison of the members.
///
/// # Panics
/// When a property does not hold.
pub fn object_header(data: &[u8]) {
    let long_enough = data.len() >= ObjectHeader::<&[u8]>::LEN;

    let checked = ObjectHeader::new_checked(data);
    assert_eq!(
        checked.is_ok(),
        long_enough,
        "new_checked on {} bytes",
        data.len()
    );
    if let Err(e) = checked {
        assert_eq!(e, Error::Truncated { needed: 4 });
    }

    // The unchecked view of any buffer reads (zeros past the end) without panicking.
    let view = ObjectHeader::new_unchecked(data);
    let (object_type, revision, size) = (view.object_type(), view.revision(), view.size());
    let parsed = ObjectHeaderRepr::parse(&view);
    assert_eq!(parsed.is_ok(), long_enough, "parse on {} bytes", data.len());

    // Setters on a short (or empty) mutable buffer must not panic either, nor grow it.
    let mut scratch = data.get(..data.len().min(8)).unwrap_or_default().to_vec();
    let scratch_len = scratch.len();
    let mut short = ObjectHeader::new_unchecked(&mut scratch[..]);
    short.set_object_type(object_type);
    short.set_revision(revision);
    short.set_size(size);
    assert_eq!(scratch.len(), scratch_len);

    let Ok(repr) = parsed else {
        return;
    };
    let head = data.get(..4).unwrap_or_default();
    assert_eq!(
        (repr.object_type, repr.revision, repr.size),
        (object_type, revision, size)
    );
    assert_eq!(repr.buffer_len(), 4);
    assert_eq!(&repr.to_bytes()[..], head, "to_bytes(parse(x)) != x[..4]");
    let mut out = [0u8; 4];
    repr.emit(&mut ObjectHeader::new_unchecked(&mut out[..]));
    assert_eq!(&out[..], head, "emit(parse(x)) != x[..4]");
    // Emitting into the whole buffer rewrites the same header and leaves the rest alone.
    let mut whole = data.to_vec();
    repr.emit(&mut ObjectHeader::new_unchecked(&mut whole[..]));
    assert_eq!(whole, data, "emit(parse(x)) into x changed x");
    // A round trip through the value is the identity.
    let again = ObjectHeaderRepr::parse(&ObjectHeader::new_unchecked(&out[..]));
    assert_eq!(again, Ok(repr));

    // `expect` against the next bytes of the input as (type, minimum revision, minimum size).
    let [t, r, s0, s1] = match data.get(4..8) {
        Some(&[a, b, c, d]) => [a, b, c, d],
        _ => [repr.object_type, repr.revision, 0, 0],
    };
    let minimum_size = u16::from_le_bytes([s0, s1]);
    let accepted = repr.expect(t, r, minimum_size).is_ok();
    assert_eq!(
        accepted,
        repr.object_type == t && repr.revision >= r && repr.size >= minimum_size,
        "expect({t:#x}, {r}, {minimum_size}) on {repr:?}"
    );
}
