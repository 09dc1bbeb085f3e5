//! The host's processors: how many there are, which one a thread runs on, and keeping a thread
//! on one (the Stress group's threads, one per CPU, and `NdisCurrentGroupAndProcessor`).

/// The host's configured processors (at least 1), read once.
pub fn processors() -> u32 {
    static COUNT: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *COUNT.get_or_init(|| imp::processors().max(1))
}

/// Keeps the calling thread on processor `cpu` from now on; `false` when the host does not let
/// this process run there (then the thread stays where it may run).
#[must_use]
pub fn run_on_processor(cpu: u32) -> bool {
    imp::run_on_processor(cpu)
}

/// The processor this thread runs on now.
#[must_use]
pub fn current() -> u32 {
    imp::current()
}

#[cfg(not(windows))]
mod imp {
    pub(super) fn processors() -> u32 {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
        u32::try_from(n).unwrap_or(1)
    }

    pub(super) fn run_on_processor(cpu: u32) -> bool {
        let Ok(cpu) = usize::try_from(cpu) else {
            return false;
        };
        // SAFETY: an all-zero cpu_set_t is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        if cpu >= 8 * size_of::<libc::cpu_set_t>() {
            return false;
        }
        // SAFETY: `cpu` is within the set's bits (checked above).
        unsafe { libc::CPU_SET(cpu, &mut set) };
        // SAFETY: 0 is the calling thread; the set is valid for the call, with its own size.
        unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &raw const set) == 0 }
    }

    /// `sched_getcpu`.
    #[cfg(not(miri))]
    pub(super) fn current() -> u32 {
        // SAFETY: sched_getcpu has no preconditions; -1 on failure.
        u32::try_from(unsafe { libc::sched_getcpu() }).unwrap_or(0)
    }

    /// Under Miri, which has no `sched_getcpu` and runs every thread on one host thread: each
    /// call answers the next of the interpreter's processors (`-Zmiri-num-cpus`) in turn, as if
    /// the thread moved between calls, which the simulator allows anyway
    /// (`NdisCurrentGroupAndProcessor`), so every per-CPU block is written and two threads share
    /// one.
    #[cfg(miri)]
    pub(super) fn current() -> u32 {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        NEXT.fetch_add(1, Ordering::Relaxed) % super::processors()
    }
}

#[cfg(windows)]
mod imp {
    use windows_sys::Win32::System::Threading::{
        ALL_PROCESSOR_GROUPS, GetActiveProcessorCount, GetCurrentProcessorNumber, GetCurrentThread,
        SetThreadAffinityMask,
    };

    pub(super) fn processors() -> u32 {
        // SAFETY: no preconditions; 0 on failure.
        unsafe { GetActiveProcessorCount(ALL_PROCESSOR_GROUPS) }
    }

    pub(super) fn run_on_processor(cpu: u32) -> bool {
        if cpu >= usize::BITS || cpu >= processors() {
            return false;
        }
        // SAFETY: no preconditions: the pseudo handle of the calling thread.
        let thread = unsafe { GetCurrentThread() };
        // SAFETY: a thread handle valid for the call, a mask of one processor the host has.
        unsafe { SetThreadAffinityMask(thread, 1usize << cpu) != 0 }
    }

    pub(super) fn current() -> u32 {
        // SAFETY: no preconditions.
        unsafe { GetCurrentProcessorNumber() }
    }
}
