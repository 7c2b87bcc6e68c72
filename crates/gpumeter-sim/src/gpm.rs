//! What a simulated GPU shows through GPM (Hopper and newer: `[[gpu]] gpm = { … }`) and the
//! XID errors a scenario scripts (`[[xid]]`). A GPU without a `gpm` table does not support GPM
//! (its activity fields read N/A); within it, an absent signal is a metric the board does not
//! report.

use serde::Deserialize;

use crate::signal::Signal;

/// GPM metrics of one `[[gpu]]` entry, in percent (0–100).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpmSpec {
    /// Share of SM time with at least one warp resident (`SM_UTIL`).
    pub sm_active_pct: Option<Signal>,
    /// Warps resident as a share of the maximum (`SM_OCCUPANCY`).
    pub sm_occupancy_pct: Option<Signal>,
    /// Share of time any tensor pipe was busy (`ANY_TENSOR_UTIL`).
    pub tensor_active_pct: Option<Signal>,
    /// DRAM bandwidth in use as a share of the peak (`DRAM_BW_UTIL`).
    pub dram_active_pct: Option<Signal>,
}

/// A critical XID error the fake driver reports (through its event API) once scenario time
/// reaches `at_s`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XidSpec {
    pub gpu: u32,
    /// The XID number, e.g. 79 (fell off the bus), 48 (double-bit ECC), 94/95 (contained /
    /// uncontained ECC).
    pub xid: u64,
    pub at_s: f64,
}
