//! The five states a breaker can be in.

use std::fmt;

/// The state of a circuit breaker.
///
/// ```
/// use fusebox::State;
/// assert!(State::Closed.admits_all());
/// assert_eq!(State::HalfOpen.to_string(), "half_open");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "snake_case")
)]
pub enum State {
    /// Calls go through; results are counted in the window. Right after half-open passes,
    /// a breaker with a `ramp` admits a growing share of calls instead of all of them (see
    /// `BreakerMetrics::ramp_share`); it is closed all the same, and judges what it admits.
    Closed,
    /// Calls are rejected at once until the open period ends.
    Open,
    /// A share of calls goes through as trials; the rest are rejected.
    HalfOpen,
    /// Held open by an operator: every call is rejected until `force_close` or `reset`.
    ForcedOpen,
    /// Held closed by an operator: every call goes through and nothing trips.
    ForcedClosed,
}

impl State {
    /// Every state, in the order of their codes.
    pub const ALL: [State; 5] = [
        State::Closed,
        State::Open,
        State::HalfOpen,
        State::ForcedOpen,
        State::ForcedClosed,
    ];

    /// True for the states that let calls through unjudged by trials (closed or forced
    /// closed); a closed breaker still ramping traffic back in refuses a shrinking share.
    pub fn admits_all(self) -> bool {
        matches!(self, State::Closed | State::ForcedClosed)
    }

    /// The snake_case name used in logs, metrics labels and the admin API.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Closed => "closed",
            State::Open => "open",
            State::HalfOpen => "half_open",
            State::ForcedOpen => "forced_open",
            State::ForcedClosed => "forced_closed",
        }
    }

    pub(crate) const fn code(self) -> u64 {
        self as u64
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The breaker's state word: a code in the low [`CODE_BITS`] bits, a generation above.
///
/// Every transition bumps the generation, so a call admitted under one generation
/// can tell that the breaker moved on while it was in flight and drop its stale result.
///
/// The codes are the five [`State`]s' own and two variants the admission path tells apart
/// without reading anything else: [`RAMPING`] (`Closed` while the ramp still refuses a share of
/// calls) and [`UNRECORDED`] (`ForcedClosed` recording nothing into the window). Each reads as
/// its state everywhere, but the closed fast path compares the raw code with plain closed's,
/// so a breaker without a ramp pays nothing for it. A word is only ever made from a `State`
/// or one of the variants (no constructor takes a raw code), so the one code the bits leave
/// free is never seen; the checks below keep it so at compile time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Word(pub(crate) u64);

/// Bits of the word that hold the code.
const CODE_BITS: u32 = 3;
/// The code's bits.
const CODE_MASK: u64 = (1 << CODE_BITS) - 1;
/// The code of `Closed` while ramping traffic back in (see [`Word`]): the first after the states'.
const RAMPING: u64 = State::ALL.len() as u64;
/// The code of `ForcedClosed` recording nothing (`force_close_unrecorded`): the next one.
const UNRECORDED: u64 = RAMPING + 1;
/// Where the generation starts: above the code and [`Word::LIVE`].
const GEN_SHIFT: u32 = CODE_BITS + 1;
/// Every code a word can hold, each with the state it reads as, in code order.
const CODES: [(u64, State); 7] = [
    (State::Closed.code(), State::Closed),
    (State::Open.code(), State::Open),
    (State::HalfOpen.code(), State::HalfOpen),
    (State::ForcedOpen.code(), State::ForcedOpen),
    (State::ForcedClosed.code(), State::ForcedClosed),
    (RAMPING, State::Closed),
    (UNRECORDED, State::ForcedClosed),
];

// Every code fits the code bits, each is its index in `CODES` (so no two are equal), and each
// state's own code reads as that state.
const _: () = {
    assert!(
        CODES.len() as u64 <= CODE_MASK + 1,
        "the codes outgrew the code bits"
    );
    let mut i = 0;
    while i < CODES.len() {
        assert!(CODES[i].0 == i as u64, "codes collide or skip one");
        i += 1;
    }
    let mut i = 0;
    while i < State::ALL.len() {
        assert!(
            State::ALL[i].code() == i as u64,
            "State::ALL is in code order"
        );
        i += 1;
    }
};

impl Word {
    /// Set while live settings are in force (issue 29, `breaker/live.rs`): beside the code, so
    /// the plain-closed test stays one mask and compare, and a breaker with live settings
    /// takes the slow path, which hands the call the settings. Neither state nor generation:
    /// setting it is no transition, and every word made from this one keeps it.
    pub(crate) const LIVE: u64 = 1 << CODE_BITS;

    pub(crate) fn new(state: State, generation: u64) -> Word {
        Word::coded(state.code(), generation)
    }
    fn coded(code: u64, generation: u64) -> Word {
        Word(generation << GEN_SHIFT | code)
    }
    /// Live settings are in force.
    pub(crate) fn live(self) -> bool {
        self.0 & Word::LIVE != 0
    }
    /// `w` with this word's live flag.
    fn keep_live(self, w: Word) -> Word {
        Word(w.0 | self.0 & Word::LIVE)
    }
    fn code(self) -> u64 {
        self.0 & CODE_MASK
    }
    pub(crate) fn state(self) -> State {
        let code = self.code() as usize;
        debug_assert!(code < CODES.len(), "no constructor makes code {code}");
        CODES[code.min(CODES.len() - 1)].1
    }
    /// Plain closed, not ramping: every call goes through without a clock read.
    #[inline]
    pub(crate) fn plain_closed(self) -> bool {
        self.plain(State::Closed)
    }
    /// In `state` under its own code (not ramping, recording), without live settings: one mask
    /// and compare, the test of each state's fast path.
    #[inline]
    pub(crate) fn plain(self, state: State) -> bool {
        self.0 & (CODE_MASK | Word::LIVE) == state.code()
    }
    /// Closed and still ramping: a share of calls is refused.
    pub(crate) fn ramping(self) -> bool {
        self.code() == RAMPING
    }
    /// Forced closed and recording nothing into the window.
    pub(crate) fn unrecorded(self) -> bool {
        self.code() == UNRECORDED
    }
    /// The same state in the same generation: a ramping word and the plain closed word its end
    /// swaps in are one state to a transition (so a trip judged across the swap still lands).
    pub(crate) fn same_state(self, other: Word) -> bool {
        self.generation() == other.generation() && self.state() == other.state()
    }
    /// The next generation, closed and ramping.
    pub(crate) fn next_ramping(self) -> Word {
        self.keep_live(Word::coded(RAMPING, self.generation().wrapping_add(1)))
    }
    /// This forced-closed word, recording nothing (any other word is returned as is).
    pub(crate) fn without_recording(self) -> Word {
        if self.state() == State::ForcedClosed {
            self.keep_live(Word::coded(UNRECORDED, self.generation()))
        } else {
            self
        }
    }
    /// The same generation, plain closed: the ramp's end is no transition, so calls admitted
    /// during the ramp stay current.
    pub(crate) fn ramp_done(self) -> Word {
        self.keep_live(Word::new(State::Closed, self.generation()))
    }
    pub(crate) fn generation(self) -> u64 {
        self.0 >> GEN_SHIFT
    }
    pub(crate) fn next(self, state: State) -> Word {
        self.keep_live(Word::new(state, self.generation().wrapping_add(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_round_trips_state_and_generation() {
        for s in State::ALL {
            let w = Word::new(s, 41);
            assert_eq!(w.state(), s);
            assert_eq!(w.generation(), 41);
            assert_eq!(w.next(State::Open).generation(), 42);
        }
    }

    #[test]
    fn a_ramping_word_reads_closed_but_is_not_plain_closed() {
        let w = Word::new(State::HalfOpen, 7).next_ramping();
        assert_eq!((w.state(), w.generation()), (State::Closed, 8));
        assert!(w.ramping() && !w.plain_closed());
        let done = w.ramp_done();
        assert_eq!((done.state(), done.generation()), (State::Closed, 8));
        assert!(done.plain_closed() && !done.ramping());
    }

    #[test]
    fn an_unrecorded_word_reads_forced_closed_in_its_generation() {
        let w = Word::new(State::Closed, 3).next(State::ForcedClosed);
        let u = w.without_recording();
        assert_eq!((u.state(), u.generation()), (State::ForcedClosed, 4));
        assert!(u.unrecorded() && !w.unrecorded() && !u.plain_closed());
        assert!(u.same_state(w));
        let open = Word::new(State::Open, 3);
        assert_eq!(open.without_recording(), open);
    }

    #[test]
    fn the_live_flag_leaves_the_fast_path_and_survives_transitions() {
        let w = Word(Word::new(State::Closed, 7).0 | Word::LIVE);
        assert!(!w.plain_closed() && w.live());
        assert_eq!((w.state(), w.generation()), (State::Closed, 7));
        assert!(w.same_state(Word::new(State::Closed, 7)));
        let open = w.next(State::Open);
        assert!(open.live() && open.state() == State::Open && open.generation() == 8);
        assert!(open.next_ramping().live() && open.next_ramping().ramp_done().live());
        let forced = w.next(State::ForcedClosed).without_recording();
        assert!(forced.live() && forced.unrecorded());
    }
}
