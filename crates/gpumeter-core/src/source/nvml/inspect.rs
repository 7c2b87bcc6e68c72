//! The pre-flight inspection through NVML (see [`crate::source::inspect`]): every GPU's
//! identity, health, setup, processes and wiring, read once, each reading with why it is
//! missing. A lost GPU is asked nothing more after the first sign; the others go on.
//!
//! Two readings nvml-wrapper 0.13 does not wrap — row remapping (`nvmlDeviceGetRemappedRows`)
//! and the card's own PCIe maximum (`nvmlDeviceGetGpuMaxPcieLinkGeneration`) — are called
//! through `nvml.lib()` with the public `nvml_sym` / `nvml_try` helpers, so a driver without
//! the symbol gives `FailedToLoadSymbol` (not supported) instead of the panic `NvmlLib`'s own
//! convenience methods would raise.

use std::ffi::{c_uint, c_ulong};
use std::path::Path;

use nvml_wrapper::enum_wrappers::device::{
    ComputeMode as NvmlComputeMode, EccCounter, MemoryError, RetirementCause,
    TopologyLevel as NvmlTopology,
};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::{NvmlError, nvml_sym, nvml_try};
use nvml_wrapper::{Device, Nvml};

use super::errors::{ErrorKind, classify, describe};
use super::format_cuda_version;
use super::open;
use crate::sanitize::sanitize;
use crate::source::SourceError;
use crate::source::inspect::{
    ComputeMode, EccMode, Fact, GpuInspection, GpuProcess, InfoRom, Inspection, MigMode, Missing,
    NvLinkInfo, PcieLink, RemappedRows, RetiredPages, Topology,
};

/// Longest identity or version string kept.
const MAX_TEXT_CHARS: usize = 96;
/// `NVML_NVLINK_MAX_LINKS`.
const MAX_NVLINKS: u32 = 18;
/// Words of the CPU set asked for: 1024 CPUs.
const CPU_SET_WORDS: usize = 16;
/// Words of the NUMA node set asked for: 64 nodes.
const NODE_SET_WORDS: usize = 1;
/// `NVML_AFFINITY_SCOPE_NODE`.
const SCOPE_NODE: c_uint = 0;
/// `NVML_DEVICE_MIG_ENABLE`.
const MIG_ENABLED: u32 = 1;

/// Loads NVML (like [`super::NvmlSource::open`]) and inspects every GPU.
pub fn inspect(lib_path: Option<&Path>) -> Result<Inspection, SourceError> {
    let lib = open::load(lib_path)?;
    inspect_with(&lib)
}

fn inspect_with(nvml: &Nvml) -> Result<Inspection, SourceError> {
    let count = nvml
        .device_count()
        .map_err(|e| open::whole_failure("reading the GPU count", &e))?;
    let text = |s: String| sanitize(&s, MAX_TEXT_CHARS);
    let mut gpus = Vec::new();
    for index in 0..count {
        gpus.push(match nvml.device_by_index(index) {
            Ok(dev) => inspect_device(nvml, &dev, index),
            Err(e) => GpuInspection::unreachable(index, missing(&e)),
        });
    }
    let topology = topology(nvml, &mut gpus);
    Ok(Inspection {
        driver_version: nvml.sys_driver_version().map(text).map_err(|e| missing(&e)),
        cuda_driver_version: nvml
            .sys_cuda_driver_version()
            .map(format_cuda_version)
            .map_err(|e| missing(&e)),
        gpus,
        topology,
    })
}

/// Why a call failed, in the inspection's terms.
fn missing(error: &NvmlError) -> Missing {
    match (classify(error), error) {
        (ErrorKind::Unsupported, _) => Missing::NotSupported,
        (_, NvmlError::NoPermission) => Missing::NoPermission,
        (ErrorKind::GpuLost | ErrorKind::ResetRequired, _) => Missing::GpuLost,
        _ => Missing::Failed(describe(error)),
    }
}

/// One device's calls: after the first sign it is lost, nothing more is asked.
struct Asker {
    lost: bool,
}

impl Asker {
    fn ask<T>(&mut self, call: impl FnOnce() -> Result<T, NvmlError>) -> Fact<T> {
        if self.lost {
            return Err(Missing::GpuLost);
        }
        call().map_err(|e| self.absorb(&e))
    }

    fn absorb(&mut self, error: &NvmlError) -> Missing {
        let why = missing(error);
        self.lost |= why == Missing::GpuLost;
        why
    }
}

fn inspect_device(nvml: &Nvml, dev: &Device<'_>, index: u32) -> GpuInspection {
    let mut a = Asker { lost: false };
    let text = |s: String| sanitize(&s, MAX_TEXT_CHARS);
    let memory = a.ask(|| dev.memory_info());
    let ecc_count = |a: &mut Asker, kind, counter| a.ask(|| dev.total_ecc_errors(kind, counter));
    let mut gpu = GpuInspection {
        index,
        lost: false,
        name: a.ask(|| dev.name()).map(text),
        uuid: a.ask(|| dev.uuid()).map(text),
        pci_bus_id: a.ask(|| dev.pci_info()).map(|p| text(p.bus_id)),
        memory_total_bytes: memory.as_ref().map(|m| m.total).map_err(Clone::clone),
        memory_used_bytes: memory.as_ref().map(|m| m.used).map_err(Clone::clone),
        ecc: a.ask(|| dev.is_ecc_enabled()).map(|m| EccMode {
            current: m.currently_enabled,
            pending: m.pending_enabled,
        }),
        ecc_corrected_volatile: ecc_count(&mut a, MemoryError::Corrected, EccCounter::Volatile),
        ecc_uncorrected_volatile: ecc_count(&mut a, MemoryError::Uncorrected, EccCounter::Volatile),
        ecc_uncorrected_aggregate: ecc_count(
            &mut a,
            MemoryError::Uncorrected,
            EccCounter::Aggregate,
        ),
        retired_pages: retired_pages(&mut a, dev),
        retired_pending: a.ask(|| dev.are_pages_pending_retired()),
        remapped_rows: a.ask(|| remapped_rows(nvml, dev)),
        persistence: a.ask(|| dev.is_in_persistent_mode()),
        mig: a.ask(|| dev.mig_mode()).map(|m| MigMode {
            current: m.current == MIG_ENABLED,
            pending: m.pending == MIG_ENABLED,
        }),
        compute_mode: a.ask(|| dev.compute_mode()).map(|m| match m {
            NvmlComputeMode::Default => ComputeMode::Default,
            NvmlComputeMode::ExclusiveThread => ComputeMode::ExclusiveThread,
            NvmlComputeMode::Prohibited => ComputeMode::Prohibited,
            NvmlComputeMode::ExclusiveProcess => ComputeMode::ExclusiveProcess,
        }),
        processes: processes(&mut a, dev),
        inforom: inforom(&mut a, dev),
        pcie: PcieLink {
            current_gen: a.ask(|| dev.current_pcie_link_gen()),
            width: a.ask(|| dev.current_pcie_link_width()),
            gen_max: a.ask(|| dev.max_pcie_link_gen()),
            width_max: a.ask(|| dev.max_pcie_link_width()),
            gen_card_max: a.ask(|| card_max_pcie_gen(nvml, dev)),
            replays: a.ask(|| dev.pcie_replay_counter()),
        },
        nvlinks: nvlinks(&mut a, dev),
        cpu_affinity: a
            .ask(|| dev.cpu_affinity(CPU_SET_WORDS))
            .map(|words| bits(&words)),
        numa_nodes: a
            .ask(|| dev.memory_affinity(NODE_SET_WORDS, SCOPE_NODE))
            .map(|words| bits(&words)),
    };
    gpu.lost = a.lost;
    gpu
}

fn retired_pages(a: &mut Asker, dev: &Device<'_>) -> Fact<RetiredPages> {
    let count = |a: &mut Asker, cause| {
        a.ask(|| dev.retired_pages(cause))
            .map(|pages| u32::try_from(pages.len()).unwrap_or(u32::MAX))
    };
    let single_bit = count(a, RetirementCause::MultipleSingleBitEccErrors)?;
    let double_bit = count(a, RetirementCause::DoubleBitEccError)?;
    Ok(RetiredPages {
        single_bit,
        double_bit,
    })
}

/// Row remapping through the raw symbol (not wrapped by nvml-wrapper 0.13).
fn remapped_rows(nvml: &Nvml, dev: &Device<'_>) -> Result<RemappedRows, NvmlError> {
    let sym = nvml_sym(nvml.lib().nvmlDeviceGetRemappedRows.as_ref())?;
    let (mut corr, mut unc, mut pending, mut failure): (c_uint, c_uint, c_uint, c_uint) =
        (0, 0, 0, 0);
    // SAFETY: the handle belongs to this live `Nvml`; the four outputs are our own locals.
    nvml_try(unsafe {
        sym(
            dev.handle(),
            &mut corr,
            &mut unc,
            &mut pending,
            &mut failure,
        )
    })?;
    Ok(RemappedRows {
        correctable: corr,
        uncorrectable: unc,
        pending: pending != 0,
        failure: failure != 0,
    })
}

/// The card's own maximum PCIe generation through the raw symbol (not wrapped).
fn card_max_pcie_gen(nvml: &Nvml, dev: &Device<'_>) -> Result<u32, NvmlError> {
    let sym = nvml_sym(nvml.lib().nvmlDeviceGetGpuMaxPcieLinkGeneration.as_ref())?;
    let mut generation: c_uint = 0;
    // SAFETY: the handle belongs to this live `Nvml`; the output is our own local.
    nvml_try(unsafe { sym(dev.handle(), &mut generation) })?;
    Ok(generation)
}

/// Compute and graphics processes, one entry per PID (the larger memory figure kept).
fn processes(a: &mut Asker, dev: &Device<'_>) -> Fact<Vec<GpuProcess>> {
    let compute = a.ask(|| dev.running_compute_processes());
    let graphics = a.ask(|| dev.running_graphics_processes());
    if let (Err(why), Err(_)) = (&compute, &graphics) {
        return Err(why.clone());
    }
    let mut out: Vec<GpuProcess> = Vec::new();
    for p in compute.into_iter().chain(graphics).flatten() {
        let used = match p.used_gpu_memory {
            UsedGpuMemory::Used(b) => Some(b),
            UsedGpuMemory::Unavailable => None,
        };
        match out.iter_mut().find(|q| q.pid == p.pid) {
            Some(q) => q.used_bytes = q.used_bytes.max(used),
            None => out.push(GpuProcess {
                pid: p.pid,
                used_bytes: used,
            }),
        }
    }
    out.sort_by_key(|p| p.pid);
    Ok(out)
}

/// A valid infoROM with its version; `CORRUPTED_INFOROM` becomes a failure that says so.
fn inforom(a: &mut Asker, dev: &Device<'_>) -> Fact<InfoRom> {
    a.ask(|| dev.validate_info_rom())?;
    let version = a
        .ask(|| dev.info_rom_image_version())
        .ok()
        .map(|v| sanitize(&v, MAX_TEXT_CHARS));
    Ok(InfoRom { version })
}

/// Links 0, 1, … until the board says there are no more (`INVALID_ARGUMENT`).
fn nvlinks(a: &mut Asker, dev: &Device<'_>) -> Fact<Vec<NvLinkInfo>> {
    let mut links = Vec::new();
    for link in 0..MAX_NVLINKS {
        let nv = dev.link_wrapper_for(link);
        if a.lost {
            return Err(Missing::GpuLost);
        }
        let active = match nv.is_active() {
            Ok(active) => active,
            // A link number beyond the board's: the list is complete.
            Err(NvmlError::InvalidArg) => break,
            // The first link decides whether the board has NVLink at all.
            Err(e) if link == 0 => return Err(a.absorb(&e)),
            Err(e) => {
                a.absorb(&e);
                break;
            }
        };
        links.push(NvLinkInfo {
            link,
            active,
            version: a.ask(|| nv.version()),
            remote_bus_id: a
                .ask(|| nv.remote_pci_info())
                .map(|p| sanitize(&p.bus_id, MAX_TEXT_CHARS)),
        });
    }
    Ok(links)
}

/// Set bits of an affinity mask, as numbers.
fn bits(words: &[c_ulong]) -> Vec<u32> {
    let mut out = Vec::new();
    for (w, word) in words.iter().enumerate() {
        for bit in 0..c_ulong::BITS {
            if word & (1 << bit) != 0 {
                let n = u32::try_from(w)
                    .unwrap_or(u32::MAX)
                    .saturating_mul(c_ulong::BITS);
                out.push(n.saturating_add(bit));
            }
        }
    }
    out
}

/// Every pair's common ancestor; a lost GPU's row and column stay `GpuLost`, and a GPU found
/// lost here is marked so.
fn topology(nvml: &Nvml, gpus: &mut [GpuInspection]) -> Vec<Vec<Fact<Topology>>> {
    let n = gpus.len();
    let mut matrix = vec![vec![Err(Missing::NotSupported); n]; n];
    // GPUs that answered "lost" here (the call is asked of the row's GPU).
    let mut found_lost = vec![false; n];
    for (i, row) in matrix.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            if i == j {
                *cell = Ok(Topology::Internal);
                continue;
            }
            if gpus.get(i).is_none_or(|g| g.lost) || gpus.get(j).is_none_or(|g| g.lost) {
                *cell = Err(Missing::GpuLost);
                continue;
            }
            let pair = (
                u32::try_from(i)
                    .ok()
                    .and_then(|i| nvml.device_by_index(i).ok()),
                u32::try_from(j)
                    .ok()
                    .and_then(|j| nvml.device_by_index(j).ok()),
            );
            let (Some(a), Some(b)) = pair else {
                *cell = Err(Missing::Failed("no device handle".into()));
                continue;
            };
            *cell = a
                .topology_common_ancestor(b)
                .map(|level| match level {
                    NvmlTopology::Internal => Topology::Internal,
                    NvmlTopology::Single => Topology::Single,
                    NvmlTopology::Multiple => Topology::Multiple,
                    NvmlTopology::HostBridge => Topology::HostBridge,
                    NvmlTopology::Node => Topology::Node,
                    NvmlTopology::System => Topology::System,
                })
                .map_err(|e| missing(&e));
            if *cell == Err(Missing::GpuLost)
                && let Some(f) = found_lost.get_mut(i)
            {
                *f = true;
            }
        }
    }
    for (gpu, lost) in gpus.iter_mut().zip(found_lost) {
        gpu.lost |= lost;
    }
    matrix
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_masks_become_numbers() {
        assert_eq!(bits(&[0b1011]), vec![0, 1, 3]);
        assert_eq!(bits(&[0, 1]), vec![64]);
        assert!(bits(&[0, 0]).is_empty());
    }

    #[test]
    fn errors_keep_their_meaning() {
        assert_eq!(missing(&NvmlError::NotSupported), Missing::NotSupported);
        assert_eq!(
            missing(&NvmlError::FailedToLoadSymbol("x".into())),
            Missing::NotSupported
        );
        assert_eq!(missing(&NvmlError::NoPermission), Missing::NoPermission);
        assert_eq!(missing(&NvmlError::GpuLost), Missing::GpuLost);
        assert_eq!(
            missing(&NvmlError::Timeout),
            Missing::Failed("timeout".into())
        );
    }

    #[test]
    fn a_lost_gpu_is_asked_nothing_more() {
        let mut a = Asker { lost: false };
        assert_eq!(
            a.ask(|| Err::<u32, _>(NvmlError::GpuLost)),
            Err(Missing::GpuLost)
        );
        let mut called = false;
        let after = a.ask(|| {
            called = true;
            Ok(1)
        });
        assert_eq!(after, Err(Missing::GpuLost));
        assert!(!called);
    }
}
