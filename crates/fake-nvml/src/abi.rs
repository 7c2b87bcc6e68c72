//! The NVML C ABI as the fake exports it: return codes, enum values, and the `repr(C)` structs
//! whose layouts must match `nvml.h` byte for byte (x86-64; sizes are asserted in the tests).
//! Plain data only.

#![allow(non_camel_case_types, non_snake_case)] // C names, as in nvml.h.

use std::ffi::c_uint;

/// `nvmlReturn_t`.
pub type nvmlReturn_t = c_uint;

pub const SUCCESS: nvmlReturn_t = 0;
pub const ERROR_UNINITIALIZED: nvmlReturn_t = 1;
pub const ERROR_INVALID_ARGUMENT: nvmlReturn_t = 2;
pub const ERROR_NOT_SUPPORTED: nvmlReturn_t = 3;
pub const ERROR_NOT_FOUND: nvmlReturn_t = 6;
pub const ERROR_TIMEOUT: nvmlReturn_t = 10;
pub const ERROR_CORRUPTED_INFOROM: nvmlReturn_t = 14;
pub const ERROR_INSUFFICIENT_SIZE: nvmlReturn_t = 7;
pub const ERROR_ARGUMENT_VERSION_MISMATCH: nvmlReturn_t = 25;
pub const ERROR_UNKNOWN: nvmlReturn_t = 999;

/// The opaque device struct; the fake never dereferences a handle (see `handle`).
#[repr(C)]
pub struct nvmlDevice_st {
    _private: [u8; 0],
}

/// `nvmlDevice_t`.
pub type nvmlDevice_t = *mut nvmlDevice_st;

/// `nvmlClockType_t`.
pub const CLOCK_GRAPHICS: c_uint = 0;
pub const CLOCK_SM: c_uint = 1;
pub const CLOCK_MEM: c_uint = 2;
pub const CLOCK_VIDEO: c_uint = 3;

/// `nvmlPcieUtilCounter_t`.
pub const PCIE_UTIL_TX_BYTES: c_uint = 0;
pub const PCIE_UTIL_RX_BYTES: c_uint = 1;

/// `nvmlTemperatureSensors_t`.
pub const TEMPERATURE_GPU: c_uint = 0;

/// `nvmlTemperatureThresholds_t`.
pub const TEMPERATURE_THRESHOLD_SHUTDOWN: c_uint = 0;
pub const TEMPERATURE_THRESHOLD_SLOWDOWN: c_uint = 1;

/// `nvmlMemoryErrorType_t` (corrected, uncorrected) and `nvmlEccCounterType_t` (volatile,
/// aggregate): both have two values.
pub const ECC_KINDS: c_uint = 2;

/// `nvmlPageRetirementCause_t`: multiple single-bit errors, a double-bit error.
pub const RETIRED_SBE: c_uint = 0;
pub const RETIRED_DBE: c_uint = 1;

/// `NVML_NVLINK_MAX_LINKS`.
pub const NVLINK_MAX_LINKS: c_uint = 18;

/// `nvmlGpuTopologyLevel_t`.
pub const TOPOLOGY_INTERNAL: c_uint = 0;
pub const TOPOLOGY_SINGLE: c_uint = 10;
pub const TOPOLOGY_NODE: c_uint = 40;
pub const TOPOLOGY_SYSTEM: c_uint = 50;

/// GPM: struct versions, the metric ids modelled, and the size of the request's array.
pub const GPM_SUPPORT_VERSION: c_uint = 1;
pub const GPM_METRICS_GET_VERSION: c_uint = 1;
pub const GPM_METRIC_SM_UTIL: c_uint = 2;
pub const GPM_METRIC_SM_OCCUPANCY: c_uint = 3;
pub const GPM_METRIC_TENSOR_UTIL: c_uint = 5;
pub const GPM_METRIC_DRAM_BW_UTIL: c_uint = 10;
/// `NVML_GPM_METRIC_MAX` (NVML 13 headers).
pub const GPM_METRIC_MAX: usize = 210;

/// Event types: single- and double-bit ECC, critical XID.
pub const EVENT_TYPE_XID: u64 = 0x8;
pub const EVENT_TYPE_SUPPORTED: u64 = 0x1 | 0x2 | EVENT_TYPE_XID;

/// `nvmlGpmSample_t`, `nvmlEventSet_t`: opaque handles, never dereferenced by the fake.
#[repr(C)]
pub struct nvmlGpmSample_st {
    _private: [u8; 0],
}
pub type nvmlGpmSample_t = *mut nvmlGpmSample_st;
#[repr(C)]
pub struct nvmlEventSet_st {
    _private: [u8; 0],
}
pub type nvmlEventSet_t = *mut nvmlEventSet_st;

/// `nvmlGpmSupport_t`, 8 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct nvmlGpmSupport_t {
    pub version: c_uint,
    pub isSupportedDevice: c_uint,
}

/// `nvmlGpmMetric_t`'s names (NULL or static C strings).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct nvmlGpmMetricInfo_t {
    pub shortName: *mut std::ffi::c_char,
    pub longName: *mut std::ffi::c_char,
    pub unit: *mut std::ffi::c_char,
}

/// `nvmlGpmMetric_t`, 40 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct nvmlGpmMetric_t {
    pub metricId: c_uint,
    pub nvmlReturn: nvmlReturn_t,
    pub value: f64,
    pub metricInfo: nvmlGpmMetricInfo_t,
}

/// `nvmlGpmMetricsGet_t`: 24 bytes of header, then `GPM_METRIC_MAX` metrics.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct nvmlGpmMetricsGet_t {
    pub version: c_uint,
    pub numMetrics: c_uint,
    pub sample1: nvmlGpmSample_t,
    pub sample2: nvmlGpmSample_t,
    pub metrics: [nvmlGpmMetric_t; GPM_METRIC_MAX],
}

/// `nvmlEventData_t`, 32 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct nvmlEventData_t {
    pub device: nvmlDevice_t,
    pub eventType: u64,
    pub eventData: u64,
    pub gpuInstanceId: c_uint,
    pub computeInstanceId: c_uint,
}

/// `nvmlMemory_v2` as `NVML_STRUCT_VERSION(Memory, 2)`: size | 2 << 24. nvtop passes a bare 2.
pub const MEMORY_V2_VERSION: c_uint = 0x0200_0028;
pub const MEMORY_V2_BARE_VERSION: c_uint = 2;

/// `NVML_VALUE_NOT_AVAILABLE` for `usedGpuMemory`.
pub const VALUE_NOT_AVAILABLE_ULL: u64 = u64::MAX;
/// Unset GPU/compute instance id in a process entry (no MIG).
pub const NO_INSTANCE: c_uint = 0xFFFF_FFFF;

/// `nvmlMemory_t`, 24 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct nvmlMemory_t {
    pub total: u64,
    pub free: u64,
    pub used: u64,
}

/// `nvmlMemory_v2_t`, 40 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct nvmlMemory_v2_t {
    pub version: c_uint,
    pub total: u64,
    pub reserved: u64,
    pub free: u64,
    pub used: u64,
}

/// `nvmlUtilization_t`, 8 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct nvmlUtilization_t {
    pub gpu: c_uint,
    pub memory: c_uint,
}

/// `nvmlProcessInfo_t` (`_v2` and `_v3` calls), 24 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct nvmlProcessInfo_t {
    pub pid: c_uint,
    pub usedGpuMemory: u64,
    pub gpuInstanceId: c_uint,
    pub computeInstanceId: c_uint,
}

/// `nvmlProcessUtilizationSample_t`, 32 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct nvmlProcessUtilizationSample_t {
    pub pid: c_uint,
    /// CPU timestamp of the sample, µs since the Unix epoch.
    pub timeStamp: u64,
    pub smUtil: c_uint,
    pub memUtil: c_uint,
    pub encUtil: c_uint,
    pub decUtil: c_uint,
}

/// `nvmlPciInfo_t` (`_v3`), 68 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct nvmlPciInfo_t {
    pub busIdLegacy: [u8; 16],
    pub domain: c_uint,
    pub bus: c_uint,
    pub device: c_uint,
    pub pciDeviceId: c_uint,
    pub pciSubSystemId: c_uint,
    pub busId: [u8; 32],
}

/// The text `nvmlErrorString` returns for a code (static, NUL-terminated).
pub fn error_string(code: nvmlReturn_t) -> &'static std::ffi::CStr {
    match code {
        0 => c"Success",
        1 => c"Uninitialized",
        2 => c"Invalid Argument",
        3 => c"Not Supported",
        4 => c"Insufficient Permissions",
        5 => c"Already Initialized",
        6 => c"Not Found",
        7 => c"Insufficient Size",
        8 => c"Insufficient External Power",
        9 => c"Driver Not Loaded",
        10 => c"Timeout",
        11 => c"Interrupt request issue",
        12 => c"NVML Shared Library Not Found",
        13 => c"Function Not Found",
        14 => c"Corrupted infoROM",
        15 => c"GPU is lost",
        16 => c"GPU requires restart",
        17 => c"The operating system has blocked the request.",
        18 => c"RM has detected an NVML/RM version mismatch.",
        19 => c"In use by another client",
        20 => c"Insufficient Memory",
        21 => c"No data",
        22 => c"The requested vgpu operation is not available on target device, because ECC is enabled",
        23 => c"Insufficient resources",
        24 => c"Frequency not supported",
        25 => c"Argument version mismatch",
        26 => c"Deprecated",
        27 => c"Not Ready",
        28 => c"GPU not found",
        29 => c"Invalid state",
        _ => c"Unknown Error",
    }
}
