//! The `cm` target's properties: the connection manager's handshake messages
//! (`ndk::provider::cm::wire`) and the CM state machine fed with what they decode to.

use arbitrary::{Result, Unstructured};
use std::vec;
use std::vec::Vec;

use crate::ndk::Profile;
use crate::ndk::provider::cm::wire::{
    EncodeError, Kind, MAX_MSG_LEN, MAX_PRIVATE_DATA, Msg, RejectReason, decode, encode,
};
use crate::ndk::provider::cm::{BindSlot, Cm, CmConfig, CmStorage, ConnSlot, QpInfo, Source};
use crate::ndk::tables::SockAddr;

/// Handshake messages over arbitrary bytes.
///
/// Properties: [`decode`] never panics, and what it accepts is canonical (it encodes back to
/// exactly the bytes decoded, and passes [`Msg::check`]); a message built from the input
/// (valid or not) encodes exactly when [`Msg::check`] passes and the buffer is long enough,
/// and `decode(encode(m)) == m`; a CM with a listener and a connection attempt, fed the
/// messages the input decodes to (with its addresses and ids patched in at the input's
/// choice, so that they reach its connections) and timer ticks, never panics and only emits
/// messages that encode.
///
/// # Panics
/// When a property does not hold.
pub fn cm(data: &[u8]) {
    if let Ok(m) = decode(data) {
        assert_eq!(m.check(), Ok(()));
        let mut buf = [0u8; MAX_MSG_LEN];
        let n = encode(&m, &mut buf).expect("a decoded message encodes");
        assert_eq!(&buf[..n], data, "the encoding is canonical");
    }
    let mut u = Unstructured::new(data);
    let _ = round_trip(&mut u);
    let _ = drive(&mut u);
}

const KINDS: [Kind; 6] = [
    Kind::Req,
    Kind::Rep,
    Kind::Rtu,
    Kind::Rej,
    Kind::Dreq,
    Kind::Drep,
];
const REASONS: [RejectReason; 6] = [
    RejectReason::None,
    RejectReason::Consumer,
    RejectReason::NoListener,
    RejectReason::Busy,
    RejectReason::Abandoned,
    RejectReason::Invalid,
];

fn address(u: &mut Unstructured<'_>, v6: bool) -> Result<SockAddr> {
    let mut a = if v6 {
        SockAddr::v6(u.arbitrary()?, u.arbitrary()?, 0)
    } else {
        SockAddr::v4(u.arbitrary()?, u.arbitrary()?)
    };
    // Now and then a field a valid message must not have.
    if u.ratio(1, 16)? {
        a.scope_id = u.arbitrary()?;
    }
    if u.ratio(1, 16)? {
        a.v6 = !a.v6;
    }
    Ok(a)
}

fn message<'a>(u: &mut Unstructured<'a>) -> Result<Msg<'a>> {
    let kind = *u.choose(&KINDS)?;
    let reason = if kind == Kind::Rej || u.ratio(1, 16)? {
        *u.choose(&REASONS)?
    } else {
        RejectReason::None
    };
    let v6 = u.arbitrary()?;
    let field = |u: &mut Unstructured<'_>| -> Result<u32> {
        Ok(if u.ratio(1, 16)? {
            u.arbitrary()?
        } else {
            u.int_in_range(0..=0x00FF_FFFF)?
        })
    };
    let pd_len = u.int_in_range(0..=MAX_PRIVATE_DATA + 2)?;
    Ok(Msg {
        kind,
        local_id: u.arbitrary()?,
        remote_id: u.arbitrary()?,
        local_qpn: field(u)?,
        local_psn: field(u)?,
        remote_qpn: field(u)?,
        remote_psn: field(u)?,
        irl: u.arbitrary()?,
        orl: u.arbitrary()?,
        reason,
        pmtu: if matches!(kind, Kind::Req | Kind::Rep) || u.ratio(1, 16)? {
            *u.choose(&[256, 512, 1024, 2048, 4096, 1500])?
        } else {
            0
        },
        src: address(u, v6)?,
        dst: address(u, v6)?,
        private_data: u.bytes(pd_len)?,
    })
}

fn round_trip(u: &mut Unstructured<'_>) -> Result<()> {
    for _ in 0..u.int_in_range(1..=8)? {
        let m = message(u)?;
        let len = u.int_in_range(0..=MAX_MSG_LEN)?;
        let mut buf = vec![0u8; len];
        match (m.check(), encode(&m, &mut buf)) {
            (Err(why), got) => assert_eq!(got, Err(EncodeError::Invalid(why)), "{m:?}"),
            (Ok(()), Err(EncodeError::BufferTooSmall)) => assert!(len < m.len()),
            (Ok(()), Ok(n)) => {
                assert_eq!(n, m.len());
                assert_eq!(decode(&buf[..n]), Ok(m));
            }
            (Ok(()), Err(e)) => panic!("{m:?} is valid but fails {e:?}"),
        }
    }
    Ok(())
}

const HERE: [u8; 4] = [10, 0, 0, 1];
const PEER: [u8; 4] = [10, 0, 0, 2];

fn drive(u: &mut Unstructured<'_>) -> Result<()> {
    let cfg = CmConfig {
        timeout_ns: 10,
        ..CmConfig::new(&Profile::ROCE_V2_100G)
    };
    // The tables live on this frame for the input's lifetime and are freed with it, as the
    // shell's pool tables are freed with the adapter: nothing outlives the input, so
    // LeakSanitizer (on by default under libFuzzer) sees every allocation returned.
    let mut conns = [ConnSlot::FREE; 4];
    let mut binds = [BindSlot::FREE; 2];
    let storage = CmStorage {
        conns: &mut conns,
        binds: &mut binds,
    };
    let mut cm = Cm::new(cfg, storage);
    cm.set_addresses(&[SockAddr::v4(HERE, 0)]);
    let l = cm.create_listener().expect("a free slot");
    cm.listen(l, SockAddr::v4(HERE, 445)).expect("a free port");
    let c = cm.create_connector().expect("a free slot");
    let qp = QpInfo {
        handle: 1,
        qpn: 5,
        psn: 6,
    };
    let src = Source::Address(SockAddr::v4(HERE, 0));
    cm.connect(0, c, qp, src, SockAddr::v4(PEER, 445), 4, 4, b"x")
        .expect("a valid connect");
    let mut now = 0u64;
    let mut ids: Vec<u32> = Vec::new();
    let mut out = [0u8; MAX_MSG_LEN];
    for _ in 0..u.int_in_range(0..=32)? {
        let mut m = message(u)?;
        if u.arbitrary()? {
            m.src = SockAddr::v4(PEER, if u.arbitrary()? { 445 } else { 7 });
            m.dst = SockAddr::v4(HERE, 445);
        }
        if !ids.is_empty() && u.arbitrary()? {
            m.remote_id = *u.choose(&ids)?;
        }
        cm.handle(now, &m);
        now = now.saturating_add(u.int_in_range(0..=20)?);
        cm.handle_timeout(now);
        while let Some(t) = cm.poll_transmit() {
            let n = encode(&t, &mut out).expect("the CM sends valid messages");
            assert!(decode(&out[..n]).is_ok());
            if t.local_id != 0 {
                ids.push(t.local_id);
            }
        }
        while let Some(e) = cm.poll_event() {
            use crate::ndk::provider::cm::Event;
            if let Event::ConnectEvent { connector, .. } = e {
                let mut pd = [0u8; 8];
                let _ = cm.get_connection_data(connector, Some(&mut pd));
                if u.arbitrary()? {
                    let _ = cm.accept(now, connector, qp, 2, 2, b"y");
                } else {
                    let _ = cm.reject(connector, b"n");
                }
            }
        }
        if u.ratio(1, 8)? {
            let _ = cm.complete_connect(c);
            let _ = cm.disconnect(now, c);
        }
    }
    Ok(())
}
