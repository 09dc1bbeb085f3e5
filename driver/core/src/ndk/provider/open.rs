//! What `OpenNDKAdapterHandler` decides before it allocates anything: the NDKPI version an open
//! gets, or why it is refused. The rules are the OPEN_NDK_ADAPTER_HANDLER DDI page's
//! (<https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/ndisndk/nc-ndisndk-open_ndk_adapter_handler>):
//!
//! - `NDIS_OPEN_NDK_ADAPTER_PARAMETERS.Version` carries the consumer's major version and the
//!   *lowest* minor version it can use;
//! - a major the provider does not support: `NDIS_STATUS_BAD_VERSION`;
//! - the major supported and the minor at most the provider's highest: the open succeeds and
//!   uses the provider's *highest* minor, which `NDK_ADAPTER_INFO` and every NDK object header
//!   report (a higher minor is a superset of the lower ones: a 1.1 consumer of this 1.2
//!   provider gets 1.2);
//! - the major supported and the minor above the provider's highest: `NDIS_STATUS_BAD_VERSION`;
//! - the miniport adapter's NDK functionality not enabled (`OID_NDK_SET_STATE` FALSE, or
//!   `*NetworkDirect` 0): `NDIS_STATUS_ADAPTER_NOT_READY`;
//! - insufficient resources: `NDIS_STATUS_RESOURCES` (the shell's, when an allocation fails).
//!
//! The page gives no order between a bad version and a disabled adapter; a bad version is
//! reported first, so the answer to a request no state of the adapter could satisfy never
//! depends on that state.

/// An `NDK_VERSION`: major and minor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// `Major`
    pub major: u16,
    /// `Minor`
    pub minor: u16,
}

/// The NDKPI version this provider implements, and so the version of every open that succeeds:
/// 1.2 (NDIS 6.40), whose `NDK_ADAPTER_INFO` ends with `RdmaTechnology` (104 bytes on x64).
pub const PROVIDER_VERSION: Version = Version { major: 1, minor: 2 };

/// Why an open is refused (nothing is allocated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refused {
    /// `NDIS_STATUS_BAD_VERSION`: a major other than 1, or a minor above 2.
    BadVersion,
    /// `NDIS_STATUS_ADAPTER_NOT_READY`: NDK is not enabled on the miniport adapter.
    NotReady,
}

impl Refused {
    /// The C name of the status.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Refused::BadVersion => "NDIS_STATUS_BAD_VERSION",
            Refused::NotReady => "NDIS_STATUS_ADAPTER_NOT_READY",
        }
    }
}

/// The version an open asking for `requested` gets while NDK is `enabled` (or not) on the
/// miniport adapter (module documentation).
///
/// # Errors
/// [`Refused::BadVersion`] for a version this provider cannot serve, else
/// [`Refused::NotReady`] when NDK is disabled.
pub const fn negotiate(requested: Version, enabled: bool) -> Result<Version, Refused> {
    if requested.major != PROVIDER_VERSION.major || requested.minor > PROVIDER_VERSION.minor {
        return Err(Refused::BadVersion);
    }
    if !enabled {
        return Err(Refused::NotReady);
    }
    Ok(PROVIDER_VERSION)
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn v(major: u16, minor: u16) -> Version {
        Version { major, minor }
    }

    #[test]
    fn every_supported_request_gets_the_highest_minor() {
        for minor in 0..=2 {
            assert_eq!(negotiate(v(1, minor), true), Ok(v(1, 2)), "1.{minor}");
        }
    }

    #[test]
    fn another_major_or_a_higher_minor_is_a_bad_version() {
        for (major, minor) in [
            (0, 0),
            (0, 2),
            (1, 3),
            (1, 0xFFFF),
            (2, 0),
            (2, 2),
            (0xFFFF, 0),
        ] {
            assert_eq!(
                negotiate(v(major, minor), true),
                Err(Refused::BadVersion),
                "{major}.{minor}"
            );
            // Whatever the adapter's state.
            assert_eq!(
                negotiate(v(major, minor), false),
                Err(Refused::BadVersion),
                "{major}.{minor} disabled"
            );
        }
    }

    #[test]
    fn a_disabled_adapter_is_not_ready() {
        for minor in 0..=2 {
            assert_eq!(negotiate(v(1, minor), false), Err(Refused::NotReady));
        }
        assert_eq!(Refused::NotReady.name(), "NDIS_STATUS_ADAPTER_NOT_READY");
        assert_eq!(Refused::BadVersion.name(), "NDIS_STATUS_BAD_VERSION");
    }
}
