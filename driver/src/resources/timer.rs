//! One NDIS timer object and the accounting that makes stopping it safe: the count of routine
//! runs still to come (armed and not cancelled, or running). `NdisCancelTimerObject` returning
//! FALSE means the routine may be queued but not started yet, so "no routine is running" is not
//! enough before freeing what it uses; this count is.
//!
//! Arming adds one expected run before `NdisSetTimerObject` and takes it back if the timer was
//! already queued (re-armed: still one run); a successful cancel takes one back; each run takes
//! one back when the routine ends ([`Timer::routine_done`]). [`Timer::stop`] cancels and waits
//! for 0.
//!
//! A [`Timer`] owns its timer object: dropping it stops it and frees the object, so that a
//! failed initialize that drops the DCBX and link shells leaves no object allocated: a separate
//! free call is one every failure path would have to remember.

use core::ptr::null_mut;
use core::sync::atomic::{AtomicI32, Ordering};

use ndis_sys::hal::KeQueryPerformanceCounter;
use ndis_sys::imports::{
    NdisAllocateTimerObject, NdisCancelTimerObject, NdisFreeTimerObject, NdisGetSystemUpTimeEx,
    NdisMSleep, NdisSetTimerObject,
};
use ndis_sys::objectheader::{NDIS_OBJECT_HEADER, NDIS_OBJECT_TYPE_TIMER_CHARACTERISTICS};
use ndis_sys::status::NDIS_STATUS_SUCCESS;
use ndis_sys::timer::{
    NDIS_SIZEOF_TIMER_CHARACTERISTICS_REVISION_1, NDIS_TIMER_CHARACTERISTICS,
    NDIS_TIMER_CHARACTERISTICS_REVISION_1, NDIS_TIMER_FUNCTION,
};
use ndis_sys::types::{NDIS_HANDLE, PVOID};

/// Milliseconds since the system started (`NdisGetSystemUpTimeEx`; any IRQL): the clock the
/// timers' users schedule by.
pub fn now_ms() -> u64 {
    let mut t: i64 = 0;
    // SAFETY: `t` is a valid LARGE_INTEGER to write; any IRQL.
    unsafe { NdisGetSystemUpTimeEx(&raw mut t) };
    u64::try_from(t).unwrap_or(0)
}

/// Whole milliseconds from `from_ns` until `at_ns` (both of [`now_ns`]), rounded up, 0 once
/// `at_ns` has passed: how far ahead a one-shot timer is armed to run at `at_ns`
/// ([`Timer::arm`] counts milliseconds).
pub fn ms_until(at_ns: u64, from_ns: u64) -> u64 {
    at_ns.saturating_sub(from_ns).div_ceil(1_000_000)
}

/// Nanoseconds since the system started, from the performance counter (any IRQL): the clock
/// of the virtual link and the NDK transports. It must be finer than [`now_ms`]: a frame may
/// start on the link no later than now, so on a millisecond clock a link that sent one frame in
/// a millisecond sent no other until the next (a ping-pong paid a millisecond per message).
pub fn now_ns() -> u64 {
    let mut frequency: i64 = 0;
    // SAFETY: `frequency` is a valid LARGE_INTEGER to write; any IRQL.
    let ticks = unsafe { KeQueryPerformanceCounter(&raw mut frequency) };
    match (u64::try_from(ticks), u64::try_from(frequency)) {
        (Ok(ticks), Ok(frequency)) if frequency > 0 => ticks_to_ns(ticks, frequency),
        // A counter that cannot be read (no frequency) leaves the millisecond clock.
        _ => now_ms().saturating_mul(1_000_000),
    }
}

/// `ticks` of a counter at `frequency` (> 0) Hz in nanoseconds, rounded down, saturating:
/// whole seconds and the rest apart, in 64 bits (the rest times 10^9 fits while the frequency
/// is below 18 GHz; a performance counter runs at a few MHz). The one 128-bit product and
/// division it replaces was a call to a 128-bit division routine on every clock read, several
/// per NDK message.
fn ticks_to_ns(ticks: u64, frequency: u64) -> u64 {
    const NS: u64 = 1_000_000_000;
    let (Some(seconds), Some(rest)) = (ticks.checked_div(frequency), ticks.checked_rem(frequency))
    else {
        return u64::MAX;
    };
    let rest_ns = rest
        .checked_mul(NS)
        .and_then(|r| r.checked_div(frequency))
        .unwrap_or_else(|| {
            // A frequency of 18 GHz or more: the exact 128-bit way (below `frequency`, so below
            // 10^9 after the division).
            let r = u128::from(rest)
                .saturating_mul(u128::from(NS))
                .checked_div(u128::from(frequency));
            r.and_then(|r| u64::try_from(r).ok()).unwrap_or(u64::MAX)
        });
    seconds.saturating_mul(NS).saturating_add(rest_ns)
}

/// How long a stop sleeps between looks at the runs still to come.
const STOP_POLL_MICROSECONDS: u32 = 50;

/// Sleeps `microseconds` (`NdisMSleep`), for the waits of pause and halt. PASSIVE_LEVEL only
/// (NDIS's rule for `NdisMSleep`), with no spin lock held: every caller is a wait of pause or
/// halt, which NDIS calls at PASSIVE_LEVEL.
pub fn sleep_passive(microseconds: u32) {
    // SAFETY: NdisMSleep takes no pointer; its IRQL rule (PASSIVE_LEVEL, no spin lock held) is
    // this function's, which its callers keep.
    unsafe { NdisMSleep(microseconds) };
}

/// An NDIS timer object, freed when the value is dropped. Its owner drops it at PASSIVE_LEVEL
/// (halt, or a failed initialize), once nothing arms it any more.
pub struct Timer {
    handle: NDIS_HANDLE,
    runs_to_come: AtomicI32,
}

impl Timer {
    /// `NdisAllocateTimerObject` (PASSIVE_LEVEL); `None` when NDIS cannot.
    ///
    /// # Safety
    /// `owner` is the miniport adapter handle, valid until the timer is freed.
    pub unsafe fn new(owner: NDIS_HANDLE, tag: u32, routine: NDIS_TIMER_FUNCTION) -> Option<Self> {
        let mut characteristics = NDIS_TIMER_CHARACTERISTICS {
            Header: NDIS_OBJECT_HEADER::new(
                NDIS_OBJECT_TYPE_TIMER_CHARACTERISTICS,
                NDIS_TIMER_CHARACTERISTICS_REVISION_1,
                NDIS_SIZEOF_TIMER_CHARACTERISTICS_REVISION_1,
            ),
            AllocationTag: tag,
            TimerFunction: routine,
            // The context is given at each arming, once the adapter context exists.
            FunctionContext: null_mut(),
        };
        let mut handle: NDIS_HANDLE = null_mut();
        // SAFETY: a valid handle, characteristics and out pointer for the duration of the call.
        let status =
            unsafe { NdisAllocateTimerObject(owner, &raw mut characteristics, &raw mut handle) };
        // Built only for an allocated object: a `Timer` frees its object when dropped.
        if status != NDIS_STATUS_SUCCESS || handle.is_null() {
            return None;
        }
        Some(Self {
            handle,
            runs_to_come: AtomicI32::new(0),
        })
    }

    /// Arms the timer to run once `after_ms` milliseconds from now (at least 1) with `context`.
    ///
    /// # Safety
    /// `context` stays valid for the routine until [`Timer::stop`] returned.
    pub unsafe fn arm(&self, after_ms: u64, context: PVOID) {
        // Relative due times are negative, in 100 ns units.
        let due = i64::try_from(after_ms.max(1))
            .unwrap_or(i64::MAX / 10_000)
            .saturating_mul(-10_000);
        self.runs_to_come.fetch_add(1, Ordering::SeqCst);
        // SAFETY: our timer object; `context` stays valid until `stop` (function contract).
        let was_queued = unsafe { NdisSetTimerObject(self.handle, due, 0, context) };
        if was_queued != 0 {
            self.runs_to_come.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// The routine's last act: one run fewer to come.
    pub fn routine_done(&self) {
        self.runs_to_come.fetch_sub(1, Ordering::SeqCst);
    }

    /// Cancels the timer and waits until no run is to come (PASSIVE_LEVEL). The caller first
    /// makes sure a routine still running will not arm it again.
    pub fn stop(&self) {
        loop {
            // SAFETY: our timer object.
            if unsafe { NdisCancelTimerObject(self.handle) } != 0 {
                self.runs_to_come.fetch_sub(1, Ordering::SeqCst);
            }
            if self.runs_to_come.load(Ordering::SeqCst) <= 0 {
                return;
            }
            sleep_passive(STOP_POLL_MICROSECONDS);
        }
    }
}

impl Drop for Timer {
    /// Stops the timer (a no-op when it is not armed) and frees its object (PASSIVE_LEVEL).
    fn drop(&mut self) {
        self.stop();
        // SAFETY: the object came from NdisAllocateTimerObject in `new` and is freed once, here;
        // `stop` returned, so it is not armed and no routine of it runs, and nothing arms it
        // again (the type's contract); the owner drops it at PASSIVE_LEVEL.
        unsafe { NdisFreeTimerObject(self.handle) };
    }
}

#[cfg(test)]
mod tests {
    use super::ticks_to_ns;

    /// The 128-bit formula it replaces, for comparison.
    fn exact(ticks: u64, frequency: u64) -> u64 {
        u64::try_from(u128::from(ticks) * 1_000_000_000 / u128::from(frequency)).unwrap_or(u64::MAX)
    }

    #[test]
    fn ticks_to_ns_equals_the_128_bit_formula() {
        let frequencies = [
            1,
            3,
            1_000,
            3_579_545,
            10_000_000,
            14_318_180,
            1_000_000_000,
            19_000_000_000,
            u64::MAX,
        ];
        let ticks = [
            0,
            1,
            9_999_999,
            10_000_000,
            123_456_789_012,
            1 << 40,
            1 << 62,
            u64::MAX,
        ];
        for &f in &frequencies {
            for &t in &ticks {
                assert_eq!(ticks_to_ns(t, f), exact(t, f), "{t} ticks at {f} Hz");
            }
        }
    }
}
