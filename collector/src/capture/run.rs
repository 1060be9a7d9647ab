//! `run.json`: the command and how it ended ([`RunInfo`], [`Exit`]).

use super::files::write_atomic;
use super::layout::{CollectError, RUN_FILE};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// How a command or process ended: `{"code": n}` or `{"signal": n}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl Exit {
    /// The shell's convention: the code, or 128 + the signal number.
    pub fn status(self) -> i32 {
        match self {
            Exit::Code(c) => c,
            Exit::Signal(s) => 128 + s,
        }
    }

    pub fn describe(self) -> String {
        match self {
            Exit::Code(c) => format!("exited with code {c}"),
            Exit::Signal(s) => format!("was killed by signal {s} ({})", signal_name(s)),
        }
    }
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => "signal",
    }
}

/// `run.json`: the command and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunInfo {
    pub schema: u32,
    /// The command (lossy UTF-8).
    pub command: Vec<String>,
    pub cwd: String,
    pub interposer: String,
    pub emulate: Option<String>,
    /// `binary` when run with `--isa binary`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isa: Option<String>,
    /// `running`, `ended` or `not-started`.
    pub state: String,
    pub pid: Option<u32>,
    /// The host `pid` is on (as records name it); absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub exit: Option<Exit>,
    /// Why it could not start.
    pub error: Option<String>,
    pub started_unix: u64,
    pub ended_unix: Option<u64>,
    /// Processes of the command that said their record could be written
    /// nowhere (`run::notices`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<Notice>,
    /// Datagrams on the notices' socket refused: not sent by the user's
    /// processes of the command (`run::notices`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub notices_refused: u64,
}

pub fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A process's notice that its record could be written nowhere.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    pub host: String,
    pub pid: u32,
    pub reason: String,
}

pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

pub fn write_run_info(dir: &Path, info: &RunInfo) -> Result<(), CollectError> {
    let mut json = serde_json::to_vec_pretty(info).unwrap_or_default();
    json.push(b'\n');
    write_atomic(&dir.join(RUN_FILE), &json)
}

/// Reads `run.json`; a missing or unreadable one is a warning, not an error.
pub fn read_run_info(dir: &Path, warnings: &mut Vec<String>) -> Option<RunInfo> {
    let bytes = match std::fs::read(dir.join(RUN_FILE)) {
        Ok(b) => b,
        Err(e) => {
            warnings.push(format!(
                "{RUN_FILE}: cannot read ({e}); the command and how it ended are unknown"
            ));
            return None;
        }
    };
    match serde_json::from_slice::<RunInfo>(&bytes) {
        Ok(r) => {
            if r.state == "running" {
                warnings.push(format!(
                    "{RUN_FILE}: the command was still running when xpu-asm-run stopped; how it ended is unknown"
                ));
            }
            Some(r)
        }
        Err(e) => {
            warnings.push(format!(
                "{RUN_FILE}: unreadable ({e}); the command and how it ended are unknown"
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_serializes_as_the_contract_says() {
        assert_eq!(
            serde_json::to_string(&Exit::Code(3)).unwrap(),
            r#"{"code":3}"#
        );
        assert_eq!(
            serde_json::to_string(&Exit::Signal(11)).unwrap(),
            r#"{"signal":11}"#
        );
        assert_eq!(Exit::Signal(11).status(), 139);
    }
}
