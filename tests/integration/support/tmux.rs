//! Drives the real binary in a tmux pane: start, send keys, read the screen, check the terminal
//! state after exit. Each harness runs its own tmux server (`-L`) so tests never touch the
//! user's sessions and run in parallel.

use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicU32 = AtomicU32::new(0);

pub struct Tmux {
    socket: String,
    conf: std::path::PathBuf,
}

/// Whether tmux is here; CI sets GPUMETER_REQUIRE_TMUX so a missing tmux fails instead of skipping.
pub fn available() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && std::env::var_os("GPUMETER_REQUIRE_TMUX").is_some() {
        panic!("tmux is required (GPUMETER_REQUIRE_TMUX is set) but not installed");
    }
    if !ok {
        eprintln!("skipping: tmux not installed (apt-get install tmux)");
    }
    ok
}

impl Tmux {
    /// Starts `command` (a shell command line) in a detached pane of `width`×`height`.
    pub fn start(command: &str, width: u16, height: u16, env: &[(&str, &str)]) -> Tmux {
        let socket = format!(
            "gpumeter-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let conf = std::env::temp_dir().join(format!("{socket}.conf"));
        let t = Tmux { socket, conf };
        // A config file so remain-on-exit holds from the first instant: the pane stays after the
        // program exits, so its final screen and exit status can be read.
        std::fs::write(&t.conf, "set -g remain-on-exit on\nset -g status off\n").unwrap();
        let mut cmd = Command::new("tmux");
        cmd.arg("-L").arg(&t.socket).arg("-f").arg(&t.conf);
        cmd.args(["new-session", "-d", "-s", "main", "-x"]);
        cmd.arg(width.to_string()).arg("-y").arg(height.to_string());
        // Never read the user's config or write their ledger.
        let state = std::env::temp_dir().join(format!("{}.state", t.socket));
        cmd.arg("-e")
            .arg(format!("XDG_STATE_HOME={}", state.display()));
        cmd.arg("-e")
            .arg(format!("XDG_CONFIG_HOME={}", state.display()));
        for (k, v) in env {
            cmd.arg("-e").arg(format!("{k}={v}"));
        }
        // tmux does not always collect a finished pane's exit status (seen with tmux 3.3a under
        // load), so a shell runs the program as its child and writes the status to a file.
        let program = command.strip_prefix("exec ").unwrap_or(command);
        let wrapped = format!("{program}; echo $? > '{}'", t.status_file().display());
        cmd.arg(wrapped).env_remove("TMUX");
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "tmux failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        t
    }

    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .env_remove("TMUX")
            .output()
            .unwrap()
    }

    /// The visible screen as text.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "main"]).stdout)
            .into_owned()
    }

    /// The screen with the pane's scrollback above it (a message printed after the program left
    /// the alternate screen can scroll past the top when the pane dies).
    pub fn history(&self) -> String {
        String::from_utf8_lossy(
            &self
                .tmux(&["capture-pane", "-p", "-S", "-", "-t", "main"])
                .stdout,
        )
        .into_owned()
    }

    /// Sends tmux key names (`q`, `Down`, `C-c`, `Escape`) or literal text with `-l`.
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "main"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Resizes the window (the program sees SIGWINCH and its terminal's new size).
    pub fn resize(&self, width: u16, height: u16) {
        let (w, h) = (width.to_string(), height.to_string());
        let out = self.tmux(&["resize-window", "-t", "main", "-x", &w, "-y", &h]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn literal(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "main", "-l", text]);
    }

    fn format(&self, fmt: &str) -> String {
        let out = self.tmux(&["display-message", "-p", "-t", "main", fmt]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn status_file(&self) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("{}.status", self.socket))
    }

    /// The program's PID: the child of the pane's shell.
    pub fn pid(&self) -> u32 {
        let shell: u32 = self.format("#{pane_pid}").parse().unwrap();
        let children = format!("/proc/{shell}/task/{shell}/children");
        let start = Instant::now();
        loop {
            let text = std::fs::read_to_string(&children).unwrap_or_default();
            if let Some(pid) = text.split_whitespace().next() {
                return pid.parse().unwrap();
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "no program under the pane's shell {shell}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the program has exited (its status is written).
    pub fn dead(&self) -> bool {
        self.exit_status().is_some()
    }

    /// The program's exit status (128 + N after signal N), once it has exited.
    pub fn exit_status(&self) -> Option<i32> {
        std::fs::read_to_string(self.status_file())
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }

    /// Whether the pane is in the alternate screen (a TUI that did not restore leaves it on).
    pub fn alternate_on(&self) -> bool {
        self.format("#{alternate_on}") == "1"
    }

    /// Waits until the screen satisfies `pred`; returns the screen or panics with it.
    pub fn wait_for(&self, what: &str, timeout: Duration, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            if start.elapsed() > timeout {
                panic!("timed out after {timeout:?} waiting for {what}; screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn wait_dead(&self, timeout: Duration) {
        let start = Instant::now();
        while !self.dead() {
            if start.elapsed() > timeout {
                panic!(
                    "program still running after {timeout:?}; screen:\n{}",
                    self.screen()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
        let _ = std::fs::remove_file(&self.conf);
        let _ = std::fs::remove_file(self.status_file());
        let _ =
            std::fs::remove_dir_all(std::env::temp_dir().join(format!("{}.state", self.socket)));
    }
}
