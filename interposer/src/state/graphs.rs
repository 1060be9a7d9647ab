//! Graphs and mutable command lists (docs/internals.md, "Graphs and mutable
//! command lists"): captures into a graph, executable graphs and their
//! appends, and the kernels a mutable list's commands swap.

use super::*;

/// `zeGraphCreateExt`: an empty graph (a reused handle starts again).
pub fn graph_created(graph: usize) {
    with_registry(|r, _| {
        r.warned.remove(&graph);
        r.graphs.insert(graph, new_state());
    });
}

/// A capture began on `list`: into `graph` (`zeCommandListBeginCaptureIntoGraphExt`,
/// or the new graph the driver reports for `zeCommandListBeginGraphCaptureExt`;
/// `None` when it cannot say). The list's appends go to the graph from now
/// on; every other immediate list is probed until no capture is active,
/// with `ask` (whether a list records into a graph, per the driver).
pub fn capture_began(list: usize, graph: Option<usize>, ask: CaptureQuery) {
    let _ = CAPTURE_QUERY.set(ask);
    with_registry(|r, _| {
        let state = match graph {
            Some(g) if g != 0 => *r.graphs.entry(g).or_insert_with(new_state),
            _ => new_state(),
        };
        if r.captures.is_empty() {
            for &l in &r.immediate {
                if MAPS.lists.get(l) == 0 {
                    MAPS.lists.set(l, probe());
                }
            }
        }
        let before = MAPS.lists.get(list);
        if let Some(old) = r.captures.insert(list, Capture { state, before }) {
            // Begun twice without an end: the first capture's appends stay
            // with its graph.
            r.captures.insert(
                list,
                Capture {
                    state,
                    before: old.before,
                },
            );
        }
        MAPS.lists.set(list, state);
    });
}

/// A capture ended on its primary `list`, with `graph` the graph it made.
pub fn capture_ended(list: usize, graph: usize) {
    with_registry(|r, _| {
        let Some(c) = r.captures.remove(&list) else {
            warn_once(r, list, || {
                format!(
                    "zeCommandListEndGraphCaptureExt on command list {list:#x}, whose capture xpu-asm did not see begin: \
                     the launches of graph {graph:#x} are not counted"
                )
            });
            return;
        };
        // A fork may have met the graph's handle first (the driver named it
        // only then): its appends join the capture's.
        if let Some(&other) = r.graphs.get(&graph) {
            if other != c.state {
                let runs = std::mem::take(
                    &mut *state_at(other)
                        .runs
                        .lock()
                        .unwrap_or_else(|e| e.into_inner()),
                );
                extend(c.state, &runs);
            }
        }
        r.warned.remove(&graph);
        r.graphs.insert(graph, c.state);
        end_capture(r, list, c);
    });
}

/// `zeGraphInstantiateExt`: the executable graph runs what `graph` captured
/// (a copy: the graph may be destroyed before it).
pub fn graph_instantiated(graph: usize, executable: usize) {
    with_registry(|r, _| {
        r.warned.remove(&executable);
        match r.graphs.get(&graph) {
            Some(&g) => {
                let state = new_state();
                extend(state, &runs_of(g));
                MAPS.executables.set(executable, state);
            }
            None => {
                MAPS.executables.set(executable, 0);
                warn_once(r, executable, || {
                    format!(
                        "zeGraphInstantiateExt: graph {graph:#x} was not captured where xpu-asm could see it \
                         (created or captured through functions xpu-asm does not hook); \
                         the launches of executable graph {executable:#x} are not counted"
                    )
                });
            }
        }
    });
}

/// `zeCommandListAppendGraphExt`: the executable graph runs once on an
/// immediate list (its launches counted now), each time a regular list it
/// is appended to is executed, or as part of a graph being captured.
pub fn graph_appended(list: usize, executable: usize) {
    let e = MAPS.executables.get(executable);
    if e == 0 {
        return unknown_executable(list, executable);
    }
    match list_state(list) {
        0 => {
            if let Ok(runs) = state_at(e).runs.lock() {
                launch_runs(&runs);
            }
        }
        l => extend(l, &runs_of(e)),
    }
}

#[cold]
#[inline(never)]
fn unknown_executable(list: usize, executable: usize) {
    with_registry(|r, _| {
        warn_once(r, executable, || {
            format!(
                "zeCommandListAppendGraphExt: executable graph {executable:#x} (appended to command list {list:#x}) \
                 was not instantiated from a graph captured where xpu-asm could see it; its launches are not counted"
            )
        })
    });
}

/// `zeGraphDestroyExt`: forgotten (its handle may come back for another).
pub fn graph_destroyed(graph: usize) {
    with_registry(|r, _| {
        if let Some(g) = r.graphs.remove(&graph) {
            if !r.captures.values().any(|c| c.state == g) {
                if let Ok(mut runs) = state_at(g).runs.lock() {
                    *runs = Vec::new();
                }
            }
        }
    });
}

/// `zeExecutableGraphDestroyExt`: forgotten (its handle may come back).
pub fn executable_destroyed(executable: usize) {
    with_registry(|r, _| {
        r.warned.remove(&executable);
        let e = MAPS.executables.get(executable);
        MAPS.executables.set(executable, 0);
        if e != 0 {
            if let Ok(mut runs) = state_at(e).runs.lock() {
                *runs = Vec::new();
            }
        }
    });
}

/// `zeCommandListGetNextCommandId[WithKernels]Exp`: the next append to the
/// mutable `list` is command `id`, whose kernel may become one of `kernels`.
pub fn command_id(list: usize, id: u64, kernels: &[crate::common::Handle]) {
    let l = MAPS.lists.get(list);
    if l == 0 || l == probe() {
        return;
    }
    let position = state_at(l)
        .runs
        .lock()
        .map(|runs| runs.iter().map(|&(_, n)| n).sum())
        .unwrap_or(0);
    let kernels = kernels.iter().map(|&k| k as usize).collect();
    with_registry(|r, _| {
        let commands = r.commands.entry(list).or_insert_with(|| {
            MUTABLE_LISTS.fetch_add(1, Relaxed);
            HashMap::new()
        });
        commands.insert(id, Command { position, kernels });
    });
}

/// `zeCommandListUpdateMutableCommandKernelsExp`: command `ids[i]` of `list`
/// runs `kernels[i]` from the list's next execution on (counted as appended
/// once). `refused` is the driver's answer when it refused the update:
/// nothing changes, commands never handed out are reported.
pub fn kernels_swapped(
    list: usize,
    ids: &[u64],
    kernels: &[crate::common::Handle],
    refused: Option<u32>,
) {
    let l = MAPS.lists.get(list);
    // Before the lock: finding a counter may create the record.
    let counters: Vec<Option<&'static Counter>> = match refused {
        None => kernels.iter().map(|&k| counter_of(k as usize)).collect(),
        Some(_) => Vec::new(),
    };
    with_registry(|r, _| {
        for (i, (&id, &kernel)) in ids.iter().zip(kernels).enumerate() {
            let kernel = kernel as usize;
            let Some(cmd) = r.commands.get(&list).and_then(|m| m.get(&id)) else {
                let answer = match refused {
                    Some(e) => format!("the driver refused it (0x{e:x})"),
                    None => "the driver accepted it, but its launches stay with the old kernel"
                        .to_string(),
                };
                crate::output::warn(&format!(
                    "zeCommandListUpdateMutableCommandKernelsExp: command id {id} of command list {list:#x} \
                     was never handed out by zeCommandListGetNextCommandIdExp or \
                     zeCommandListGetNextCommandIdWithKernelsExp; {answer}"
                ));
                continue;
            };
            if refused.is_some() {
                continue;
            }
            if !cmd.kernels.is_empty() && !cmd.kernels.contains(&kernel) {
                crate::output::warn(&format!(
                    "zeCommandListUpdateMutableCommandKernelsExp: kernel {kernel:#x} is not one of the {} kernels \
                     zeCommandListGetNextCommandIdWithKernelsExp listed for command {id} of command list {list:#x}; \
                     the driver accepted it, and its launches are counted for that kernel",
                    cmd.kernels.len()
                ));
            }
            let position = cmd.position;
            if l == 0 || l == probe() {
                continue;
            }
            let Some(c) = counters.get(i).copied().flatten() else {
                continue;
            };
            c.regular_appended.fetch_add(1, Relaxed);
            if let Ok(mut runs) = state_at(l).runs.lock() {
                set_run_at(&mut runs, position, c as *const Counter as usize);
            }
        }
    });
}

/// Makes the launch at `position` of `runs` one of counter `key`.
fn set_run_at(runs: &mut Vec<(usize, u64)>, position: u64, key: usize) {
    let mut start = 0;
    for i in 0..runs.len() {
        let (k, n) = runs[i];
        if position >= start + n {
            start += n;
            continue;
        }
        if k == key {
            return;
        }
        let before = position - start;
        let after = n - before - 1;
        let mut parts = Vec::with_capacity(3);
        if before > 0 {
            parts.push((k, before));
        }
        parts.push((key, 1));
        if after > 0 {
            parts.push((k, after));
        }
        runs.splice(i..=i, parts);
        return;
    }
}
