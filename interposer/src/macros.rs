//! The macros both APIs' hooks are written with: `cstr!` and `hook!`
//! (Level Zero's in `ze/hooks.rs`, OpenCL's in `cl/hooks.rs`).

/// A function's name as a `&'static CStr`, from a string literal.
macro_rules! cstr {
    ($s:expr) => {
        match ::std::ffi::CStr::from_bytes_with_nul(concat!($s, "\0").as_bytes()) {
            Ok(c) => c,
            Err(_) => panic!("bad name"),
        }
    };
}

pub(crate) use cstr;

/// Defines, for one hooked function: a module holding its `Real` slots and
/// the generic hook, and the exported symbol (slot 0).
///
/// Each hook exists as `hook::<S>` for every slot `S` of
/// [`SLOTS`](crate::real::SLOTS): slot 0 is the exported symbol (the
/// program calls the loader through its PLT), the others are handed out
/// (DDI tables, `dlsym`, functions by name), each with the real function it
/// replaced. Order inside a hook: the reentrancy guard (held: just forward),
/// the real call, the recording, the real result returned unchanged. A hook
/// records whenever its slot is set: recording is on then.
///
/// Two forms:
/// - `NAME => module(ARGS) -> STATUS before {..} after {..} failed(RESULT) {..}`
///   for a function answering a status code (Level Zero's `ZeResult`,
///   OpenCL's `ClInt`): success and what a hook answers without a real
///   function to call are the [`Status`](crate::common::Status) of that
///   type; `after` runs on success, `failed` on any other result;
/// - `NAME => module(ARGS) -> TYPE, ok(RESULT) CONDITION, missing VALUE,
///   before {..} after {..}` for any other (OpenCL's creating functions,
///   the lookups by name): `after` runs when `CONDITION` holds of the
///   result, and may replace `RESULT`; `VALUE` is answered without a real
///   function to call.
///
/// Every part but the name, the module and the arguments is optional, in
/// that order. Timing's (`ze::time`): `only timing` makes a hook that
/// forwards unless launches are timed (`config::timing`), for the
/// functions only timing needs; `timed (PATH)` makes the exported symbol
/// call `PATH::<0>` (timing's hook of the function) while launches are
/// timed, and the hook as written otherwise.
macro_rules! hook {
    (
        $export:ident => $module:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ident
        $(only $only:ident)?
        $(timed ($timed:path))?
        $(before $before:block)?
        $(after $after:block)?
        $(failed ($failed_result:ident) $failed:block)?
    ) => {
        $crate::macros::hook!(@body $export => $module ($($arg: $ty),*) -> $ret,
            params ($($arg: $ty),*),
            result, result == <$ret as $crate::common::Status>::SUCCESS,
            <$ret as $crate::common::Status>::SUCCESS, <$ret as $crate::common::Status>::MISSING,
            $(only $only)? $(timed ($timed))?
            $(before $before)? $(after $after)? $(failed ($failed_result) $failed)?);
    };
    (
        $export:ident => $module:ident ( $($arg:ident : $ty:ty),* $(,)? )
        -> $ret:ty, ok($ok:ident) $is_ok:expr, missing $missing:expr,
        $(only $only:ident)?
        $(timed ($timed:path))?
        $(before $before:block)?
        $(after $after:block)?
    ) => {
        $crate::macros::hook!(@body $export => $module ($($arg: $ty),*) -> $ret,
            params ($($arg: $ty),*),
            $ok, $is_ok, $ok, $missing, $(only $only)? $(timed ($timed))?
            $(before $before)? $(after $after)?);
    };
    (
        @body $export:ident => $module:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty,
        params $params:tt,
        $ok:ident, $is_ok:expr, $success:expr, $missing:expr,
        $(only $only:ident)?
        $(timed ($timed:path))?
        $(before $before:block)?
        $(after $after:block)?
        $(failed ($failed_result:ident) $failed:block)?
    ) => {
        pub mod $module {
            use super::*;
            use $crate::guard::Guard;
            use $crate::real::Real;
            pub type F = unsafe extern "C" fn($($ty),*) -> $ret;
            pub static REAL: Real = Real::new($crate::macros::cstr!(stringify!($export)));

            /// # Safety
            /// Same contract as the function it stands in for.
            #[inline(always)]
            pub unsafe extern "C" fn hook<const S: usize>($($arg: $ty),*) -> $ret {
                let p = $crate::direct::load_word!(REAL, Real::slot_offset(S), REAL.loaded(S));
                // A hook whose slot is set records: slot 0 is set once
                // recording is known to be on (`first_call`), the others
                // are handed out only then (tables, `dlsym`, functions by
                // name). So only the exported symbol gets here unset.
                if S == 0 && p == 0 {
                    // SAFETY: same arguments.
                    return unsafe { first_call::<S>($($arg),*) };
                }
                // SAFETY: slot S only ever holds a function of this signature
                // (found under this function's name or in its table entry).
                let real: F = unsafe { std::mem::transmute::<usize, F>(p) };
                // Inner hooks (guard held) only forward: kept free of
                // anything that would stop the compiler from making this a
                // plain jump to the real function.
                match Guard::enter() {
                    // SAFETY: forwarding the caller's arguments unchanged.
                    None => unsafe { real($($arg),*) },
                    Some(guard) => {
                        // Handed over to `record`, which releases it.
                        std::mem::forget(guard);
                        // SAFETY: as above; the arguments stay in their registers.
                        unsafe { record::<S>($($arg),*) }
                    }
                }
            }

            /// Slot 0 (the exported symbol) before its real function is
            /// set: with recording on, set it and go on as usual; else
            /// (off, or not known yet: a call from another library's
            /// constructor, before this one's read the configuration) only
            /// forward, leaving the slot unset.
            ///
            /// `extern "C"` like the hook, so that the hook's call is a tail
            /// jump (no frame of its own; also for `record`).
            #[cold]
            #[inline(never)]
            #[allow(clippy::too_many_arguments)]
            unsafe extern "C" fn first_call<const S: usize>($($arg: $ty),*) -> $ret {
                // A hook of timing's alone forwards unless launches are
                // timed; a launch's hook is timing's own while they are
                // (its slot 0 stays unset: every call comes here).
                let off = !$crate::state::enabled()
                    $(|| { let _ = stringify!($only); !$crate::config::timing() })?;
                let timed: Option<F> = None $(.or({
                    let _ = stringify!($timed);
                    Some(timed::<S> as F)
                }))?;
                if let (Some(t), false, true) = (timed, off, $crate::config::timing()) {
                    // SAFETY: timing's hook of this function: same arguments.
                    return unsafe { t($($arg),*) };
                }
                if off {
                    let f = REAL.forward();
                    if f == 0 {
                        return $missing;
                    }
                    // SAFETY: the next definition of this function's name,
                    // of its signature; the caller's arguments unchanged.
                    return unsafe { std::mem::transmute::<usize, F>(f)($($arg),*) };
                }
                if REAL.get(S) == 0 {
                    return $missing;
                }
                // SAFETY: same arguments; the slot is now set.
                unsafe { hook::<S>($($arg),*) }
            }

            /// The outermost hook's part: the real call, then the recording.
            /// Called with the guard taken by `hook`.
            #[inline(never)]
            #[allow(unused_variables, unused_mut, clippy::too_many_arguments)]
            unsafe extern "C" fn record<const S: usize>($($arg: $ty),*) -> $ret {
                let guard = Guard::taken();
                let p = $crate::direct::load_word!(REAL, Real::slot_offset(S), REAL.loaded(S));
                // SAFETY: `hook` checked that slot S is set, with a function
                // of this signature.
                let real: F = unsafe { std::mem::transmute::<usize, F>(p) };
                $( $crate::guard::no_panic(|| $before); )?
                // SAFETY: forwarding the caller's arguments unchanged.
                let mut $ok = unsafe { real($($arg),*) };
                if $is_ok {
                    $( $crate::guard::no_panic(|| $after); )?
                    drop(guard);
                    // A status's success is a constant: the result needs no
                    // register of its own across the recording.
                    return $success;
                }
                $(
                    let $failed_result = $ok;
                    $crate::guard::no_panic(|| $failed);
                )?
                drop(guard);
                $ok
            }

            pub const ALL: [F; $crate::real::SLOTS] =
                [hook::<0>, hook::<1>, hook::<2>, hook::<3>, hook::<4>, hook::<5>];

            $( $crate::macros::timed_hook!($timed, $ret, $missing, $params); )?

            /// The hooks handed out: timing's while launches are timed,
            /// for a function timing stands in for.
            pub fn addrs() -> [usize; $crate::real::SLOTS] {
                $(
                    if $crate::config::timing() {
                        let _ = stringify!($timed);
                        return TIMED.map(|f| f as usize);
                    }
                )?
                ALL.map(|f| f as usize)
            }
        }

        /// # Safety
        /// Same contract as the function of this name.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $export($($arg: $ty),*) -> $ret {
            // SAFETY: the caller keeps the API's contract.
            unsafe { $module::hook::<0>($($arg),*) }
        }
    };
}

pub(crate) use hook;

/// Timing's hook of a function (`hook!`'s `timed (PATH)`): in each of its
/// copies the reentrancy guard as the plain hook's, then `PATH(real,
/// ARGS...)`, where `real` is the copy's real function (slot 0: the next
/// definition of the exported symbol, leaving the plain hook's slot 0
/// unset, so that every call of the exported symbol comes here while
/// launches are timed).
macro_rules! timed_hook {
    ($timed:path, $ret:ty, $missing:expr, ( $($arg:ident : $ty:ty),* )) => {
        /// # Safety
        /// Same contract as the function it stands in for.
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn timed<const S: usize>($($arg: $ty),*) -> $ret {
            let p = match S {
                0 => REAL.forward(),
                s => REAL.loaded(s),
            };
            if p == 0 {
                return $missing;
            }
            match Guard::enter() {
                // SAFETY: the slot holds a function of this signature; the
                // caller's arguments unchanged.
                None => unsafe { std::mem::transmute::<usize, F>(p)($($arg),*) },
                // SAFETY: timing's part gets the real function and the
                // caller's arguments.
                Some(_guard) => unsafe { $timed(p, $($arg),*) },
            }
        }

        pub const TIMED: [F; $crate::real::SLOTS] =
            [timed::<0>, timed::<1>, timed::<2>, timed::<3>, timed::<4>, timed::<5>];
    };
}

pub(crate) use timed_hook;
