//! `gpumeter check`: the rented-instance pre-flight. In about ten seconds, before the first paid
//! hour goes into a job, it says whether the machine is what was paid for and what to fix first:
//! one verdict a line (ok / warn / FAIL / skip) with the numbers and what to do, as text or
//! versioned JSON, and an exit code scripts can use (0 ok, 4 warnings, 5 failures).
//!
//! Holds: the gathered facts (`facts`), gathering them on this machine (`gather`, with the
//! torch probe `python` and the storage `probe`) or from a demo scenario (`demo`), one file per
//! check family (`gpus`, `driver` with its data table `cuda_table`, `interconnect`, `host`,
//! `storage`, `software`, `billing`), the verdicts and report (`verdict`) and the text
//! rendering (`render`), and the command itself (`run`). May touch: NVML through `source::nvml::inspect`, files under the
//! chosen root (read only), a child Python, and the temporary file of the storage probe. It
//! never needs root and writes nothing else.

pub mod billing;
pub mod cuda_table;
pub mod demo;
pub mod driver;
pub mod facts;
pub mod gather;
pub mod gpus;
pub mod host;
pub mod interconnect;
pub mod probe;
pub mod python;
pub mod render;
pub mod run;
pub mod software;
pub mod storage;
pub mod verdict;

pub use facts::{BillingFacts, Expect, Facts};
pub use verdict::{EXIT_FAILURES, EXIT_OK, EXIT_WARNINGS, Report};

/// Judges the facts: every family's verdicts, in report order.
pub fn judge(facts: &Facts) -> Report {
    let mut verdicts = gpus::check(facts);
    verdicts.extend(driver::check(facts));
    verdicts.extend(interconnect::check(facts));
    verdicts.extend(host::check(facts));
    verdicts.extend(storage::check(facts));
    verdicts.extend(software::check(facts));
    verdicts.extend(billing::check(facts));
    Report::new(facts.source.clone(), verdicts)
}
