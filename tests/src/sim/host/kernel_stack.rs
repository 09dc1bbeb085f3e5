//! The stack the driver's entry points run on. An x64 kernel thread has 24 KiB of stack
//! (KERNEL_STACK_SIZE) with a guard page below it, and NDIS and the protocols above the miniport
//! use the same thread before the driver is called: the simulator grants them [`ALLOWANCE`]
//! (8 KiB), so the driver, with the frames of the simulator's exports it calls (the real
//! ndis.sys's frames would be there), has [`DRIVER_STACK`] (16 KiB).
//!
//! On the Windows host (`cargo xtask kit`, the loaded image) the outermost handler call on a
//! thread runs on a fiber of that thread whose stack is measured and bounded:
//!
//! - the [`DRIVER_STACK`] bytes below the fiber's stack base are painted with a pattern before
//!   each call and scanned after it: the lowest word written is the call's high-water mark,
//!   kept per entry point name ([`high_water`]);
//! - the page below them is a guard page (`PAGE_GUARD`). A host that raises
//!   `STATUS_GUARD_PAGE_VIOLATION` for it, or `STATUS_STACK_OVERFLOW` at the fiber's own end
//!   (a runaway recursion), has a vectored exception handler switch back to the thread's main
//!   fiber at once; a host that treats a guard page inside a stack as the stack growing (Wine
//!   8.0, like Windows's own stack growth, moves the guard down a page and carries on) has the
//!   guard found spent after the call. Either way the call is an overflow: [`run`] panics with
//!   "stack overflow in \<entry point\>", which fails the case, and the fiber is abandoned for a
//!   new one.
//!
//! Wine 8.0 gives every stack at least 1 MiB whatever the fiber asks, so the bound is the
//! guard page, not the fiber's size; the room below the guard is where the host dispatches the
//! exception. Thread-local state (IRQL, current adapter) is the thread's, whichever fiber runs.
//!
//! A handler called while another runs on the fiber (a nested call, such as a DPC run when the
//! driver lowers the IRQL) runs on the same stack, so its use counts for the outer entry point.
//!
//! On Linux the handlers run on the calling thread's stack (nothing is measured here; the
//! probes of `sim::stack` measure there).

use std::collections::BTreeMap;

/// The x64 kernel stack of a thread (KERNEL_STACK_SIZE).
pub const KERNEL_STACK: usize = 24 * 1024;

/// What NDIS and the protocols above the miniport use of a thread's stack before the driver's
/// entry point runs: [a choice: 8 KiB; the DDI reference states no figure].
pub const ALLOWANCE: usize = 8 * 1024;

/// The stack an entry point has: the kernel stack less the allowance.
pub const DRIVER_STACK: usize = KERNEL_STACK - ALLOWANCE;

/// Runs `f`, a driver handler named `name`, on the kernel stack (the calling thread's stack
/// where the host has none: Linux).
///
/// # Panics
/// With "stack overflow in `name`" when `f` used more than [`DRIVER_STACK`] bytes.
pub fn run<R>(name: &str, f: impl FnOnce() -> R) -> R {
    imp::run(name, f)
}

/// Whether handlers run on a bounded, measured kernel stack on this host.
pub const MEASURED: bool = cfg!(windows);

/// Each entry point's deepest stack use on the kernel stack so far, bytes from the stack's base
/// (the simulator's frames between the fiber's start and the handler included).
#[must_use]
pub fn high_water() -> BTreeMap<String, usize> {
    imp::high_water()
}

#[cfg(not(windows))]
mod imp {
    use std::collections::BTreeMap;

    pub(super) fn run<R>(_: &str, f: impl FnOnce() -> R) -> R {
        f()
    }

    pub(super) fn high_water() -> BTreeMap<String, usize> {
        BTreeMap::new()
    }
}

#[cfg(windows)]
mod imp {
    use std::cell::{Cell, RefCell};
    use std::collections::BTreeMap;
    use std::ffi::c_void;
    use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
    use std::sync::{LazyLock, Mutex, Once};

    use windows_sys::Win32::Foundation::{STATUS_GUARD_PAGE_VIOLATION, STATUS_STACK_OVERFLOW};
    use windows_sys::Win32::System::Diagnostics::Debug::{
        AddVectoredExceptionHandler, EXCEPTION_POINTERS,
    };
    use windows_sys::Win32::System::Memory::{
        MEMORY_BASIC_INFORMATION, PAGE_GUARD, PAGE_READWRITE, VirtualProtect, VirtualQuery,
    };
    use windows_sys::Win32::System::Threading::{
        ConvertThreadToFiber, CreateFiberEx, DeleteFiber, GetCurrentThreadStackLimits,
        SwitchToFiber,
    };

    use super::DRIVER_STACK;
    use crate::sim::lock;

    const PAGE: usize = 4096;

    /// What the fiber's stack is asked to be: the driver's stack, its guard page, and room below
    /// for the host to dispatch an exception raised at the guard.
    const RESERVE: usize = DRIVER_STACK + PAGE + 64 * 1024;

    /// The paint of the driver's stack.
    const PATTERN: u64 = 0x5AFE_57AC_CDCB_1DC0;

    /// The continuation of `EXCEPTION_CONTINUE_SEARCH`.
    const CONTINUE_SEARCH: i32 = 0;

    static HIGH_WATER: LazyLock<Mutex<BTreeMap<String, usize>>> =
        LazyLock::new(|| Mutex::new(BTreeMap::new()));

    /// One thread's kernel-stack fiber.
    struct Fiber {
        /// The fiber (`CreateFiberEx`); its stack's base is [`BASE`].
        handle: *mut c_void,
    }

    impl Drop for Fiber {
        /// At the thread's exit, or when an overflow abandons it: its stack is freed.
        fn drop(&mut self) {
            // SAFETY: a fiber of this thread that does not run now: it is dropped on the main
            // fiber, after the call on it returned or was abandoned.
            unsafe { DeleteFiber(self.handle) };
        }
    }

    thread_local! {
        /// This thread as a fiber (`ConvertThreadToFiber`): null until the first handler call;
        /// where the thread cannot be one, handlers run on its own stack.
        static MAIN: Cell<*mut c_void> = const { Cell::new(std::ptr::null_mut()) };
        static FIBER: RefCell<Option<Fiber>> = const { RefCell::new(None) };
        /// The call the fiber runs next (set by [`run`] before it switches to the fiber).
        static JOB: Cell<Option<*mut (dyn FnMut() + 'static)>> = const { Cell::new(None) };
        /// Whether a handler runs on the fiber now.
        static ON_FIBER: Cell<bool> = const { Cell::new(false) };
        /// Set by the exception handler when it abandoned the fiber's call.
        static OVERFLOWED: Cell<bool> = const { Cell::new(false) };
        /// The fiber's stack base (highest address), read on the fiber at its first run; 0
        /// before.
        static BASE: Cell<usize> = const { Cell::new(0) };
    }

    pub(super) fn high_water() -> BTreeMap<String, usize> {
        lock(&HIGH_WATER).clone()
    }

    /// The thread's main fiber, converting the thread on its first call (null: it cannot be).
    fn main_fiber() -> *mut c_void {
        let main = MAIN.get();
        if !main.is_null() {
            return main;
        }
        // SAFETY: no preconditions; the thread is not a fiber yet (this module converts it once
        // and nothing else in the kit does).
        let main = unsafe { ConvertThreadToFiber(std::ptr::null()) };
        MAIN.set(main);
        main
    }

    /// The thread's kernel-stack fiber, made if it has none (null: the host refused).
    fn fiber() -> *mut c_void {
        FIBER.with(|f| {
            let mut f = f.borrow_mut();
            if let Some(fiber) = f.as_ref() {
                return fiber.handle;
            }
            // SAFETY: a start routine that never returns (it switches back to the main fiber
            // after every call); no parameter.
            let handle =
                unsafe { CreateFiberEx(RESERVE, RESERVE, 0, Some(fiber_main), std::ptr::null()) };
            if !handle.is_null() {
                *f = Some(Fiber { handle });
                BASE.set(0);
            }
            handle
        })
    }

    /// The stack pointer, near enough (the address of a local).
    #[inline(always)]
    fn stack_pointer() -> usize {
        let marker = 0u8;
        std::hint::black_box(&raw const marker) as usize
    }

    /// The fiber's routine: each switch to it runs [`JOB`] and switches back.
    unsafe extern "system" fn fiber_main(_: *mut c_void) {
        let mut low = 0usize;
        let mut base = 0usize;
        // SAFETY: two locals to write; no preconditions.
        unsafe { GetCurrentThreadStackLimits(&raw mut low, &raw mut base) };
        let base = base & !(PAGE - 1);
        BASE.set(base);
        let bottom = base - DRIVER_STACK;
        if bottom - PAGE > low {
            let mut old = 0;
            // SAFETY: the page below the driver's stack, inside this fiber's stack
            // reservation (above its low limit), committed by the host: a guard page.
            unsafe {
                VirtualProtect(
                    (bottom - PAGE) as *const c_void,
                    PAGE,
                    PAGE_READWRITE | PAGE_GUARD,
                    &raw mut old,
                )
            };
        }
        loop {
            if let Some(job) = JOB.take() {
                // SAFETY: [`run`] set it to a closure that lives until this call returns (it
                // waits on the main fiber meanwhile); the closure catches every unwind.
                unsafe { (*job)() };
            }
            // SAFETY: the thread's main fiber, which switched here.
            unsafe { SwitchToFiber(MAIN.get()) };
        }
    }

    /// Paints the driver's stack from its bottom to below the stack pointer here.
    #[inline(never)]
    fn paint(bottom: usize) {
        let top = (stack_pointer() - 512) & !7;
        let mut at = bottom;
        while at < top {
            // SAFETY: within this fiber's stack, below every live frame (the stack pointer less
            // a margin for this function's own frame): memory no one reads.
            unsafe { std::ptr::write_volatile(at as *mut u64, PATTERN) };
            at += 8;
        }
    }

    /// The lowest address written since [`paint`], from the driver stack's bottom up.
    fn lowest_written(bottom: usize, base: usize) -> usize {
        let mut at = bottom;
        while at < base {
            // SAFETY: within this fiber's stack, above the guard page: committed memory.
            if unsafe { std::ptr::read_volatile(at as *const u64) } != PATTERN {
                return at;
            }
            at += 8;
        }
        base
    }

    /// Whether the guard page below the driver's stack is still a guard page.
    fn guard_intact(bottom: usize) -> bool {
        // SAFETY: an all-zero MEMORY_BASIC_INFORMATION is a valid value to be overwritten.
        let mut info: MEMORY_BASIC_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: an address of this process and a buffer of the size given.
        let n = unsafe {
            VirtualQuery(
                (bottom - PAGE) as *const c_void,
                &raw mut info,
                size_of::<MEMORY_BASIC_INFORMATION>(),
            )
        };
        n != 0 && info.Protect & PAGE_GUARD != 0
    }

    /// A `STATUS_STACK_OVERFLOW` or a guard page hit while a handler runs on this thread's
    /// fiber: the call is abandoned, back on the main fiber.
    unsafe extern "system" fn on_exception(info: *mut EXCEPTION_POINTERS) -> i32 {
        // SAFETY: the system passes valid exception pointers.
        let record = unsafe { (*info).ExceptionRecord };
        // SAFETY: `ExceptionRecord` of the exception pointers the system passed points to the
        // live record of the exception being dispatched.
        let code = unsafe { (*record).ExceptionCode };
        if code != STATUS_STACK_OVERFLOW && code != STATUS_GUARD_PAGE_VIOLATION {
            return CONTINUE_SEARCH;
        }
        let base = BASE.get();
        let here = stack_pointer();
        // On this thread's fiber's stack (Wine makes it 1 MiB, whatever it is asked).
        if !ON_FIBER.get() || base == 0 || here > base || base - here > 2 << 20 {
            return CONTINUE_SEARCH;
        }
        OVERFLOWED.set(true);
        // SAFETY: the thread's main fiber, waiting in [`run`]; the fiber's call is not resumed.
        unsafe { SwitchToFiber(MAIN.get()) };
        CONTINUE_SEARCH
    }

    pub(super) fn run<R>(name: &str, f: impl FnOnce() -> R) -> R {
        if ON_FIBER.get() {
            return f();
        }
        static HANDLER: Once = Once::new();
        HANDLER.call_once(|| {
            // SAFETY: a handler for the process's lifetime, called first.
            unsafe { AddVectoredExceptionHandler(1, Some(on_exception)) };
        });
        let main = main_fiber();
        let fiber = if main.is_null() { main } else { fiber() };
        if fiber.is_null() {
            return f();
        }
        let mut f = Some(f);
        let mut outcome: Option<std::thread::Result<Option<R>>> = None;
        let mut used = 0usize;
        let mut guard_spent = false;
        {
            let mut job = || {
                let base = BASE.get();
                let bottom = base - DRIVER_STACK;
                paint(bottom);
                outcome = Some(catch_unwind(AssertUnwindSafe(|| f.take().map(|f| f()))));
                used = base - lowest_written(bottom, base);
                guard_spent = !guard_intact(bottom);
            };
            let job: &mut dyn FnMut() = &mut job;
            // SAFETY: only the lifetime is erased: the closure outlives its one call, made
            // while this function waits for the fiber to switch back.
            let job: *mut (dyn FnMut() + 'static) = unsafe { std::mem::transmute(job) };
            JOB.set(Some(job));
            ON_FIBER.set(true);
            OVERFLOWED.set(false);
            // SAFETY: this thread's fiber, not running (ON_FIBER was false).
            unsafe { SwitchToFiber(fiber) };
            ON_FIBER.set(false);
            JOB.set(None);
        }
        // The exception handler abandoned the call (no outcome), or the guard page was spent.
        let overflowed = OVERFLOWED.replace(false) || guard_spent;
        let outcome = outcome.filter(|_| !overflowed);
        if outcome.is_none() {
            // The fiber is abandoned where it stopped (or its guard is spent): a new one next.
            drop(FIBER.with(|f| f.borrow_mut().take()));
            BASE.set(0);
            panic!(
                "stack overflow in {name}: more than the {DRIVER_STACK} bytes of kernel stack an entry point has ({} KiB less the {} KiB allowance for NDIS and the protocols above)",
                super::KERNEL_STACK / 1024,
                super::ALLOWANCE / 1024
            );
        }
        {
            let mut high = lock(&HIGH_WATER);
            let slot = high.entry(name.to_owned()).or_insert(0);
            *slot = (*slot).max(used);
        }
        match outcome {
            Some(Ok(Some(r))) => r,
            Some(Err(payload)) => resume_unwind(payload),
            // The closure ran once and returned (`Some`), or the call was abandoned (above).
            Some(Ok(None)) | None => panic!("{name}: the call on the kernel stack did not run"),
        }
    }
}
