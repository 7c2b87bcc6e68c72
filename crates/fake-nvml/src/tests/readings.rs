//! Readings as C callers receive them: struct layouts and versions, strings and their buffer
//! sizes, units, enum arguments, and an energy counter that never goes back.

use std::ffi::{CStr, c_char, c_int, c_uint};
use std::mem::{offset_of, size_of};

use gpumeter_model::ThrottleReason;
use gpumeter_sim::{Scenario, Simulator};

use super::{TWO_GPUS, handle, started};
use crate::abi::*;
use crate::state::{self, ScenarioClock};
use crate::*;

#[test]
fn struct_layouts_match_nvml_h() {
    assert_eq!(size_of::<nvmlMemory_t>(), 24);
    assert_eq!(size_of::<nvmlMemory_v2_t>(), 40);
    assert_eq!(size_of::<nvmlUtilization_t>(), 8);
    assert_eq!(size_of::<nvmlProcessInfo_t>(), 24);
    assert_eq!(offset_of!(nvmlProcessInfo_t, usedGpuMemory), 8);
    assert_eq!(offset_of!(nvmlProcessInfo_t, gpuInstanceId), 16);
    assert_eq!(offset_of!(nvmlProcessInfo_t, computeInstanceId), 20);
    assert_eq!(size_of::<nvmlProcessUtilizationSample_t>(), 32);
    assert_eq!(offset_of!(nvmlProcessUtilizationSample_t, timeStamp), 8);
    assert_eq!(size_of::<nvmlPciInfo_t>(), 68);
    assert_eq!(offset_of!(nvmlPciInfo_t, busId), 36);
}

fn memory_v2(version: c_uint) -> (u32, nvmlMemory_v2_t) {
    let mut m = nvmlMemory_v2_t {
        version,
        ..nvmlMemory_v2_t::default()
    };
    // SAFETY: valid struct pointer.
    let rc = unsafe { nvmlDeviceGetMemoryInfo_v2(handle(0), &mut m) };
    (rc, m)
}

#[test]
fn memory_v2_accepts_its_version_and_nvtops_bare_2_only() {
    let _s = started(TWO_GPUS, 0);
    let (rc, m) = memory_v2(0x0200_0028);
    assert_eq!(rc, 0);
    assert_eq!(m.total, 85_520_809_984);
    assert_eq!(m.used, 10 * (1 << 30) + (1 << 29), "the processes' sum");
    assert_eq!(m.free + m.used + m.reserved, m.total);
    assert_eq!(memory_v2(2).0, 0);
    assert_eq!(memory_v2(1).0, 25, "ARGUMENT_VERSION_MISMATCH");
    assert_eq!(memory_v2(0).0, 25);
    assert_eq!(memory_v2(0x0100_0018).0, 25);
    let mut v1 = nvmlMemory_t::default();
    // SAFETY: valid struct pointer.
    assert_eq!(unsafe { nvmlDeviceGetMemoryInfo(handle(0), &mut v1) }, 0);
    assert_eq!((v1.total, v1.used, v1.free), (m.total, m.used, m.free));
}

#[test]
fn strings_fit_or_ask_for_room() {
    let _s = started(TWO_GPUS, 0);
    let mut buf = [0 as c_char; 96];
    // SAFETY: `buf` has 96 bytes.
    assert_eq!(
        unsafe { nvmlDeviceGetName(handle(0), buf.as_mut_ptr(), 96) },
        0
    );
    // SAFETY: the library wrote a NUL-terminated string.
    let name = unsafe { CStr::from_ptr(buf.as_ptr()) };
    assert_eq!(name.to_str().unwrap(), "NVIDIA H100 80GB HBM3");
    // SAFETY: `buf` has at least 5 bytes.
    assert_eq!(
        unsafe { nvmlDeviceGetName(handle(0), buf.as_mut_ptr(), 5) },
        7
    );
    // SAFETY: as above.
    assert_eq!(
        unsafe { nvmlSystemGetDriverVersion(buf.as_mut_ptr(), 80) },
        0
    );
    // SAFETY: NUL-terminated.
    assert_eq!(
        unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap(),
        "550.90.07"
    );
    // SAFETY: as above.
    assert_eq!(unsafe { nvmlSystemGetNVMLVersion(buf.as_mut_ptr(), 80) }, 0);
    // SAFETY: NUL-terminated.
    assert_eq!(
        unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap(),
        "12.550.90.07"
    );
    let mut cuda: c_int = 0;
    // SAFETY: valid out pointer.
    assert_eq!(unsafe { nvmlSystemGetCudaDriverVersion_v2(&mut cuda) }, 0);
    assert_eq!(cuda, 12040);
    // SAFETY: `buf` has 96 bytes.
    assert_eq!(
        unsafe { nvmlDeviceGetUUID(handle(1), buf.as_mut_ptr(), 96) },
        0
    );
    // SAFETY: NUL-terminated.
    let uuid = unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_str()
        .unwrap()
        .to_string();
    assert!(uuid.starts_with("GPU-"), "{uuid}");
    let mut pci = std::mem::MaybeUninit::<nvmlPciInfo_t>::zeroed();
    // SAFETY: valid struct pointer.
    assert_eq!(
        unsafe { nvmlDeviceGetPciInfo_v3(handle(1), pci.as_mut_ptr()) },
        0
    );
    // SAFETY: initialised by the successful call (and zeroed before).
    let pci = unsafe { pci.assume_init() };
    assert_eq!(pci.bus, 0x2A);
    // SAFETY: `buf` has 96 bytes.
    assert_eq!(
        unsafe { nvmlSystemGetProcessName(1000, buf.as_mut_ptr(), 96) },
        6,
        "unnamed"
    );
}

#[test]
fn readings_match_the_scenario_truth_in_nvml_units() {
    let _s = started(TWO_GPUS, 7_300);
    let mut sim = Simulator::new(Scenario::from_toml("t", TWO_GPUS).unwrap());
    let truth = sim.truth_at(7_300, 0);
    let g = &truth.gpus[1];
    let h = handle(1);
    let mut v: c_uint = 0;
    // SAFETY: valid out pointers throughout.
    unsafe {
        assert_eq!(nvmlDeviceGetPowerUsage(h, &mut v), 0);
        assert_eq!(f64::from(v) / 1000.0, g.power_watts.unwrap());
        assert_eq!(nvmlDeviceGetEnforcedPowerLimit(h, &mut v), 0);
        assert_eq!(v, 700_000);
        assert_eq!(nvmlDeviceGetClockInfo(h, CLOCK_SM, &mut v), 0);
        assert_eq!(v, 1900);
        assert_eq!(nvmlDeviceGetMaxClockInfo(h, CLOCK_GRAPHICS, &mut v), 0);
        assert_eq!(v, 1980);
        assert_eq!(nvmlDeviceGetClockInfo(h, CLOCK_VIDEO, &mut v), 3);
        assert_eq!(nvmlDeviceGetClockInfo(h, 9, &mut v), 2);
        assert_eq!(nvmlDeviceGetTemperature(h, 0, &mut v), 0);
        assert_eq!(v, 60);
        assert_eq!(nvmlDeviceGetTemperature(h, 1, &mut v), 2);
        assert_eq!(nvmlDeviceGetNumFans(h, &mut v), 0);
        assert_eq!(v, 0, "no fan signal: no fans");
        assert_eq!(nvmlDeviceGetFanSpeed_v2(h, 0, &mut v), 3);
        assert_eq!(
            nvmlDeviceGetPcieThroughput(h, PCIE_UTIL_RX_BYTES, &mut v),
            3
        );
        assert_eq!(nvmlDeviceGetMigMode(h, &mut v, &mut v), 3);
        let mut u = nvmlUtilization_t::default();
        assert_eq!(nvmlDeviceGetUtilizationRates(h, &mut u), 0);
        assert_eq!((u.gpu, u.memory), (90, 40));
        let mut bits = 0u64;
        assert_eq!(nvmlDeviceGetCurrentClocksThrottleReasons(h, &mut bits), 0);
        assert_eq!(
            bits,
            ThrottleReason::to_bits(g.throttle_reasons.as_deref().unwrap())
        );
    }
}

fn energy() -> u64 {
    let mut mj = 0u64;
    // SAFETY: valid out pointer.
    assert_eq!(
        unsafe { nvmlDeviceGetTotalEnergyConsumption(handle(0), &mut mj) },
        0
    );
    mj
}

#[test]
fn energy_only_grows_even_if_the_clock_steps_back() {
    let _s = started(TWO_GPUS, 10_000);
    let at_10s = energy();
    state::set_clock_for_test(ScenarioClock::Frozen(20_000));
    let at_20s = energy();
    // 300–600 W for 10 s is 3–6 kJ.
    assert!(
        (3_000_000..=6_000_000).contains(&(at_20s - at_10s)),
        "{at_10s} → {at_20s}"
    );
    state::set_clock_for_test(ScenarioClock::Frozen(5_000));
    assert_eq!(energy(), at_20s, "the counter never goes back");
}
