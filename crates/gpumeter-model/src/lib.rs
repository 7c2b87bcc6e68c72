//! gpumeter's data model: the versioned [`Snapshot`] that every source produces (NVML + /proc,
//! the built-in simulator) and every consumer reads (the dashboard, `watch`, `serve`, one-shot
//! JSON, recordings and their replay).
//!
//! Rules this crate encodes:
//! - a reading the driver does not support is `None` (serialized as `null`), never 0;
//! - units live in field names (`_bytes`, `_pct`, `_watts`, `_mhz`), numbers stay numbers;
//! - the schema carries a version ([`SCHEMA_VERSION`]) that readers check before trusting a file.
//!
//! It holds plain data only: no I/O, no clocks, no terminal types. Rooms: `host`, `gpu`,
//! `process`, `pod` (Kubernetes), `document` (what `serve` publishes), `throttle`; everything is re-exported
//! here. With the `test-support` feature (tests only), `testing` builds readings by hand.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

mod document;
mod gpu;
mod host;
mod pod;
mod process;
mod throttle;

#[cfg(any(test, feature = "test-support"))]
pub mod testing;

pub use document::{
    AlertSummary, BillingSummary, BudgetSummary, Document, Evidence, StorageSummary,
};
pub use gpu::{GpuReading, GpuState, StuckThresholds, XidCount};
pub use host::{CgroupReading, HostReading, Interruption, PlaceKind, RunsIn, SystemInfo};
pub use pod::PodRef;
pub use process::{GpuProcessKind, GpuUse, PidMatch, ProcessReading, ThreadReading};
pub use throttle::ThrottleReason;

/// A string shared between readings: a process's name, command, user, container and CPU list,
/// and a GPU's uuid, name and PCI bus id, are the same from one tick to the next, so a reading holds a pointer to the one copy the
/// source keeps (cloning it is a count increment, not a copy of its bytes). It serializes as a
/// plain JSON string and parses from one, so the schema is unchanged; `as_deref()` on an
/// `Option<SharedStr>` gives `Option<&str>`.
pub type SharedStr = Arc<str>;

/// Version of the [`Snapshot`] schema. Bump on any change a reader would misread.
///
/// - 1: the first schema.
/// - 2: the JSON document may carry `billing` and `alerts` beside the reading ([`Document`]).
/// - 3: where gpumeter runs (`system.runs_in`), the cgroup's budget and throttling
///   (`host.cgroup`), pressure stall (`host.*_pressure_pct`), disk busy time, and per process the
///   host PID seen from a container (`host_pid`, `pid_match`), the busiest thread and the CPU
///   affinity set. Every new field defaults to absent, so schema-1 and -2 files still parse.
pub const SCHEMA_VERSION: u32 = 3;

/// One reading of the whole machine at one instant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Schema version, always [`SCHEMA_VERSION`] when produced by this build.
    pub schema: u32,
    /// When the reading was taken, milliseconds since the Unix epoch.
    pub taken_at_unix_ms: i64,
    /// Where the reading came from: `nvml`, `demo:<scenario>` (and, once replay exists,
    /// `replay:<file>`).
    pub source: String,
    pub system: SystemInfo,
    pub host: HostReading,
    pub gpus: Vec<GpuReading>,
    /// GPU processes and the host processes that feed them (their descendants).
    pub processes: Vec<ProcessReading>,
    /// Problems the source met while taking this reading (sanitized, human-readable).
    pub warnings: Vec<String>,
}

impl Snapshot {
    /// An empty snapshot of the current schema, for sources to fill in.
    pub fn empty(source: impl Into<String>, taken_at_unix_ms: i64) -> Self {
        Self {
            schema: SCHEMA_VERSION,
            taken_at_unix_ms,
            source: source.into(),
            system: SystemInfo::default(),
            host: HostReading::default(),
            gpus: Vec::new(),
            processes: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// The GPU with this NVML index, if present.
    pub fn gpu(&self, index: u32) -> Option<&GpuReading> {
        self.gpus.iter().find(|g| g.index == index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_readings_serialize_as_null_not_zero() {
        let mut snap = Snapshot::empty("test", 1_000);
        snap.gpus.push(GpuReading {
            index: 0,
            util_gpu_pct: Some(0),
            ..GpuReading::default()
        });
        let json = serde_json::to_value(&snap).unwrap();
        assert_eq!(json["schema"], SCHEMA_VERSION);
        assert_eq!(json["gpus"][0]["util_gpu_pct"], 0);
        assert!(json["gpus"][0]["power_watts"].is_null());
        let back: Snapshot = serde_json::from_value(json).unwrap();
        assert_eq!(back, snap);
    }

    #[test]
    fn readings_without_affinity_or_quota_fields_still_parse() {
        let mut snap = Snapshot::empty("test", 1_000);
        snap.processes.push(ProcessReading::invisible(7));
        let mut json = serde_json::to_value(&snap).unwrap();
        json["host"]
            .as_object_mut()
            .unwrap()
            .remove("cpu_quota_cores");
        json["processes"][0]
            .as_object_mut()
            .unwrap()
            .remove("cpus_allowed");
        let back: Snapshot = serde_json::from_value(json).unwrap();
        assert_eq!(back.host.cpu_quota_cores, None);
        assert_eq!(back.processes[0].cpus_allowed, None);
        assert_eq!(back, snap);
    }

    #[test]
    fn schema_1_readings_parse_with_the_new_fields_absent() {
        let mut snap = Snapshot::empty("test", 1_000);
        snap.processes.push(ProcessReading::invisible(7));
        let mut json = serde_json::to_value(&snap).unwrap();
        json["schema"] = 1.into();
        json["system"].as_object_mut().unwrap().remove("runs_in");
        let host = json["host"].as_object_mut().unwrap();
        for key in [
            "cgroup",
            "cpu_pressure_pct",
            "io_pressure_pct",
            "disk_busy_pct",
            "disk_queue_depth",
        ] {
            assert!(host.remove(key).is_some(), "{key}");
        }
        let p = json["processes"][0].as_object_mut().unwrap();
        for key in [
            "cpus_allowed_list",
            "host_pid",
            "pid_match",
            "busiest_thread",
        ] {
            assert!(p.remove(key).is_some(), "{key}");
        }
        let back: Snapshot = serde_json::from_value(json).unwrap();
        assert_eq!(back.schema, 1);
        assert_eq!(back.host.cgroup, CgroupReading::default());
        assert_eq!(back.system.runs_in, None);
        assert_eq!(back.processes[0].host_pid, None);
        assert_eq!(back.processes[0].driver_pid(), 7);
    }

    #[test]
    fn shared_strings_serialize_as_plain_strings_and_parse_back() {
        let mut p = ProcessReading::invisible(42);
        p.visible = true;
        p.user = Some("alice".into());
        p.container = Some("3f2a9c1b7d0e".into());
        p.name = Some("python".into());
        p.command = Some("python train.py --lr \"3e-4\"".into());
        p.cpus_allowed = Some(9);
        p.cpus_allowed_list = Some("0-7,16".into());
        p.busiest_thread = Some(ThreadReading {
            tid: 43,
            name: Some("pt_main_thread".into()),
            cpu_pct: Some(99.5),
        });
        // The exact text the schema's `String` fields gave: a shared string is a JSON string.
        let golden = concat!(
            r#"{"pid":42,"visible":true,"ns_pid":null,"ppid":null,"user":"alice","#,
            r#""container":"3f2a9c1b7d0e","name":"python","#,
            r#""command":"python train.py --lr \"3e-4\"","cpu_pct":null,"rss_bytes":null,"#,
            r#""start_time_unix_s":null,"state":null,"threads":null,"gpu":[],"#,
            r#""cpus_allowed":9,"cpus_allowed_list":"0-7,16","host_pid":null,"#,
            r#""pid_match":null,"busiest_thread":{"tid":43,"name":"pt_main_thread","#,
            r#""cpu_pct":99.5}}"#
        );
        assert_eq!(serde_json::to_string(&p).unwrap(), golden);
        let g = GpuReading {
            uuid: Some("GPU-5f3e".into()),
            name: Some("NVIDIA H100 80GB HBM3".into()),
            pci_bus_id: Some("00000000:18:00.0".into()),
            ..GpuReading::default()
        };
        let json = serde_json::to_value(&g).unwrap();
        assert_eq!(json["uuid"], "GPU-5f3e");
        assert_eq!(json["name"], "NVIDIA H100 80GB HBM3");
        assert_eq!(json["pci_bus_id"], "00000000:18:00.0");
        assert_eq!(serde_json::from_value::<GpuReading>(json).unwrap(), g);
        let back: ProcessReading = serde_json::from_str(golden).unwrap();
        assert_eq!(back, p);
        assert_eq!(
            back.command.as_deref(),
            Some("python train.py --lr \"3e-4\"")
        );
        // Clones share the bytes rather than copy them.
        let copy = p.clone();
        let (a, b) = (p.name.unwrap(), copy.name.unwrap());
        assert!(Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn runs_in_labels() {
        let c = RunsIn {
            kind: PlaceKind::Container,
            runtime: Some("docker".into()),
        };
        assert_eq!(c.label(), "container (docker)");
        let h = RunsIn {
            kind: PlaceKind::Host,
            runtime: None,
        };
        assert_eq!(h.label(), "host");
    }

    #[test]
    fn memory_used_pct_needs_both_values_and_nonzero_total() {
        let mut g = GpuReading {
            memory_used_bytes: Some(40),
            memory_total_bytes: Some(80),
            ..GpuReading::default()
        };
        assert_eq!(g.memory_used_pct(), Some(50.0));
        g.memory_total_bytes = Some(0);
        assert_eq!(g.memory_used_pct(), None);
        g.memory_total_bytes = None;
        assert_eq!(g.memory_used_pct(), None);
    }

    #[test]
    fn process_gpu_memory_sums_known_parts_only() {
        let mut p = ProcessReading::invisible(7);
        assert_eq!(p.gpu_memory_bytes(), None);
        p.gpu.push(GpuUse {
            gpu_index: 0,
            kind: GpuProcessKind::Compute,
            memory_bytes: Some(10),
            sm_util_pct: Some(3),
            memory_util_pct: None,
        });
        p.gpu.push(GpuUse {
            gpu_index: 1,
            kind: GpuProcessKind::Compute,
            memory_bytes: None,
            sm_util_pct: Some(9),
            memory_util_pct: None,
        });
        assert_eq!(p.gpu_memory_bytes(), Some(10));
        assert_eq!(p.sm_util_pct(), Some(9));
        assert!(p.is_gpu_process());
    }
}
