//! The link on a host's clock: what is due by `now` ([`Link::poll_transmit`]) and when to look
//! again ([`Link::poll_timeout`]), in the manner of quinn-proto's `poll_transmit` and
//! `poll_timeout`: the shell's drain calls the first until it says `None`, moves the frames it
//! gave, and arms its one-shot timer at what the second says.
//!
//! # Decisions (each tested in `tests/timing.rs`)
//!
//! - **Catching up.** A host's clock is far coarser than a frame time (a millisecond against
//!   0.8 µs for 1 kB at 10 Gb/s), so frames due by `now` go back to back from when the link was
//!   free or the backlog began, whichever is later, as they would have on a real clock; never
//!   later than `now`. The backlog begins at the enqueue into an empty link
//!   ([`Link::enqueue_at`]), so a frame queued on an idle link does not start in the past.
//! - **Pauses within the catch-up.** When every backlogged priority is paused at the instant
//!   tried, the next try is at the link's next event (a pause ending), if that is not later
//!   than `now`.
//! - **The timer.** Due at the link's next event after `now` (a queued frame's turn, a pause
//!   ending), or at the refresh of an XOFF in force, whichever is first; `None` when nothing
//!   will be due. Asking it closes the catch-up: what did not start by `now` starts no earlier
//!   than `now`.
//! - **The end of a drain** ([`Link::poll_timer`]): the timer armed, and an XOFF's refresh sent
//!   when it is due, in that order. Armed first, with the time read before the frame goes out:
//!   sending may run the peer's receive path on this thread, and whatever that makes this link
//!   owe arms the timer again, later, with what the link knows then, so the last arm is never
//!   the older one.

use super::Link;
use crate::effect::{Immediate, TimerId};

impl<T: Copy + Default, const N: usize> Link<T, N> {
    /// [`Link::enqueue`] at the host's time `clock` gives, read only when the frame begins a
    /// backlog (the link was idle): that is when the frame may start, at the earliest. A lazy
    /// clock, so that a frame queued behind others costs no read of it.
    ///
    /// Inlined even in a debug build: the send path's frame takes its two locals rather than
    /// a frame of its own below it (`cargo xtask pe`'s dev budget).
    ///
    /// # Errors
    ///
    /// As [`Link::enqueue`].
    #[inline(always)]
    pub fn enqueue_at(
        &mut self,
        priority: u8,
        len: u32,
        handle: T,
        clock: impl FnOnce() -> u64,
    ) -> Result<(), super::Refused> {
        let begins = self.is_idle();
        self.enqueue(priority, len, handle)?;
        if begins {
            self.backlog_from = clock();
        }
        Ok(())
    }

    /// The next frame due by `now_ns` (module documentation, "Catching up"), taken off its
    /// queue; `None` when nothing more may start by then.
    ///
    /// Inlined into the shell's drain in an optimized build, as [`Link::dequeue`]; not in a
    /// debug build, where its locals would join the drain's frame.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn poll_transmit(&mut self, now_ns: u64) -> Option<super::Sent<T>> {
        let mut at = self
            .busy_until_floor_ns()
            .max(self.backlog_from)
            .min(now_ns);
        loop {
            if let Some(sent) = self.dequeue(at) {
                return Some(sent);
            }
            match self.next_event_ns(at) {
                Some(t) if t > at && t <= now_ns => at = t,
                _ => return None,
            }
        }
    }

    /// When the shell's timer is to run after `now_ns` (module documentation, "The timer");
    /// `None` when nothing will be due. The catch-up up to `now_ns` ends here.
    pub fn poll_timeout(&mut self, now_ns: u64) -> Option<u64> {
        self.backlog_from = self.backlog_from.max(now_ns);
        let refresh = self.rx.refresh_at();
        match (self.next_event_ns(now_ns), refresh) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// What the link owes at the end of a drain at `now_ns` (module documentation, "The end of a
    /// drain"): its timer at [`Link::poll_timeout`]'s time, then the refresh of an XOFF in force
    /// if it is due. One look under the caller's one acquisition of the link's lock.
    pub fn poll_timer(&mut self, now_ns: u64) -> [Option<Immediate>; 2] {
        let refresh = self.rx_poll(now_ns).map(Immediate::SendPfc);
        let timer = self.poll_timeout(now_ns).map(|at_ns| Immediate::ArmTimer {
            timer: TimerId::Link,
            at_ns,
        });
        [timer, refresh]
    }
}
