//! Per-process families, opt-in (`--process-metrics`): the GPU processes holding the most VRAM,
//! at most `limit` of them, with `pid`, `user`, `container` and a sanitized, length-capped
//! `command`; how many were left out goes to `gpumeter_process_series_dropped`. A process that
//! exits is simply absent from the next reading, so its series go with it.

use gpumeter_model::{ProcessReading, Snapshot};

use super::out::{Labels, Out, Samples, label_value, opt_label};

/// Longest `command` label value.
const MAX_COMMAND_CHARS: usize = 64;

fn labels(p: &ProcessReading) -> Labels {
    let command = p
        .command
        .as_deref()
        .or(p.name.as_deref())
        .map_or_else(String::new, |c| label_value(c, MAX_COMMAND_CHARS));
    vec![
        ("pid", p.pid.to_string()),
        ("user", opt_label(p.user.as_deref())),
        ("container", opt_label(p.container.as_deref())),
        ("command", command),
    ]
}

/// The per-process families for the `limit` GPU processes with the most VRAM.
pub fn render(out: &mut Out, snap: &Snapshot, limit: usize) {
    let mut procs: Vec<&ProcessReading> = snap
        .processes
        .iter()
        .filter(|p| p.is_gpu_process())
        .collect();
    // Most VRAM first; unknown VRAM last; pid breaks ties so the cut is stable between scrapes.
    procs.sort_by(|a, b| {
        b.gpu_memory_bytes()
            .cmp(&a.gpu_memory_bytes())
            .then(a.pid.cmp(&b.pid))
    });
    let dropped = procs.len().saturating_sub(limit);
    procs.truncate(limit);

    let mut memory = Samples::new();
    let mut sm = Samples::new();
    let mut cpu = Samples::new();
    for p in &procs {
        let base = labels(p);
        for u in &p.gpu {
            let mut l = base.clone();
            l.push(("gpu", u.gpu_index.to_string()));
            if let Some(b) = u.memory_bytes {
                memory.push((l.clone(), b as f64));
            }
            if let Some(s) = u.sm_util_pct {
                sm.push((l, f64::from(s) / 100.0));
            }
        }
        if let Some(c) = p.cpu_pct {
            cpu.push((base, c / 100.0));
        }
    }
    out.gauge(
        "gpumeter_process_gpu_memory_used_bytes",
        "GPU memory a process holds on one GPU.",
        memory,
    );
    out.gauge(
        "gpumeter_process_gpu_sm_utilization_ratio",
        "Share of the GPU's SMs a process kept busy over the last sample period (0-1).",
        sm,
    );
    out.gauge(
        "gpumeter_process_cpu_cores",
        "CPU a GPU process used between its last two reads of /proc (up to 5 s apart), in cores.",
        cpu,
    );
    out.gauge(
        "gpumeter_process_series_dropped",
        "GPU processes left out of the per-process families by the --process-limit cap.",
        vec![(vec![], dropped as f64)],
    );
}
