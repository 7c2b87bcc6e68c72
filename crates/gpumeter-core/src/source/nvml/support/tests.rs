//! Tests of `support`: the memo of refused readings, standing warnings, and one tick's `Ask`.

use std::cell::Cell;

use super::*;

fn counted(calls: &Cell<u32>, result: Result<u32, NvmlError>) -> Result<u32, NvmlError> {
    calls.set(calls.get() + 1);
    result
}

#[test]
fn unsupported_is_asked_once_then_never_again_and_stays_quiet() {
    let mut memo = SupportMemo::default();
    let calls = Cell::new(0);
    for _ in 0..3 {
        let mut ask = Ask::new(Some(0), &mut memo);
        let got = ask.get(Reading::FanSpeed, || {
            counted(&calls, Err(NvmlError::NotSupported))
        });
        assert_eq!(got, None);
        let mut warnings = Vec::new();
        assert_eq!(ask.finish(&mut warnings), None);
        assert!(warnings.is_empty(), "{warnings:?}");
    }
    assert_eq!(calls.get(), 1);
}

#[test]
fn missing_symbol_is_remembered_like_unsupported() {
    let mut memo = SupportMemo::default();
    let mut ask = Ask::new(Some(1), &mut memo);
    let err = NvmlError::FailedToLoadSymbol("undefined symbol".into());
    assert_eq!(ask.get(Reading::NumFans, || Err::<u32, _>(err)), None);
    ask.finish(&mut Vec::new());
    assert!(!memo.should_ask(Reading::NumFans));
    assert!(memo.should_ask(Reading::FanSpeed));
}

#[test]
fn no_permission_is_asked_once_and_then_stands_as_a_warning() {
    let mut memo = SupportMemo::default();
    let calls = Cell::new(0);
    for _ in 0..3 {
        let mut ask = Ask::new(Some(2), &mut memo);
        let got = ask.get(Reading::ComputeProcesses, || {
            counted(&calls, Err(NvmlError::NoPermission))
        });
        assert_eq!(got, None);
        let mut tick = Vec::new();
        ask.finish(&mut tick);
        assert!(tick.is_empty(), "not a failure of this tick: {tick:?}");
        // Every sample carries it, so any one snapshot says why the field is N/A.
        assert_eq!(
            memo.standing("GPU 2").as_deref(),
            Some("GPU 2: compute processes (no permission) refused; shown as N/A")
        );
    }
    assert_eq!(calls.get(), 1);
}

#[test]
fn unsupported_readings_do_not_stand_as_warnings() {
    let mut memo = SupportMemo::default();
    let mut ask = Ask::new(Some(0), &mut memo);
    ask.get(Reading::FanSpeed, || Err::<u32, _>(NvmlError::NotSupported));
    ask.get(Reading::Power, || Err::<u32, _>(NvmlError::NoPermission));
    ask.get(Reading::Energy, || Err::<u32, _>(NvmlError::NoPermission));
    ask.finish(&mut Vec::new());
    assert_eq!(
        memo.standing("GPU 0").as_deref(),
        Some("GPU 0: power (no permission), energy (no permission) refused; shown as N/A")
    );
    assert_eq!(SupportMemo::default().standing("GPU 0"), None);
    assert!(memo.has_standing());
    assert!(!SupportMemo::default().has_standing());
    // Refused without a reason (unsupported) only: nothing stands.
    let mut quiet = SupportMemo::default();
    let mut ask = Ask::new(Some(0), &mut quiet);
    ask.get(Reading::FanSpeed, || Err::<u32, _>(NvmlError::NotSupported));
    ask.finish(&mut Vec::new());
    assert!(
        !quiet.should_ask(Reading::FanSpeed),
        "remembered as unsupported"
    );
    assert_eq!(quiet.standing("GPU 0"), None);
    assert!(!quiet.has_standing());
}

#[test]
fn failures_of_this_tick_are_looked_up_by_reading() {
    let mut memo = SupportMemo::default();
    let mut ask = Ask::new(Some(0), &mut memo);
    ask.get(Reading::PcieRx, || Err::<u32, _>(NvmlError::Timeout));
    assert_eq!(ask.failure(Reading::PcieRx), Some("timeout"));
    assert_eq!(ask.failure(Reading::PcieTx), None);
}

#[test]
fn transient_errors_warn_each_tick_and_are_retried() {
    let mut memo = SupportMemo::default();
    let calls = Cell::new(0);
    for tick in 0..2 {
        let mut ask = Ask::new(Some(0), &mut memo);
        assert_eq!(
            ask.get(Reading::Power, || counted(&calls, Err(NvmlError::Timeout))),
            None
        );
        assert_eq!(
            ask.get(Reading::Temperature, || counted(
                &calls,
                Err(NvmlError::Unknown)
            )),
            None
        );
        assert_eq!(ask.get(Reading::Energy, || counted(&calls, Ok(7))), Some(7));
        let mut warnings = Vec::new();
        assert_eq!(ask.finish(&mut warnings), None);
        assert_eq!(
            warnings,
            vec!["GPU 0: could not read power (timeout), temperature (unknown driver error)"],
            "tick {tick}"
        );
    }
    assert_eq!(calls.get(), 6);
}

#[test]
fn lost_gpu_stops_further_calls_this_tick_without_memoising() {
    let mut memo = SupportMemo::default();
    let calls = Cell::new(0);
    let mut ask = Ask::new(Some(3), &mut memo);
    assert_eq!(
        ask.get(Reading::Power, || counted(&calls, Err(NvmlError::Timeout))),
        None
    );
    assert_eq!(
        ask.get(Reading::Utilization, || counted(
            &calls,
            Err(NvmlError::GpuLost)
        )),
        None
    );
    assert_eq!(ask.stopped(), Some(Stop::Lost));
    assert_eq!(ask.get(Reading::Memory, || counted(&calls, Ok(1))), None);
    let mut warnings = Vec::new();
    assert_eq!(ask.finish(&mut warnings), Some(Stop::Lost));
    assert_eq!(calls.get(), 2);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(memo.should_ask(Reading::Utilization));
    assert!(memo.should_ask(Reading::Memory));
}

#[test]
fn reset_required_is_its_own_stop() {
    let mut memo = SupportMemo::default();
    let mut ask = Ask::new(Some(0), &mut memo);
    ask.get(Reading::Memory, || Err::<u32, _>(NvmlError::ResetRequired));
    assert_eq!(ask.finish(&mut Vec::new()), Some(Stop::ResetRequired));
}

#[test]
fn attempt_hands_back_the_error_for_special_meanings() {
    let mut memo = SupportMemo::default();
    let mut ask = Ask::new(None, &mut memo);
    match ask.attempt(Reading::ProcessUtilization, || {
        Err::<u32, _>(NvmlError::NotFound)
    }) {
        Asked::Failed(NvmlError::NotFound) => {}
        other => panic!("expected NotFound back, got {other:?}"),
    }
    let mut warnings = Vec::new();
    ask.finish(&mut warnings);
    assert!(
        warnings.is_empty(),
        "an unabsorbed failure must not warn: {warnings:?}"
    );
}

#[test]
fn a_lost_answer_to_a_system_call_fails_only_that_reading() {
    let mut memo = SupportMemo::default();
    let mut ask = Ask::new(None, &mut memo);
    ask.get(Reading::DriverVersion, || Err::<u32, _>(NvmlError::GpuLost));
    assert_eq!(ask.get(Reading::CudaVersion, || Ok(12040)), Some(12040));
    let mut warnings = Vec::new();
    assert_eq!(ask.finish(&mut warnings), None);
    assert_eq!(
        warnings,
        vec!["NVML: could not read driver version (GPU lost)"]
    );
}

#[test]
fn system_calls_are_labelled_nvml() {
    let mut memo = SupportMemo::default();
    let mut ask = Ask::new(None, &mut memo);
    ask.get(Reading::DriverVersion, || Err::<u32, _>(NvmlError::Unknown));
    ask.get(Reading::CudaVersion, || {
        Err::<u32, _>(NvmlError::LibraryNotFound)
    });
    let mut warnings = Vec::new();
    ask.finish(&mut warnings);
    assert_eq!(
        warnings,
        vec!["NVML: could not read driver version (unknown driver error)"]
    );
    assert!(!memo.should_ask(Reading::CudaVersion));
    assert!(memo.should_ask(Reading::DriverVersion));
}
