//! The `qos_parameters` target's properties: `OID_QOS_PARAMETERS` through the OID dispatch.

use crate::adapter::Settings;
use crate::oid::{self, Request, RequestKind};
use crate::status::Status;

use crate::support::running_adapter_with_inf_defaults;

/// `OID_QOS_PARAMETERS` over arbitrary bytes, through the same core entry point the driver's
/// trampoline calls (`oid::dispatch` with a method request). The first byte chooses the output
/// length (the input length, or up to 255 bytes less); the rest is the information buffer.
///
/// Properties: no panic; on SUCCESS, `BytesRead` = `BytesWritten` <= both lengths, the echo differs
/// from the input only in the ENFORCED_BY_MINIPORT bits of element flags, and the echo parses back
/// to exactly the accepted parameters; on failure, neither the settings nor a byte of the buffer
/// changed.
///
/// # Panics
/// When a property does not hold.
pub fn qos_parameters(data: &[u8]) {
    use crate::qos::validate;
    let Some((&shorten, input)) = data.split_first() else {
        return;
    };
    let adapter = running_adapter_with_inf_defaults();
    let mut settings = Settings::new(&adapter.config);
    // A first, valid request, so that a failed one has local parameters it must not change.
    let before = settings;
    let mut buffer = input.to_vec();
    let output_len = input.len().saturating_sub(usize::from(shorten));
    let outcome = oid::dispatch(
        &adapter,
        &mut settings,
        &mut Request {
            kind: RequestKind::Method,
            oid: ndis_sys::ntddndis::OID_QOS_PARAMETERS,
            buffer: &mut buffer,
            input_len: input.len(),
            output_len,
        },
    );
    if outcome.status == Status::Success {
        let read = outcome.bytes_read as usize;
        assert_eq!(
            outcome.bytes_written, outcome.bytes_read,
            "BytesWritten = BytesRead"
        );
        assert!(
            read <= input.len() && read <= output_len,
            "{read} bytes echoed of {} in, {output_len} out",
            input.len()
        );
        let accepted = validate::parse_request(input, &crate::qos::Capabilities::HARDWARE)
            .expect("accepted by the OID, so by the validator");
        for (i, (a, b)) in input.iter().zip(&buffer).enumerate() {
            if a != b {
                let in_element =
                    i >= accepted.first_element && (i - accepted.first_element) % 16 == 7;
                assert!(
                    in_element && (a ^ b) == 0x01,
                    "byte {i} changed from {a:#04x} to {b:#04x}: only the ENFORCED bit may change"
                );
            }
        }
        let echoed = validate::parse_request(&buffer, &crate::qos::Capabilities::HARDWARE)
            .expect("the echo parses");
        assert_eq!(
            echoed.params, accepted.params,
            "the echo parses back to the accepted parameters"
        );
    } else {
        assert_eq!(settings, before, "a failed request changed the settings");
        assert_eq!(buffer, input, "a failed request changed the buffer");
        assert_eq!((outcome.bytes_read, outcome.bytes_written), (0, 0));
    }
}
