//! A completion queue (ndkpi.md §3): a ring of results the shell allocated at `NdkCreateCq`,
//! what `NdkGetCqResults(Ex)` removes, and the decision of when to call the consumer's
//! `NdkCqNotificationCallback`.
//!
//! The notification rules (§3.3): a callback only after an arm and once per arm; an arm made
//! while completions that arrived since the last callback are queued fires at once; callbacks
//! for one CQ never overlap, so one that becomes due while another runs waits for
//! [`Cq::callback_returned`]; a second arm before the first is satisfied merges with it
//! ([`ArmType::merge`]). An overflow (more completions than the depth) makes the CQ unusable:
//! it takes no further completion and reports `STATUS_BUFFER_OVERFLOW` through the callback,
//! whatever it was armed for, exactly once.
//!
//! Which completions are "new" is kept as sequence numbers, not per entry: completion `k` (from
//! 0) is the `k`-th ever queued, the queued ones are the last `len`, and the ones new since the
//! last callback are those numbered from `seen` on.

use super::ring::Ring;
use super::{CallStatus, CompletionStatus, OperationType};
use crate::ndk::Profile;

/// One completion: the members of `NDK_RESULT_EX` as values (§0, §3.1), plus whether it
/// matches an `NDK_CQ_NOTIFY_SOLICITED` arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// `Status`.
    pub status: CompletionStatus,
    /// `BytesTransferred`: meaningful for receives only (§3.1).
    pub bytes_transferred: u32,
    /// `QPContext`: what the consumer gave `NdkCreateQp`.
    pub qp_context: usize,
    /// `RequestContext`: what the consumer gave with the request.
    pub request_context: usize,
    /// `Type` (`NDK_RESULT_EX` only).
    pub operation: OperationType,
    /// `TypeSpecificCompletionOutput`: the invalidated token of a `ReceiveAndInvalidate`,
    /// otherwise 0 (§3.1).
    pub type_specific: usize,
    /// A receive that consumed a SEND with `NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT` (§2.11).
    pub solicited: bool,
}

impl Completion {
    /// A blank entry, to fill the ring's storage with.
    pub const EMPTY: Completion = Completion {
        status: CompletionStatus::Success,
        bytes_transferred: 0,
        qp_context: 0,
        request_context: 0,
        operation: OperationType::Send,
        type_specific: 0,
        solicited: false,
    };

    /// Whether it satisfies an `NDK_CQ_NOTIFY_SOLICITED` arm: a solicited receive, or any
    /// error ("requests that complete with an error always match SOLICITED", §3.3).
    #[must_use]
    pub const fn matches_solicited(&self) -> bool {
        self.solicited || self.status.is_error()
    }
}

/// `NdkArmCq`'s `Type` (§2.2, §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArmType {
    /// `NDK_CQ_NOTIFY_ERRORS` (0): CQ errors only (overrun).
    Errors,
    /// `NDK_CQ_NOTIFY_ANY` (1): the next completion.
    Any,
    /// `NDK_CQ_NOTIFY_SOLICITED` (2): a solicited receive or an error completion.
    Solicited,
}

impl ArmType {
    /// The type of an `NdkArmCq` `Type` argument; `None` for any other value.
    #[must_use]
    pub const fn from_u32(value: u32) -> Option<ArmType> {
        match value {
            0 => Some(ArmType::Errors),
            1 => Some(ArmType::Any),
            2 => Some(ArmType::Solicited),
            _ => None,
        }
    }

    /// The arm in force after `second` is requested while `first` is pending (§3.3's table):
    /// ANY wins over everything, SOLICITED over ERRORS.
    #[must_use]
    pub const fn merge(first: ArmType, second: ArmType) -> ArmType {
        match (first, second) {
            (ArmType::Any, _) | (_, ArmType::Any) => ArmType::Any,
            (ArmType::Solicited, _) | (_, ArmType::Solicited) => ArmType::Solicited,
            (ArmType::Errors, ArmType::Errors) => ArmType::Errors,
        }
    }
}

/// The `CqStatus` argument of a notification callback the shell must make (§3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notify {
    /// `STATUS_SUCCESS`: completions are queued.
    Success,
    /// `STATUS_BUFFER_OVERFLOW`: more completions than the depth were attempted; the CQ and its
    /// QPs are unusable.
    BufferOverflow,
}

/// What [`Cq::push`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pushed {
    /// The completion was queued. When false the CQ has overflowed (now or before) and is
    /// unusable: the QP that produced it must go to the error state.
    pub queued: bool,
    /// A notification callback to make now.
    pub notify: Option<Notify>,
}

/// What the shell does after a notification callback returned ([`Cq::callback_returned`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Returned {
    /// Nothing more.
    Idle,
    /// Another callback became due while that one ran: make it now.
    Notify(Notify),
    /// The CQ was closed while the callback ran: complete the pending close now.
    CompleteClose,
}

/// Where an overflow stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overflow {
    No,
    /// Happened, not reported yet (no arm, or a callback was running).
    Pending,
    /// Reported: no callback will ever be made again.
    Reported,
}

/// A completion queue over the ring `'a` the shell allocated.
#[derive(Debug)]
pub struct Cq<'a> {
    ring: Ring<'a, Completion>,
    /// Completions ever queued: the sequence number of the next.
    pushed: u64,
    /// `pushed` when the last callback was made: completions numbered from here on are new.
    seen: u64,
    /// The sequence number of the newest completion that matches SOLICITED.
    last_solicited: Option<u64>,
    armed: Option<ArmType>,
    /// A notification callback is running (between a `Notify` and `callback_returned`).
    running: bool,
    overflow: Overflow,
    closed: bool,
}

impl<'a> Cq<'a> {
    /// `NdkCreateCq`'s check of `CqDepth` (§2.1, rule 13): at least 1 and at most the profile's
    /// `MaxCqDepth`. Returns the ring length to allocate.
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for 0 or above `MaxCqDepth`.
    pub fn check_depth(depth: u32, profile: &Profile) -> Result<usize, CallStatus> {
        if depth == 0 || depth > profile.max_cq_depth {
            return Err(CallStatus::InvalidParameter);
        }
        usize::try_from(depth).map_err(|_| CallStatus::InvalidParameter)
    }

    /// A CQ whose depth is the length of `ring` (what [`Cq::check_depth`] returned).
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for an empty ring.
    pub fn new(ring: &'a mut [Completion]) -> Result<Self, CallStatus> {
        if ring.is_empty() {
            return Err(CallStatus::InvalidParameter);
        }
        Ok(Self {
            ring: Ring::new(ring),
            pushed: 0,
            seen: 0,
            last_solicited: None,
            armed: None,
            running: false,
            overflow: Overflow::No,
            closed: false,
        })
    }

    /// The depth.
    #[must_use]
    pub fn depth(&self) -> usize {
        self.ring.capacity()
    }

    /// `NdkControlCqInterruptModeration` on an adapter that sets
    /// `NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED`, by its DDI page
    /// (<https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/ndkpi/nc-ndkpi-ndk_fn_control_cq_interrupt_moderation>):
    /// such a provider "must normally handle" it and succeed, and must fail
    /// `STATUS_INVALID_PARAMETER_MIX` an interval of MAXULONG together with a count of MAXULONG
    /// or above the CQ's depth. The settings change nothing here: a notification is made when
    /// its completion is queued, there is no interrupt to moderate.
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER_MIX` for the mix above.
    pub fn control_interrupt_moderation(
        &self,
        interval: u32,
        count: u32,
    ) -> Result<(), CallStatus> {
        let over_depth = usize::try_from(count).map_or(true, |c| c > self.depth());
        if interval == u32::MAX && (count == u32::MAX || over_depth) {
            return Err(CallStatus::InvalidParameterMix);
        }
        Ok(())
    }

    /// `NdkResizeCq` (§2.2) to the depth of `ring`, which [`Cq::check_depth`] sized: the queued
    /// completions move into it, oldest first, and the old ring comes back for the shell to free.
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER`, with `ring` given back, when more completions are queued
    /// than the new depth holds \[INFER: the DDI page names INVALID_PARAMETER for a bad depth\].
    pub fn resize(
        &mut self,
        ring: &'a mut [Completion],
    ) -> Result<&'a mut [Completion], (CallStatus, &'a mut [Completion])> {
        if ring.is_empty() {
            return Err((CallStatus::InvalidParameter, ring));
        }
        self.ring
            .move_to(ring)
            .map_err(|ring| (CallStatus::InvalidParameter, ring))
    }

    /// Completions queued.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.ring.len()
    }

    /// No completion queued.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// Whether a notification callback is running (made, not yet returned).
    #[must_use]
    pub const fn is_notifying(&self) -> bool {
        self.running
    }

    /// Whether the CQ is unusable after an overflow (§3.3).
    #[must_use]
    pub fn is_overflowed(&self) -> bool {
        self.overflow != Overflow::No
    }

    /// Queues a completion a QP produced. After an overflow or a close nothing is queued.
    pub fn push(&mut self, completion: Completion) -> Pushed {
        if self.closed || self.overflow != Overflow::No {
            return Pushed {
                queued: false,
                notify: None,
            };
        }
        if self.ring.push(completion).is_none() {
            self.overflow = Overflow::Pending;
            return Pushed {
                queued: false,
                notify: self.evaluate(),
            };
        }
        if completion.matches_solicited() {
            self.last_solicited = Some(self.pushed);
        }
        self.pushed = self.pushed.wrapping_add(1);
        Pushed {
            queued: true,
            notify: self.evaluate(),
        }
    }

    /// `NdkGetCqResults(Ex)` (§3.2): moves up to `out.len()` completions, oldest first, into
    /// `out` and returns how many; 0 when the CQ is empty.
    pub fn get_results(&mut self, out: &mut [Completion]) -> usize {
        let mut n = 0usize;
        for dst in out.iter_mut() {
            let Some(c) = self.ring.pop() else {
                break;
            };
            *dst = c;
            n = n.saturating_add(1);
        }
        n
    }

    /// `NdkArmCq` (§3.3). Returns the callback to make now, if the arm is satisfied at once.
    pub fn arm(&mut self, arm: ArmType) -> Option<Notify> {
        if self.closed || self.overflow == Overflow::Reported {
            return None;
        }
        self.armed = Some(match self.armed {
            Some(first) => ArmType::merge(first, arm),
            None => arm,
        });
        self.evaluate()
    }

    /// The notification callback the shell made returned. A callback that became due meanwhile
    /// is made now; a close made meanwhile completes now.
    pub fn callback_returned(&mut self) -> Returned {
        self.running = false;
        if self.closed {
            return Returned::CompleteClose;
        }
        self.evaluate().map_or(Returned::Idle, Returned::Notify)
    }

    /// `NdkCloseCq`: no callback is made after this. Returns true when the close must pend
    /// until the running callback returns (§1.3, `NdkArmCq`'s page): the shell completes it on
    /// [`Returned::CompleteClose`].
    pub fn close(&mut self) -> bool {
        self.closed = true;
        self.armed = None;
        self.running
    }

    /// Whether a callback is due, and if so consumes the arm and marks it running.
    fn evaluate(&mut self) -> Option<Notify> {
        if self.running || self.closed {
            return None;
        }
        let arm = self.armed?;
        let notify = match self.overflow {
            Overflow::Reported => return None,
            // A CQ error satisfies every arm type (ERRORS is the weakest, §3.3).
            Overflow::Pending => Notify::BufferOverflow,
            Overflow::No => {
                // The queued completions are numbered from `pushed - len`; new ones from `seen`.
                let queued_from = self.pushed.saturating_sub(self.ring.len() as u64);
                let new_from = queued_from.max(self.seen);
                let due = match arm {
                    ArmType::Errors => false,
                    ArmType::Any => new_from < self.pushed,
                    ArmType::Solicited => self.last_solicited.is_some_and(|s| s >= new_from),
                };
                if !due {
                    return None;
                }
                Notify::Success
            }
        };
        if notify == Notify::BufferOverflow {
            self.overflow = Overflow::Reported;
        }
        self.armed = None;
        self.running = true;
        self.seen = self.pushed;
        Some(notify)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn done(ctx: usize) -> Completion {
        Completion {
            request_context: ctx,
            qp_context: 7,
            ..Completion::EMPTY
        }
    }

    fn solicited_receive(ctx: usize) -> Completion {
        Completion {
            operation: OperationType::Receive,
            solicited: true,
            ..done(ctx)
        }
    }

    fn failed(ctx: usize) -> Completion {
        Completion {
            status: CompletionStatus::AccessViolation,
            ..done(ctx)
        }
    }

    fn drain(cq: &mut Cq<'_>) -> Vec<usize> {
        let mut out = [Completion::EMPTY; 4];
        let mut all = Vec::new();
        loop {
            let n = cq.get_results(&mut out);
            if n == 0 {
                return all;
            }
            all.extend(out.iter().take(n).map(|c| c.request_context));
        }
    }

    #[test]
    fn depth_is_checked_against_max_cq_depth() {
        // §2.1 NdkCreateCq, rule 13.
        let p = Profile::ROCE_V2_100G;
        assert_eq!(Cq::check_depth(0, &p), Err(CallStatus::InvalidParameter));
        assert_eq!(Cq::check_depth(1, &p), Ok(1));
        assert_eq!(
            Cq::check_depth(p.max_cq_depth, &p),
            Ok(p.max_cq_depth as usize)
        );
        assert_eq!(
            Cq::check_depth(p.max_cq_depth + 1, &p),
            Err(CallStatus::InvalidParameter)
        );
        assert_eq!(Cq::new(&mut []).err(), Some(CallStatus::InvalidParameter));
    }

    #[test]
    fn interrupt_moderation_fails_only_the_mix_its_page_names() {
        // NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION: with the adapter flag set, success, except
        // MAXULONG for the interval with MAXULONG or more than the depth for the count (this
        // provider once accepted every pair).
        let mut ring = vec![Completion::EMPTY; 8];
        let cq = Cq::new(&mut ring).unwrap();
        let mix = Err(CallStatus::InvalidParameterMix);
        assert_eq!(cq.control_interrupt_moderation(u32::MAX, u32::MAX), mix);
        assert_eq!(cq.control_interrupt_moderation(u32::MAX, 9), mix);
        assert_eq!(cq.control_interrupt_moderation(u32::MAX, 8), Ok(()));
        assert_eq!(cq.control_interrupt_moderation(u32::MAX, 0), Ok(()));
        assert_eq!(cq.control_interrupt_moderation(0, u32::MAX), Ok(()));
        assert_eq!(cq.control_interrupt_moderation(100, 4), Ok(()));
    }

    #[test]
    fn get_results_returns_at_most_n_in_order_and_zero_when_empty() {
        // §3.2, rule 25; and the ring wraps around.
        let mut ring = vec![Completion::EMPTY; 3];
        let mut cq = Cq::new(&mut ring).unwrap();
        let mut out = [Completion::EMPTY; 2];
        assert_eq!(cq.get_results(&mut out), 0);
        let mut next = 0;
        let mut got = Vec::new();
        for round in 0..5 {
            for _ in 0..3 {
                assert!(cq.push(done(next)).queued, "round {round}");
                next += 1;
            }
            assert_eq!(cq.len(), 3);
            assert_eq!(cq.get_results(&mut out), 2);
            got.extend(out.iter().map(|c| c.request_context));
            assert_eq!(cq.get_results(&mut out[..1]), 1);
            got.push(out[0].request_context);
            assert_eq!(cq.get_results(&mut out), 0);
        }
        assert_eq!(got, (0..15).collect::<Vec<_>>());
        assert_eq!(cq.get_results(&mut []), 0);
    }

    #[test]
    fn a_callback_needs_an_arm_and_fires_once_per_arm() {
        // §3.3, rule 27.
        let mut ring = vec![Completion::EMPTY; 8];
        let mut cq = Cq::new(&mut ring).unwrap();
        assert_eq!(cq.push(done(1)).notify, None, "no arm, no callback");
        drain(&mut cq);
        assert_eq!(cq.arm(ArmType::Any), None, "nothing queued");
        assert_eq!(cq.push(done(2)).notify, Some(Notify::Success));
        assert_eq!(cq.callback_returned(), Returned::Idle);
        assert_eq!(cq.push(done(3)).notify, None, "the arm was used up");
        assert_eq!(cq.callback_returned(), Returned::Idle);
    }

    #[test]
    fn an_arm_with_new_completions_queued_fires_at_once_but_not_for_old_ones() {
        // §3.3, rule 28: "new since the last callback" must fire; old ones need not.
        let mut ring = vec![Completion::EMPTY; 8];
        let mut cq = Cq::new(&mut ring).unwrap();
        cq.push(done(1));
        assert_eq!(cq.arm(ArmType::Any), Some(Notify::Success));
        assert_eq!(cq.callback_returned(), Returned::Idle);
        // The consumer did not drain: the entry is old now.
        assert_eq!(cq.arm(ArmType::Any), None);
        assert_eq!(cq.push(done(2)).notify, Some(Notify::Success));
        cq.callback_returned();
        // New entries that were drained before the arm do not count.
        cq.push(done(3));
        drain(&mut cq);
        assert_eq!(cq.arm(ArmType::Any), None);
    }

    #[test]
    fn solicited_matches_solicited_receives_and_errors_only() {
        // §3.3, rule 29.
        let mut ring = vec![Completion::EMPTY; 8];
        let mut cq = Cq::new(&mut ring).unwrap();
        assert_eq!(cq.arm(ArmType::Solicited), None);
        assert_eq!(cq.push(done(1)).notify, None);
        assert_eq!(cq.push(solicited_receive(2)).notify, Some(Notify::Success));
        cq.callback_returned();
        assert_eq!(cq.arm(ArmType::Solicited), None, "the solicited one is old");
        assert_eq!(cq.push(failed(3)).notify, Some(Notify::Success));
        cq.callback_returned();
        // Already queued: a new solicited entry behind a plain one fires the arm at once.
        cq.push(done(4));
        cq.push(solicited_receive(5));
        assert_eq!(cq.arm(ArmType::Solicited), Some(Notify::Success));
        cq.callback_returned();
        // ERRORS is not satisfied by completions, even failed ones.
        assert_eq!(cq.arm(ArmType::Errors), None);
        assert_eq!(cq.push(failed(6)).notify, None);
        assert_eq!(cq.push(solicited_receive(7)).notify, None);
    }

    #[test]
    fn rearming_merges_as_the_table_says() {
        use ArmType::*;
        // §3.3: (first, second) -> in force.
        let table = [
            (Any, Any, Any),
            (Any, Errors, Any),
            (Any, Solicited, Any),
            (Errors, Any, Any),
            (Errors, Errors, Errors),
            (Errors, Solicited, Solicited),
            (Solicited, Any, Any),
            (Solicited, Errors, Solicited),
            (Solicited, Solicited, Solicited),
        ];
        for (first, second, merged) in table {
            assert_eq!(
                ArmType::merge(first, second),
                merged,
                "{first:?} {second:?}"
            );
            // And the CQ behaves as the merged arm: a plain completion fires it only for ANY,
            // a solicited one for ANY and SOLICITED.
            let mut ring = vec![Completion::EMPTY; 4];
            let mut cq = Cq::new(&mut ring).unwrap();
            assert_eq!(cq.arm(first), None);
            assert_eq!(cq.arm(second), None);
            let plain = cq.push(done(1)).notify.is_some();
            let solicited = plain || cq.push(solicited_receive(2)).notify.is_some();
            assert_eq!(plain, merged == Any, "{first:?} {second:?}");
            assert_eq!(solicited, merged != Errors, "{first:?} {second:?}");
        }
        assert_eq!(ArmType::from_u32(0), Some(Errors));
        assert_eq!(ArmType::from_u32(1), Some(Any));
        assert_eq!(ArmType::from_u32(2), Some(Solicited));
        assert_eq!(ArmType::from_u32(3), None);
    }

    #[test]
    fn callbacks_never_overlap_and_a_due_one_follows_the_return() {
        // §3.3, rule 31.
        let mut ring = vec![Completion::EMPTY; 8];
        let mut cq = Cq::new(&mut ring).unwrap();
        cq.arm(ArmType::Any);
        assert_eq!(cq.push(done(1)).notify, Some(Notify::Success));
        // Inside the callback: drain, re-arm; a completion arrives from another CPU.
        drain(&mut cq);
        assert_eq!(cq.arm(ArmType::Any), None, "nothing new yet");
        assert_eq!(cq.push(done(2)).notify, None, "a callback is running");
        assert_eq!(cq.callback_returned(), Returned::Notify(Notify::Success));
        assert_eq!(cq.push(done(3)).notify, None, "running again");
        assert_eq!(cq.callback_returned(), Returned::Idle, "not re-armed");
    }

    #[test]
    fn overflow_reports_buffer_overflow_once_and_the_cq_takes_nothing_more() {
        // §3.3, rule 32: the status goes through the callback whatever the arm type.
        for arm in [ArmType::Errors, ArmType::Solicited, ArmType::Any] {
            let mut ring = vec![Completion::EMPTY; 2];
            let mut cq = Cq::new(&mut ring).unwrap();
            assert!(cq.push(done(1)).queued);
            assert!(cq.push(done(2)).queued);
            if cq.arm(arm).is_some() {
                // ANY fires for the two new ones; then it is re-armed with nothing new.
                assert_eq!(cq.callback_returned(), Returned::Idle);
                assert_eq!(cq.arm(arm), None);
            }
            let over = cq.push(done(3));
            assert_eq!(
                over,
                Pushed {
                    queued: false,
                    notify: Some(Notify::BufferOverflow)
                },
                "{arm:?}"
            );
            assert!(cq.is_overflowed());
            cq.callback_returned();
            assert_eq!(drain(&mut cq), [1, 2], "what was queued stays readable");
            assert!(!cq.push(done(4)).queued, "unusable");
            assert_eq!(cq.arm(ArmType::Any), None, "never again");
        }
        // Not armed at the overflow: reported at the next arm.
        let mut ring = vec![Completion::EMPTY; 1];
        let mut cq = Cq::new(&mut ring).unwrap();
        cq.push(done(1));
        assert_eq!(cq.push(done(2)).notify, None);
        assert_eq!(cq.arm(ArmType::Errors), Some(Notify::BufferOverflow));
    }

    #[test]
    fn a_close_during_a_callback_pends_until_it_returns_and_silences_the_cq() {
        // §1.3 and NdkArmCq's page: the close waits for the running callback.
        let mut ring = vec![Completion::EMPTY; 4];
        let mut cq = Cq::new(&mut ring).unwrap();
        cq.arm(ArmType::Any);
        assert!(cq.push(done(1)).notify.is_some());
        cq.arm(ArmType::Any);
        assert!(cq.close(), "pends");
        assert_eq!(cq.push(done(2)).notify, None);
        assert_eq!(cq.callback_returned(), Returned::CompleteClose);
        assert_eq!(cq.arm(ArmType::Any), None);

        let mut ring = vec![Completion::EMPTY; 4];
        let mut idle = Cq::new(&mut ring).unwrap();
        idle.arm(ArmType::Any);
        assert!(!idle.close(), "no callback running: closes at once");
        assert_eq!(idle.push(done(1)).notify, None, "no callback after close");
    }

    #[test]
    fn resize_keeps_the_queued_completions_in_order() {
        let mut small = [Completion::EMPTY; 2];
        let mut big = [Completion::EMPTY; 4];
        let mut cq = Cq::new(&mut small).unwrap();
        for i in 0..2 {
            cq.push(Completion {
                request_context: i,
                ..Completion::EMPTY
            });
        }
        let mut tiny = [Completion::EMPTY; 1];
        let (status, _) = cq.resize(&mut tiny).unwrap_err();
        assert_eq!(status, CallStatus::InvalidParameter);
        let old = cq.resize(&mut big).unwrap();
        assert_eq!(old.len(), 2);
        assert_eq!(cq.depth(), 4);
        cq.push(Completion {
            request_context: 2,
            ..Completion::EMPTY
        });
        let mut out = [Completion::EMPTY; 4];
        assert_eq!(cq.get_results(&mut out), 3);
        let order: Vec<usize> = out.iter().take(3).map(|c| c.request_context).collect();
        assert_eq!(order, [0, 1, 2]);
    }
}
