//! The driver family: the driver and CUDA driver versions, and whether the torch the job will
//! import was built for a CUDA this driver runs (natively, through minor-version compatibility
//! with a limited feature set, or not at all), with the build to install instead.

use super::cuda_table::{CudaTable, compare, parse_version, table};
use super::facts::{Facts, Torch, TorchBuild};
use super::verdict::{Family, Level, Verdict};

pub fn check(facts: &Facts) -> Vec<Verdict> {
    let mut out = Vec::new();
    let Some(t) = table() else {
        return vec![Verdict::new(
            Family::Driver,
            "driver.table",
            Level::Skip,
            "the CUDA driver table did not load",
        )];
    };
    let (driver_text, cuda_text) = match &facts.nvml {
        Ok(i) => (
            i.driver_version.clone().ok(),
            i.cuda_driver_version.clone().ok(),
        ),
        Err(_) => (None, None),
    };
    let driver = driver_text.as_deref().and_then(parse_version);
    match (&driver_text, &driver) {
        (Some(text), Some(v)) => {
            let native = t.newest_native(v).map_or_else(
                || "older than CUDA 11.8".to_string(),
                |c| format!("toolkits up to CUDA {c}"),
            );
            let api = cuda_text
                .as_deref()
                .map_or_else(String::new, |c| format!(", CUDA driver API {c}"));
            out.push(Verdict::new(
                Family::Driver,
                "driver.version",
                Level::Ok,
                format!("driver {text}{api}: runs {native} natively"),
            ));
        }
        _ => out.push(Verdict::new(
            Family::Driver,
            "driver.version",
            Level::Skip,
            "driver version unknown (NVML unavailable or silent)",
        )),
    }
    out.push(torch(facts, t, driver_text.as_deref(), driver.as_deref()));
    out
}

fn torch(
    facts: &Facts,
    t: &CudaTable,
    driver_text: Option<&str>,
    driver: Option<&[u32]>,
) -> Verdict {
    let v = |level, s: String| Verdict::new(Family::Driver, "driver.torch", level, s);
    let (python, build) = match &facts.torch {
        Torch::NoPython => {
            return v(
                Level::Skip,
                "no python3 or python on PATH (point at the job's one with --python PATH)".into(),
            );
        }
        Torch::NotSimulated => {
            return v(
                Level::Skip,
                "torch not checked: the demo scenario declares no Python ([preflight] torch)"
                    .into(),
            );
        }
        Torch::ProbeFailed { python, why } => {
            return v(Level::Warn, format!("could not ask {} for its torch: {why}", python.display()))
                .fix("check that this Python starts (it is the one the job would use?), or pass --python PATH");
        }
        Torch::Found {
            python,
            build: None,
        } => {
            return v(
                Level::Skip,
                format!("{} has no torch installed", python.display()),
            );
        }
        Torch::Found {
            python,
            build: Some(b),
        } => (python, b),
    };
    let TorchBuild { version, cuda } = build;
    let suggestion = driver.and_then(|d| t.best_torch(d)).map(|(tv, cu)| {
        let tag = cu.replace('.', "");
        format!("pip install 'torch=={tv}.*' --index-url https://download.pytorch.org/whl/cu{tag}")
    });
    let Some(cuda) = cuda else {
        let fix = suggestion.unwrap_or_else(|| "install a CUDA build of torch".into());
        return v(
            Level::Fail,
            format!(
                "torch {version} ({}) is a CPU-only build: the job would not use the GPUs",
                python.display()
            ),
        )
        .fix(fix);
    };
    let (Some(driver_text), Some(driver)) = (driver_text, driver) else {
        return v(
            Level::Skip,
            format!("torch {version} built for CUDA {cuda}; driver version unknown"),
        );
    };
    let needed = t.min_driver(cuda);
    let needed_v = needed.and_then(parse_version);
    let Some(needed_v) = needed_v else {
        return v(
            Level::Skip,
            format!("torch {version} built for CUDA {cuda}, which the driver table does not list"),
        );
    };
    let needed = needed.unwrap_or_default();
    if compare(driver, &needed_v).is_ge() {
        return v(
            Level::Ok,
            format!(
                "torch {version} (CUDA {cuda}) runs on driver {driver_text} (needs ≥ {needed})"
            ),
        );
    }
    let major = parse_version(cuda)
        .and_then(|c| c.first().copied())
        .unwrap_or(0);
    let alternative = suggestion.map_or_else(String::new, |s| {
        format!(", or install a build this driver runs: {s}")
    });
    let fix = format!("update the driver to ≥ {needed}{alternative}");
    let compat = t
        .compat_driver(major)
        .and_then(|c| parse_version(c).map(|v| (c, v)))
        .filter(|(_, v)| compare(driver, v).is_ge());
    match compat {
        Some(_) => v(
            Level::Warn,
            format!(
                "torch {version} is built for CUDA {cuda}, which needs driver ≥ {needed}; {driver_text} runs it only through minor-version compatibility (limited features: no PTX JIT of newer kernels)"
            ),
        )
        .fix(fix),
        None => v(
            Level::Fail,
            format!("torch {version} is built for CUDA {cuda}, which needs driver ≥ {needed}; this driver is {driver_text}: CUDA will not initialise"),
        )
        .fix(fix),
    }
}
