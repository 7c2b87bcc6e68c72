//! Clock throttle reasons, named the way users read them, with NVML's bit values.

use serde::{Deserialize, Serialize};

/// Why the GPU clocks are below their maximum. Bit values follow NVML's
/// `nvmlClocksEventReasons` (formerly `ClocksThrottleReasons`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThrottleReason {
    /// Nothing runs, clocks idle down (not a problem).
    GpuIdle,
    /// Clocks held by the application clock setting.
    ApplicationsClocksSetting,
    /// Power draw at the software power cap.
    SwPowerCap,
    /// Hardware slowdown (temperature or power brake).
    HwSlowdown,
    /// Synchronised with another GPU's boost group.
    SyncBoost,
    /// Software thermal slowdown.
    SwThermalSlowdown,
    /// Hardware thermal slowdown.
    HwThermalSlowdown,
    /// External power brake assertion.
    HwPowerBrakeSlowdown,
    /// Display clock setting.
    DisplayClockSetting,
}

impl ThrottleReason {
    /// Every reason with its NVML bit.
    pub const ALL: [(ThrottleReason, u64); 9] = [
        (ThrottleReason::GpuIdle, 0x1),
        (ThrottleReason::ApplicationsClocksSetting, 0x2),
        (ThrottleReason::SwPowerCap, 0x4),
        (ThrottleReason::HwSlowdown, 0x8),
        (ThrottleReason::SyncBoost, 0x10),
        (ThrottleReason::SwThermalSlowdown, 0x20),
        (ThrottleReason::HwThermalSlowdown, 0x40),
        (ThrottleReason::HwPowerBrakeSlowdown, 0x80),
        (ThrottleReason::DisplayClockSetting, 0x100),
    ];

    /// The reasons set in an NVML bitmask (unknown bits are ignored).
    pub fn from_bits(bits: u64) -> Vec<ThrottleReason> {
        Self::ALL
            .iter()
            .filter(|(_, bit)| bits & bit != 0)
            .map(|(r, _)| *r)
            .collect()
    }

    /// The NVML bitmask of a set of reasons.
    pub fn to_bits(reasons: &[ThrottleReason]) -> u64 {
        Self::ALL
            .iter()
            .filter(|(r, _)| reasons.contains(r))
            .fold(0, |acc, (_, bit)| acc | bit)
    }

    /// Short label for the dashboard.
    pub fn label(self) -> &'static str {
        match self {
            ThrottleReason::GpuIdle => "idle",
            ThrottleReason::ApplicationsClocksSetting => "app-clocks",
            ThrottleReason::SwPowerCap => "power-cap",
            ThrottleReason::HwSlowdown => "hw-slowdown",
            ThrottleReason::SyncBoost => "sync-boost",
            ThrottleReason::SwThermalSlowdown => "sw-thermal",
            ThrottleReason::HwThermalSlowdown => "hw-thermal",
            ThrottleReason::HwPowerBrakeSlowdown => "power-brake",
            ThrottleReason::DisplayClockSetting => "display-clock",
        }
    }

    /// Whether this reason costs performance (idle and app-clock settings do not).
    pub fn is_slowdown(self) -> bool {
        !matches!(
            self,
            ThrottleReason::GpuIdle
                | ThrottleReason::ApplicationsClocksSetting
                | ThrottleReason::DisplayClockSetting
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip_and_ignore_unknown_bits() {
        let reasons = ThrottleReason::from_bits(0x4 | 0x40 | 0x8000);
        assert_eq!(
            reasons,
            vec![
                ThrottleReason::SwPowerCap,
                ThrottleReason::HwThermalSlowdown
            ]
        );
        assert_eq!(ThrottleReason::to_bits(&reasons), 0x44);
    }

    #[test]
    fn idle_is_not_a_slowdown_but_thermal_is() {
        assert!(!ThrottleReason::GpuIdle.is_slowdown());
        assert!(ThrottleReason::HwThermalSlowdown.is_slowdown());
    }
}
