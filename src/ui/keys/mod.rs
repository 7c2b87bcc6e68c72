//! The dashboard's key map: one table ([`BINDINGS`]) of every action a key can do, its name in
//! the config file's `[keys]` section, its default keys and the words the help and the footer
//! show. [`KeyMap`] is that table with the user's `[keys]` applied, checked so no key does two
//! things — save that a live-only action (tagging) may share a key with a replay action, the
//! replay's while a recording plays (Space: tag, pause). Ctrl-C always quits and is not in the table; the filter input and the overlays
//! take their own keys (typing, Esc). Pure: no terminal, no config file reading.

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key can ask the dashboard to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyAction {
    Quit,
    Help,
    Up,
    Down,
    PageUp,
    PageDown,
    First,
    Last,
    NextGpu,
    PrevGpu,
    Filter,
    UserFilter,
    Sort,
    SortMenu,
    SortCpu,
    SortMemory,
    SortTime,
    SortPid,
    SortPod,
    Reverse,
    Tree,
    Expand,
    Collapse,
    FullCommand,
    Tag,
    UntagAll,
    SignalTerm,
    SignalInt,
    SignalKill,
    Renice,
    ReniceHigher,
    NextAlert,
    PrevAlert,
    AlertDetail,
    Acknowledge,
    Snooze,
    History,
    WiderWindow,
    NarrowerWindow,
    ChartSeries,
    Pause,
    Faster,
    Slower,
    StepForward,
    StepBack,
    SeekBack,
    SeekForward,
    ReplayStart,
    ReplayEnd,
}

/// Which part of the screen an action belongs to (the help groups by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    General,
    Processes,
    Alerts,
    Charts,
    Replay,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub action: KeyAction,
    /// The name in `[keys]` (`quit = "q"`).
    pub name: &'static str,
    /// The default keys, in [`parse_key`]'s spelling.
    pub keys: &'static [&'static str],
    /// What the help says it does.
    pub help: &'static str,
    /// The footer's word for it, when it is worth a place there.
    pub hint: Option<&'static str>,
    pub group: Group,
}

const fn b(
    action: KeyAction,
    name: &'static str,
    keys: &'static [&'static str],
    help: &'static str,
    hint: Option<&'static str>,
    group: Group,
) -> Binding {
    Binding {
        action,
        name,
        keys,
        help,
        hint,
        group,
    }
}

use Group::{Alerts, Charts, General, Processes, Replay};
use KeyAction as A;

/// Every action and its default keys, in the order the help lists them.
#[rustfmt::skip]
pub const BINDINGS: &[Binding] = &[
    b(A::Quit, "quit", &["q", "F10"], "quit (Ctrl-C always quits)", Some("quit"), General),
    b(A::Help, "help", &["?", "F1"], "this help (↑ ↓ scroll it, any other key closes)", Some("help"), General),
    b(A::Up, "up", &["Up", "k"], "move the process selection up", None, Processes),
    b(A::Down, "down", &["Down", "j"], "move the process selection down", Some("select"), Processes),
    b(A::PageUp, "page_up", &["PgUp"], "a page up", None, Processes),
    b(A::PageDown, "page_down", &["PgDn"], "a page down", None, Processes),
    b(A::First, "first", &["Home", "g"], "first process", None, Processes),
    b(A::Last, "last", &["End", "G"], "last process", None, Processes),
    b(A::NextGpu, "next_gpu", &["Tab"], "one GPU's processes: All → GPU0 → …", Some("GPU"), Processes),
    b(A::PrevGpu, "prev_gpu", &["Shift-Tab"], "the GPU before", None, Processes),
    b(A::Filter, "filter", &["/", "F3", "F4"], "filter (type, Enter keeps, Esc clears)", Some("filter"), Processes),
    b(A::UserFilter, "user_filter", &["u"], "one user's processes (pick; Enter applies, Esc clears)", None, Processes),
    b(A::Sort, "sort", &["s"], "next sort column (or click a column header)", Some("sort"), Processes),
    b(A::SortMenu, "sort_menu", &["F6"], "sort menu: pick any column (↑ ↓, Enter sorts)", None, Processes),
    b(A::SortCpu, "sort_cpu", &["P"], "sort by CPU%", None, Processes),
    b(A::SortMemory, "sort_memory", &["M"], "sort by GPU memory (VRAM)", None, Processes),
    b(A::SortTime, "sort_time", &["T"], "sort by run time", None, Processes),
    b(A::SortPid, "sort_pid", &["N"], "sort by PID", None, Processes),
    b(A::SortPod, "sort_pod", &["O"], "sort by Kubernetes pod", None, Processes),
    b(A::Reverse, "reverse", &["S", "I"], "reverse the sort", Some("reverse"), Processes),
    b(A::Tree, "tree", &["t", "F5"], "tree view: workers under their trainer", Some("tree"), Processes),
    b(A::Expand, "expand", &["+", "="], "tree: unfold the selected process's subtree", None, Processes),
    b(A::Collapse, "collapse", &["-"], "tree: fold the selected process's subtree", None, Processes),
    b(A::FullCommand, "full_command", &["e"], "full command lines on / off", None, Processes),
    b(A::Tag, "tag", &["Space"], "tag or untag the selected process (signals then reach all tagged)", None, Processes),
    b(A::UntagAll, "untag_all", &["U"], "untag every process", None, Processes),
    b(A::SignalTerm, "signal_term", &["F9"], "send TERM to the selected (or the tagged) processes (asks first; w: its job)", None, Processes),
    b(A::SignalInt, "signal_int", &["i"], "send INT to the selected (or the tagged) processes (asks first)", None, Processes),
    b(A::SignalKill, "signal_kill", &["K"], "send KILL to the selected (or the tagged) processes (asks first)", None, Processes),
    b(A::Renice, "renice", &["r", "F8"], "renice the selected or the tagged (+ - pick the value)", None, Processes),
    b(A::ReniceHigher, "renice_higher", &["F7"], "renice, starting one step less nice (root only below its value)", None, Processes),
    b(A::NextAlert, "next_alert", &["n"], "select the next alert", None, Alerts),
    b(A::PrevAlert, "prev_alert", &["p"], "select the alert before", None, Alerts),
    b(A::AlertDetail, "alert_detail", &["Enter"], "details: the alert (after n p) or the process (after ↑ ↓)", Some("alert details"), Alerts),
    b(A::Acknowledge, "acknowledge", &["a"], "acknowledge the selected alert (it stays in the history)", None, Alerts),
    b(A::Snooze, "snooze", &["z"], "snooze the selected alert for 1 h", None, Alerts),
    b(A::History, "history", &["H"], "alert history (Enter: an entry's details)", Some("alert history"), Alerts),
    b(A::WiderWindow, "wider_window", &[")"], "charts: a longer window (1 m … 24 h)", None, Charts),
    b(A::NarrowerWindow, "narrower_window", &["("], "charts: a shorter window", None, Charts),
    b(A::ChartSeries, "chart_series", &["c"], "charts: next series (util, SM activity, VRAM, power)", None, Charts),
    b(A::Pause, "pause", &["Space"], "replay: pause / play", Some("pause"), Replay),
    b(A::Faster, "faster", &[">"], "replay: faster (1× 2× 4× … 60×)", Some("speed"), Replay),
    b(A::Slower, "slower", &["<"], "replay: slower", Some("slower"), Replay),
    b(A::StepForward, "step_forward", &[".", "Right"], "replay: pause, one reading on", Some("step"), Replay),
    b(A::StepBack, "step_back", &[",", "Left"], "replay: pause, one reading back", None, Replay),
    b(A::SeekBack, "seek_back", &["["], "replay: 1 minute back", Some("±1 min"), Replay),
    b(A::SeekForward, "seek_forward", &["]"], "replay: 1 minute on", None, Replay),
    b(A::ReplayStart, "replay_start", &["{"], "replay: the start of the recording", None, Replay),
    b(A::ReplayEnd, "replay_end", &["}"], "replay: the end of the recording", None, Replay),
];

/// A key as the map compares them: a code and its Ctrl/Alt modifiers (Shift is in the
/// character itself: `G`, `>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    code: KeyCodeOrd,
    ctrl: bool,
    alt: bool,
}

/// The parts of `KeyCode` gpumeter binds, in an ordered form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum KeyCodeOrd {
    Char(char),
    F(u8),
    Named(Named),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Named {
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Home,
    End,
    Tab,
    BackTab,
    Enter,
    Backspace,
    Delete,
    Insert,
}

/// Spellings of the named keys in `[keys]`, and how the help shows them.
const NAMES: &[(&str, Named, &str)] = &[
    ("Up", Named::Up, "↑"),
    ("Down", Named::Down, "↓"),
    ("Left", Named::Left, "←"),
    ("Right", Named::Right, "→"),
    ("PgUp", Named::PageUp, "PgUp"),
    ("PgDn", Named::PageDown, "PgDn"),
    ("PageUp", Named::PageUp, "PgUp"),
    ("PageDown", Named::PageDown, "PgDn"),
    ("Home", Named::Home, "Home"),
    ("End", Named::End, "End"),
    ("Tab", Named::Tab, "Tab"),
    ("Shift-Tab", Named::BackTab, "Shift-Tab"),
    ("BackTab", Named::BackTab, "Shift-Tab"),
    ("Enter", Named::Enter, "Enter"),
    ("Backspace", Named::Backspace, "Backspace"),
    ("Delete", Named::Delete, "Del"),
    ("Insert", Named::Insert, "Ins"),
];

impl Key {
    /// The key of a terminal event (`None`: one gpumeter never binds, like Esc).
    pub fn of(ev: &KeyEvent) -> Option<Key> {
        let code = match ev.code {
            KeyCode::Char(c) => KeyCodeOrd::Char(c),
            KeyCode::F(n) => KeyCodeOrd::F(n),
            KeyCode::Up => KeyCodeOrd::Named(Named::Up),
            KeyCode::Down => KeyCodeOrd::Named(Named::Down),
            KeyCode::Left => KeyCodeOrd::Named(Named::Left),
            KeyCode::Right => KeyCodeOrd::Named(Named::Right),
            KeyCode::PageUp => KeyCodeOrd::Named(Named::PageUp),
            KeyCode::PageDown => KeyCodeOrd::Named(Named::PageDown),
            KeyCode::Home => KeyCodeOrd::Named(Named::Home),
            KeyCode::End => KeyCodeOrd::Named(Named::End),
            KeyCode::Tab => KeyCodeOrd::Named(Named::Tab),
            KeyCode::BackTab => KeyCodeOrd::Named(Named::BackTab),
            KeyCode::Enter => KeyCodeOrd::Named(Named::Enter),
            KeyCode::Backspace => KeyCodeOrd::Named(Named::Backspace),
            KeyCode::Delete => KeyCodeOrd::Named(Named::Delete),
            KeyCode::Insert => KeyCodeOrd::Named(Named::Insert),
            _ => return None,
        };
        Some(Key {
            code,
            ctrl: ev.modifiers.contains(KeyModifiers::CONTROL),
            alt: ev.modifiers.contains(KeyModifiers::ALT),
        })
    }

    /// How the help and the footer show it: `q`, `↑`, `Ctrl-r`, `Space`.
    pub fn label(&self) -> String {
        let base = match self.code {
            KeyCodeOrd::Char(' ') => "Space".to_string(),
            KeyCodeOrd::Char(c) => c.to_string(),
            KeyCodeOrd::F(n) => format!("F{n}"),
            KeyCodeOrd::Named(n) => NAMES
                .iter()
                .find(|(_, m, _)| *m == n)
                .map_or_else(String::new, |(_, _, shown)| (*shown).to_string()),
        };
        let mut out = String::new();
        if self.ctrl {
            out.push_str("Ctrl-");
        }
        if self.alt {
            out.push_str("Alt-");
        }
        out.push_str(&base);
        out
    }
}

/// Reads a key as `[keys]` spells it: one character (`q`, `G`, `>`), `Space`, a named key
/// (`Up`, `PgDn`, `Home`, `Enter`, `Tab`, `Shift-Tab`, …), `F1`…`F12`, each optionally after
/// `Ctrl-` or `Alt-`. Esc and Ctrl-C are not bindable (they close and quit).
pub fn parse_key(text: &str) -> Result<Key, String> {
    let mut rest = text;
    let (mut ctrl, mut alt) = (false, false);
    loop {
        if let Some(r) = rest
            .strip_prefix("Ctrl-")
            .or_else(|| rest.strip_prefix("ctrl-"))
        {
            ctrl = true;
            rest = r;
        } else if let Some(r) = rest
            .strip_prefix("Alt-")
            .or_else(|| rest.strip_prefix("alt-"))
        {
            alt = true;
            rest = r;
        } else {
            break;
        }
    }
    let mut chars = rest.chars();
    let code = match (chars.next(), chars.next()) {
        (Some(c), None) if !c.is_control() => KeyCodeOrd::Char(c),
        _ if rest.eq_ignore_ascii_case("space") => KeyCodeOrd::Char(' '),
        _ if rest.eq_ignore_ascii_case("esc") || rest.eq_ignore_ascii_case("escape") => {
            return Err(format!("`{text}`: Esc closes overlays and cannot be bound"));
        }
        _ => {
            if let Some(n) = rest
                .strip_prefix('F')
                .and_then(|n| n.parse::<u8>().ok())
                .filter(|n| (1..=12).contains(n))
            {
                KeyCodeOrd::F(n)
            } else if let Some((_, n, _)) = NAMES
                .iter()
                .find(|(name, _, _)| name.eq_ignore_ascii_case(rest))
            {
                KeyCodeOrd::Named(*n)
            } else {
                return Err(format!(
                    "`{text}` is not a key (a character, Space, Up, Down, Left, Right, PgUp, \
                     PgDn, Home, End, Tab, Shift-Tab, Enter, F1…F12, optionally after Ctrl- or Alt-)"
                ));
            }
        }
    };
    if ctrl && matches!(code, KeyCodeOrd::Char('c' | 'C')) {
        return Err(format!("`{text}`: Ctrl-C always quits and cannot be bound"));
    }
    Ok(Key { code, ctrl, alt })
}

/// Why a `[keys]` section cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeysError {
    #[error("[keys]: unknown action `{0}` (the actions: {1})")]
    UnknownAction(String, String),
    #[error("[keys] {action}: {why}")]
    BadKey { action: String, why: String },
    #[error(
        "[keys]: `{key}` is bound to both `{first}` and `{second}`; give one of them another key"
    )]
    Clash {
        key: String,
        first: &'static str,
        second: &'static str,
    },
    #[error("[keys] {0}: no key given (every action needs at least one)")]
    Empty(String),
}

impl KeysError {
    /// The action the problem is with (for a clash, the one bound second).
    fn actions(&self) -> [&str; 2] {
        match self {
            KeysError::UnknownAction(a, _) | KeysError::Empty(a) => [a, a],
            KeysError::BadKey { action, .. } => [action, action],
            KeysError::Clash { first, second, .. } => [second, first],
        }
    }
}

/// A `[keys]` problem and where in the config files it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{error}", origin.as_ref().map(|o| format!("{o}: ")).unwrap_or_default())]
pub struct PlacedKeysError {
    pub origin: Option<gpumeter_core::config::Origin>,
    pub error: KeysError,
}

/// The table with the user's keys applied. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyMap {
    by_key: BTreeMap<Key, KeyAction>,
    /// Keys of the actions that only mean something live ([`live_only`]): such a key may also
    /// be a replay key, and which one it is follows whether a recording plays.
    live_by_key: BTreeMap<Key, KeyAction>,
    /// Each action's keys, in the order given.
    keys: BTreeMap<KeyAction, Vec<Key>>,
}

impl Default for KeyMap {
    fn default() -> Self {
        // The built-in table is checked by a test; no user input can make this fail.
        KeyMap::with(&BTreeMap::new()).unwrap_or_else(|_| KeyMap {
            by_key: BTreeMap::new(),
            live_by_key: BTreeMap::new(),
            keys: BTreeMap::new(),
        })
    }
}

impl KeyMap {
    /// The defaults with `custom` (action name → its keys) in place of theirs; a key bound
    /// to two actions is an error naming both.
    pub fn with(custom: &BTreeMap<String, Vec<String>>) -> Result<KeyMap, KeysError> {
        for name in custom.keys() {
            if !BINDINGS.iter().any(|b| b.name == name) {
                let names: Vec<&str> = BINDINGS.iter().map(|b| b.name).collect();
                return Err(KeysError::UnknownAction(name.clone(), names.join(", ")));
            }
        }
        let mut by_key: BTreeMap<Key, KeyAction> = BTreeMap::new();
        let mut live_by_key: BTreeMap<Key, KeyAction> = BTreeMap::new();
        let mut keys: BTreeMap<KeyAction, Vec<Key>> = BTreeMap::new();
        for bind in BINDINGS {
            let texts: Vec<&str> = match custom.get(bind.name) {
                Some(list) => list.iter().map(String::as_str).collect(),
                None => bind.keys.to_vec(),
            };
            if texts.is_empty() {
                return Err(KeysError::Empty(bind.name.to_string()));
            }
            for text in texts {
                let key = parse_key(text).map_err(|why| KeysError::BadKey {
                    action: bind.name.to_string(),
                    why,
                })?;
                let live = live_only(bind.action);
                let (own, other_map) = if live {
                    (&mut live_by_key, &by_key)
                } else {
                    (&mut by_key, &live_by_key)
                };
                // A live-only action may share its key with a replay key, nothing else.
                let shared = |other: KeyAction| {
                    let replay = |a: KeyAction| group_of(a) == Some(Group::Replay);
                    if live {
                        replay(other)
                    } else {
                        replay(bind.action)
                    }
                };
                let clash = match (own.get(&key).copied(), other_map.get(&key).copied()) {
                    (Some(other), _) if other == bind.action => continue,
                    (Some(other), _) => Some(other),
                    (None, Some(other)) if !shared(other) => Some(other),
                    _ => None,
                };
                if let Some(other) = clash {
                    return Err(KeysError::Clash {
                        key: key.label(),
                        first: name_of(other),
                        second: bind.name,
                    });
                }
                own.insert(key, bind.action);
                keys.entry(bind.action).or_default().push(key);
            }
        }
        Ok(KeyMap {
            by_key,
            live_by_key,
            keys,
        })
    }

    /// The key map for the config files' `[keys]`; an error names the file and line.
    pub fn from_settings(
        k: &gpumeter_core::config::KeySettings,
    ) -> Result<KeyMap, PlacedKeysError> {
        KeyMap::with(&k.bindings).map_err(|error| PlacedKeysError {
            origin: error
                .actions()
                .iter()
                .find_map(|a| k.origins.get(*a))
                .cloned(),
            error,
        })
    }

    /// The action `ev` is bound to; `replay`: a recording plays, so a key shared by a
    /// live-only action and a replay action (Space: tag, pause) is the replay's.
    pub fn action(&self, ev: &KeyEvent, replay: bool) -> Option<KeyAction> {
        let key = Key::of(ev)?;
        let (first, then) = if replay {
            (&self.by_key, &self.live_by_key)
        } else {
            (&self.live_by_key, &self.by_key)
        };
        first.get(&key).or_else(|| then.get(&key)).copied()
    }

    /// The keys of `action` as the help shows them (`↑ k`).
    pub fn label(&self, action: KeyAction) -> String {
        self.keys
            .get(&action)
            .map(|ks| ks.iter().map(Key::label).collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    }

    /// The first key of `action`, as the footer shows it.
    pub fn first_label(&self, action: KeyAction) -> String {
        self.keys
            .get(&action)
            .and_then(|ks| ks.first())
            .map(Key::label)
            .unwrap_or_default()
    }
}

/// Whether `action` only means something for this machine's live processes (tagging), so
/// its key may double as a replay key.
fn live_only(action: KeyAction) -> bool {
    matches!(action, KeyAction::Tag | KeyAction::UntagAll)
}

fn group_of(action: KeyAction) -> Option<Group> {
    BINDINGS
        .iter()
        .find(|b| b.action == action)
        .map(|b| b.group)
}

/// The `[keys]` name of an action.
pub fn name_of(action: KeyAction) -> &'static str {
    BINDINGS
        .iter()
        .find(|b| b.action == action)
        .map_or("", |b| b.name)
}

#[cfg(test)]
mod tests;
