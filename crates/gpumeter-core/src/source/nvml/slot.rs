//! What the source remembers about one GPU between ticks: its identity (read once), static
//! limits, the memo of unsupported readings, whether it is lost, the PCIe and settings schedules
//! (power limit, PCIe link, MIG mode: read every 10 s, carried forward) and the
//! process-utilization cursor. The state changes (lost, reset required, back again, handle
//! failure) live here as plain methods so they are tested without a library, and so do the
//! standing warnings: while a GPU is lost or a reading refused, every sample says so.

use gpumeter_model::{GpuReading, GpuState};

use super::lists::ListRoom;
use super::processes::ProcessUtilTracker;
use super::schedule::Every;
use super::support::{Stop, SupportMemo, line};

/// How often the source does its slow or cautious things, on the caller's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NvmlTiming {
    /// PCIe throughput is a ~20 ms sampling call: read it at most this often, carrying the
    /// last value forward in between.
    pub pcie_interval_ms: u64,
    /// A lost GPU (or one needing a reset) is asked again at most this often.
    pub lost_reprobe_ms: u64,
    /// How long a per-process utilization sample stays current without a newer one.
    pub process_util_hold_ms: u64,
    /// Settings that only an administrator or a power state changes (the enforced power
    /// limit, the current PCIe link, MIG mode) are read at most this often, carried forward
    /// in between. A failed read is asked again the next tick.
    pub settings_interval_ms: u64,
}

impl Default for NvmlTiming {
    fn default() -> Self {
        Self {
            pcie_interval_ms: 5_000,
            lost_reprobe_ms: 30_000,
            process_util_hold_ms: super::processes::DEFAULT_PROCESS_UTIL_HOLD_MS,
            settings_interval_ms: 10_000,
        }
    }
}

/// Name, UUID and PCI bus id: read once, sanitized, kept while the GPU is lost (shared with
/// every reading: a tick clones pointers).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Identity {
    pub(crate) name: Option<gpumeter_model::SharedStr>,
    pub(crate) uuid: Option<gpumeter_model::SharedStr>,
    pub(crate) pci_bus_id: Option<gpumeter_model::SharedStr>,
}

/// Limits that do not change while the driver runs: read once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Statics {
    pub(crate) clock_sm_max_mhz: Option<u32>,
    pub(crate) clock_memory_max_mhz: Option<u32>,
    pub(crate) pcie_link_gen_max: Option<u32>,
    pub(crate) pcie_link_width_max: Option<u32>,
    /// The board's default power limit, milliwatts.
    pub(crate) power_default_limit_mw: Option<u32>,
    pub(crate) num_fans: Option<u32>,
}

/// Settings read on [`NvmlTiming::settings_interval_ms`], carried forward between reads.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Settings {
    pub(crate) power_limit_watts: Option<f64>,
    pub(crate) pcie_link_gen: Option<u32>,
    pub(crate) pcie_link_width: Option<u32>,
    pub(crate) mig_enabled: Option<bool>,
}

/// The settings last read and when the next read is due.
#[derive(Debug, Clone)]
pub(crate) struct SettingsSlot {
    pub(crate) due: Every,
    pub(crate) last: Settings,
    /// With MIG on, its MIG devices' UUIDs (how the kubelet names the slices it gives out),
    /// read with the settings; empty otherwise.
    pub(crate) mig_uuids: Vec<gpumeter_model::SharedStr>,
    /// Why listing them failed, said with every reading until the next settings read.
    pub(crate) mig_warning: Option<String>,
}

impl SettingsSlot {
    /// Keeps this read of the settings; the next is due an interval on, unless this one
    /// failed somewhere (then the next tick asks again).
    pub(crate) fn keep(&mut self, settings: Settings, complete: bool, now_ms: i64) {
        self.last = settings;
        if complete {
            self.due.mark(now_ms);
        } else {
            self.due.reset();
        }
    }

    /// Forgets them and reads them again at the next answer.
    fn forget(&mut self) {
        self.last = Settings::default();
        self.mig_uuids.clear();
        self.mig_warning = None;
        self.due.reset();
    }
}

/// One GPU's memory between ticks.
#[derive(Debug, Clone)]
pub(crate) struct DeviceSlot {
    pub(crate) index: u32,
    pub(crate) identity: Identity,
    pub(crate) statics: Statics,
    pub(crate) memo: SupportMemo,
    pub(crate) state: GpuState,
    reprobe: Every,
    pub(crate) pcie: Every,
    /// Last PCIe (RX, TX) in bytes/s, carried forward between reads.
    pub(crate) pcie_last: (Option<u64>, Option<u64>),
    /// Why the last PCIe read failed ("PCIe RX (timeout)"), carried forward with its N/A.
    pub(crate) pcie_failure: Option<String>,
    pub(crate) process_util: ProcessUtilTracker,
    /// The process lists' buffers (one NVML call per list a tick, see `lists`).
    pub(crate) lists: ListRoom,
    pub(crate) settings: SettingsSlot,
}

impl DeviceSlot {
    pub(crate) fn new(index: u32, timing: &NvmlTiming) -> Self {
        Self {
            index,
            identity: Identity::default(),
            statics: Statics::default(),
            memo: SupportMemo::default(),
            state: GpuState::Ok,
            reprobe: Every::new(timing.lost_reprobe_ms),
            pcie: Every::new(timing.pcie_interval_ms),
            pcie_last: (None, None),
            pcie_failure: None,
            process_util: ProcessUtilTracker::new(timing.process_util_hold_ms),
            lists: ListRoom::default(),
            settings: SettingsSlot {
                due: Every::new(timing.settings_interval_ms),
                last: Settings::default(),
                mig_uuids: Vec::new(),
                mig_warning: None,
            },
        }
    }

    /// Whether it is stopped (lost or needing a reset) and waiting for its next probe.
    pub(crate) fn is_stopped(&self) -> bool {
        matches!(self.state, GpuState::Lost | GpuState::ResetRequired)
    }

    /// Whether to talk to the device this tick: always, unless it is stopped and its
    /// re-probe is not due. Marks the probe when one is made.
    pub(crate) fn begin_tick(&mut self, now_ms: i64) -> bool {
        if !self.is_stopped() {
            return true;
        }
        if !self.reprobe.due(now_ms) {
            return false;
        }
        self.reprobe.mark(now_ms);
        true
    }

    /// The reading of a GPU that is not answering: identity and state, every measurement N/A.
    pub(crate) fn frozen(&self) -> GpuReading {
        GpuReading {
            index: self.index,
            state: self.state,
            uuid: self.identity.uuid.clone(),
            name: self.identity.name.clone(),
            pci_bus_id: self.identity.pci_bus_id.clone(),
            ..GpuReading::default()
        }
    }

    /// The device stopped answering: stop asking it (until the re-probe) and forget what
    /// it said. The words come from [`DeviceSlot::standing`], in this and every later sample.
    pub(crate) fn stop(&mut self, stop: Stop, now_ms: i64) {
        self.state = match stop {
            Stop::Lost => GpuState::Lost,
            Stop::ResetRequired => GpuState::ResetRequired,
        };
        self.reprobe.mark(now_ms);
        self.pcie_last = (None, None);
        self.pcie_failure = None;
        self.pcie.reset();
        self.process_util.reset();
        self.settings.forget();
    }

    /// What stays true and must be said in every sample: the GPU is lost / needs a reset, or
    /// readings it refuses for a reason (no permission…).
    pub(crate) fn standing(&self) -> Option<String> {
        let what = match self.state {
            GpuState::Lost => "is lost (fell off the bus or stopped answering)",
            GpuState::ResetRequired => "needs a reset before it answers again",
            GpuState::Ok | GpuState::Error => {
                // Named only when something stands (not a string per GPU per tick).
                return self
                    .memo
                    .has_standing()
                    .then(|| self.memo.standing(&format!("GPU {}", self.index)))
                    .flatten();
            }
        };
        Some(line(&format!(
            "{} {what}; its readings are N/A, the other GPUs go on",
            self.who()
        )))
    }

    /// The device answered this tick. Returns a warning when it came back from a stop.
    pub(crate) fn answered(&mut self) -> Option<String> {
        let was_stopped = self.is_stopped();
        self.state = GpuState::Ok;
        if !was_stopped {
            return None;
        }
        // After a reset the limits and settings may differ: read them again next tick.
        self.statics = Statics::default();
        self.settings.due.reset();
        self.reprobe.reset();
        Some(line(&format!("{} answers again", self.who())))
    }

    /// Getting a handle failed for a reason other than lost/reset. Returns the warning.
    pub(crate) fn handle_failed(&mut self, why: &str) -> String {
        if !self.is_stopped() {
            self.state = GpuState::Error;
        }
        line(&format!("{}: cannot open the device ({why})", self.who()))
    }

    /// "GPU 2 (NVIDIA H100 80GB HBM3)".
    fn who(&self) -> String {
        match &self.identity.name {
            Some(name) => format!("GPU {} ({name})", self.index),
            None => format!("GPU {}", self.index),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot() -> DeviceSlot {
        let mut s = DeviceSlot::new(2, &NvmlTiming::default());
        s.identity.name = Some("NVIDIA H100".into());
        s.identity.uuid = Some("GPU-1234".into());
        s
    }

    #[test]
    fn lost_gpu_keeps_identity_and_is_reprobed_every_30_s() {
        let mut s = slot();
        assert!(s.begin_tick(0));
        s.pcie_last = (Some(1), Some(2));
        s.stop(Stop::Lost, 1_000);
        let frozen = s.frozen();
        assert_eq!(frozen.state, GpuState::Lost);
        assert_eq!(frozen.uuid.as_deref(), Some("GPU-1234"));
        assert_eq!(frozen.util_gpu_pct, None);
        assert_eq!(s.pcie_last, (None, None));

        assert!(!s.begin_tick(2_000));
        assert!(!s.begin_tick(30_999));
        assert!(s.begin_tick(31_000), "re-probe due");
        assert!(!s.begin_tick(32_000), "probe marked: not again right away");
        s.stop(Stop::Lost, 31_000);
        assert!(!s.begin_tick(60_999));
        assert!(s.begin_tick(61_000));
    }

    #[test]
    fn a_stopped_gpu_says_so_in_every_sample() {
        let mut s = slot();
        assert_eq!(s.standing(), None);
        s.stop(Stop::Lost, 0);
        let lost = "GPU 2 (NVIDIA H100) is lost (fell off the bus or stopped answering); \
                    its readings are N/A, the other GPUs go on";
        for now in [0, 1_000, 2_000] {
            s.begin_tick(now);
            assert_eq!(s.standing().as_deref(), Some(lost));
        }
        s.stop(Stop::ResetRequired, 30_000);
        assert!(s.standing().unwrap().contains("needs a reset"));
        s.answered();
        assert_eq!(s.standing(), None, "back: nothing stands");
    }

    #[test]
    fn refused_readings_stand_while_the_gpu_answers() {
        let mut s = slot();
        s.memo.refuse_because(
            super::super::support::Reading::Power,
            "no permission".into(),
        );
        assert_eq!(
            s.standing().as_deref(),
            Some("GPU 2: power (no permission) refused; shown as N/A")
        );
    }

    #[test]
    fn recovery_is_announced_once_and_queries_resume() {
        let mut s = slot();
        s.stop(Stop::ResetRequired, 0);
        assert_eq!(s.state, GpuState::ResetRequired);
        s.statics.num_fans = Some(2);
        assert!(s.begin_tick(30_000));
        assert_eq!(
            s.answered().as_deref(),
            Some("GPU 2 (NVIDIA H100) answers again")
        );
        assert_eq!(s.state, GpuState::Ok);
        assert_eq!(s.statics, Statics::default());
        assert!(s.begin_tick(30_001));
        assert_eq!(s.answered(), None);
    }

    #[test]
    fn settings_are_kept_an_interval_and_forgotten_on_a_stop() {
        let mut s = slot();
        let read = Settings {
            power_limit_watts: Some(700.0),
            pcie_link_gen: Some(5),
            pcie_link_width: Some(16),
            mig_enabled: Some(false),
        };
        assert!(s.settings.due.due(0), "the first tick reads them");
        s.settings.keep(read, true, 0);
        assert!(!s.settings.due.due(9_999));
        assert!(s.settings.due.due(10_000));
        // A failed read is asked again at once.
        s.settings.keep(Settings::default(), false, 10_000);
        assert!(s.settings.due.due(10_001));
        s.settings.keep(read, true, 11_000);
        s.stop(Stop::Lost, 12_000);
        assert_eq!(
            s.settings.last,
            Settings::default(),
            "a lost GPU keeps no readings"
        );
        assert!(
            s.settings.due.due(12_001),
            "asked again at the first answer"
        );
        s.settings.keep(read, true, 42_000);
        s.stop(Stop::ResetRequired, 43_000);
        assert!(s.begin_tick(73_000));
        s.settings.keep(read, true, 73_000);
        s.answered();
        assert!(
            s.settings.due.due(73_001),
            "after a reset they may differ: read again"
        );
    }

    #[test]
    fn reset_required_after_lost_replaces_it() {
        let mut s = slot();
        s.stop(Stop::Lost, 0);
        s.stop(Stop::ResetRequired, 30_000);
        assert_eq!(s.state, GpuState::ResetRequired);
    }

    #[test]
    fn handle_failure_marks_error_but_not_over_a_lost_marker() {
        let mut s = slot();
        let w = s.handle_failed("timeout");
        assert_eq!(w, "GPU 2 (NVIDIA H100): cannot open the device (timeout)");
        assert_eq!(s.state, GpuState::Error);
        assert_eq!(s.frozen().state, GpuState::Error);
        s.answered();
        assert_eq!(s.state, GpuState::Ok);
        s.stop(Stop::Lost, 0);
        s.handle_failed("timeout");
        assert_eq!(s.state, GpuState::Lost);
    }
}
