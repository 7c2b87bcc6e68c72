//! How a device is wired: PCIe replays and the card's own link maximum, NVLink links (all to
//! NVSwitches, as on HGX boards), the topology between two GPUs, and the CPUs and NUMA nodes
//! near it. Answered from the scenario's `health` keys (`nvlink`, `numa_node`, `pcie_switch`)
//! and `[preflight] numa_nodes` with the host's CPU count.

#![allow(non_snake_case)]

use std::ffi::{c_uint, c_ulong};

use gpumeter_sim::NvLinkSpec;

use crate::abi::{
    ERROR_INSUFFICIENT_SIZE, ERROR_INVALID_ARGUMENT, ERROR_NOT_SUPPORTED, NVLINK_MAX_LINKS,
    TOPOLOGY_INTERNAL, TOPOLOGY_NODE, TOPOLOGY_SINGLE, TOPOLOGY_SYSTEM, nvmlDevice_t,
    nvmlPciInfo_t, nvmlReturn_t,
};
use crate::call::{Device, device_call, device_out, index_of, supported};
use crate::device_health::health;
use crate::device_identity::pci_info;

/// Bits in one `unsigned long` of a CPU or node set.
const BITS: u32 = c_ulong::BITS;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPcieReplayCounter(
    device: nvmlDevice_t,
    value: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetPcieReplayCounter", device, value, |d| {
        Ok(health(d)?.pcie_replays)
    })
}

/// The card's own maximum generation (the slot may hold it lower).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetGpuMaxPcieLinkGeneration(
    device: nvmlDevice_t,
    generation: *mut c_uint,
) -> nvmlReturn_t {
    device_out(
        "nvmlDeviceGetGpuMaxPcieLinkGeneration",
        device,
        generation,
        |d| supported(health(d)?.pcie_gen_card_max.or(d.gpu.pcie_link_gen_max)),
    )
}

/// The device's NVLink spec and the link's number checked against it: no NVLink is
/// `NOT_SUPPORTED`, a link beyond the board's is `INVALID_ARGUMENT`.
fn link<'a>(d: &'a Device<'_>, link: c_uint) -> Result<&'a NvLinkSpec, nvmlReturn_t> {
    let nv = health(d)?.nvlink.as_ref().ok_or(ERROR_NOT_SUPPORTED)?;
    if link >= nv.links.min(NVLINK_MAX_LINKS) {
        return Err(ERROR_INVALID_ARGUMENT);
    }
    Ok(nv)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetNvLinkState(
    device: nvmlDevice_t,
    link_no: c_uint,
    is_active: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetNvLinkState", device, is_active, |d| {
        let nv = link(d, link_no)?;
        Ok(c_uint::from(!nv.down.contains(&link_no)))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetNvLinkVersion(
    device: nvmlDevice_t,
    link_no: c_uint,
    version: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetNvLinkVersion", device, version, |d| {
        Ok(link(d, link_no)?.version)
    })
}

/// The far end of a link: one of four NVSwitches (buses C0–C3), never another GPU.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetNvLinkRemotePciInfo_v2(
    device: nvmlDevice_t,
    link_no: c_uint,
    pci: *mut nvmlPciInfo_t,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetNvLinkRemotePciInfo_v2", device, pci, |d| {
        link(d, link_no)?;
        let bus = 0xC0 + link_no % 4;
        Ok(pci_info(&format!("00000000:{bus:02X}:00.0"), "NVSwitch"))
    })
}

/// Same GPU: internal; same PCIe switch: one switch (PIX); same NUMA node: NODE; else SYS.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTopologyCommonAncestor(
    device1: nvmlDevice_t,
    device2: nvmlDevice_t,
    level: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetTopologyCommonAncestor", device1, level, |d| {
        let other = index_of(device2)
            .filter(|&i| i < d.world.gpu_count())
            .ok_or(ERROR_INVALID_ARGUMENT)?;
        if other == d.index {
            return Ok(TOPOLOGY_INTERNAL);
        }
        let sim = d.world.sim();
        let (a, b) = (
            &health(d)?,
            &sim.gpu_spec(other).ok_or(ERROR_INVALID_ARGUMENT)?.health,
        );
        Ok(match (a.pcie_switch, b.pcie_switch) {
            (Some(x), Some(y)) if x == y => TOPOLOGY_SINGLE,
            _ if a.numa_node.unwrap_or(0) == b.numa_node.unwrap_or(0) => TOPOLOGY_NODE,
            _ => TOPOLOGY_SYSTEM,
        })
    })
}

/// Writes the bits `[from, to)` into a caller's `size`-word set; `INSUFFICIENT_SIZE` when the
/// set is too small for them.
fn write_bits(set: *mut c_ulong, size: c_uint, from: u32, to: u32) -> Result<(), nvmlReturn_t> {
    if to.div_ceil(BITS) > size {
        return Err(ERROR_INSUFFICIENT_SIZE);
    }
    for word in 0..size {
        let mut bits: c_ulong = 0;
        for bit in 0..BITS {
            let n = word * BITS + bit;
            if n >= from && n < to {
                bits |= 1 << bit;
            }
        }
        let i = usize::try_from(word).map_err(|_| ERROR_INVALID_ARGUMENT)?;
        // SAFETY: `set` is non-null (checked by the caller) and, by the NVML contract, holds
        // `size` writable words.
        unsafe { set.add(i).write(bits) };
    }
    Ok(())
}

/// The CPUs of the GPU's NUMA node: the host's CPUs split evenly over `numa_nodes`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCpuAffinity(
    device: nvmlDevice_t,
    cpu_set_size: c_uint,
    cpu_set: *mut c_ulong,
) -> nvmlReturn_t {
    device_call(
        "nvmlDeviceGetCpuAffinity",
        device,
        !cpu_set.is_null(),
        |d| {
            let scenario = d.world.sim().scenario();
            let cpus = supported(scenario.host.cpu_count)?;
            let nodes = scenario.preflight.numa_nodes.unwrap_or(1).max(1);
            let node = health(d)?.numa_node.unwrap_or(0).min(nodes - 1);
            let per = cpus / nodes;
            write_bits(cpu_set, cpu_set_size, node * per, (node + 1) * per)
        },
    )
}

/// The GPU's NUMA node, as a node set (the scope changes nothing here).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMemoryAffinity(
    device: nvmlDevice_t,
    node_set_size: c_uint,
    node_set: *mut c_ulong,
    _scope: c_uint,
) -> nvmlReturn_t {
    device_call(
        "nvmlDeviceGetMemoryAffinity",
        device,
        !node_set.is_null(),
        |d| {
            let node = health(d)?.numa_node.unwrap_or(0);
            write_bits(node_set, node_set_size, node, node + 1)
        },
    )
}
