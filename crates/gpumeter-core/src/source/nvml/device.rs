//! Reading one GPU through nvml-wrapper into a [`GpuReading`] plus its processes. Every call
//! goes through [`Ask`], which skips what the device refused before, sorts errors and stops at
//! the first sign the GPU is lost; this file is only the list of calls and unit conversions.

use std::collections::BTreeMap;

use gpumeter_model::{GpuReading, GpuState, GpuUse, ThrottleReason};
use nvml_wrapper::Device;
use nvml_wrapper::enum_wrappers::device::{Clock, PcieUtilCounter, TemperatureSensor};
use nvml_wrapper::error::NvmlError;

use super::gpm::GpmSlot;
use super::lists::ListRoom;
use super::processes::{apply_util, merge_processes};
use super::slot::{DeviceSlot, Settings};
use super::support::{Ask, Asked, Reading, line};
use crate::sanitize::sanitize;

/// Longest identity string kept (names, UUIDs, bus ids are far shorter on real hardware).
const MAX_IDENTITY_CHARS: usize = 96;

/// The readings on the settings schedule ([`Settings`]).
const SETTINGS: [Reading; 4] = [
    Reading::PowerLimit,
    Reading::PcieLinkGen,
    Reading::PcieLinkWidth,
    Reading::MigMode,
];

/// Most MIG devices looked up on one GPU (an A100/H100 has at most 7).
const MAX_MIG_DEVICES: u32 = 16;

/// The UUIDs of a MIG-enabled GPU's MIG devices. An empty slot answers NotFound and is
/// skipped; a driver without the calls gives none (the kubelet's MIG ids then go unmatched
/// and the pods come from the processes' cgroups). Any other failure comes back as a warning,
/// which stands until the next settings read: not silently taken for a board without slices.
fn mig_uuids(dev: &Device<'_>, index: u32) -> (Vec<gpumeter_model::SharedStr>, Option<String>) {
    let mut failed: Option<NvmlError> = None;
    let mut note = |e: NvmlError| {
        let quiet = matches!(e, NvmlError::NotFound)
            || super::errors::classify(&e) == super::errors::ErrorKind::Unsupported;
        if !quiet && failed.is_none() {
            failed = Some(e);
        }
    };
    let count = match dev.mig_device_count() {
        Ok(n) => n.min(MAX_MIG_DEVICES),
        Err(e) => {
            note(e);
            0
        }
    };
    let uuids = (0..count)
        .filter_map(
            |i| match dev.mig_device_by_index(i).and_then(|m| m.uuid()) {
                Ok(u) => Some(u),
                Err(e) => {
                    note(e);
                    None
                }
            },
        )
        .map(|u| sanitize(&u, MAX_IDENTITY_CHARS))
        .filter(|u| !u.is_empty())
        .map(Into::into)
        .collect();
    let warning = failed.map(|e| {
        line(&format!(
            "GPU {index}: MIG devices not listed ({}): pods on its slices are told by their \
             processes' cgroups",
            super::errors::describe(&e)
        ))
    });
    (uuids, warning)
}

/// NVML's `NVML_DEVICE_MIG_ENABLE`.
const MIG_ENABLED: u32 = 1;

/// PCIe throughput as NVML reports it (KB/s, 1 KB = 1024 bytes) in bytes per second.
pub(crate) fn kb_per_s_to_bytes(kb_per_s: u32) -> u64 {
    u64::from(kb_per_s) * 1024
}

/// Milliwatts to watts.
pub(crate) fn milliwatts_to_watts(mw: u32) -> f64 {
    f64::from(mw) / 1000.0
}

/// Reads one GPU. On a lost GPU (or one needing a reset) the result is the slot's frozen
/// reading with no processes, whatever was read before the GPU stopped answering.
pub(crate) fn read_device(
    dev: &Device<'_>,
    slot: &mut DeviceSlot,
    gpm: &mut GpmSlot,
    now_ms: i64,
    warnings: &mut Vec<String>,
) -> (GpuReading, BTreeMap<u32, GpuUse>) {
    let refresh_identity = slot.is_stopped();
    let mut ask = Ask::new(Some(slot.index), &mut slot.memo);

    // Identity: once, or again when a stopped GPU is probed (a reset may bring another board).
    let text = |s: String| sanitize(&s, MAX_IDENTITY_CHARS);
    if (refresh_identity || slot.identity.name.is_none())
        && let Some(name) = ask.get(Reading::Name, || dev.name())
    {
        slot.identity.name = Some(text(name).into());
    }
    if (refresh_identity || slot.identity.uuid.is_none())
        && let Some(uuid) = ask.get(Reading::Uuid, || dev.uuid())
    {
        slot.identity.uuid = Some(text(uuid).into());
    }
    if (refresh_identity || slot.identity.pci_bus_id.is_none())
        && let Some(pci) = ask.get(Reading::PciInfo, || dev.pci_info())
    {
        slot.identity.pci_bus_id = Some(text(pci.bus_id).into());
    }

    // Static limits: once.
    let st = &mut slot.statics;
    fill_once(
        &mut st.clock_sm_max_mhz,
        &mut ask,
        Reading::ClockSmMax,
        || dev.max_clock_info(Clock::SM),
    );
    fill_once(
        &mut st.clock_memory_max_mhz,
        &mut ask,
        Reading::ClockMemoryMax,
        || dev.max_clock_info(Clock::Memory),
    );
    fill_once(
        &mut st.pcie_link_gen_max,
        &mut ask,
        Reading::PcieLinkGenMax,
        || dev.max_pcie_link_gen(),
    );
    fill_once(
        &mut st.pcie_link_width_max,
        &mut ask,
        Reading::PcieLinkWidthMax,
        || dev.max_pcie_link_width(),
    );
    fill_once(
        &mut st.power_default_limit_mw,
        &mut ask,
        Reading::PowerDefaultLimit,
        || dev.power_management_limit_default(),
    );
    fill_once(&mut st.num_fans, &mut ask, Reading::NumFans, || {
        dev.num_fans()
    });

    // Settings (power limit, PCIe link, MIG mode): on their own slower schedule, carried
    // forward between reads; nvtop asks them every refresh, 4 of ~22 calls per GPU.
    if slot.settings.due.due(now_ms) {
        let read = Settings {
            power_limit_watts: ask
                .get(Reading::PowerLimit, || dev.enforced_power_limit())
                .map(milliwatts_to_watts),
            pcie_link_gen: ask.get(Reading::PcieLinkGen, || dev.current_pcie_link_gen()),
            pcie_link_width: ask.get(Reading::PcieLinkWidth, || dev.current_pcie_link_width()),
            mig_enabled: ask
                .get(Reading::MigMode, || dev.mig_mode())
                .map(|m| m.current == MIG_ENABLED),
        };
        let complete = ask.stopped().is_none()
            && SETTINGS
                .iter()
                .all(|&reading| ask.failure(reading).is_none());
        (slot.settings.mig_uuids, slot.settings.mig_warning) = if read.mig_enabled == Some(true) {
            mig_uuids(dev, slot.index)
        } else {
            (Vec::new(), None)
        };
        slot.settings.keep(read, complete, now_ms);
    }
    warnings.extend(slot.settings.mig_warning.clone());
    let set = slot.settings.last;

    let st = &slot.statics;
    let util = ask.get(Reading::Utilization, || dev.utilization_rates());
    let memory = ask.get(Reading::Memory, || dev.memory_info());
    let mut r = GpuReading {
        index: slot.index,
        state: GpuState::Ok,
        util_gpu_pct: util.as_ref().map(|u| u.gpu),
        util_memory_pct: util.as_ref().map(|u| u.memory),
        memory_total_bytes: memory.as_ref().map(|m| m.total),
        memory_used_bytes: memory.as_ref().map(|m| m.used),
        power_watts: ask
            .get(Reading::Power, || dev.power_usage())
            .map(milliwatts_to_watts),
        power_limit_watts: set.power_limit_watts,
        energy_millijoules: ask.get(Reading::Energy, || dev.total_energy_consumption()),
        temperature_celsius: ask.get(Reading::Temperature, || {
            dev.temperature(TemperatureSensor::Gpu)
        }),
        // A board that reports no fans (passively cooled) has no fan speed to ask for.
        fan_speed_pct: match st.num_fans {
            Some(0) => None,
            _ => ask.get(Reading::FanSpeed, || dev.fan_speed(0)),
        },
        clock_graphics_mhz: ask.get(Reading::ClockGraphics, || dev.clock_info(Clock::Graphics)),
        clock_sm_mhz: ask.get(Reading::ClockSm, || dev.clock_info(Clock::SM)),
        clock_memory_mhz: ask.get(Reading::ClockMemory, || dev.clock_info(Clock::Memory)),
        clock_sm_max_mhz: st.clock_sm_max_mhz,
        clock_memory_max_mhz: st.clock_memory_max_mhz,
        throttle_reasons: ask
            .get(Reading::Throttle, || dev.current_throttle_reasons())
            .map(|bits| ThrottleReason::from_bits(bits.bits())),
        pcie_rx_bytes_per_s: None,
        pcie_tx_bytes_per_s: None,
        pcie_link_gen: set.pcie_link_gen,
        pcie_link_gen_max: st.pcie_link_gen_max,
        pcie_link_width: set.pcie_link_width,
        pcie_link_width_max: st.pcie_link_width_max,
        power_default_limit_watts: st.power_default_limit_mw.map(milliwatts_to_watts),
        encoder_util_pct: ask
            .get(Reading::Encoder, || dev.encoder_utilization())
            .map(|u| u.utilization),
        decoder_util_pct: ask
            .get(Reading::Decoder, || dev.decoder_utilization())
            .map(|u| u.utilization),
        mig_enabled: set.mig_enabled,
        mig_uuids: slot.settings.mig_uuids.clone(),
        ..GpuReading::default()
    };

    // PCIe throughput: the slow call, on its own schedule; last values carried forward, and
    // so is the reason when the last read failed (its N/A lasts until the next read).
    if slot.pcie.due(now_ms) && ask.stopped().is_none() {
        slot.pcie.mark(now_ms);
        let rx = ask.get(Reading::PcieRx, || {
            dev.pcie_throughput(PcieUtilCounter::Receive)
        });
        let tx = ask.get(Reading::PcieTx, || {
            dev.pcie_throughput(PcieUtilCounter::Send)
        });
        slot.pcie_last = (rx.map(kb_per_s_to_bytes), tx.map(kb_per_s_to_bytes));
        let failed: Vec<String> = [Reading::PcieRx, Reading::PcieTx]
            .into_iter()
            .filter_map(|r| ask.failure(r).map(|why| format!("{} ({why})", r.label())))
            .collect();
        slot.pcie_failure = (!failed.is_empty()).then(|| failed.join(", "));
    } else if let Some(failed) = &slot.pcie_failure {
        warnings.push(line(&format!(
            "GPU {}: could not read {failed} at the last try; N/A until the next",
            slot.index
        )));
    }
    (r.pcie_rx_bytes_per_s, r.pcie_tx_bytes_per_s) = slot.pcie_last;

    if ask.stopped().is_none() {
        let g = gpm.read(dev.nvml(), dev, &mut ask, now_ms);
        r.sm_active_pct = g.sm_active_pct;
        r.sm_occupancy_pct = g.sm_occupancy_pct;
        r.tensor_active_pct = g.tensor_active_pct;
        r.dram_active_pct = g.dram_active_pct;
    }
    let mut processes = read_processes(dev, &mut ask, &mut slot.lists, slot.index);
    let cursor = slot.process_util.cursor();
    match ask.attempt(Reading::ProcessUtilization, || {
        slot.lists.utilization(dev, cursor)
    }) {
        Asked::Answered(samples) => slot.process_util.record(&samples, now_ms),
        // NOT_FOUND: no process was busy since the cursor. That is news, not an error.
        Asked::Failed(NvmlError::NotFound) => slot.process_util.nothing_new(now_ms),
        Asked::Failed(error) => {
            slot.process_util.unanswered(now_ms);
            // More samples arrived between the count and the fetch: next tick catches up.
            if !matches!(error, NvmlError::InsufficientSize(_)) {
                ask.absorb(Reading::ProcessUtilization, &error);
            }
        }
        Asked::Skipped => slot.process_util.unanswered(now_ms),
    }
    apply_util(&mut processes, &slot.process_util, now_ms);

    if let Some(stop) = ask.finish(warnings) {
        slot.stop(stop, now_ms);
        return (slot.frozen(), BTreeMap::new());
    }
    warnings.extend(slot.answered());
    r.uuid = slot.identity.uuid.clone();
    r.name = slot.identity.name.clone();
    r.pci_bus_id = slot.identity.pci_bus_id.clone();
    (r, processes)
}

/// Compute and graphics processes, merged per PID.
fn read_processes(
    dev: &Device<'_>,
    ask: &mut Ask<'_>,
    lists: &mut ListRoom,
    index: u32,
) -> BTreeMap<u32, GpuUse> {
    let compute = ask.get(Reading::ComputeProcesses, || lists.compute(dev));
    let graphics = ask.get(Reading::GraphicsProcesses, || lists.graphics(dev));
    merge_processes(index, compute.as_deref(), graphics.as_deref())
}

/// Asks for a value that never changes, unless it is already known.
fn fill_once(
    cache: &mut Option<u32>,
    ask: &mut Ask<'_>,
    reading: Reading,
    call: impl FnOnce() -> Result<u32, NvmlError>,
) {
    if cache.is_none() {
        *cache = ask.get(reading, call);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcie_kilobytes_become_bytes_without_overflow() {
        assert_eq!(kb_per_s_to_bytes(0), 0);
        assert_eq!(kb_per_s_to_bytes(1), 1024);
        assert_eq!(kb_per_s_to_bytes(12_000_000), 12_288_000_000);
        assert_eq!(kb_per_s_to_bytes(u32::MAX), u64::from(u32::MAX) * 1024);
    }

    #[test]
    fn milliwatts_become_watts() {
        assert_eq!(milliwatts_to_watts(0), 0.0);
        assert_eq!(milliwatts_to_watts(312_500), 312.5);
        assert_eq!(milliwatts_to_watts(700_000), 700.0);
    }
}
