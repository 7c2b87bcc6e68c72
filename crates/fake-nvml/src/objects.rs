//! The objects the library hands out besides devices: GPM samples and event sets. Each is an
//! opaque handle (an address in a range nothing is mapped at, never dereferenced) keyed to its
//! state here; a handle this library did not give out, or one already freed, is refused.

use std::collections::{BTreeMap, BTreeSet};

use gpumeter_sim::XidSpec;

use crate::abi::{
    ERROR_INVALID_ARGUMENT, EVENT_TYPE_XID, nvmlEventSet_t, nvmlGpmSample_t, nvmlReturn_t,
};

const SAMPLE_BASE: usize = 0x4750_4d00_0000;
const SET_BASE: usize = 0x4556_5400_0000;
const STRIDE: usize = 0x10;

/// One event set: the event types each device registered, and the `[[xid]]` entries delivered.
#[derive(Debug, Default)]
struct EventSet {
    registered: BTreeMap<u32, u64>,
    delivered: BTreeSet<usize>,
}

#[derive(Debug, Default)]
pub(crate) struct Objects {
    next: usize,
    /// Sample id → (device, elapsed ms) once filled.
    samples: BTreeMap<usize, Option<(u32, u64)>>,
    sets: BTreeMap<usize, EventSet>,
}

fn id_of(addr: usize, base: usize) -> Option<usize> {
    let off = addr.checked_sub(base)?;
    (off % STRIDE == 0).then_some(off / STRIDE)
}

impl Objects {
    fn fresh(&mut self) -> usize {
        self.next += 1;
        self.next
    }

    pub(crate) fn alloc_sample(&mut self) -> nvmlGpmSample_t {
        let id = self.fresh();
        self.samples.insert(id, None);
        std::ptr::without_provenance_mut(SAMPLE_BASE + id * STRIDE)
    }

    fn sample_id(&self, s: nvmlGpmSample_t) -> Option<usize> {
        id_of(s.addr(), SAMPLE_BASE).filter(|id| self.samples.contains_key(id))
    }

    pub(crate) fn free_sample(&mut self, s: nvmlGpmSample_t) -> bool {
        self.sample_id(s)
            .and_then(|id| self.samples.remove(&id))
            .is_some()
    }

    pub(crate) fn fill_sample(&mut self, s: nvmlGpmSample_t, gpu: u32, elapsed_ms: u64) -> bool {
        match self.sample_id(s) {
            Some(id) => {
                self.samples.insert(id, Some((gpu, elapsed_ms)));
                true
            }
            None => false,
        }
    }

    /// A filled sample's device and time.
    pub(crate) fn sample(&self, s: nvmlGpmSample_t) -> Option<(u32, u64)> {
        self.sample_id(s).and_then(|id| *self.samples.get(&id)?)
    }

    /// Samples not yet freed (tests: nothing leaks).
    #[cfg(test)]
    pub(crate) fn live_samples(&self) -> usize {
        self.samples.len()
    }

    pub(crate) fn create_set(&mut self) -> nvmlEventSet_t {
        let id = self.fresh();
        self.sets.insert(id, EventSet::default());
        std::ptr::without_provenance_mut(SET_BASE + id * STRIDE)
    }

    fn set_id(&self, s: nvmlEventSet_t) -> Option<usize> {
        id_of(s.addr(), SET_BASE).filter(|id| self.sets.contains_key(id))
    }

    pub(crate) fn free_set(&mut self, s: nvmlEventSet_t) -> bool {
        self.set_id(s)
            .and_then(|id| self.sets.remove(&id))
            .is_some()
    }

    pub(crate) fn register(&mut self, s: nvmlEventSet_t, gpu: u32, types: u64) -> bool {
        let Some(set) = self.set_id(s).and_then(|id| self.sets.get_mut(&id)) else {
            return false;
        };
        *set.registered.entry(gpu).or_insert(0) |= types;
        true
    }

    /// When (scenario ms) the next XID not yet due for this set falls due, if any will.
    pub(crate) fn next_at_ms(&self, s: nvmlEventSet_t, xids: &[XidSpec]) -> Option<f64> {
        let set = self.set_id(s).and_then(|id| self.sets.get(&id))?;
        xids.iter()
            .enumerate()
            .filter(|(k, x)| {
                !set.delivered.contains(k)
                    && set
                        .registered
                        .get(&x.gpu)
                        .is_some_and(|t| t & EVENT_TYPE_XID != 0)
            })
            .map(|(_, x)| x.at_s * 1000.0)
            .reduce(f64::min)
    }

    /// The next XID due for this set at `elapsed_ms` (marked delivered): (device, XID).
    pub(crate) fn next_due(
        &mut self,
        s: nvmlEventSet_t,
        xids: &[XidSpec],
        elapsed_ms: u64,
    ) -> Result<Option<(u32, u64)>, nvmlReturn_t> {
        let set = self
            .set_id(s)
            .and_then(|id| self.sets.get_mut(&id))
            .ok_or(ERROR_INVALID_ARGUMENT)?;
        let due = xids.iter().enumerate().find(|(k, x)| {
            !set.delivered.contains(k)
                && x.at_s * 1000.0 <= elapsed_ms as f64
                && set
                    .registered
                    .get(&x.gpu)
                    .is_some_and(|t| t & EVENT_TYPE_XID != 0)
        });
        Ok(due.map(|(k, x)| {
            set.delivered.insert(k);
            (x.gpu, x.xid)
        }))
    }
}
