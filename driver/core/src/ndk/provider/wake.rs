//! When an open NDK adapter's two routines run: its doorbell DPC at once, when something is due
//! now (deferred callbacks, something to frame, notes to apply), else its one-shot timer at the
//! provider's next deadline (a transport's retransmission, the connection manager's timeouts).
//! Decided under the provider's lock; what comes out is a [`Wakeup`] for the shell to perform.
//!
//! # Decisions (each tested below)
//!
//! - **One ring per run.** The doorbell is rung only when it was not rung since its DPC last
//!   began a run ([`Wake::doorbell_runs`]): a batch of 32 posts queues the DPC once, not 32
//!   times, and what is queued after the run looked at the work rings again.
//! - **The timer only earlier.** It is armed only for a deadline before the one it is armed
//!   for already; a run of the timer ([`Wake::timer_runs`]) leaves it unarmed.
//! - **Closing.** Once the NDK adapter closes ([`Wake::close`]) nothing rings or arms again: the
//!   close stops both routines and frees what they would reach.
//! - **A lazy deadline.** The next deadline is asked only when nothing is due now: it is a
//!   walk over the QPs, and a post, which is due now, must not pay it.

use crate::effect::Wakeup;

/// The state of an NDK adapter's doorbell and timer (module documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wake {
    /// When the timer is armed to run (`None`: not armed).
    armed_at: Option<u64>,
    /// The doorbell's DPC is queued and has not begun its run.
    rung: bool,
    /// The NDK adapter is closing.
    closing: bool,
}

impl Wake {
    /// Neither routine queued or armed.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            armed_at: None,
            rung: false,
            closing: false,
        }
    }

    /// What the provider owes its routines: `due_now` when something is to be done at once;
    /// `next_deadline` the provider's next timeout, asked only when nothing is.
    pub fn schedule(
        &mut self,
        due_now: bool,
        next_deadline: impl FnOnce() -> Option<u64>,
    ) -> Option<Wakeup> {
        if self.closing {
            return None;
        }
        if due_now {
            if self.rung {
                return None;
            }
            self.rung = true;
            return Some(Wakeup::Doorbell);
        }
        let due = next_deadline()?;
        if self.armed_at.is_some_and(|at| at <= due) {
            return None;
        }
        self.armed_at = Some(due);
        Some(Wakeup::Timer { at_ns: due })
    }

    /// The doorbell's DPC begins its run, before it looks at the work: what is queued from now
    /// on rings again.
    pub fn doorbell_runs(&mut self) {
        self.rung = false;
    }

    /// The timer's routine runs: the timer is no longer armed.
    pub fn timer_runs(&mut self) {
        self.armed_at = None;
    }

    /// The NDK adapter closes: nothing rings or arms again.
    pub fn close(&mut self) {
        self.closing = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_deadline() -> Option<u64> {
        panic!("a post is due now: the deadline is not asked")
    }

    #[test]
    fn the_doorbell_rings_once_per_run() {
        let mut w = Wake::new();
        assert_eq!(w.schedule(true, no_deadline), Some(Wakeup::Doorbell));
        assert_eq!(w.schedule(true, no_deadline), None, "rung already");
        w.doorbell_runs();
        assert_eq!(w.schedule(true, no_deadline), Some(Wakeup::Doorbell));
    }

    #[test]
    fn the_timer_is_armed_only_earlier() {
        let mut w = Wake::new();
        assert_eq!(w.schedule(false, || None), None, "no deadline: nothing");
        assert_eq!(
            w.schedule(false, || Some(5_000)),
            Some(Wakeup::Timer { at_ns: 5_000 })
        );
        assert_eq!(w.schedule(false, || Some(5_000)), None, "armed for it");
        assert_eq!(w.schedule(false, || Some(9_000)), None, "armed earlier");
        assert_eq!(
            w.schedule(false, || Some(2_000)),
            Some(Wakeup::Timer { at_ns: 2_000 })
        );
        w.timer_runs();
        assert_eq!(
            w.schedule(false, || Some(9_000)),
            Some(Wakeup::Timer { at_ns: 9_000 }),
            "the run left it unarmed"
        );
    }

    #[test]
    fn a_closing_adapter_wakes_nothing() {
        let mut w = Wake::new();
        w.close();
        assert_eq!(w.schedule(true, no_deadline), None);
        assert_eq!(w.schedule(false, no_deadline), None);
    }

    #[test]
    fn ringing_leaves_the_timer_as_armed() {
        let mut w = Wake::new();
        assert_eq!(
            w.schedule(false, || Some(5_000)),
            Some(Wakeup::Timer { at_ns: 5_000 })
        );
        assert_eq!(w.schedule(true, no_deadline), Some(Wakeup::Doorbell));
        w.doorbell_runs();
        assert_eq!(w.schedule(false, || Some(5_000)), None, "still armed");
    }
}
