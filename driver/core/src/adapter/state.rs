//! The adapter's NDIS state machine (spec §2; the miniport adapter states of the NDIS 6
//! documentation): Initializing -> Paused -> Restarting -> Running -> Pausing -> Paused -> Halted.
//!
//! The state is one atomic byte: the send path reads it at DISPATCH_LEVEL on any CPU without a
//! lock, while NDIS drives the transitions (serialized by NDIS: it never runs two of initialize,
//! pause, restart, halt, reset or PnP handlers for one adapter at once).

use core::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};

/// One state of a miniport adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AdapterState {
    /// `MiniportInitializeEx` is running.
    Initializing = 0,
    /// Initialized or paused: no sends, no receives.
    Paused = 1,
    /// `MiniportRestart` is running.
    Restarting = 2,
    /// Sends and receives flow.
    Running = 3,
    /// `MiniportPause` is running: outstanding sends complete, new ones are refused.
    Pausing = 4,
    /// `MiniportHaltEx` has run.
    Halted = 5,
}

impl AdapterState {
    const fn from_u8(value: u8) -> Self {
        match value {
            0 => Self::Initializing,
            1 => Self::Paused,
            2 => Self::Restarting,
            3 => Self::Running,
            4 => Self::Pausing,
            _ => Self::Halted,
        }
    }

    /// The name used in logs and reports.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Initializing => "Initializing",
            Self::Paused => "Paused",
            Self::Restarting => "Restarting",
            Self::Running => "Running",
            Self::Pausing => "Pausing",
            Self::Halted => "Halted",
        }
    }
}

/// A transition NDIS asked for that the adapter's state does not allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrongState {
    /// The state the adapter was in.
    pub found: AdapterState,
    /// What was asked.
    pub wanted: &'static str,
}

/// The state of one adapter, shared by every path.
#[derive(Debug)]
pub struct StateMachine {
    state: AtomicU8,
    in_flight: AtomicU32,
    surprise_removed: AtomicBool,
    shut_down: AtomicBool,
}

impl Default for StateMachine {
    fn default() -> Self {
        Self::new()
    }
}

impl StateMachine {
    /// A machine in `Initializing`.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            state: AtomicU8::new(AdapterState::Initializing as u8),
            in_flight: AtomicU32::new(0),
            surprise_removed: AtomicBool::new(false),
            shut_down: AtomicBool::new(false),
        }
    }

    /// The current state.
    #[must_use]
    pub fn current(&self) -> AdapterState {
        AdapterState::from_u8(self.state.load(Ordering::SeqCst))
    }

    fn transition(
        &self,
        from: &[AdapterState],
        to: AdapterState,
        wanted: &'static str,
    ) -> Result<(), WrongState> {
        let mut current = self.state.load(Ordering::SeqCst);
        loop {
            let found = AdapterState::from_u8(current);
            if !from.contains(&found) {
                return Err(WrongState { found, wanted });
            }
            match self.state.compare_exchange(
                current,
                to as u8,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(()),
                Err(actual) => current = actual,
            }
        }
    }

    /// End of a successful `MiniportInitializeEx`: an initialized adapter is paused.
    ///
    /// # Errors
    /// [`WrongState`] unless the adapter is initializing.
    pub fn initialized(&self) -> Result<(), WrongState> {
        self.transition(
            &[AdapterState::Initializing],
            AdapterState::Paused,
            "complete initialize",
        )
    }

    /// Start of `MiniportRestart`.
    ///
    /// # Errors
    /// [`WrongState`] unless the adapter is paused.
    pub fn begin_restart(&self) -> Result<(), WrongState> {
        self.transition(&[AdapterState::Paused], AdapterState::Restarting, "restart")
    }

    /// End of `MiniportRestart`: `ok` says whether it succeeded (a failed restart stays paused).
    ///
    /// # Errors
    /// [`WrongState`] unless the adapter is restarting.
    pub fn end_restart(&self, ok: bool) -> Result<(), WrongState> {
        let to = if ok {
            AdapterState::Running
        } else {
            AdapterState::Paused
        };
        self.transition(&[AdapterState::Restarting], to, "complete restart")
    }

    /// Start of `MiniportPause`.
    ///
    /// # Errors
    /// [`WrongState`] unless the adapter is running.
    pub fn begin_pause(&self) -> Result<(), WrongState> {
        self.transition(&[AdapterState::Running], AdapterState::Pausing, "pause")
    }

    /// End of `MiniportPause`, once every send has been completed.
    ///
    /// # Errors
    /// [`WrongState`] unless the adapter is pausing.
    pub fn end_pause(&self) -> Result<(), WrongState> {
        self.transition(
            &[AdapterState::Pausing],
            AdapterState::Paused,
            "complete pause",
        )
    }

    /// `MiniportHaltEx`: NDIS halts only a paused adapter.
    ///
    /// # Errors
    /// [`WrongState`] unless the adapter is paused.
    pub fn halt(&self) -> Result<(), WrongState> {
        self.transition(&[AdapterState::Paused], AdapterState::Halted, "halt")
    }

    /// Whether new sends may be accepted.
    #[must_use]
    pub fn accepts_sends(&self) -> bool {
        self.current() == AdapterState::Running && !self.is_surprise_removed()
    }

    /// Admits one `MiniportSendNetBufferLists` call: counts it in flight, then says whether the
    /// adapter accepts sends. The caller completes every NBL either way and then calls
    /// [`StateMachine::leave_datapath`].
    ///
    /// The count is raised before the state is read, and a pause changes the state before it
    /// reads the count (both sequentially consistent), so a pause that sees no send in flight
    /// knows that every later send sees `Pausing` and is refused.
    pub fn enter_datapath(&self) -> bool {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.accepts_sends()
    }

    /// The end of a send admitted by [`StateMachine::enter_datapath`], after its NBLs were completed.
    pub fn leave_datapath(&self) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }

    /// Sends still inside `MiniportSendNetBufferLists` (a pause waits for 0).
    #[must_use]
    pub fn datapath_calls_in_flight(&self) -> u32 {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// `NdisDevicePnPEventSurpriseRemoved` was notified: the hardware is gone.
    pub fn mark_surprise_removed(&self) {
        self.surprise_removed.store(true, Ordering::Release);
    }

    /// Whether the device was surprise-removed.
    #[must_use]
    pub fn is_surprise_removed(&self) -> bool {
        self.surprise_removed.load(Ordering::Acquire)
    }

    /// `MiniportShutdownEx` ran: the hardware is put in a quiet state.
    pub fn mark_shut_down(&self) {
        self.shut_down.store(true, Ordering::Release);
    }

    /// Whether `MiniportShutdownEx` ran.
    #[must_use]
    pub fn is_shut_down(&self) -> bool {
        self.shut_down.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_normal_life_of_an_adapter() {
        let m = StateMachine::new();
        assert_eq!(m.current(), AdapterState::Initializing);
        assert!(!m.accepts_sends());
        m.initialized().unwrap();
        assert_eq!(m.current(), AdapterState::Paused);
        for _ in 0..3 {
            m.begin_restart().unwrap();
            assert!(!m.accepts_sends());
            m.end_restart(true).unwrap();
            assert!(m.accepts_sends());
            m.begin_pause().unwrap();
            assert!(!m.accepts_sends());
            m.end_pause().unwrap();
        }
        m.halt().unwrap();
        assert_eq!(m.current(), AdapterState::Halted);
    }

    #[test]
    fn wrong_transitions_are_refused_and_change_nothing() {
        let m = StateMachine::new();
        assert_eq!(
            m.begin_restart(),
            Err(WrongState {
                found: AdapterState::Initializing,
                wanted: "restart"
            })
        );
        m.initialized().unwrap();
        assert_eq!(m.begin_pause().unwrap_err().found, AdapterState::Paused);
        m.begin_restart().unwrap();
        assert_eq!(m.halt().unwrap_err().found, AdapterState::Restarting);
        m.end_restart(false).unwrap();
        assert_eq!(
            m.current(),
            AdapterState::Paused,
            "a failed restart stays paused"
        );
        m.begin_restart().unwrap();
        m.end_restart(true).unwrap();
        assert_eq!(m.halt().unwrap_err().found, AdapterState::Running);
        assert_eq!(m.current(), AdapterState::Running);
    }

    #[test]
    fn a_pause_sees_every_send_in_flight() {
        let m = StateMachine::new();
        m.initialized().unwrap();
        m.begin_restart().unwrap();
        m.end_restart(true).unwrap();
        assert!(m.enter_datapath());
        m.begin_pause().unwrap();
        assert_eq!(
            m.datapath_calls_in_flight(),
            1,
            "the pause must wait for this send"
        );
        assert!(
            !m.enter_datapath(),
            "a send after the pause began is refused"
        );
        m.leave_datapath();
        m.leave_datapath();
        assert_eq!(m.datapath_calls_in_flight(), 0);
        m.end_pause().unwrap();
    }

    #[test]
    fn surprise_removal_stops_sends() {
        let m = StateMachine::new();
        m.initialized().unwrap();
        m.begin_restart().unwrap();
        m.end_restart(true).unwrap();
        m.mark_surprise_removed();
        assert!(!m.accepts_sends());
    }
}
