//! What the critical XID errors usually mean, for the XID alert: a short meaning, how bad it is
//! and what a renter can do. Paraphrased from NVIDIA's public XID catalog and driver release
//! notes; an XID not listed is still reported, with a pointer to the catalog.

use super::alert::Severity;

/// One XID's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XidInfo {
    /// The XID number, as the driver reports it.
    pub xid: u64,
    /// What it usually means, a few words.
    pub meaning: &'static str,
    /// How serious the alert for this XID is.
    pub severity: Severity,
    /// What to do about it.
    pub next_step: &'static str,
}

const RESET: &str = "The GPU needs a reset (or the machine a reboot) before it works again: \
    checkpoint what you can, then ask the provider for a reset or a replacement node with this \
    GPU's bus id and the XID.";
const REPORT: &str = "Report the GPU (bus id, XID, time) to the provider; if it repeats, move the \
    job to another node.";
const APP: &str = "Usually the application's fault: rerun with CUDA_LAUNCH_BLOCKING=1 or \
    compute-sanitizer to find the kernel; report to the provider only if it repeats on other \
    code.";

/// The catalog, by XID.
pub const CATALOG: &[XidInfo] = &[
    XidInfo {
        xid: 13,
        meaning: "graphics engine exception (often an out-of-range access in a kernel)",
        severity: Severity::Moderate,
        next_step: APP,
    },
    XidInfo {
        xid: 31,
        meaning: "GPU memory page fault (a kernel touched memory it does not own)",
        severity: Severity::Moderate,
        next_step: APP,
    },
    XidInfo {
        xid: 43,
        meaning: "GPU stopped processing (the faulting context was killed)",
        severity: Severity::Moderate,
        next_step: APP,
    },
    XidInfo {
        xid: 45,
        meaning: "preemptive cleanup after an earlier error (a process was killed)",
        severity: Severity::Info,
        next_step: "Look for an earlier XID on the same GPU: that one is the cause.",
    },
    XidInfo {
        xid: 48,
        meaning: "double-bit ECC error (uncorrectable memory error)",
        severity: Severity::High,
        next_step: RESET,
    },
    XidInfo {
        xid: 61,
        meaning: "internal micro-controller breakpoint/warning",
        severity: Severity::High,
        next_step: RESET,
    },
    XidInfo {
        xid: 62,
        meaning: "internal micro-controller halt",
        severity: Severity::High,
        next_step: RESET,
    },
    XidInfo {
        xid: 63,
        meaning: "ECC page retirement or row remap recorded (memory degrading)",
        severity: Severity::Moderate,
        next_step: "The remap takes effect at the next GPU reset; plan one, and report the GPU \
            if this repeats.",
    },
    XidInfo {
        xid: 64,
        meaning: "ECC page retirement or row remap failed (no spare rows left)",
        severity: Severity::High,
        next_step: RESET,
    },
    XidInfo {
        xid: 74,
        meaning: "NVLink error",
        severity: Severity::High,
        next_step: REPORT,
    },
    XidInfo {
        xid: 79,
        meaning: "GPU fell off the bus (no longer reachable over PCIe)",
        severity: Severity::High,
        next_step: RESET,
    },
    XidInfo {
        xid: 92,
        meaning: "high single-bit ECC error rate",
        severity: Severity::Moderate,
        next_step: REPORT,
    },
    XidInfo {
        xid: 94,
        meaning: "contained ECC error (the affected application was stopped; others go on)",
        severity: Severity::Moderate,
        next_step: "Restart the job (from its checkpoint); the memory is remapped at the next \
            GPU reset. Report the GPU if it repeats.",
    },
    XidInfo {
        xid: 95,
        meaning: "uncontained ECC error (every application on the GPU is affected)",
        severity: Severity::High,
        next_step: RESET,
    },
    XidInfo {
        xid: 119,
        meaning: "GSP firmware timed out (an RPC to the GPU System Processor)",
        severity: Severity::High,
        next_step: RESET,
    },
    XidInfo {
        xid: 120,
        meaning: "GSP firmware error",
        severity: Severity::High,
        next_step: RESET,
    },
    XidInfo {
        xid: 140,
        meaning: "unrecovered ECC error",
        severity: Severity::High,
        next_step: RESET,
    },
];

/// The entry for `xid`, or a generic one.
pub fn info(xid: u64) -> XidInfo {
    CATALOG
        .iter()
        .find(|i| i.xid == xid)
        .copied()
        .unwrap_or(XidInfo {
            xid,
            meaning: "a critical driver error (see NVIDIA's XID catalog)",
            severity: Severity::Moderate,
            next_step: REPORT,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_is_sorted_unique_and_knows_the_ones_renters_hit() {
        assert!(CATALOG.windows(2).all(|w| w[0].xid < w[1].xid));
        for (xid, word) in [
            (79, "fell off the bus"),
            (48, "double-bit"),
            (63, "row remap"),
            (64, "row remap failed"),
            (94, "contained"),
            (95, "uncontained"),
            (119, "GSP"),
            (120, "GSP"),
        ] {
            assert!(
                info(xid).meaning.contains(word),
                "{xid}: {}",
                info(xid).meaning
            );
        }
        assert_eq!(info(79).severity, Severity::High);
        assert!(info(9_999).meaning.contains("XID catalog"));
    }
}
