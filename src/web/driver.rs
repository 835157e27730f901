//! One driver for every class: the loop that runs a sans-IO core with browser I/O.
//!
//! Each class of the shell (`TurnController`, `LiveTranscriber`, the player, the session) is the
//! same loop over a different core: take the core's next action, perform it (which may call app
//! code), repeat until none is left, then arm the one timer for `poll_timeout()`. The driver keeps
//! the rules that make this safe at the JS boundary:
//!
//! - **No borrow across JS.** The core is borrowed only to take one action or to feed one input;
//!   app callbacks run with nothing borrowed, so a callback may call any method of the same
//!   object, `free()` included.
//! - **Re-entrant calls only queue.** A method called from inside a pump feeds the core and
//!   returns; the outer pump performs what it queued, in order, so work queued before the call is
//!   performed after it and must be re-checked against the core by the shell (`perform`).
//! - **An exception cannot wedge it.** Every JS call a shell makes while pumping is a `catch`
//!   binding or cannot throw, so a throwing app object is a value, never an unwinding that would
//!   leave the pump flag set; the core is reached through `try_borrow*`, so nothing can trap.
//! - **Late timers do not stretch deadlines.** Every input first runs what is already due, so a
//!   throttled timer (a hidden tab) holds nothing back while inputs come.
//! - **Disposal is final.** After [`dispose`] the timer is cleared and never armed again.

use crate::core::time::Millis;
use crate::web::clock::Clock;
use crate::web::timer::Timer;
use alloc::rc::{Rc, Weak};
use core::cell::{Cell, Ref, RefCell, RefMut};

/// The shape every sans-IO core has: outputs are pulled, time is an input.
pub(crate) trait Machine {
    type Action;
    fn poll_action(&mut self) -> Option<Self::Action>;
    fn poll_timeout(&self) -> Option<Millis>;
    fn handle_timeout(&mut self, now: Millis);
}

/// A browser class over a core: it owns a [`Driver`] and performs the core's actions.
pub(crate) trait Shell: Sized + 'static {
    type Machine: Machine;
    fn driver(&self) -> &Driver<Self::Machine>;
    /// The class's own `Rc`, held weakly by itself; `None` once it is gone.
    fn this(&self) -> Option<Rc<Self>>;
    /// Performs one action with real I/O. Runs with no borrow of the core held.
    fn perform(self: &Rc<Self>, action: <Self::Machine as Machine>::Action);
}

/// A class as the I/O code it shares with other classes sees it (the ladder's, the
/// transcriber's): code that feeds a part of the class's machine, then asks the class to perform
/// what that queued.
pub(crate) trait Host {
    /// Performs what the inputs queued (inside a running pump: nothing now; that pump will).
    fn pump(&self);
    fn is_disposed(&self) -> bool;
}

/// Every class is a host to the I/O code it shares.
impl<S: Shell> Host for S {
    fn pump(&self) {
        if let Some(this) = self.this() {
            pump(&this);
        }
    }

    fn is_disposed(&self) -> bool {
        self.driver().is_disposed()
    }
}

/// The core of one class with its clock, its one timer and the pump's guards.
pub(crate) struct Driver<M> {
    machine: RefCell<M>,
    clock: Clock,
    timer: Timer,
    /// True while a pump drains actions: a re-entrant pump returns at once.
    pumping: Cell<bool>,
    disposed: Cell<bool>,
}

impl<M: Machine + 'static> Driver<M> {
    /// A driver for the shell behind `shell` (held weakly: the timer never keeps it alive).
    pub(crate) fn new<S: Shell<Machine = M>>(machine: M, shell: &Weak<S>) -> Self {
        let shell = shell.clone();
        Driver {
            machine: RefCell::new(machine),
            clock: Clock::new(),
            timer: Timer::new(move || {
                if let Some(shell) = shell.upgrade() {
                    on_timer(&shell);
                }
            }),
            pumping: Cell::new(false),
            disposed: Cell::new(false),
        }
    }

    /// The current time, in epoch-aligned monotonic milliseconds.
    #[cfg_attr(not(feature = "voice"), allow(dead_code))]
    pub(crate) fn now(&self) -> Millis {
        self.clock.now()
    }

    /// The clock the core's times come from.
    pub(crate) fn clock(&self) -> Clock {
        self.clock
    }

    /// Feeds the core one input at the current time. `None` only if the core is borrowed, which
    /// the no-borrow-across-JS rule rules out; it is a value rather than a trap all the same.
    pub(crate) fn update<R>(&self, input: impl FnOnce(&mut M, Millis) -> R) -> Option<R> {
        let (mut machine, now) = self.lend()?;
        Some(input(&mut machine, now))
    }

    /// Lends the core for one input at the current time (`None` only while it is borrowed, as
    /// for [`Driver::update`]), what was already due run first. Give it back before any JS runs.
    pub(crate) fn lend(&self) -> Option<(RefMut<'_, M>, Millis)> {
        let now = self.clock.now();
        let mut machine = self.machine.try_borrow_mut().ok()?;
        if !self.disposed.get() {
            run_overdue(&mut *machine, now);
        }
        Some((machine, now))
    }

    /// Lends the core for reading.
    pub(crate) fn view(&self) -> Option<Ref<'_, M>> {
        self.machine.try_borrow().ok()
    }

    /// Reads the core.
    pub(crate) fn read<R>(&self, read: impl FnOnce(&M) -> R) -> Option<R> {
        let machine = self.machine.try_borrow().ok()?;
        Some(read(&machine))
    }

    pub(crate) fn is_disposed(&self) -> bool {
        self.disposed.get()
    }

    fn next_action(&self) -> Option<M::Action> {
        self.machine.try_borrow_mut().ok()?.poll_action()
    }

    fn arm(&self) {
        let next = if self.disposed.get() {
            None
        } else {
            self.read(M::poll_timeout).flatten()
        };
        match next {
            Some(at) => self.timer.ensure(at, || self.clock.now()),
            None => self.timer.idle(),
        }
    }
}

/// Performs the core's queued actions until none is left, then arms the timer. Called after
/// every input; inside a running pump it returns at once and the outer pump goes on.
pub(crate) fn pump<S: Shell>(shell: &Rc<S>) {
    let driver = shell.driver();
    if driver.pumping.replace(true) {
        return;
    }
    loop {
        // A statement of its own, so the borrow ends before `perform` runs any JS.
        let action = driver.next_action();
        match action {
            Some(action) => shell.perform(action),
            None => break,
        }
    }
    driver.pumping.set(false);
    driver.arm();
}

/// Feeds the core one input, then pumps.
pub(crate) fn input<S: Shell, R>(
    shell: &Rc<S>,
    input: impl FnOnce(&mut S::Machine, Millis) -> R,
) -> Option<R> {
    let result = shell.driver().update(input);
    pump(shell);
    result
}

/// Ends the class: feeds the core its last input (e.g. interrupt everything), performs what that
/// queued, and clears the timer for good. Idempotent: only the first call does anything.
pub(crate) fn dispose<S: Shell>(shell: &Rc<S>, last_input: impl FnOnce(&mut S::Machine, Millis)) {
    let driver = shell.driver();
    if driver.disposed.replace(true) {
        return;
    }
    driver.update(last_input);
    pump(shell);
    driver.timer.cancel();
}

/// A deadline the timer should have met already runs before the input that finds it: a hidden
/// tab's throttled timers (once a second, or a minute after five hidden minutes in Chrome) fire
/// late, but inputs such as the capture worklet's audio frames keep coming. Before the input, not
/// after it: an input's own actions (an attempt it starts) are performed before any of its
/// deadlines can pass.
fn run_overdue<M: Machine>(machine: &mut M, now: Millis) {
    if machine.poll_timeout().is_some_and(|due| due <= now) {
        machine.handle_timeout(now);
    }
}

fn on_timer<S: Shell>(shell: &Rc<S>) {
    let driver = shell.driver();
    driver.timer.fired();
    if driver.disposed.get() {
        return;
    }
    input(shell, |machine, now| machine.handle_timeout(now));
}

/// What a `#[wasm_bindgen]` object holds of its shell. `free()` takes it, so a freed object holds
/// nothing and every method finds `None`. (Each class's own `free()` replaces the one wasm-bindgen
/// generates, which throws when called twice or from inside a method of the same object; the few
/// bytes of the emptied handle are freed when JS collects the object.)
pub(crate) struct Handle<T>(RefCell<Option<Rc<T>>>);

impl<T> Handle<T> {
    pub(crate) fn new(inner: Rc<T>) -> Self {
        Handle(RefCell::new(Some(inner)))
    }

    /// The shell, unless the object was freed.
    pub(crate) fn get(&self) -> Option<Rc<T>> {
        self.0.try_borrow().ok()?.clone()
    }

    /// Takes the shell out: `Some` only for the first `free()`.
    pub(crate) fn take(&self) -> Option<Rc<T>> {
        self.0.try_borrow_mut().ok()?.take()
    }
}
