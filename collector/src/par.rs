//! Spreading independent per-file work (header reads, hard links, ...) over
//! the machine's cores, with std's scoped threads only. Results always come
//! back in input order, so nothing downstream depends on scheduling.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// More threads than this buy nothing for file-system work.
const MAX_THREADS: usize = 8;

/// Below this many items per thread, the work stays on the caller's thread.
const MIN_ITEMS_PER_THREAD: usize = 64;

/// Items handed out at a time (fewer when there are few items).
const MAX_CHUNK: usize = 256;

thread_local! {
    /// Set while another thread works on a core of its own: [`map`] calls
    /// made on this thread then leave it that core.
    static BUSY: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Threads to use: the cores this process may run on, at most
/// [`MAX_THREADS`], less one while [`Busy`] says so.
pub fn threads() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    let n = *CORES.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_THREADS)
    });
    let busy = BUSY.with_borrow(|b| b.as_ref().is_some_and(|b| b.load(Ordering::Relaxed)));
    if busy {
        n.saturating_sub(1).max(1)
    } else {
        n
    }
}

/// A thread that works on a core of its own for a while: until it drops
/// its [`Busy`], [`map`] calls made on the thread that called [`Busy::new`]
/// leave it that core.
pub struct Busy {
    flag: Arc<AtomicBool>,
}

impl Busy {
    /// Registered for the calling thread until [`Busy::unregister`]; to be
    /// moved to the other thread.
    pub fn new() -> Busy {
        let flag = Arc::new(AtomicBool::new(true));
        BUSY.set(Some(flag.clone()));
        Busy { flag }
    }

    /// Back to every core for the calling thread.
    pub fn unregister() {
        BUSY.set(None);
    }
}

impl Drop for Busy {
    /// The other thread is done.
    fn drop(&mut self) {
        self.flag.store(false, Ordering::Relaxed);
    }
}

/// `f` applied to every item, in item order. Chunks of items go to up to
/// [`threads`] threads (the caller's one included) as each becomes free; a
/// short list is done on the caller's thread alone. A panic in `f` is
/// passed on to the caller.
pub fn map<T, R, F>(items: &[T], f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let n = items.len();
    let threads = threads().min(n / MIN_ITEMS_PER_THREAD).max(1);
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let chunk = (n / (threads * 8)).clamp(1, MAX_CHUNK);
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done: Vec<(usize, Vec<R>)> = Vec::new();
        loop {
            let start = next.fetch_add(chunk, Ordering::Relaxed);
            if start >= n {
                break;
            }
            let end = (start + chunk).min(n);
            done.push((start, items[start..end].iter().map(&f).collect()));
        }
        done
    };
    let mut parts: Vec<(usize, Vec<R>)> = std::thread::scope(|s| {
        // A thread that cannot be had leaves its share to the others.
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(s, work).ok())
            .collect();
        let mut parts = work();
        for h in helpers {
            match h.join() {
                Ok(p) => parts.extend(p),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        parts
    });
    parts.sort_unstable_by_key(|p| p.0);
    let mut out = Vec::with_capacity(n);
    for (_, p) in parts {
        out.extend(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_input_order() {
        for n in [0, 1, 63, 64, 129, 1000, 10_007] {
            let items: Vec<usize> = (0..n).collect();
            let out = map(&items, |i| i * 3);
            assert_eq!(out, items.iter().map(|i| i * 3).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_busy_thread_keeps_its_core() {
        let all = threads();
        let busy = Busy::new();
        assert_eq!(threads(), all.saturating_sub(1).max(1));
        std::thread::scope(|s| {
            s.spawn(move || drop(busy));
        });
        assert_eq!(threads(), all);
        Busy::unregister();
        assert_eq!(threads(), all);
    }

    #[test]
    #[should_panic(expected = "item 500")]
    fn a_panic_reaches_the_caller() {
        let items: Vec<usize> = (0..1000).collect();
        map(&items, |&i| {
            if i == 500 {
                panic!("item 500");
            }
            i
        });
    }
}
