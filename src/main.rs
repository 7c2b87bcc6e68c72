//! The `gpumeter` binary: argument parsing, exit codes and error printing at the edge, the
//! dashboard's start, and the helpers the subcommands share (`subcommands.rs` runs the others);
//! everything else lives in the library.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::CommandFactory;
use gpumeter::cli::{self, Cli, Command, SourceArgs};
use gpumeter::launch::{self, LaunchError};
use gpumeter::ui;
use gpumeter_core::clock::{Clock, SharedClock, SystemClock};
use gpumeter_core::config;
use gpumeter_core::recording::StartAt;
use gpumeter_core::source::Source;
use gpumeter_core::source::collector;
use gpumeter_core::source::fast_forward::{FastForward, LaggingClock};

mod long_help;
mod manpage;
mod subcommands;
use subcommands::{
    config_cmd, eval_cmd, fleet_cmd, record_cmd, report_cmd, serve_cmd, snapshot, watch_cmd,
};

fn main() -> ExitCode {
    // First, while this is the only thread (see the function).
    launch::reserve_descriptor_table();
    let cli = match long_help::parse_args() {
        Ok(cli) => cli,
        // Help and version print as clap prints them; an error quotes what it was given cut
        // short (a 10 000-character argument is not echoed whole), and never panics on a
        // closed stderr.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            say(&e.render().to_string());
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    if let Some((flag, command)) = cli.misplaced_option() {
        Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                format!("{flag} does not apply to `gpumeter {command}`"),
            )
            .exit();
    }
    // `check` has its own exit codes (0 ok, 4 warnings, 5 failures).
    if let Some(Command::Check(args)) = &cli.command {
        let now = SystemClock.now_unix_ms();
        if cli.source.list {
            print!("{}", launch::scenario_list());
            return ExitCode::SUCCESS;
        }
        let opts = check_options(&cli, args);
        return match gpumeter::check::run::run(&opts, now, &mut std::io::stdout().lock()) {
            Ok(code) => ExitCode::from(code),
            Err(err) => {
                say(&format!("gpumeter: {err}\n"));
                let code = match &err {
                    gpumeter::check::run::CheckError::Launch(e) => e.exit_code(),
                    _ => 1,
                };
                ExitCode::from(code)
            }
        };
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let code = err
                .downcast_ref::<LaunchError>()
                .map(LaunchError::exit_code)
                .unwrap_or(1);
            say(&format!("gpumeter: {}\n", error_text(&err)));
            ExitCode::from(code)
        }
    }
}

/// Writes a fatal message to stderr, each long run of characters cut
/// ([`gpumeter_core::sanitize::cut_runs`]); a closed stderr is no reason to panic.
fn say(text: &str) {
    use std::io::Write;
    let text = gpumeter_core::sanitize::cut_runs(text, gpumeter_core::sanitize::MAX_QUOTED_RUN);
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// The error and its causes on one line, each cause once: a message that already quotes its
/// source (`cannot read X: Is a directory (os error 21)`) does not get it appended again.
fn error_text(err: &anyhow::Error) -> String {
    let mut out = err.to_string();
    for cause in err.chain().skip(1) {
        let c = cause.to_string();
        if !out.contains(&c) {
            out.push_str(": ");
            out.push_str(&c);
        }
    }
    out
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let list = match &cli.command {
        Some(Command::Snapshot(a)) => a.source.or(&cli.source).list,
        Some(Command::Watch(a)) => a.source.or(&cli.source).list,
        Some(Command::Serve(a)) => a.source.or(&cli.source).list,
        Some(Command::Record(a)) => a.source.or(&cli.source).list,
        _ => cli.source.list,
    };
    if list {
        print!("{}", launch::scenario_list());
        return Ok(());
    }
    match &cli.command {
        Some(Command::Completions { shell }) => {
            let mut cmd = Cli::command();
            clap_complete::generate(*shell, &mut cmd, "gpumeter", &mut std::io::stdout());
            Ok(())
        }
        Some(Command::Man) => {
            manpage::render(&mut std::io::stdout().lock()).context("writing the man page")?;
            Ok(())
        }
        Some(Command::Snapshot(args)) => snapshot(&cli, args),
        Some(Command::Watch(args)) => watch_cmd(&cli, args),
        Some(Command::Report(args)) => report_cmd(&cli, args),
        // Handled in `main`, with its own exit codes.
        Some(Command::Check(_)) => Ok(()),
        Some(Command::Serve(args)) => serve_cmd(&cli, args),
        Some(Command::Record(args)) => record_cmd(&cli, args),
        Some(Command::Fleet(args)) => fleet_cmd(&cli, args),
        Some(Command::Config(args)) => config_cmd(&args.action),
        Some(Command::Eval(args)) => eval_cmd(&cli, args),
        None => dashboard(&cli),
    }
}

fn dashboard(cli: &Cli) -> anyhow::Result<()> {
    let g = &cli.source;
    let settings = load_settings(&cli::load_options(
        &cli.files,
        &cli.pricing,
        Some(&cli.ui),
        demo_pricing(g)?,
        g.simulated(),
    ))?;
    let (theme, keys) = dashboard_looks(&settings)?;
    let notice = launch::spot_watch(&settings, g.simulated());
    let clock: SharedClock = Arc::new(SystemClock);
    let billing = settings.pricing.map(|pricing| ui::BillingSetup {
        pricing,
        ledger_path: ledger_path(&settings.ledger),
    });
    let mut options = ui::UiOptions {
        interval_ms: millis(g.interval()),
        no_color: cli.ui.look.no_color
            || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
        source_label: String::new(),
        billing,
        theme,
        alerts: settings.alerts,
        keys,
        acting: if settings.readonly {
            ui::process_action::Acting::ReadOnly
        } else if g.demo.is_some() || g.replay.is_some() {
            ui::process_action::Acting::NotLocal
        } else {
            ui::process_action::Acting::Allowed
        },
        colour_depth: ui::fallback::ColourDepth::from_env(),
        ascii: settings.ascii,
        focus: gpumeter_core::source::focus::ProcessFocus::new(),
    };
    // Open the source before touching the terminal, so a missing driver is a plain message. A
    // replay (not recorded again) is played by the dashboard itself: paused, sped up, sought.
    let demo_start = demo_start(cli.ui.start, g)?;
    let feed = match (&g.replay, &cli.recording.record) {
        (Some(path), None) => {
            let setup = ui::replay::ReplaySetup {
                path: path.clone(),
                start: cli.ui.start,
            };
            let player = ui::replay::Player::open(setup, ui::session_config(&options))?;
            options.source_label = format!("replay:{}", path.display());
            ui::Feed::Replay(Box::new(player))
        }
        _ => {
            // Opened on the collector thread: a driver slow to initialise must not keep the
            // screen blank. A failure within OPEN_WAIT is still a plain message before the
            // terminal is touched; a later one ends the dashboard with the same message.
            let (tx, rx) = tokio::sync::mpsc::channel(16);
            let (args, rec, at) = (g.clone(), cli.recording.clone(), clock.clone());
            let socket = pods_socket(&cli.kube);
            let focus = options.focus.clone();
            let interval_ms = options.interval_ms;
            let open = move || {
                let opened = match demo_start {
                    // The scenario's first moments played at once, then live.
                    Some(behind_ms) => {
                        let lag = LaggingClock::new(at, behind_ms);
                        let lagging = Arc::new(lag.clone());
                        source_for(&args, lagging, &rec, notice, socket.as_deref()).map(|s| {
                            Box::new(FastForward::new(s, lag, interval_ms)) as Box<dyn Source>
                        })
                    }
                    None => source_for(&args, at, &rec, notice, socket.as_deref()),
                };
                opened.map(|mut source| {
                    source.set_focus(focus);
                    source
                })
            };
            let opening = collector::spawn_opening(open, g.interval(), tx.clone())
                .context("starting the collector thread")?;
            options.source_label = match opening.wait(OPEN_WAIT) {
                collector::Opened::Ready(label) => label,
                collector::Opened::Failed(e) => return Err(e),
                collector::Opened::Gone => anyhow::bail!("the collector thread ended at start"),
                collector::Opened::Pending => {
                    let what = match (&g.demo, &g.replay) {
                        (None, None) => "NVML to start (the driver has not answered yet)",
                        _ => "the source to open",
                    };
                    let _ = tx.try_send(collector::CollectorEvent::Waiting(what.to_string()));
                    // The label the source would give (the first reading names it anyway).
                    match (&g.demo, &g.replay) {
                        (Some(d), _) => format!("demo:{d}"),
                        (None, Some(p)) => format!("replay:{}", p.display()),
                        (None, None) => gpumeter_core::source::local::LOCAL_LABEL.to_string(),
                    }
                }
            };
            ui::Feed::Live(rx)
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let notes = match runtime.block_on(ui::run(feed, clock, options)) {
        // Said as it would have been before the screen came up (and with its exit code).
        Err(ui::UiError::SourceUnavailable(m)) => {
            return Err(LaunchError::NvmlUnavailable(m).into());
        }
        other => other?,
    };
    for n in notes {
        eprintln!("gpumeter: {n}");
    }
    Ok(())
}

/// How long the dashboard waits for its source to open before it paints and says it waits.
const OPEN_WAIT: Duration = Duration::from_millis(100);

/// The ledger to write, when it is enabled and has a location.
pub(crate) fn ledger_path(ledger: &config::LedgerSettings) -> Option<std::path::PathBuf> {
    ledger.path.clone().filter(|_| ledger.enabled)
}

/// The demo scenario's own price, so `--demo` shows money moving without a config file.
pub(crate) fn demo_pricing(g: &SourceArgs) -> anyhow::Result<Option<config::DemoPricing>> {
    if let Some(path) = &g.replay {
        // A replayed demo is priced as the demo was.
        return Ok(launch::replayed_scenario(path).and_then(|s| launch::demo_pricing(&s)));
    }
    let Some(name) = g.demo.as_deref() else {
        return Ok(None);
    };
    Ok(launch::demo_pricing(&launch::load_scenario(name)?))
}

/// The source the options name (a replay, a demo or this machine), recorded when asked.
/// `notice` is this machine's spot notice watch ([`launch::spot_watch`]) and `pods` the
/// kubelet's socket to name pods from ([`pods_socket`]), both attached to the readings before
/// they are recorded. A replay keeps the pods it was recorded with: the kubelet's answer now
/// is not theirs.
pub(crate) fn source_for(
    g: &SourceArgs,
    clock: SharedClock,
    rec: &cli::RecordArgs,
    notice: Option<gpumeter_core::cloud::watch::NoticeWatch>,
    pods: Option<&std::path::Path>,
) -> anyhow::Result<Box<dyn gpumeter_core::source::Source>> {
    let source = match &g.replay {
        Some(path) => launch::open_replay(path)?,
        None => launch::with_pods(
            launch::open_source(g.demo.as_deref(), g.nvml_lib.as_deref(), clock)?,
            pods,
        ),
    };
    let source = launch::with_notice(source, notice);
    Ok(match &rec.record {
        Some(path) => launch::record_to(source, path, record_options(&rec.caps, g))?,
        None => source,
    })
}

/// The kubelet's socket to ask for pods, when `--kubernetes` (auto: the socket is there, or
/// the Kubernetes service environment says gpumeter runs in a pod) names them.
pub(crate) fn pods_socket(k: &cli::KubeArgs) -> Option<std::path::PathBuf> {
    k.socket(std::env::var_os("KUBERNETES_SERVICE_HOST").is_some())
}

pub(crate) fn record_options(
    caps: &cli::RecordCaps,
    g: &SourceArgs,
) -> gpumeter_core::recording::RecordOptions {
    gpumeter_core::recording::RecordOptions {
        max_size: caps.max_size,
        max_files: caps.max_files,
        interval_ms: millis(g.interval()),
    }
}

/// `--record` given with the subcommand, else before it.
pub(crate) fn recording_of<'a>(cli: &'a Cli, own: &'a cli::RecordArgs) -> &'a cli::RecordArgs {
    if own.record.is_some() {
        own
    } else {
        &cli.recording
    }
}

pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The settings for `options`, their notes (a config file not found, a layer applied) said on
/// stderr: every metering command starts this way.
/// The longest `--start` into a demo: each interval before it is a reading played at once.
const MAX_DEMO_START_MS: i64 = 24 * 3_600_000;

/// How far into its scenario a demo starts (`--demo NAME --start 6m`), if asked; `--start`
/// without a recording or a demo, or a time of day for a demo, is a bad argument.
fn demo_start(start: Option<StartAt>, g: &SourceArgs) -> Result<Option<i64>, LaunchError> {
    let usage = |m: &str| Err(LaunchError::Usage(m.to_string()));
    match (start, &g.demo, &g.replay) {
        (None, ..) | (_, _, Some(_)) => Ok(None),
        (Some(_), None, None) => usage(
            "--start needs --replay FILE or --demo NAME: it says where in the recording or the \
             scenario to begin",
        ),
        (Some(StartAt::Clock(_)), Some(_), None) => {
            usage("with --demo, --start is a duration (90s, 6m): a scenario has no time of day")
        }
        (Some(StartAt::After(ms)), Some(_), None) if ms > MAX_DEMO_START_MS => {
            usage("with --demo, --start must be at most 24h")
        }
        (Some(StartAt::After(ms)), Some(_), None) => Ok(Some(ms)),
    }
}

/// The dashboard's own reading of the config: its theme and its keys. `config check` runs this
/// too, so a file it calls valid never stops the dashboard. A bad theme is an error even under
/// NO_COLOR: it would bite the next run.
pub(crate) fn dashboard_looks(
    settings: &config::Settings,
) -> anyhow::Result<(ui::theme::Theme, ui::keys::KeyMap)> {
    let themes = config::Env::from_process().user_themes_dir();
    let theme = ui::theme::file::load(
        &settings.theme.name,
        &settings.theme.origin,
        themes.as_deref(),
    )?;
    let keys = ui::keys::KeyMap::from_settings(&settings.keys)?;
    Ok((theme, keys))
}

pub(crate) fn load_settings(options: &config::LoadOptions) -> anyhow::Result<config::Settings> {
    let settings = config::load(options)?;
    for n in &settings.notes {
        eprintln!("gpumeter: {n}");
    }
    Ok(settings)
}

/// The check's options from the command line: options given before the subcommand count too
/// (`gpumeter --demo idle check`). The check reads the config for pricing only; it never
/// touches the ledger.
fn check_options(cli: &Cli, args: &cli::CheckArgs) -> gpumeter::check::run::CheckOptions {
    let files = cli::ConfigArgs {
        config: args.config.clone().or_else(|| cli.files.config.clone()),
        ledger: None,
        no_ledger: true,
    };
    let pricing = args.pricing.or(&cli.pricing);
    gpumeter::check::run::CheckOptions {
        expect: args.expect.clone(),
        python: args.python.clone(),
        data: args.data.clone(),
        json: args.json,
        demo: args.demo.clone().or_else(|| cli.source.demo.clone()),
        nvml_lib: args
            .nvml_lib
            .clone()
            .or_else(|| cli.source.nvml_lib.clone()),
        config: cli::load_options(&files, &pricing, None, None, false),
        rate_given: pricing.rate.is_some(),
    }
}
