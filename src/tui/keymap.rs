//! The keymap as data: one table of (keys, action, description, context)
//! rows. Key dispatch, the `?` help popup and the status-bar hints are all
//! generated from it, so they cannot drift apart. Config overrides replace
//! the keys of an action by name.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::BTreeMap;
use std::fmt;

/// Where a binding applies. `Global` rows apply everywhere except while the
/// question input or the filter captures text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Global,
    Replay,
    Step,
    Popup,
    /// A live run is going (or waits at a step gate).
    Running,
    /// A yes/no question is open.
    Confirm,
    /// The question input has the focus: keys type, except these.
    Typing,
    /// The runs filter is being typed.
    Filtering,
    /// The Timeline tab has the focus: the arrows move in time.
    Timeline,
}

impl Context {
    /// Contexts in which keys type text.
    pub fn is_text(self) -> bool {
        matches!(self, Context::Typing | Context::Filtering)
    }

    /// Whether keys of both contexts can be looked up at the same time. A
    /// yes/no question and the text inputs take their own keys only; the
    /// other contexts stack on `Global`.
    pub fn active_with(self, other: Context) -> bool {
        let alone =
            |c: Context| matches!(c, Context::Confirm | Context::Typing | Context::Filtering);
        self == other || !alone(self) && !alone(other)
    }

    pub fn label(self) -> &'static str {
        match self {
            Context::Global => "all",
            Context::Replay => "replay",
            Context::Step => "step/demo",
            Context::Popup => "popup",
            Context::Running => "live run",
            Context::Confirm => "question",
            Context::Typing => "typing",
            Context::Filtering => "filter",
            Context::Timeline => "timeline",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    Quit,
    Help,
    NextPane,
    PrevPane,
    Down,
    Up,
    Top,
    Bottom,
    PageDown,
    PageUp,
    Open,
    Close,
    Filter,
    FocusInput,
    ToggleStep,
    StepNext,
    StepContinue,
    ReplayNext,
    ReplayPrev,
    ReplayNextNode,
    ReplayPrevNode,
    Demo,
    Cancel,
    Confirm,
    Deny,
    Zoom,
    Submit,
    HistoryPrev,
    HistoryNext,
    Copy,
    Compare,
    TimeEarlier,
    TimeLater,
    TimeZoomIn,
    TimeZoomOut,
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Help => "help",
            Action::NextPane => "next_pane",
            Action::PrevPane => "prev_pane",
            Action::Down => "down",
            Action::Up => "up",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::PageDown => "page_down",
            Action::PageUp => "page_up",
            Action::Open => "open",
            Action::Close => "close",
            Action::Filter => "filter",
            Action::FocusInput => "focus_input",
            Action::ToggleStep => "toggle_step",
            Action::StepNext => "step",
            Action::StepContinue => "continue",
            Action::ReplayNext => "replay_next",
            Action::ReplayPrev => "replay_prev",
            Action::ReplayNextNode => "replay_next_node",
            Action::ReplayPrevNode => "replay_prev_node",
            Action::Demo => "demo",
            Action::Cancel => "cancel",
            Action::Confirm => "confirm",
            Action::Deny => "deny",
            Action::Zoom => "zoom",
            Action::Submit => "submit",
            Action::HistoryPrev => "history_prev",
            Action::HistoryNext => "history_next",
            Action::Copy => "copy",
            Action::Compare => "compare",
            Action::TimeEarlier => "time_earlier",
            Action::TimeLater => "time_later",
            Action::TimeZoomIn => "time_zoom_in",
            Action::TimeZoomOut => "time_zoom_out",
        }
    }
}

/// A key as the user writes it in config: `q`, `ctrl-c`, `shift-tab`,
/// `left`, `space`, `enter`, `?`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeySpec {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown key {0:?} (try e.g. q, ctrl-c, shift-tab, left, space, f1)")]
pub struct KeyParseError(pub String);

impl KeySpec {
    pub fn parse(spec: &str) -> Result<KeySpec, KeyParseError> {
        let err = || KeyParseError(spec.to_string());
        let spec = spec.trim();
        let (mods_part, key) = match spec.rsplit_once('-') {
            Some((m, k)) if !k.is_empty() => (m, k),
            _ => ("", spec),
        };
        let mut mods = KeyModifiers::NONE;
        for m in mods_part.split('-').filter(|m| !m.is_empty()) {
            mods |= match m.to_ascii_lowercase().as_str() {
                "ctrl" | "c" => KeyModifiers::CONTROL,
                "alt" | "a" | "m" => KeyModifiers::ALT,
                "shift" | "s" => KeyModifiers::SHIFT,
                _ => return Err(err()),
            };
        }
        let lower = key.to_ascii_lowercase();
        let code = match lower.as_str() {
            "tab" if mods.contains(KeyModifiers::SHIFT) => {
                mods.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            "backtab" => KeyCode::BackTab,
            "tab" => KeyCode::Tab,
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "space" => KeyCode::Char(' '),
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pageup" => KeyCode::PageUp,
            "pagedown" => KeyCode::PageDown,
            "backspace" => KeyCode::Backspace,
            f if f.len() > 1 && f.starts_with('f') => {
                KeyCode::F(f[1..].parse().map_err(|_| err())?)
            }
            _ => {
                let mut chars = key.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => KeyCode::Char(c),
                    _ => return Err(err()),
                }
            }
        };
        Ok(KeySpec { code, mods })
    }

    /// A key that types a character when text is edited.
    pub fn types(&self) -> bool {
        matches!(self.code, KeyCode::Char(_)) && (self.mods - KeyModifiers::SHIFT).is_empty()
    }

    /// Whether a terminal key event is this key. Shift is implied by an
    /// upper-case or symbol character, so it is ignored for `Char` keys.
    pub fn matches(&self, ev: &KeyEvent) -> bool {
        let strip = |m: KeyModifiers| match ev.code {
            KeyCode::Char(_) | KeyCode::BackTab => m - KeyModifiers::SHIFT,
            _ => m,
        };
        self.code == ev.code && strip(self.mods) == strip(ev.modifiers)
    }
}

impl fmt::Display for KeySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("ctrl-")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("alt-")?;
        }
        if self.mods.contains(KeyModifiers::SHIFT) && !matches!(self.code, KeyCode::Char(_)) {
            f.write_str("shift-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::BackTab => f.write_str("shift-tab"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::F(n) => write!(f, "f{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub keys: Vec<KeySpec>,
    pub action: Action,
    pub description: &'static str,
    pub context: Context,
    /// Shown in the status bar when its context is active.
    pub hint: bool,
}

/// The default table: (keys, action, description, context, status hint).
/// While text is typed (`Typing`, `Filtering`) only that context's rows
/// apply, so a plain letter always types.
const DEFAULTS: &[(&str, Action, &str, Context, bool)] = &[
    ("q ctrl-c", Action::Quit, "quit", Context::Global, true),
    ("?", Action::Help, "help", Context::Global, true),
    ("tab", Action::NextPane, "next pane", Context::Global, true),
    (
        "shift-tab",
        Action::PrevPane,
        "previous pane",
        Context::Global,
        false,
    ),
    (
        "j down",
        Action::Down,
        "move down / scroll",
        Context::Global,
        false,
    ),
    (
        "k up",
        Action::Up,
        "move up / scroll",
        Context::Global,
        false,
    ),
    ("g home", Action::Top, "first row", Context::Global, false),
    ("G end", Action::Bottom, "last row", Context::Global, false),
    (
        "pagedown ctrl-d",
        Action::PageDown,
        "a page down",
        Context::Global,
        false,
    ),
    (
        "pageup ctrl-u",
        Action::PageUp,
        "a page up",
        Context::Global,
        false,
    ),
    (
        "enter",
        Action::Open,
        "open detail / replay run",
        Context::Global,
        true,
    ),
    (
        "esc",
        Action::Close,
        "close popup / leave input",
        Context::Popup,
        false,
    ),
    ("/", Action::Filter, "filter runs", Context::Global, false),
    (
        "y",
        Action::Copy,
        "copy popup, answer or run (Markdown)",
        Context::Global,
        false,
    ),
    (
        "m",
        Action::Compare,
        "mark a run; m on another compares",
        Context::Global,
        false,
    ),
    (
        "z",
        Action::Zoom,
        "zoom the pane / unzoom",
        Context::Global,
        false,
    ),
    (
        "i",
        Action::FocusInput,
        "ask a question",
        Context::Global,
        true,
    ),
    (
        "s ctrl-s",
        Action::ToggleStep,
        "step mode for the next question",
        Context::Global,
        false,
    ),
    (
        "d",
        Action::Demo,
        "pick a demo scenario",
        Context::Global,
        false,
    ),
    (
        "x",
        Action::Cancel,
        "cancel the run",
        Context::Running,
        true,
    ),
    ("y", Action::Confirm, "yes", Context::Confirm, true),
    ("n esc", Action::Deny, "no", Context::Confirm, true),
    (
        "space",
        Action::StepNext,
        "run the next node",
        Context::Step,
        true,
    ),
    (
        "c",
        Action::StepContinue,
        "continue to the end",
        Context::Step,
        true,
    ),
    (
        "n right",
        Action::ReplayNext,
        "next event",
        Context::Replay,
        true,
    ),
    (
        "p left",
        Action::ReplayPrev,
        "previous event",
        Context::Replay,
        true,
    ),
    (
        "N shift-right",
        Action::ReplayNextNode,
        "next node",
        Context::Replay,
        true,
    ),
    (
        "P shift-left",
        Action::ReplayPrevNode,
        "previous node",
        Context::Replay,
        true,
    ),
    (
        "left h",
        Action::TimeEarlier,
        "cursor earlier",
        Context::Timeline,
        true,
    ),
    (
        "right l",
        Action::TimeLater,
        "cursor later",
        Context::Timeline,
        true,
    ),
    (
        "+ =",
        Action::TimeZoomIn,
        "zoom in on time",
        Context::Timeline,
        true,
    ),
    (
        "-",
        Action::TimeZoomOut,
        "zoom out in time",
        Context::Timeline,
        true,
    ),
    ("enter", Action::Submit, "ask", Context::Typing, true),
    ("ctrl-c", Action::Quit, "quit", Context::Typing, true),
    ("esc", Action::Close, "leave input", Context::Typing, true),
    (
        "ctrl-s",
        Action::ToggleStep,
        "step mode",
        Context::Typing,
        true,
    ),
    (
        "up",
        Action::HistoryPrev,
        "earlier question",
        Context::Typing,
        false,
    ),
    (
        "down",
        Action::HistoryNext,
        "later question",
        Context::Typing,
        false,
    ),
    ("tab", Action::NextPane, "next pane", Context::Typing, true),
    (
        "shift-tab",
        Action::PrevPane,
        "previous pane",
        Context::Typing,
        false,
    ),
    (
        "enter",
        Action::Submit,
        "keep filter",
        Context::Filtering,
        true,
    ),
    ("ctrl-c", Action::Quit, "quit", Context::Filtering, true),
    (
        "esc",
        Action::Close,
        "clear filter",
        Context::Filtering,
        true,
    ),
];

#[derive(Debug, Clone, PartialEq)]
pub struct Keymap {
    pub bindings: Vec<Binding>,
}

impl Default for Keymap {
    fn default() -> Self {
        let bindings = DEFAULTS
            .iter()
            .map(|(keys, action, description, context, hint)| Binding {
                keys: keys
                    .split_whitespace()
                    .filter_map(|k| KeySpec::parse(k).ok())
                    .collect(),
                action: *action,
                description,
                context: *context,
                hint: *hint,
            })
            .collect();
        Keymap { bindings }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeymapError {
    #[error("unknown action {0:?} in key overrides")]
    UnknownAction(String),
    #[error("action {action}: {source}")]
    BadKey {
        action: String,
        source: KeyParseError,
    },
    #[error(
        "key {key} would both {first} and {second} ({context} keys); bind one of them to another key"
    )]
    Clash {
        key: String,
        first: &'static str,
        second: &'static str,
        context: &'static str,
    },
}

/// A focused pane's keys take precedence over a mode's on purpose (→
/// moves the timeline's cursor while the timeline has focus): that is no
/// clash while the mode's action keeps a key of its own there (`n` still
/// steps a replay). Global keys are never shadowed.
fn focus_shadows(pane: &Binding, mode: &Binding) -> bool {
    pane.context == Context::Timeline
        && !matches!(mode.context, Context::Timeline | Context::Global)
        && mode.keys.iter().any(|k| !pane.keys.contains(k))
}

impl Keymap {
    /// Applies config overrides: action name -> keys (space or comma
    /// separated). The override replaces that action's keys in every
    /// context; where text is typed, plain characters are left out, since
    /// there they type.
    pub fn with_overrides(overrides: &BTreeMap<String, String>) -> Result<Keymap, KeymapError> {
        let mut map = Keymap::default();
        for (action, spec) in overrides {
            let keys: Vec<KeySpec> = spec
                .split([' ', ','])
                .filter(|k| !k.is_empty())
                .map(KeySpec::parse)
                .collect::<Result<_, _>>()
                .map_err(|source| KeymapError::BadKey {
                    action: action.clone(),
                    source,
                })?;
            let mut found = false;
            for binding in map
                .bindings
                .iter_mut()
                .filter(|b| b.action.name() == action)
            {
                found = true;
                binding.keys = keys
                    .iter()
                    .filter(|k| !binding.context.is_text() || !k.types())
                    .copied()
                    .collect();
            }
            if !found {
                return Err(KeymapError::UnknownAction(action.clone()));
            }
        }
        map.check_clashes()?;
        Ok(map)
    }

    /// Refuses a key that two actions would answer to at the same time:
    /// one of them could never be reached with it (`quit = "x"` would
    /// shadow cancel while a run is live, or be shadowed by it).
    fn check_clashes(&self) -> Result<(), KeymapError> {
        for (i, a) in self.bindings.iter().enumerate() {
            for b in &self.bindings[i + 1..] {
                if a.action == b.action || !a.context.active_with(b.context) {
                    continue;
                }
                if focus_shadows(a, b) || focus_shadows(b, a) {
                    continue;
                }
                if let Some(key) = a.keys.iter().find(|k| b.keys.contains(k)) {
                    return Err(KeymapError::Clash {
                        key: key.to_string(),
                        first: a.action.name(),
                        second: b.action.name(),
                        context: if a.context == b.context {
                            a.context.label()
                        } else {
                            b.context.label()
                        },
                    });
                }
            }
        }
        Ok(())
    }

    /// The action bound to a key in the active contexts, if any. Earlier
    /// contexts in `active` win.
    pub fn lookup(&self, key: &KeyEvent, active: &[Context]) -> Option<Action> {
        active.iter().find_map(|ctx| {
            self.bindings
                .iter()
                .find(|b| b.context == *ctx && b.keys.iter().any(|k| k.matches(key)))
                .map(|b| b.action)
        })
    }

    /// The first key bound to an action in a context, as written.
    pub fn keys_of(&self, action: Action, context: Context) -> Option<String> {
        self.bindings
            .iter()
            .find(|b| b.action == action && b.context == context)
            .and_then(|b| b.keys.first())
            .map(ToString::to_string)
    }

    /// Status-bar hints for the active contexts, `(keys, description)`, in
    /// the order of `active` so the mode's own keys come first.
    pub fn hints(&self, active: &[Context]) -> Vec<(String, &'static str)> {
        active
            .iter()
            .flat_map(|ctx| {
                self.bindings
                    .iter()
                    .filter(move |b| b.hint && b.context == *ctx && !b.keys.is_empty())
            })
            .map(|b| (b.keys[0].to_string(), b.description))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn every_default_key_parses() {
        for (keys, action, ..) in DEFAULTS {
            for k in keys.split_whitespace() {
                assert!(KeySpec::parse(k).is_ok(), "{k} for {action:?}");
            }
        }
    }

    #[test]
    fn lookup_respects_context_and_modifiers() {
        let km = Keymap::default();
        let g = [Context::Global];
        assert_eq!(
            km.lookup(&key(KeyCode::Char('q'), KeyModifiers::NONE), &g),
            Some(Action::Quit)
        );
        assert_eq!(
            km.lookup(&key(KeyCode::Char('c'), KeyModifiers::CONTROL), &g),
            Some(Action::Quit)
        );
        assert_eq!(
            km.lookup(&key(KeyCode::BackTab, KeyModifiers::SHIFT), &g),
            Some(Action::PrevPane)
        );
        assert_eq!(
            km.lookup(&key(KeyCode::Char('G'), KeyModifiers::SHIFT), &g),
            Some(Action::Bottom)
        );
        assert_eq!(
            km.lookup(&key(KeyCode::Char(' '), KeyModifiers::NONE), &g),
            None
        );
        let step = [Context::Step, Context::Global];
        assert_eq!(
            km.lookup(&key(KeyCode::Char(' '), KeyModifiers::NONE), &step),
            Some(Action::StepNext)
        );
        assert_eq!(
            km.lookup(&key(KeyCode::Char('c'), KeyModifiers::NONE), &step),
            Some(Action::StepContinue)
        );
    }

    #[test]
    fn the_defaults_have_no_clash() {
        assert_eq!(Keymap::default().check_clashes(), Ok(()));
    }

    #[test]
    fn an_override_that_clashes_is_refused_naming_both_actions() {
        let mut o = BTreeMap::new();
        o.insert("quit".to_string(), "x, ctrl-q".to_string());
        let err = Keymap::with_overrides(&o).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("key x") && text.contains("quit") && text.contains("cancel"),
            "{text}"
        );
        // A step key shadowed by a pane key while stepping.
        let mut o = BTreeMap::new();
        o.insert("continue".to_string(), "j".to_string());
        let text = Keymap::with_overrides(&o).unwrap_err().to_string();
        assert!(text.contains("continue") && text.contains("down"), "{text}");
        // Keys of contexts never active together do not clash: `y` is
        // yes in a question and copy elsewhere.
        let mut o = BTreeMap::new();
        o.insert("confirm".to_string(), "y, enter".to_string());
        assert!(Keymap::with_overrides(&o).is_ok());
        // The focused timeline may take → from a replay that keeps `n`,
        // not from one left with → alone.
        let mut o = BTreeMap::new();
        o.insert("replay_next".to_string(), "right".to_string());
        let text = Keymap::with_overrides(&o).unwrap_err().to_string();
        assert!(
            text.contains("replay_next") && text.contains("time_later"),
            "{text}"
        );
    }

    #[test]
    fn overrides_replace_keys_and_reject_nonsense() {
        let mut o = BTreeMap::new();
        o.insert("quit".to_string(), "ctrl-x, ctrl-q".to_string());
        let km = Keymap::with_overrides(&o).unwrap();
        let g = [Context::Global];
        assert_eq!(
            km.lookup(&key(KeyCode::Char('x'), KeyModifiers::CONTROL), &g),
            Some(Action::Quit)
        );
        assert_eq!(
            km.lookup(&key(KeyCode::Char('q'), KeyModifiers::CONTROL), &g),
            Some(Action::Quit)
        );
        assert_eq!(
            km.lookup(&key(KeyCode::Char('q'), KeyModifiers::NONE), &g),
            None
        );
        o.insert("fly".to_string(), "f".to_string());
        assert!(Keymap::with_overrides(&o).is_err());
        let mut bad = BTreeMap::new();
        bad.insert("quit".to_string(), "hyper-q".to_string());
        assert!(Keymap::with_overrides(&bad).is_err());
    }
}
