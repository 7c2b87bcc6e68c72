//! Real child processes: signals delivered, a reused PID refused, a refusal by the kernel
//! reported.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};

use super::*;

/// A child that sleeps until signalled, with INT and TERM at their defaults: a test binary
/// started with them ignored (`nohup … &` ignores INT) would otherwise hand that on to it.
fn sleeper() -> Child {
    let mut sleep = Command::new("sleep");
    sleep.arg("30").stdin(Stdio::null());
    // SAFETY: signal(2) is async-signal-safe, so it may run between fork and exec.
    unsafe {
        sleep.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            Ok(())
        });
    }
    sleep.spawn().expect("spawn sleep")
}

/// Ends and reaps a child that a test left running.
fn reap(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn term_and_int_reach_the_child() {
    for (signal, number) in [(Signal::Term, 15), (Signal::Int, 2), (Signal::Kill, 9)] {
        let mut child = sleeper();
        let target = Target::take(child.id(), None, None).expect("target");
        target.signal(signal).expect("signal sent");
        let status = child.wait().expect("wait");
        assert_eq!(status.signal(), Some(number), "{signal}");
    }
}

#[test]
fn a_changed_start_time_is_refused_and_nothing_is_sent() {
    let mut child = sleeper();
    let taken = Target::take(child.id(), None, None).expect("target");
    // The same PID with another start time is what a reused PID looks like.
    let reused = Target {
        start_ticks: taken.start_ticks + 1,
        ..taken
    };
    assert_eq!(
        reused.signal(Signal::Kill),
        Err(ActError::Reused { pid: child.id() })
    );
    assert_eq!(reused.renice(5), Err(ActError::Reused { pid: child.id() }));
    assert!(
        child.try_wait().expect("try_wait").is_none(),
        "still running"
    );
    reap(child);
}

#[test]
fn a_process_other_than_the_one_shown_is_not_taken() {
    let child = sleeper();
    let pid = child.id();
    let ticks = start_ticks(pid).expect("ticks");
    let tps = procfs::ticks_per_second().max(1);
    let boot = 1_700_000_000;
    let shown = boot + (ticks / tps) as i64;
    assert!(Target::take(pid, Some(shown), Some(boot)).is_ok());
    assert_eq!(
        Target::take(pid, Some(shown - 60), Some(boot)),
        Err(ActError::NotAsShown { pid })
    );
    reap(child);
}

#[test]
fn an_exited_process_is_gone() {
    let mut child = Command::new("true").spawn().expect("spawn true");
    let pid = child.id();
    let target = Target {
        pid,
        start_ticks: u64::MAX,
    };
    child.wait().expect("wait");
    // Reaped: the PID is free (or, rarely, reused, which is refused too).
    let err = target.signal(Signal::Term).expect_err("refused");
    assert!(
        matches!(err, ActError::Gone { .. } | ActError::Reused { .. }),
        "{err}"
    );
}

#[test]
fn renice_sets_the_nice_value() {
    let child = sleeper();
    let target = Target::take(child.id(), None, None).expect("target");
    let before = target.nice().expect("nice");
    // Raising the nice value is allowed for one's own processes.
    let wanted = (before + 3).min(19);
    target.renice(wanted).expect("renice");
    assert_eq!(target.nice().expect("nice"), wanted);
    let stat = procfs::process::Process::new(child.id() as i32)
        .and_then(|p| p.stat())
        .expect("stat");
    assert_eq!(stat.nice, i64::from(wanted));
    reap(child);
}

#[test]
fn one_refusal_does_not_stop_the_rest_of_a_job() {
    let mut a = sleeper();
    let b = sleeper();
    let ta = Target::take(a.id(), None, None).expect("a");
    let tb = Target::take(b.id(), None, None).expect("b");
    let stale = Target {
        start_ticks: tb.start_ticks + 1,
        ..tb
    };
    let (sent, errors) = signal_all(&[ta, stale], Signal::Term);
    assert_eq!(sent, 1);
    assert_eq!(errors, vec![ActError::Reused { pid: b.id() }]);
    assert_eq!(a.wait().expect("wait").signal(), Some(15));
    reap(b);
}

/// Set in the child run of [`another_users_process_is_not_permitted`].
const UNPRIVILEGED_CHILD: &str = "GPUMETER_ACT_TEST_UNPRIVILEGED";

/// Signalling PID 1 as an ordinary user: the kernel refuses, and the error says so.
fn assert_pid1_not_permitted() {
    let target = Target::take(1, None, None).expect("pid 1 is readable");
    assert_eq!(
        target.signal(Signal::Term),
        Err(ActError::NotPermitted {
            pid: 1,
            what: "TERM to".into()
        })
    );
}

#[test]
fn another_users_process_is_not_permitted() {
    if !rustix::process::geteuid().is_root() {
        assert_pid1_not_permitted();
        return;
    }
    // As root every signal is allowed: run this test again as `nobody`, where the refusal
    // is real. The child only acts when it is not root (see below).
    let exe = std::env::current_exe().expect("current_exe");
    let out = Command::new(exe)
        .args([
            "act::tests::unprivileged_child",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env(UNPRIVILEGED_CHILD, "1")
        .uid(65534)
        .gid(65534)
        .output();
    match out {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && text.contains("1 passed"),
                "child run as nobody: {}\n{}",
                text,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // The test binary may sit where `nobody` cannot run it.
        Err(e) => eprintln!("skipped: cannot run the test binary as nobody ({e})"),
    }
}

/// The unprivileged half of [`another_users_process_is_not_permitted`].
#[test]
#[ignore = "run by another_users_process_is_not_permitted as nobody"]
fn unprivileged_child() {
    if std::env::var_os(UNPRIVILEGED_CHILD).is_none() || rustix::process::geteuid().is_root() {
        // Never signal PID 1 with the power to hit it.
        return;
    }
    assert_pid1_not_permitted();
}
