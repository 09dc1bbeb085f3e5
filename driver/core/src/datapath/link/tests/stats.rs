//! The link's counters.

use super::*;

#[test]
fn tc_counters_keep_each_frame_in_the_tc_it_was_sent_in() {
    fn two(tc_of_3: u8) -> QosParameters {
        params(
            2,
            [0, 0, 0, tc_of_3, 0, 0, 0, 0],
            [50, 50, 0, 0, 0, 0, 0, 0],
            [ETS; 8],
            0,
        )
    }
    /// Sends one frame of priority 3 at `*t`; its TC.
    fn send(l: &mut TestLink, t: &mut u64, len: u32) -> u8 {
        l.enqueue(3, len, 0).unwrap();
        let s = l.dequeue(*t).unwrap();
        *t = s.end_ns;
        s.tc
    }
    let mut l = link(G10);
    let mut t = 0;
    l.configure(&two(1), 0);
    assert_eq!(send(&mut l, &mut t, 100), 1);
    assert_eq!(send(&mut l, &mut t, 40), 1);
    // Priority 3 moves to TC 0: what it sent in TC 1 stays there.
    l.configure(&two(0), t);
    assert_eq!(send(&mut l, &mut t, 1000), 0);
    let st = l.stats(t);
    let tc1 = TcStats {
        tx: Counter {
            frames: 2,
            bytes: 140,
        },
        wire_bytes: 124 + 84,
    };
    assert_eq!(st.tc[1], tc1);
    let tc0 = TcStats {
        tx: Counter {
            frames: 1,
            bytes: 1000,
        },
        wire_bytes: 1024,
    };
    assert_eq!(st.tc[0], tc0);
    // Back to TC 1, and the same configuration again: the counts stay where they are.
    l.configure(&two(1), t);
    l.configure(&two(1), t);
    assert_eq!(l.stats(t).tc, st.tc);
    assert_eq!(
        st.priority[3].tx,
        Counter {
            frames: 3,
            bytes: 1140
        }
    );
}
