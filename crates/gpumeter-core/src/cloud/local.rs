//! The provider from facts on this machine, with no network: the firmware's DMI strings
//! (`/sys/class/dmi/id`: `sys_vendor`, `product_name`, `board_asset_tag`, `chassis_asset_tag`),
//! the environment variables GPU clouds set in their pods, and the GPU model the driver names
//! (`/proc/driver/nvidia`), which the GPU clouds' per-GPU prices go by. The directories are
//! parameters so tests read fixture trees.
//!
//! What each provider writes (from their docs on identifying an instance):
//! - AWS (Nitro): `sys_vendor` "Amazon EC2", `product_name` the instance type (`p5.48xlarge`),
//!   `board_asset_tag` the instance id (`i-0abc…`).
//! - GCP: `sys_vendor` "Google", `product_name` "Google Compute Engine" (no machine type).
//! - Azure: `sys_vendor` "Microsoft Corporation", `product_name` "Virtual Machine" and the
//!   Azure `chassis_asset_tag` 7783-7084-3265-9085-8269-3286-77 (plain Hyper-V lacks it).
//! - RunPod: `RUNPOD_POD_ID` (with `RUNPOD_GPU_COUNT`, `RUNPOD_DC_ID`) in the pod's environment.
//! - vast.ai: `VAST_CONTAINERLABEL` (`C.12345`), with `CONTAINER_ID` and `GPU_COUNT`.
//!
//! A pod's environment wins over DMI: a container sees its host's firmware, which on a GPU
//! marketplace names the host's maker, not the provider.

use std::path::Path;

use super::{Provider, Whereabouts};

/// Where Linux exposes the DMI strings.
pub const DMI_ROOT: &str = "/sys/class/dmi/id";

/// The environment variables read (the launcher copies these, and only these, into the probe).
pub const POD_VARS: [&str; 6] = [
    "RUNPOD_POD_ID",
    "RUNPOD_GPU_COUNT",
    "RUNPOD_DC_ID",
    "VAST_CONTAINERLABEL",
    "CONTAINER_ID",
    "GPU_COUNT",
];

/// Where the NVIDIA driver lists its GPUs without NVML, one directory per PCI address (a
/// container given GPUs sees its own).
pub const NVIDIA_GPUS_ROOT: &str = "/proc/driver/nvidia/gpus";

/// Azure's fixed chassis asset tag.
const AZURE_ASSET_TAG: &str = "7783-7084-3265-9085-8269-3286-77";

/// The longest DMI or environment value kept (they are short; anything longer is not them).
const MAX_FACT: usize = 128;

/// What the DMI strings and the environment say. `env` looks a variable up (the process's
/// environment in the binary, a map in tests); `dmi` is `None` to not read the firmware.
pub fn detect(dmi: Option<&Path>, env: &dyn Fn(&str) -> Option<String>) -> Whereabouts {
    let pod = from_env(env);
    if pod.provider.is_some() {
        return pod;
    }
    dmi.map(from_dmi).unwrap_or_default()
}

/// The GPU clouds' pod variables.
pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Whereabouts {
    let get = |name: &str| env(name).and_then(|v| clean(&v));
    let count = |name: &str| get(name).and_then(|v| v.parse::<u32>().ok());
    if let Some(id) = get("RUNPOD_POD_ID") {
        return Whereabouts {
            provider: Some(Provider::RunPod),
            instance_id: Some(id),
            region: get("RUNPOD_DC_ID"),
            gpu_count: count("RUNPOD_GPU_COUNT"),
            evidence: vec!["RUNPOD_POD_ID".into()],
            ..Default::default()
        };
    }
    if let Some(label) = get("VAST_CONTAINERLABEL") {
        return Whereabouts {
            provider: Some(Provider::VastAi),
            instance_id: get("CONTAINER_ID").or(Some(label)),
            gpu_count: count("GPU_COUNT"),
            evidence: vec!["VAST_CONTAINERLABEL".into()],
            ..Default::default()
        };
    }
    Whereabouts::default()
}

/// The firmware's strings under `root`.
pub fn from_dmi(root: &Path) -> Whereabouts {
    let read = |name: &str| {
        std::fs::read_to_string(root.join(name))
            .ok()
            .and_then(|v| clean(&v))
    };
    let vendor = read("sys_vendor").unwrap_or_default();
    let product = read("product_name").unwrap_or_default();
    let dmi = |provider| Whereabouts {
        provider: Some(provider),
        evidence: vec!["DMI".into()],
        ..Default::default()
    };
    match vendor.as_str() {
        "Amazon EC2" => Whereabouts {
            // Bare-metal and Nitro both name the type; anything not shaped like one is left out.
            instance_type: Some(product).filter(|p| looks_like_aws_type(p)),
            instance_id: read("board_asset_tag").filter(|t| t.starts_with("i-")),
            ..dmi(Provider::Aws)
        },
        "Google" if product == "Google Compute Engine" => dmi(Provider::Gcp),
        "Microsoft Corporation"
            if product == "Virtual Machine"
                && read("chassis_asset_tag").as_deref() == Some(AZURE_ASSET_TAG) =>
        {
            dmi(Provider::Azure)
        }
        _ => Whereabouts::default(),
    }
}

/// The first GPU's model as the driver names it (the `Model:` line of its `information`
/// file under `root`: `NVIDIA H100 80GB HBM3`), for the GPU clouds that list a price per GPU
/// model. `None` without a driver or a readable file.
pub fn gpu_model(root: &Path) -> Option<String> {
    let mut dirs: Vec<_> = std::fs::read_dir(root)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs.iter().find_map(|d| {
        let text = std::fs::read_to_string(d.join("information")).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix("Model:"))
            .and_then(clean)
    })
}

/// `p5.48xlarge`, `g6e.xlarge`, `p4d.24xlarge`, `m7i.metal-24xl`.
fn looks_like_aws_type(text: &str) -> bool {
    let Some((family, size)) = text.split_once('.') else {
        return false;
    };
    let word = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    word(family) && word(size) && family.starts_with(|c: char| c.is_ascii_lowercase())
}

/// Trimmed, non-empty, printable and short; else `None` (a firmware placeholder is not a fact).
pub(super) fn clean(value: &str) -> Option<String> {
    let v = value.trim();
    let placeholder = matches!(
        v.to_ascii_lowercase().as_str(),
        "" | "none" | "default string" | "to be filled by o.e.m." | "not specified"
    );
    (!placeholder && v.len() <= MAX_FACT && v.chars().all(|c| !c.is_control()))
        .then(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), format!("{text}\n")).unwrap();
        }
        dir
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn the_drivers_first_gpu_model_is_read_without_nvml() {
        let root = tempfile::tempdir().unwrap();
        for (bus, model) in [
            ("0000:1a:00.0", "NVIDIA H100 80GB HBM3"),
            ("0000:18:00.0", "NVIDIA A100-SXM4-80GB"),
        ] {
            let dir = root.path().join(bus);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("information"),
                format!("Model: \t\t {model}\nIRQ:   \t\t 114\nBus Type: \t PCIe\n"),
            )
            .unwrap();
        }
        assert_eq!(
            gpu_model(root.path()).as_deref(),
            Some("NVIDIA A100-SXM4-80GB")
        );
        assert_eq!(gpu_model(&root.path().join("none")), None);
    }

    #[test]
    fn an_aws_nitro_box_names_its_type_and_id() {
        let dir = tree(&[
            ("sys_vendor", "Amazon EC2"),
            ("product_name", "p5.48xlarge"),
            ("board_asset_tag", "i-0123456789abcdef0"),
        ]);
        let w = detect(Some(dir.path()), &no_env);
        assert_eq!(w.provider, Some(Provider::Aws));
        assert_eq!(w.instance_type.as_deref(), Some("p5.48xlarge"));
        assert_eq!(w.instance_id.as_deref(), Some("i-0123456789abcdef0"));
        assert_eq!(w.evidence, vec!["DMI".to_string()]);
    }

    #[test]
    fn gcp_and_azure_are_known_by_their_strings_and_plain_hyperv_is_not_azure() {
        let gcp = tree(&[
            ("sys_vendor", "Google"),
            ("product_name", "Google Compute Engine"),
        ]);
        let w = from_dmi(gcp.path());
        assert_eq!((w.provider, w.instance_type), (Some(Provider::Gcp), None));
        let azure = tree(&[
            ("sys_vendor", "Microsoft Corporation"),
            ("product_name", "Virtual Machine"),
            ("chassis_asset_tag", AZURE_ASSET_TAG),
        ]);
        assert_eq!(from_dmi(azure.path()).provider, Some(Provider::Azure));
        let hyperv = tree(&[
            ("sys_vendor", "Microsoft Corporation"),
            ("product_name", "Virtual Machine"),
            ("chassis_asset_tag", "None"),
        ]);
        assert_eq!(from_dmi(hyperv.path()).provider, None);
    }

    #[test]
    fn an_unknown_or_missing_tree_is_unknown_not_an_error() {
        let box_ = tree(&[("sys_vendor", "Supermicro"), ("product_name", "SYS-421GE")]);
        assert_eq!(from_dmi(box_.path()), Whereabouts::default());
        let gone = std::path::Path::new("/nonexistent/dmi");
        assert_eq!(detect(Some(gone), &no_env), Whereabouts::default());
        let odd = tree(&[
            ("sys_vendor", "Amazon EC2"),
            ("product_name", "Not Specified"),
        ]);
        let w = from_dmi(odd.path());
        assert_eq!((w.provider, w.instance_type), (Some(Provider::Aws), None));
    }

    #[test]
    fn a_pods_environment_wins_over_its_hosts_firmware() {
        let host = tree(&[
            ("sys_vendor", "Amazon EC2"),
            ("product_name", "p5.48xlarge"),
        ]);
        let vars: HashMap<&str, &str> = [
            ("RUNPOD_POD_ID", "abc123xyz"),
            ("RUNPOD_GPU_COUNT", "2"),
            ("RUNPOD_DC_ID", "EU-RO-1"),
        ]
        .into();
        let env = |k: &str| vars.get(k).map(|v| v.to_string());
        let w = detect(Some(host.path()), &env);
        assert_eq!(w.provider, Some(Provider::RunPod));
        assert_eq!(w.gpu_count, Some(2));
        assert_eq!(w.region.as_deref(), Some("EU-RO-1"));
        assert_eq!(w.instance_type, None);

        let vars: HashMap<&str, &str> =
            [("VAST_CONTAINERLABEL", "C.4242"), ("GPU_COUNT", "x")].into();
        let env = |k: &str| vars.get(k).map(|v| v.to_string());
        let w = detect(None, &env);
        assert_eq!(w.provider, Some(Provider::VastAi));
        assert_eq!(w.instance_id.as_deref(), Some("C.4242"));
        // A count that is not a number is unknown, not zero.
        assert_eq!(w.gpu_count, None);
    }
}
