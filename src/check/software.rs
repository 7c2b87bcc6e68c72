//! The software-hazard family, after what NVIDIA's own deployment diagnostics look at: the
//! nouveau driver bound, the `/dev/nvidia*` nodes this user can open against the GPU count,
//! `libcuda.so.1` loadable, and environment variables that slow or break CUDA.

use super::facts::Facts;
use super::verdict::{Family, Level, Verdict};

/// Environment variables worth a warning when set, with what they do.
const HAZARDS: &[(&str, &str)] = &[
    (
        "CUDA_LAUNCH_BLOCKING",
        "makes every kernel launch synchronous: a debugging switch that slows training several-fold",
    ),
    (
        "CUDA_INJECTION64_PATH",
        "loads an injection library (a profiler or tracer) into every CUDA process",
    ),
    ("CUDA_PROFILE", "turns on the legacy command-line profiler"),
    (
        "CUDA_CACHE_DISABLE",
        "disables the JIT cache: kernels are compiled again at every start",
    ),
    (
        "CUDA_DEVICE_WAITS_ON_EXCEPTION",
        "makes a faulting kernel hang for a debugger instead of failing",
    ),
    (
        "PYTORCH_NO_CUDA_MEMORY_CACHING",
        "turns off PyTorch's caching allocator: every allocation goes to the driver",
    ),
    (
        "NCCL_P2P_DISABLE",
        "turns off NCCL's peer-to-peer (NVLink/PCIe) transport",
    ),
    (
        "NCCL_SHM_DISABLE",
        "turns off NCCL's shared-memory transport",
    ),
    (
        "NCCL_IB_DISABLE",
        "turns off NCCL over InfiniBand/RoCE: multi-node traffic falls back to sockets",
    ),
    (
        "NCCL_BLOCKING_WAIT",
        "makes NCCL waits block the host thread",
    ),
];

/// The variables gathered from the environment (hazards plus CUDA_VISIBLE_DEVICES).
pub fn watched(name: &str) -> bool {
    name == "CUDA_VISIBLE_DEVICES" || HAZARDS.iter().any(|(n, _)| *n == name)
}

fn v(id: &'static str, level: Level, s: String) -> Verdict {
    Verdict::new(Family::Software, id, level, s)
}

/// Whether a flag variable is on (`0`, `false`, empty are off).
fn on(value: &str) -> bool {
    !matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "" | "0" | "false" | "no" | "off"
    )
}

pub fn check(facts: &Facts) -> Vec<Verdict> {
    let s = &facts.software;
    let gpus = facts.nvml.as_ref().map_or(0, |i| i.gpus.len());
    let gpus = u32::try_from(gpus).unwrap_or(u32::MAX);
    let mut out = Vec::new();
    out.push(if s.nouveau {
        v(
            "software.nouveau",
            Level::Fail,
            "the nouveau driver is loaded: it fights the NVIDIA driver for the GPUs".into(),
        )
        .fix("blacklist nouveau (modprobe.d), rebuild the initramfs and reboot")
    } else {
        v("software.nouveau", Level::Ok, "nouveau not loaded".into())
    });
    let mut missing = Vec::new();
    if !s.dev_ctl {
        missing.push("/dev/nvidiactl");
    }
    if !s.dev_uvm {
        missing.push("/dev/nvidia-uvm");
    }
    out.push(if s.dev_gpus_usable < gpus || !missing.is_empty() {
        let mut what = format!("{} of {gpus} GPUs have a /dev/nvidia<N> this user can open ({} present)", s.dev_gpus_usable, s.dev_gpus_present);
        if !missing.is_empty() {
            what = format!("{what}; missing: {}", missing.join(", "));
        }
        v("software.devices", Level::Fail, what)
            .fix("CUDA opens these nodes: run the container with the NVIDIA runtime (--gpus all), or check their permissions (video group)")
    } else {
        v("software.devices", Level::Ok, format!("{} /dev/nvidia<N> nodes usable, nvidiactl and nvidia-uvm present", s.dev_gpus_usable))
    });
    out.push(match &s.libcuda {
        Ok(()) => v("software.libcuda", Level::Ok, "libcuda.so.1 loads".into()),
        Err(why) => v("software.libcuda", Level::Fail, format!("libcuda.so.1 does not load: {why}"))
            .fix("install the driver's CUDA user-space library (libnvidia-compute), or start the container with the NVIDIA runtime"),
    });
    let mut env_bad = 0;
    for (name, value) in &s.env {
        if name == "CUDA_VISIBLE_DEVICES" {
            if value.trim().is_empty() || value.trim() == "-1" {
                env_bad += 1;
                out.push(
                    v(
                        "software.env",
                        Level::Fail,
                        format!("CUDA_VISIBLE_DEVICES='{value}' hides every GPU from CUDA"),
                    )
                    .fix("unset CUDA_VISIBLE_DEVICES"),
                );
            } else {
                out.push(v(
                    "software.env",
                    Level::Ok,
                    format!("CUDA_VISIBLE_DEVICES={value}: CUDA sees only these GPUs"),
                ));
            }
            continue;
        }
        let Some((_, what)) = HAZARDS.iter().find(|(n, _)| n == name) else {
            continue;
        };
        if name == "CUDA_INJECTION64_PATH" || on(value) {
            env_bad += 1;
            out.push(
                v(
                    "software.env",
                    Level::Warn,
                    format!("{name}={value} {what}"),
                )
                .fix(format!("unset {name} unless you mean it")),
            );
        }
    }
    if env_bad == 0 {
        out.push(v(
            "software.env",
            Level::Ok,
            "no environment variable that slows or breaks CUDA".into(),
        ));
    }
    out
}
