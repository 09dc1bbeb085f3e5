//! The provider's choices for a connected QP's transport: how long the requester waits without
//! progress, how often it retries, and how long it backs off after an RNR NAK. The connection
//! manager agrees the rest ([`QpParams`]); [`RcConfig::connected`] joins the two.

use super::RcConfig;
use crate::ndk::provider::cm::QpParams;

/// Time without progress before the requester resends (ns): 10 ms.
pub const RC_TIMEOUT_NS: u64 = 10_000_000;

/// Timeouts in a row, and RNR NAKs in a row, before the QP fails: 7, the largest count IB CM's
/// 3-bit retry fields carry.
pub const RC_RETRIES: u8 = 7;

/// How long the requester waits after an RNR NAK (ns): 1 ms.
pub const RNR_DELAY_NS: u64 = 1_000_000;

// The retry counts fit IB CM's 3-bit fields, and an RNR back-off is shorter than a timeout.
const _: () = assert!(RC_RETRIES <= 7 && RNR_DELAY_NS < RC_TIMEOUT_NS);

impl RcConfig {
    /// The transport of a QP the connection manager connected with `params`: the agreed path
    /// MTU, QP numbers, PSNs and outbound read limit, and this provider's timing
    /// ([`RC_TIMEOUT_NS`], [`RC_RETRIES`], [`RNR_DELAY_NS`]).
    #[must_use]
    pub const fn connected(params: &QpParams) -> RcConfig {
        RcConfig {
            pmtu: params.pmtu,
            dest_qp: params.dest_qp,
            send_psn: params.send_psn,
            recv_psn: params.recv_psn,
            timeout_ns: RC_TIMEOUT_NS,
            retry_count: RC_RETRIES,
            rnr_retry: RC_RETRIES,
            rnr_delay_ns: RNR_DELAY_NS,
            outbound_reads: params.outbound_reads,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connected_transport_takes_the_agreement_and_the_providers_timing() {
        let params = QpParams {
            dest_qp: 0x1_0100,
            send_psn: 5,
            recv_psn: 9,
            inbound_reads: 4,
            outbound_reads: 2,
            pmtu: 1024,
        };
        let cfg = RcConfig::connected(&params);
        assert_eq!(
            (
                cfg.pmtu,
                cfg.dest_qp,
                cfg.send_psn,
                cfg.recv_psn,
                cfg.outbound_reads
            ),
            (1024, 0x1_0100, 5, 9, 2)
        );
        assert_eq!((cfg.retry_count, cfg.rnr_retry), (RC_RETRIES, RC_RETRIES));
        assert_eq!((cfg.timeout_ns, cfg.rnr_delay_ns), (10_000_000, 1_000_000));
    }
}
