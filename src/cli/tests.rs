use super::parse::*;
use super::*;
use clap::CommandFactory;

#[test]
fn cli_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn intervals_have_a_floor() {
    assert!(
        parse_interval("10ms")
            .unwrap_err()
            .contains("at least 100ms")
    );
    assert_eq!(SourceArgs::default().interval(), DEFAULT_INTERVAL);
}

#[test]
fn demo_without_value_means_training() {
    let cli = Cli::try_parse_from(["gpumeter", "--demo"]).unwrap();
    assert_eq!(cli.source.demo.as_deref(), Some("training"));
    let cli = Cli::try_parse_from(["gpumeter", "snapshot", "--json", "--demo", "idle"]).unwrap();
    let Some(Command::Snapshot(args)) = &cli.command else {
        panic!("{cli:?}")
    };
    assert!(args.json);
    assert_eq!(args.source.demo.as_deref(), Some("idle"));
}

#[test]
fn options_before_the_subcommand_still_count() {
    let cli = Cli::try_parse_from([
        "gpumeter",
        "--demo",
        "idle",
        "--interval",
        "2s",
        "--rate",
        "31/h",
        "watch",
        "--for",
        "2h",
        "--fast",
        "--currency",
        "eur",
    ])
    .unwrap();
    let Some(Command::Watch(w)) = &cli.command else {
        panic!("{cli:?}")
    };
    assert!(w.fast);
    let source = w.source.or(&cli.source);
    assert_eq!(source.demo.as_deref(), Some("idle"));
    assert_eq!(source.interval(), Duration::from_secs(2));
    let pricing = w.pricing.or(&cli.pricing);
    assert_eq!(pricing.rate.unwrap().to_string(), "31/h");
    assert_eq!(pricing.currency.unwrap().code(), "EUR");
    // The subcommand's own value wins over the one before it.
    let cli =
        Cli::try_parse_from(["gpumeter", "--demo", "idle", "snapshot", "--demo", "mixed"]).unwrap();
    let Some(Command::Snapshot(s)) = &cli.command else {
        panic!("{cli:?}")
    };
    assert_eq!(s.source.or(&cli.source).demo.as_deref(), Some("mixed"));
}

#[test]
fn pricing_flags_parse_and_bad_values_name_the_flag() {
    let cli = Cli::try_parse_from([
        "gpumeter",
        "--rate",
        "3.10/gpu-h",
        "--budget",
        "500/day",
        "--currency",
        "eur",
        "report",
        "--since",
        "30d",
        "--json",
    ])
    .unwrap();
    assert_eq!(cli.pricing.rate.unwrap().to_string(), "3.1/gpu-h");
    assert_eq!(cli.pricing.currency.unwrap().code(), "EUR");
    assert!(matches!(
        cli.command,
        Some(Command::Report(ReportArgs { json: true, .. }))
    ));
    let err = Cli::try_parse_from(["gpumeter", "--rate", "-1/h"])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("--rate") && err.contains("must not be negative"),
        "{err}"
    );
    let err = Cli::try_parse_from(["gpumeter", "--currency", "XYZ"])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("--currency") && err.contains("unknown currency"),
        "{err}"
    );
    // A subcommand refuses options it does not use, after it or before it.
    let err = Cli::try_parse_from(["gpumeter", "report", "--theme", "mono"])
        .unwrap_err()
        .to_string();
    assert!(err.contains("--theme"), "{err}");
    let before = |args: &[&str]| Cli::try_parse_from(args).unwrap().misplaced_option();
    assert_eq!(
        before(&["gpumeter", "--theme", "mono", "report"]),
        Some(("--theme", "report"))
    );
    assert_eq!(
        before(&["gpumeter", "--no-color", "snapshot"]),
        Some(("--no-color", "snapshot"))
    );
    assert_eq!(before(&["gpumeter", "--demo", "idle", "watch"]), None);
    assert_eq!(before(&["gpumeter", "--theme", "mono"]), None);
    // The pod options count before the commands that name pods (snapshot too), and nowhere
    // else.
    assert_eq!(before(&["gpumeter", "--kubernetes", "on", "watch"]), None);
    assert_eq!(before(&["gpumeter", "--kubernetes", "on", "serve"]), None);
    assert_eq!(
        before(&["gpumeter", "--kubernetes", "on", "snapshot"]),
        None
    );
    assert_eq!(
        before(&["gpumeter", "--kubernetes", "on", "record", "x.jsonl"]),
        Some(("--kubernetes", "record"))
    );
    assert_eq!(
        before(&["gpumeter", "--pod-resources", "/k.sock", "report"]),
        Some(("--pod-resources", "report"))
    );
}

#[test]
fn pods_are_named_when_asked_or_where_kubernetes_is() {
    let parse = |args: &[&str]| Cli::try_parse_from(args).unwrap();
    let gone = "/nonexistent/kubelet.sock";
    // Auto: on inside a pod, or when the socket is there; off otherwise.
    let auto = parse(&["gpumeter", "--pod-resources", gone]);
    assert_eq!(auto.kube.socket(false), None);
    assert_eq!(
        auto.kube.socket(true).as_deref(),
        Some(std::path::Path::new(gone))
    );
    let here = tempfile::NamedTempFile::new().unwrap();
    let path = here.path().to_str().unwrap();
    assert!(
        parse(&["gpumeter", "--pod-resources", path])
            .kube
            .socket(false)
            .is_some()
    );
    let on = parse(&["gpumeter", "--kubernetes", "on", "--pod-resources", gone]);
    assert!(on.kube.socket(false).is_some());
    let off = parse(&["gpumeter", "--kubernetes", "off", "--pod-resources", path]);
    assert_eq!(off.kube.socket(true), None);
    // Given after the subcommand it wins over before it.
    let Some(Command::Watch(w)) = parse(&[
        "gpumeter",
        "--kubernetes",
        "off",
        "watch",
        "--kubernetes",
        "on",
    ])
    .command
    else {
        panic!("not watch");
    };
    let outer = KubeArgs {
        kubernetes: Some(KubeMode::Off),
        pod_resources: None,
    };
    assert_eq!(w.kube.or(&outer).kubernetes, Some(KubeMode::On));
    assert_eq!(
        KubeArgs::default().or(&outer).kubernetes,
        Some(KubeMode::Off)
    );
}
