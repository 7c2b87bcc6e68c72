//! The plain-text snapshot: what `gpumeter snapshot` prints for a person (and for logs), with
//! the same units and `N/A` conventions as the dashboard: the box, the bill (when priced) and
//! the standing alerts worst first, then the GPUs (on Kubernetes, whose pods each serves) and
//! their processes (with a pod column while any process is in a known pod).

use std::fmt::Write as _;

use gpumeter_model::{GpuReading, GpuState, PodRef, ProcessReading, Snapshot};

use crate::billing::BillingView;
use crate::engine::rules::Alert;
use crate::units::{NA, bytes, duration_of_secs, opt, rate};

/// Renders a snapshot as aligned text tables, with the bill and `alerts` (most severe first,
/// as the engine keeps them) where there are any.
pub fn to_table(snap: &Snapshot, billing: Option<&BillingView>, alerts: &[Alert]) -> String {
    let mut out = String::new();
    header(&mut out, snap);
    if let Some(v) = billing {
        bill(&mut out, v);
    }
    alert_lines(&mut out, alerts);
    gpus(&mut out, &snap.gpus);
    gpu_pods(&mut out, &snap.gpus);
    processes(&mut out, &snap.processes, snap.taken_at_unix_ms / 1000);
    for w in &snap.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

fn header(out: &mut String, snap: &Snapshot) {
    let s = &snap.system;
    let h = &snap.host;
    let _ = writeln!(
        out,
        "{}  driver {}  CUDA {}  up {}  source {}",
        s.hostname.as_deref().unwrap_or(NA),
        s.driver_version.as_deref().unwrap_or(NA),
        s.cuda_driver_version.as_deref().unwrap_or(NA),
        opt(s.uptime_s, duration_of_secs),
        snap.source
    );
    let _ = writeln!(
        out,
        "host: cpu {} of {} cores  iowait {}  mem {} / {}  disk r {} w {}  net rx {} tx {}",
        opt(h.cpu_util_pct, |v| format!("{v:.0}%")),
        opt(h.cpu_count, |v| v.to_string()),
        opt(h.iowait_pct, |v| format!("{v:.0}%")),
        opt(h.mem_used_bytes, bytes),
        opt(h.mem_total_bytes, bytes),
        opt(h.disk_read_bytes_per_s, rate),
        opt(h.disk_write_bytes_per_s, rate),
        opt(h.net_rx_bytes_per_s, rate),
        opt(h.net_tx_bytes_per_s, rate),
    );
    out.push('\n');
}

/// "bill: spent $644.91 (today $538.26)  burn $24.80/h  budget 13% of $5,000.00/run  idle 0% of
/// the watched time ($0.00)", then where the rate came from.
fn bill(out: &mut String, v: &BillingView) {
    let money = |m| v.currency.format(m);
    let mut line = format!(
        "bill: spent {} (today {})  burn {}/h",
        money(v.spent),
        money(v.spent_today),
        money(v.burn_per_hour)
    );
    if let Some(b) = &v.budget {
        let _ = write!(
            line,
            "  budget {:.0}% of {}/{}",
            (b.share * 100.0).clamp(0.0, 999.0),
            money(b.amount),
            b.period
        );
    }
    let _ = write!(
        line,
        "  idle {} of the watched time ({})",
        opt(v.idle_share, |s| format!("{:.0}%", s * 100.0)),
        money(v.idle_cost)
    );
    let _ = writeln!(out, "{line}");
    let _ = writeln!(out, "rate: {}", v.rate_source.line(&v.rate, v.currency));
    out.push('\n');
}

/// "alerts: 2" and one line each, "HIGH      GPU 2 starved …" (nothing when none stand).
fn alert_lines(out: &mut String, alerts: &[Alert]) {
    if alerts.is_empty() {
        return;
    }
    let _ = writeln!(out, "alerts: {}", alerts.len());
    for a in alerts {
        let sev = a.severity.name().to_uppercase();
        let _ = writeln!(out, "  {sev:<9} {}", a.title);
    }
    out.push('\n');
}

fn gpus(out: &mut String, gpus: &[GpuReading]) {
    // Columns only some cards have appear only when one of these does (N/A for the others).
    let sm = gpus.iter().any(|g| g.sm_active_pct.is_some());
    let codec = gpus
        .iter()
        .any(|g| g.encoder_util_pct.is_some() || g.decoder_util_pct.is_some());
    let mut head = format!(
        "{:<3} {:<24} {:>5} {:>5} {:>19} {:>15} {:>5} {:>11} {:>23}",
        "GPU",
        "name",
        "util",
        "mem",
        "VRAM used/total",
        "power/limit",
        "temp",
        "SM/mem MHz",
        "PCIe rx / tx"
    );
    if sm {
        let _ = write!(head, " {:>6}", "SM act");
    }
    if codec {
        let _ = write!(head, " {:>9}", "enc/dec");
    }
    let _ = writeln!(out, "{head}  throttle");
    for g in gpus {
        let name: String = g.name.as_deref().unwrap_or(NA).chars().take(24).collect();
        if g.state != GpuState::Ok {
            let _ = writeln!(out, "{:<3} {:<24} {}", g.index, name, state_word(g.state));
            continue;
        }
        let mut line = format!(
            "{:<3} {:<24} {:>5} {:>5} {:>19} {:>15} {:>5} {:>11} {:>23}",
            g.index,
            name,
            opt(g.util_gpu_pct, |v| format!("{v}%")),
            opt(g.util_memory_pct, |v| format!("{v}%")),
            format!(
                "{}/{}",
                opt(g.memory_used_bytes, bytes),
                opt(g.memory_total_bytes, bytes)
            ),
            format!(
                "{}/{}",
                opt(g.power_watts, |w| format!("{w:.0}W")),
                opt(g.power_limit_watts, |w| format!("{w:.0}W"))
            ),
            opt(g.temperature_celsius, |v| format!("{v}C")),
            format!(
                "{}/{}",
                opt(g.clock_sm_mhz, |v| v.to_string()),
                opt(g.clock_memory_mhz, |v| v.to_string())
            ),
            format!(
                "{} / {}",
                opt(g.pcie_rx_bytes_per_s, |v| rate(v as f64)),
                opt(g.pcie_tx_bytes_per_s, |v| rate(v as f64))
            ),
        );
        if sm {
            let _ = write!(line, " {:>6}", opt(g.sm_active_pct, |v| format!("{v:.0}%")));
        }
        if codec {
            let _ = write!(
                line,
                " {:>9}",
                format!(
                    "{}/{}",
                    opt(g.encoder_util_pct, |v| format!("{v}%")),
                    opt(g.decoder_util_pct, |v| format!("{v}%"))
                )
            );
        }
        let _ = writeln!(out, "{line}  {}", throttle_words(g));
    }
    out.push('\n');
}

/// "pods: GPU 0 pod trainer-7f9c, namespace ml (container trainer)", one line per GPU the
/// kubelet (or its processes' cgroups) ties to a pod; nothing off Kubernetes.
fn gpu_pods(out: &mut String, gpus: &[GpuReading]) {
    let mut any = false;
    for g in gpus {
        let Some(who) = PodRef::describe(&g.pods) else {
            continue;
        };
        let mut containers: Vec<&str> = g
            .pods
            .iter()
            .filter_map(|p| p.container.as_deref())
            .collect();
        containers.sort_unstable();
        containers.dedup();
        let word = if containers.len() == 1 {
            "container"
        } else {
            "containers"
        };
        let tail = if containers.is_empty() {
            String::new()
        } else {
            format!(" ({word} {})", containers.join(", "))
        };
        let _ = writeln!(out, "pods: GPU {} {who}{tail}", g.index);
        any = true;
    }
    if any {
        out.push('\n');
    }
}

fn state_word(state: GpuState) -> &'static str {
    match state {
        GpuState::Ok => "ok",
        GpuState::Lost => "LOST (fell off the bus; readings unavailable)",
        GpuState::ResetRequired => "RESET REQUIRED (readings unavailable)",
        GpuState::Error => "ERROR (see warnings)",
    }
}

fn throttle_words(g: &GpuReading) -> String {
    match &g.throttle_reasons {
        None => NA.to_string(),
        Some(r) if r.is_empty() => "none".to_string(),
        Some(r) => r.iter().map(|r| r.label()).collect::<Vec<_>>().join(","),
    }
}

fn processes(out: &mut String, procs: &[ProcessReading], now_s: i64) {
    if procs.is_empty() {
        let _ = writeln!(out, "no GPU processes");
        return;
    }
    // The pod column only while some process is in a known pod (as the dashboard's POD).
    let pods = procs
        .iter()
        .any(|p| p.pod.as_ref().and_then(PodRef::short_name).is_some());
    let pod_head = if pods {
        format!(" {:<POD_W$}", "pod")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{:>8} {:<10}{pod_head} {:<12} {:<5} {:>9} {:>4} {:>6} {:>9} {:>8}  command",
        "PID", "user", "container", "GPU", "VRAM", "SM%", "CPU%", "RSS", "runtime"
    );
    for p in procs {
        let pod = if !pods {
            String::new()
        } else {
            let name = match p.pod.as_ref().and_then(PodRef::short_name) {
                Some(name) => name,
                None if p.visible => "-",
                None => NA,
            };
            format!(" {:<POD_W$}", clip(name, POD_W))
        };
        let gpus = if p.gpu.is_empty() {
            "-".to_string()
        } else {
            p.gpu
                .iter()
                .map(|g| g.gpu_index.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let command = if p.visible {
            p.command.as_deref().or(p.name.as_deref()).unwrap_or(NA)
        } else {
            "(not visible in /proc: another PID namespace or exited)"
        };
        let _ = writeln!(
            out,
            "{:>8} {:<10}{pod} {:<12} {:<5} {:>9} {:>4} {:>6} {:>9} {:>8}  {}",
            p.pid,
            clip(p.user.as_deref().unwrap_or(NA), 10),
            clip(p.container.as_deref().unwrap_or("-"), 12),
            gpus,
            if p.is_gpu_process() {
                opt(p.gpu_memory_bytes(), bytes)
            } else {
                "-".to_string()
            },
            if p.is_gpu_process() {
                opt(p.sm_util_pct(), |v| v.to_string())
            } else {
                "-".to_string()
            },
            opt(p.cpu_pct, |v| format!("{v:.0}")),
            opt(p.rss_bytes, bytes),
            opt(p.start_time_unix_s, |t| duration_of_secs(
                (now_s - t).max(0) as u64
            )),
            clip(command, 120),
        );
    }
}

/// The pod column's width: a Deployment's pod name (`name-<hash>-<id>`) mostly fits.
const POD_W: usize = 24;

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut c: String = s.chars().take(n.saturating_sub(1)).collect();
        c.push('…');
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumeter_model::testing::SnapshotBuilder;
    use gpumeter_model::{GpuProcessKind, GpuUse};

    fn snap() -> Snapshot {
        let mut p = ProcessReading::invisible(4242);
        p.gpu.push(GpuUse {
            gpu_index: 0,
            kind: GpuProcessKind::Compute,
            memory_bytes: None,
            sm_util_pct: None,
            memory_util_pct: None,
        });
        SnapshotBuilder::new("demo:test", 100_000)
            .gpu_reading(GpuReading {
                index: 0,
                name: Some("NVIDIA H100 80GB HBM3".into()),
                util_gpu_pct: Some(0),
                memory_total_bytes: Some(80 << 30),
                memory_used_bytes: Some(1 << 30),
                throttle_reasons: Some(vec![]),
                ..GpuReading::default()
            })
            .gpu_reading(GpuReading {
                index: 1,
                state: GpuState::Lost,
                ..GpuReading::default()
            })
            .process(p)
            .build()
    }

    fn named(ns: &str, pod: &str, container: &str) -> PodRef {
        PodRef {
            namespace: Some(ns.into()),
            pod: Some(pod.into()),
            container: Some(container.into()),
            pod_uid: None,
        }
    }

    /// [`snap`] on a Kubernetes node: GPU 0 given to ml/trainer-7f9c, whose process 4242 is;
    /// a second process in no pod.
    fn on_kubernetes() -> Snapshot {
        let mut s = snap();
        s.gpus[0].pods = vec![named("ml", "trainer-7f9c", "trainer")];
        s.processes[0].pod = Some(named("ml", "trainer-7f9c", "trainer"));
        let mut free = ProcessReading::invisible(77);
        free.visible = true;
        free.command = Some("python serve.py".into());
        s.processes.push(free);
        s
    }

    /// The text under `column` of the row whose first field is `pid`.
    fn cell(t: &str, pid: &str, column: &str) -> Option<String> {
        let header = t.lines().find(|l| l.trim_start().starts_with("PID "))?;
        let start = header.find(&format!(" {column} "))? + 1;
        let row = t
            .lines()
            .find(|l| l.split_whitespace().next() == Some(pid))?;
        Some(row.get(start..)?.split_whitespace().next()?.to_string())
    }

    #[test]
    fn on_kubernetes_the_gpus_and_processes_name_their_pods() {
        let t = to_table(&on_kubernetes(), None, &[]);
        assert!(
            t.contains("pods: GPU 0 pod trainer-7f9c, namespace ml (container trainer)\n"),
            "{t}"
        );
        // GPU 1 has no pod: no line says otherwise.
        assert!(!t.contains("pods: GPU 1"), "{t}");
        assert_eq!(
            cell(&t, "4242", "pod").as_deref(),
            Some("trainer-7f9c"),
            "{t}"
        );
        assert_eq!(cell(&t, "77", "pod").as_deref(), Some("-"), "{t}");
        // The columns after it keep their own text.
        assert_eq!(cell(&t, "4242", "GPU").as_deref(), Some("0"), "{t}");
        assert_eq!(cell(&t, "77", "container").as_deref(), Some("-"), "{t}");
    }

    #[test]
    fn a_pod_known_by_its_uid_shows_its_start_and_a_long_name_is_cut() {
        let mut s = snap();
        s.processes[0].pod = Some(PodRef {
            pod_uid: Some("0d9a1c2e-5b7f-4c11-9e2a-6f0b3c8d1a22".into()),
            ..PodRef::default()
        });
        let t = to_table(&s, None, &[]);
        assert_eq!(cell(&t, "4242", "pod").as_deref(), Some("0d9a1c2e"), "{t}");
        s.processes[0].pod = Some(named("ml", &"x".repeat(60), "c"));
        let t = to_table(&s, None, &[]);
        let pod = cell(&t, "4242", "pod").unwrap_or_default();
        assert_eq!(pod.chars().count(), POD_W, "{t}");
        assert!(pod.ends_with('…'), "{t}");
        assert_eq!(cell(&t, "4242", "GPU").as_deref(), Some("0"), "{t}");
    }

    #[test]
    fn off_kubernetes_no_pod_column_or_line() {
        let t = to_table(&snap(), None, &[]);
        assert!(!t.contains("pod"), "{t}");
    }

    #[test]
    fn zero_is_zero_and_unknown_is_na() {
        let t = to_table(&snap(), None, &[]);
        let gpu0 = t.lines().find(|l| l.starts_with("0 ")).unwrap_or_default();
        assert!(gpu0.contains(" 0%"), "{gpu0}");
        assert!(gpu0.contains("N/A/N/A") || gpu0.contains("N/A"), "{gpu0}");
        assert!(gpu0.contains("none"));
    }

    #[test]
    fn lost_gpu_and_invisible_pid_are_labelled_not_dropped() {
        let t = to_table(&snap(), None, &[]);
        assert!(t.contains("LOST"));
        assert!(t.contains("4242"));
        assert!(t.contains("not visible in /proc"));
    }

    #[test]
    fn unpriced_and_quiet_means_no_bill_no_alerts_and_no_columns_the_cards_lack() {
        let t = to_table(&snap(), None, &[]);
        assert!(
            !t.contains("bill:") && !t.contains("alerts:") && !t.contains('$'),
            "{t}"
        );
        // No card here reports GPM or codec readings: their columns stay away.
        assert!(!t.contains("SM act") && !t.contains("enc/dec"), "{t}");
    }
}
