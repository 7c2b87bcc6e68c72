//! Hand-built fixtures for the dashboard's tests: machines with 0–8 GPUs (one lost, one with
//! unsupported readings), a training job with dataloader workers, an invisible PID, a hostile
//! (sanitized) command line, and engines fed a few minutes of history so charts have lines.
//! Deterministic: fixed times, no randomness.

use gpumeter_model::{
    GpuProcessKind, GpuReading, GpuState, GpuUse, HostReading, ProcessReading, Snapshot,
    SystemInfo, ThrottleReason,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

use crate::ui::{App, UiOptions};
use gpumeter_core::engine::Engine;
use gpumeter_core::sanitize::{MAX_COMMAND_CHARS, sanitize};

/// When the latest fixture snapshot was taken.
pub const T0: i64 = 1_760_000_000_000;
/// "Now" for rendering: 400 ms after the latest snapshot.
pub const NOW: i64 = T0 + 400;
pub const GIB: u64 = 1 << 30;

/// A healthy, busy GPU with every reading present.
pub fn gpu(index: u32, util: u32) -> GpuReading {
    GpuReading {
        index,
        state: GpuState::Ok,
        uuid: Some(format!("GPU-{index:08x}").into()),
        name: Some("NVIDIA H100 80GB HBM3".into()),
        pci_bus_id: Some(format!("00000000:{:02X}:00.0", 0x18 + index * 0x10).into()),
        util_gpu_pct: Some(util),
        util_memory_pct: Some(util / 3),
        memory_total_bytes: Some(80 * GIB),
        memory_used_bytes: Some((40 + u64::from(index) * 4) * GIB),
        power_watts: Some(150.0 + f64::from(util) * 5.0),
        power_limit_watts: Some(700.0),
        energy_millijoules: Some(3_600_000 * (1200 + u64::from(index) * 10)),
        temperature_celsius: Some(45 + util / 3),
        fan_speed_pct: None,
        clock_graphics_mhz: Some(1980),
        clock_sm_mhz: Some(1980),
        clock_memory_mhz: Some(2619),
        clock_sm_max_mhz: Some(1980),
        clock_memory_max_mhz: Some(2619),
        throttle_reasons: Some(if util > 90 {
            vec![ThrottleReason::SwPowerCap]
        } else {
            vec![]
        }),
        pcie_rx_bytes_per_s: Some(1_200_000_000),
        pcie_tx_bytes_per_s: Some(300_000_000),
        pcie_link_gen: Some(5),
        pcie_link_gen_max: Some(5),
        pcie_link_width: Some(16),
        pcie_link_width_max: Some(16),
        encoder_util_pct: Some(0),
        decoder_util_pct: Some(0),
        mig_enabled: Some(false),
        ..GpuReading::default()
    }
}

/// A GPU that fell off the bus: every reading absent.
pub fn lost_gpu(index: u32) -> GpuReading {
    GpuReading {
        index,
        state: GpuState::Lost,
        uuid: Some(format!("GPU-{index:08x}").into()),
        name: Some("NVIDIA H100 80GB HBM3".into()),
        ..GpuReading::default()
    }
}

/// A GPU that answers but supports almost nothing (consumer card, old driver).
pub fn bare_gpu(index: u32) -> GpuReading {
    GpuReading {
        index,
        name: Some("NVIDIA GeForce GTX 1080".into()),
        util_gpu_pct: Some(0),
        memory_total_bytes: Some(8 * GIB),
        memory_used_bytes: Some(0),
        ..GpuReading::default()
    }
}

fn gpu_use(gpu_index: u32, gib: u64, sm: u32) -> GpuUse {
    GpuUse {
        gpu_index,
        kind: GpuProcessKind::Compute,
        memory_bytes: Some(gib * GIB),
        sm_util_pct: Some(sm),
        memory_util_pct: Some(sm / 3),
    }
}

/// A visible process.
pub fn process(pid: u32, ppid: u32, user: &str, command: &str) -> ProcessReading {
    ProcessReading {
        pid,
        visible: true,
        ns_pid: None,
        ppid: Some(ppid),
        user: Some(user.into()),
        container: None,
        name: command.split_whitespace().next().map(Into::into),
        command: Some(sanitize(command, MAX_COMMAND_CHARS).into()),
        cpu_pct: Some(f64::from(pid % 97)),
        rss_bytes: Some(u64::from(pid % 13 + 1) * GIB / 4),
        start_time_unix_s: Some(T0 / 1000 - i64::from(pid % 50) * 600 - 3600),
        state: Some('S'),
        threads: Some(8),
        gpu: Vec::new(),
        ..ProcessReading::invisible(pid)
    }
}

/// A trainer on each GPU with two dataloader workers, a notebook on GPU 0, an invisible PID and
/// a process whose command line held escape sequences.
pub fn processes(gpus: &[GpuReading]) -> Vec<ProcessReading> {
    let mut out = Vec::new();
    for g in gpus.iter().filter(|g| g.state == GpuState::Ok) {
        let i = g.index;
        let mut trainer = process(
            1000 + i,
            900,
            "alice",
            &format!("python train.py --config llama.yaml --local_rank {i}"),
        );
        trainer.container = Some("3f2a9c1b7d4e".into());
        trainer.cpu_pct = Some(99.5);
        trainer.gpu.push(gpu_use(i, 38 + u64::from(i), 70 + i));
        out.push(trainer);
        for k in 0..2 {
            let mut w = process(
                2000 + i * 10 + k,
                1000 + i,
                "alice",
                "python -c from multiprocessing.spawn import spawn_main",
            );
            w.container = Some("3f2a9c1b7d4e".into());
            out.push(w);
        }
    }
    if gpus.iter().any(|g| g.index == 0 && g.state == GpuState::Ok) {
        let mut nb = process(
            3100,
            1,
            "bob",
            "/opt/conda/bin/python -m ipykernel_launcher -f k.json",
        );
        nb.gpu.push(gpu_use(0, 2, 0));
        out.push(nb);
        let mut ghost = ProcessReading::invisible(4242);
        ghost.gpu.push(gpu_use(0, 1, 5));
        out.push(ghost);
        let hostile = "evil\u{1b}[2J\u{1b}]0;pwned\u{7}\u{202e} --steal \u{9b}31m";
        let mut bad = process(3300, 1, "mallory\u{1b}[31m", hostile);
        bad.user = Some(sanitize("mallory\u{1b}[31m", 64).into());
        bad.name = Some(sanitize(hostile, 64).into());
        bad.gpu.push(gpu_use(0, 1, 1));
        out.push(bad);
    }
    out
}

/// A machine with `n` busy GPUs at time `t`.
pub fn snapshot_at(n: u32, t: i64) -> Snapshot {
    let mut s = Snapshot::empty("demo:fixture", t);
    s.system = SystemInfo {
        hostname: Some("gpu-box-01".into()),
        driver_version: Some("550.54.15".into()),
        cuda_driver_version: Some("12.4".into()),
        uptime_s: Some(3 * 86_400 + 4 * 3600),
        boot_time_unix_s: Some(t / 1000 - (3 * 86_400 + 4 * 3600)),
        runs_in: None,
        interruption: None,
    };
    s.host = HostReading {
        cpu_count: Some(64),
        cpu_util_pct: Some(37.5),
        iowait_pct: Some(2.5),
        per_cpu_util_pct: Vec::new(),
        load_avg_1m: Some(24.1),
        mem_total_bytes: Some(1024 * GIB),
        mem_used_bytes: Some(310 * GIB),
        disk_read_bytes_per_s: Some(120_000_000.0),
        disk_write_bytes_per_s: Some(4_000_000.0),
        net_rx_bytes_per_s: Some(2_000_000.0),
        net_tx_bytes_per_s: Some(150_000.0),
        ..HostReading::default()
    };
    // A slow triangle wave per GPU (2-minute period, shifted by GPU): smooth, deterministic.
    s.gpus = (0..n)
        .map(|i| {
            let phase = ((t / 1000) as u32 + i * 15) % 120;
            let tri = if phase < 60 { phase } else { 120 - phase };
            gpu(i, 35 + tri)
        })
        .collect();
    s.processes = processes(&s.gpus);
    s
}

/// A crowded machine: `n` GPUs and `extra` more host processes feeding GPU 0's trainer.
pub fn crowded(n: u32, extra: u32) -> Snapshot {
    let mut s = snapshot(n);
    for k in 0..extra {
        let mut p = process(5000 + k, 1000, "alice", &format!("pt_data_worker_{k}"));
        p.cpu_pct = Some(f64::from(k % 100));
        s.processes.push(p);
    }
    s
}

/// The latest fixture snapshot (at [`T0`]).
pub fn snapshot(n: u32) -> Snapshot {
    snapshot_at(n, T0)
}

/// An engine fed five minutes of snapshots (2 s apart) ending with `last`.
pub fn engine_with(last: Snapshot) -> Engine {
    feed(Engine::new(), last)
}

/// [`engine_with`], metered at $31/h with a $1,000 run budget, the clock from boot.
pub fn billed_engine_with(last: Snapshot) -> Engine {
    use gpumeter_core::billing::{Budget, Meter, MeterConfig, Pricing, Rate};
    let mut pricing = Pricing::simple(Rate::parse("31/h").unwrap());
    pricing.budget = Some(Budget::parse("1000/run").unwrap());
    let meter = Meter::new(MeterConfig {
        pricing,
        tick_cap_ms: 20_000,
    });
    feed(Engine::new().with_meter(meter), last)
}

fn feed(mut e: Engine, last: Snapshot) -> Engine {
    let n = last.gpus.len() as u32;
    for k in (1..150).rev() {
        let mut s = snapshot_at(n, last.taken_at_unix_ms - k * 2000);
        // Lost GPUs stay lost in the history too.
        for (g, l) in s.gpus.iter_mut().zip(&last.gpus) {
            if l.state != GpuState::Ok {
                *g = l.clone();
            }
        }
        e.ingest(s);
    }
    e.ingest(last);
    e
}

/// An engine with `n` busy GPUs and history.
pub fn engine(n: u32) -> Engine {
    engine_with(snapshot(n))
}

/// Options with colours on.
pub fn options() -> UiOptions {
    UiOptions {
        no_color: false,
        source_label: "demo:fixture".into(),
        billing: None,
        theme: crate::ui::theme::Theme::default(),
        alerts: gpumeter_core::config::AlertSettings::default(),
        ..Default::default()
    }
}

/// Draws one frame of `engine` with `app` at `width`×`height`, synced the way the loop does.
pub fn render(app: &mut App, engine: &Engine, width: u16, height: u16) -> Buffer {
    render_at(app, engine, width, height, NOW)
}

/// [`render`] at another "now".
pub fn render_at(app: &mut App, engine: &Engine, width: u16, height: u16, now: i64) -> Buffer {
    let backend = TestBackend::new(width, height);
    let mut terminal = Terminal::new(backend).unwrap();
    let area = ratatui::layout::Rect::new(0, 0, width, height);
    crate::ui::sync(app, engine, area, now);
    terminal
        .draw(|f| f.render_widget(crate::ui::Dashboard::new(app, engine, now), f.area()))
        .unwrap();
    terminal.backend().buffer().clone()
}

/// The buffer's text, one line per row, trailing spaces kept (so widths show in snapshots).
pub fn buffer_to_string(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut line = String::new();
        let mut skip = 0usize;
        for x in area.left()..area.right() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf.cell((x, y)).map_or(" ", |c| c.symbol());
            skip = unicode_width::UnicodeWidthStr::width(sym).saturating_sub(1);
            line.push_str(sym);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A priced machine nine hours in, most of it idle, with a daily budget: the spend widgets' fixture.
pub fn billing_view() -> gpumeter_core::billing::BillingView {
    use gpumeter_core::billing::{BillingView, BudgetView, Granularity, Rate};
    use gpumeter_core::money::{Currency, Money};
    let m = |s: &str| Money::parse(s).unwrap();
    BillingView {
        currency: Currency::USD,
        at_unix_ms: 1_767_258_000_000, // 2026-01-01T09:00Z
        rate: Rate::parse("31/h").unwrap(),
        rate_source: Default::default(),
        granularity: Granularity::PerSecondMin60,
        clock_start_unix_ms: Some(1_767_225_600_000),
        paid_ms: 9 * 3_600_000,
        watched_ms: 9 * 3_600_000,
        spent: m("279"),
        spent_today: m("279"),
        burn_per_hour: m("31"),
        list_per_gpu_hour: Some(m("3.875")),
        idle_share: Some(0.78),
        idle_cost: m("217.62"),
        busy_gpu_hours: 15.8,
        cost_per_busy_gpu_hour: Some(m("17.66")),
        projected_end_of_day: Some(m("744")),
        projected_end_of_month: Some(m("23064")),
        budget: Some(BudgetView {
            amount: m("500"),
            period: "day",
            spent: m("279"),
            share: 0.558,
            ceiling_in_ms: Some(25_664_516),
            ceiling_at_unix_ms: Some(1_767_283_664_516),
            forecast: Some(m("744")),
        }),
        energy_kwh: Some(41.25),
        energy_cost: None,
        egress_bytes: 0,
        egress_cost: Money::ZERO,
        egress_per_hour: Money::ZERO,
        stopped_storage: None,
        gpus: 8,
        busy_gpus: 2,
    }
}
