//! The rule changes the blind corpus's first run asked for (docs/accuracy.md, "How the corpus
//! was made"), each pinned on a small machine: a stopped job is paused, a notebook has a
//! rhythm, served batches end an idle stretch not yet announced, a transcode is work, TGI is a
//! server, a sweep's one-process trials are one family.

use super::*;

fn fired(ts: &[Transition], prefix: &str) -> usize {
    names(ts)
        .iter()
        .filter(|(what, id)| *what == "fired" && id.starts_with(prefix))
        .count()
}

/// A trainer (pid 100) busy on GPU 0 for `busy_s`, then its GPUs idle with the process in
/// `state` for the rest.
fn trainer_then_quiet(t: i64, s: i64, busy_s: i64, state: char) -> Snapshot {
    let busy = s < busy_s;
    let mut m = machine(t, [if busy { 95 } else { 0 }, 0]);
    let mut p = process(
        100,
        50,
        90.0,
        Some((0, 30 * GIB, if busy { 95 } else { 0 })),
    );
    if !busy {
        // Asleep or stopped, it burns no CPU either.
        p.state = Some(state);
        p.cpu_pct = Some(0.3);
    }
    p.start_time_unix_s = Some(T0 / 1000 - 3600);
    m.processes.push(p);
    m
}

#[test]
fn a_job_stopped_with_ctrl_z_is_paused_not_finished() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 40 * 60, None, |s, t| {
        trainer_then_quiet(t, s, 20 * 60, 'T')
    });
    assert_eq!(fired(&ts, "job_done"), 0, "{:?}", names(&ts));
    // The same quiet with the process asleep (S): it went idle while it lives on — an end.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 40 * 60, None, |s, t| {
        trainer_then_quiet(t, s, 20 * 60, 'S')
    });
    assert_eq!(fired(&ts, "job_done"), 1, "{:?}", names(&ts));
}

#[test]
fn a_notebook_used_every_twenty_minutes_is_forgotten_once_not_after_every_gap() {
    // 30 GiB held; a 60 s cell at 90 % every 20 minutes, nothing between.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 2 * 3600, None, |s, t| {
        let busy = s % 1200 >= 1140;
        let mut m = machine(t, [if busy { 90 } else { 0 }, 0]);
        m.processes.push(process(
            4242,
            1,
            1.0,
            Some((0, 30 * GIB, if busy { 90 } else { 0 })),
        ));
        m
    });
    assert_eq!(fired(&ts, "forgotten"), 1, "{:?}", names(&ts));
}

#[test]
fn served_batches_end_an_idle_stretch_that_single_requests_do_not() {
    // A model resident; every 5 minutes a burst of `burst_s` at 95 %.
    let run = |burst_s: i64| {
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        drive(&mut r, &clock, 3600, None, |s, t| {
            let busy = s % 300 >= 300 - burst_s;
            let mut m = machine(t, [if busy { 95 } else { 0 }; 2]);
            m.gpus[0].memory_used_bytes = Some(20 * GIB);
            m.gpus[1].memory_used_bytes = Some(20 * GIB);
            m
        })
    };
    assert_eq!(
        fired(&run(30), "idle"),
        0,
        "30 s batches: the GPUs were never idle 10 min"
    );
    assert_eq!(
        fired(&run(3), "idle"),
        1,
        "3 s requests: the box is idle between them"
    );
}

/// A job on GPU 0 at util 20 % for five minutes, its main process `command`, encoder at `enc`.
fn low_use(command: &str, enc: u32) -> impl Fn(i64, i64) -> Snapshot {
    let command = command.to_string();
    move |_, t| {
        let mut m = with_job(machine(t, [20, 0]), 5.0, 2);
        m.processes[0].command = Some(command.as_str().into());
        m.gpus[0].encoder_util_pct = Some(enc);
        m
    }
}

#[test]
fn a_transcode_at_the_encoders_limit_is_work_and_a_quiet_encoder_is_not() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(
        &mut r,
        &clock,
        5 * 60,
        None,
        low_use("ffmpeg -c:v h264_nvenc", 100),
    );
    assert_eq!(fired(&ts, "starved"), 0, "{:?}", names(&ts));
    let mut r = Rules::default();
    let ts = drive(
        &mut r,
        &clock,
        5 * 60,
        None,
        low_use("ffmpeg -c:v h264_nvenc", 10),
    );
    assert_eq!(fired(&ts, "starved"), 1, "{:?}", names(&ts));
}

#[test]
fn tgi_is_an_inference_server_by_its_console_script_name_too() {
    let clock = FakeClock::new(T0);
    for command in [
        "/opt/conda/bin/text-generation-server serve mistralai/Mistral-7B",
        "python -m text_generation_server.cli serve mistralai/Mistral-7B",
    ] {
        let mut r = Rules::default();
        let ts = drive(&mut r, &clock, 5 * 60, None, low_use(command, 0));
        assert_eq!(fired(&ts, "starved"), 0, "{command}: {:?}", names(&ts));
    }
}

#[test]
fn a_model_api_under_a_python_web_server_waits_on_requests_not_input() {
    // A FastAPI vision model at partial load (blind round 2): its GPU waits on clients. A
    // training script at the same use, with nothing on the host at a limit, is still named.
    let clock = FakeClock::new(T0);
    for command in [
        "python -m uvicorn app.main:app --host 0.0.0.0 --port 8000",
        "/usr/bin/gunicorn -k uvicorn.workers.UvicornWorker serve:app",
    ] {
        let mut r = Rules::default();
        let ts = drive(&mut r, &clock, 5 * 60, None, low_use(command, 0));
        assert_eq!(fired(&ts, "starved"), 0, "{command}: {:?}", names(&ts));
    }
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 5 * 60, None, low_use("python train.py", 0));
    assert_eq!(fired(&ts, "starved"), 1, "{:?}", names(&ts));
}

#[test]
fn a_run_started_from_a_shell_ends_at_its_exit_and_a_launchers_trial_waits_for_the_next() {
    // One python process (parent pid 50) trains 20 min, then exits; the parent lives on.
    let run = |parent: &'static str| {
        move |s: i64, t: i64| {
            let mut m = machine(t, [if s < 1200 { 95 } else { 0 }, 0]);
            if s < 1200 {
                let mut p = process(100, 50, 90.0, Some((0, 30 * GIB, 95)));
                p.start_time_unix_s = Some(T0 / 1000 - 600);
                p.parent_name = Some(parent.into());
                m.processes.push(p);
            }
            m
        }
    };
    // Whether the notice has come 15 s after the exit, and 5 minutes after it.
    let done_by = |parent: &'static str| {
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        let soon = fired(&drive(&mut r, &clock, 1215, None, run(parent)), "job_done");
        let rest = |s: i64, t: i64| run(parent)(s + 1215, t);
        let later = fired(&drive(&mut r, &clock, 300, None, rest), "job_done");
        (soon, soon + later)
    };
    // From a shell in tmux: its end, said within seconds.
    assert_eq!(done_by("bash"), (1, 1));
    assert_eq!(done_by("tmux: server"), (1, 1));
    // Under a sweep agent: the next trial may follow, so the end waits 3 minutes.
    assert_eq!(done_by("wandb"), (0, 1));
}

#[test]
fn a_notebook_between_cells_is_not_starved_and_a_starved_one_gets_notebook_advice() {
    let clock = FakeClock::new(T0);
    let kernel = "/opt/conda/bin/python -m ipykernel_launcher -f /root/.local/share/jupyter/runtime/kernel-1.json";
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 5 * 60, None, low_use(kernel, 0));
    assert_eq!(fired(&ts, "starved"), 0, "{:?}", names(&ts));
    // Its DataLoader's 8 workers peg the box's 8 CPUs: named, with advice for a notebook.
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 5 * 60, None, |_, t| {
        let mut m = with_job(machine(t, [20, 0]), 99.0, 8);
        m.host.cpu_util_pct = Some(99.0);
        m.processes[0].command = Some(kernel.into());
        m
    });
    let a = ts
        .iter()
        .map(Transition::alert)
        .find(|a| a.id.starts_with("starved"))
        .unwrap_or_else(|| panic!("{:?}", names(&ts)));
    let step = a.next_step.clone().unwrap_or_default();
    assert!(
        step.contains("It runs in a notebook (python -m ipykernel_launcher (pid 100))"),
        "{step}"
    );
}

#[test]
fn a_sweep_agents_one_process_trials_are_one_family_with_a_rhythm() {
    // Trials under agent pid 50: 19 min of work, 40 s between trials, a new pid each time.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 2 * 3600, None, |s, t| {
        let k = s / 1200;
        let busy = s % 1200 < 1160;
        let mut m = machine(t, [if busy { 95 } else { 0 }, 0]);
        if busy {
            let mut p = process(
                u32::try_from(1000 + k).unwrap(),
                50,
                90.0,
                Some((0, 30 * GIB, 95)),
            );
            p.start_time_unix_s = Some((t - (s % 1200) * 1000) / 1000);
            m.processes.push(p);
        }
        m
    });
    assert_eq!(fired(&ts, "job_done"), 0, "{:?}", names(&ts));
}
