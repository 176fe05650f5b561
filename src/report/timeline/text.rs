//! The timeline as plain text: `diagraph timeline`, the Markdown export
//! and the workbench's tab share these glyphs, the axis and the label
//! column, so every surface draws the same picture. Glyphs carry the
//! meaning without colour; `ascii` uses printable ASCII only.

use super::{AlertState, Axis, Cell, MarkerKind, Timeline, WindowSource, hhmmss};
use crate::text::truncate_width;

/// Sparkline levels 1..=8.
const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
const ASCII_LEVELS: [char; 8] = ['.', ',', '-', '~', '=', '+', '*', '#'];

/// One column's glyph.
pub fn glyph(cell: Cell, ascii: bool) -> char {
    match (cell, ascii) {
        (Cell::Empty, _) => ' ',
        (Cell::Level(l), false) => LEVELS[usize::from(l.clamp(1, 8)) - 1],
        (Cell::Level(l), true) => ASCII_LEVELS[usize::from(l.clamp(1, 8)) - 1],
        (Cell::Start(_), _) => '[',
        (Cell::Bar(AlertState::Firing), false) => '█',
        (Cell::Bar(AlertState::Pending), false) => '▓',
        (Cell::Bar(AlertState::Resolved), false) => '░',
        (Cell::Bar(AlertState::Firing), true) => '#',
        (Cell::Bar(AlertState::Pending), true) => '=',
        (Cell::Bar(AlertState::Resolved), true) => '-',
    }
}

/// What an empty cell in a marker's column shows.
pub fn marker_rule(ascii: bool) -> char {
    if ascii { ':' } else { '┊' }
}

/// Width of the label column for a total width, and the columns left
/// for the time axis.
pub fn split(width: usize) -> (usize, usize) {
    let label = (width * 3 / 10).clamp(12, 44).min(width.saturating_sub(8));
    (label, width.saturating_sub(label + 1).max(1))
}

/// The axis line: a tick and `HH:MM` every dozen columns or so.
pub fn axis(a: &Axis) -> String {
    let cols = a.cols;
    let mut line = vec![' '; cols];
    let every = if cols >= 24 { 12 } else { cols.max(1) };
    let mut c = 0;
    while c + 6 <= cols {
        let (lo, _) = a.column_range(c);
        let label = super::us_time(lo).format("%H:%M").to_string();
        line[c] = '|';
        for (i, ch) in label.chars().enumerate() {
            line[c + 1 + i] = ch;
        }
        c += every;
    }
    line.into_iter().collect()
}

/// The marker line: each marker's letter at its column.
pub fn marker_line(t: &Timeline, a: &Axis) -> String {
    let mut line = vec![' '; a.cols];
    for m in &t.markers {
        if let Some(c) = a.column_of(m.at) {
            line[c] = if line[c] == ' ' { m.kind.letter() } else { '*' };
        }
    }
    line.into_iter().collect()
}

/// The columns markers stand in.
pub fn marker_columns(t: &Timeline, a: &Axis) -> Vec<usize> {
    t.markers.iter().filter_map(|m| a.column_of(m.at)).collect()
}

/// A row's label as the label column shows it: `*` before a cited row.
pub fn row_label(row: &super::Row, width: usize) -> String {
    let mark = if row.cited { '*' } else { ' ' };
    let text = truncate_width(&format!("{mark}{}", row.label), width);
    format!("{text:<width$}")
}

/// The window line: its times, where it came from, a column's width.
pub fn window_line(t: &Timeline, a: &Axis) -> String {
    let from = match t.window {
        WindowSource::Question => "the question's window",
        WindowSource::Alerts => "the alerts' active windows",
        WindowSource::Evidence => "the evidence's times",
    };
    let step = a.span() as f64 / 1e6 / a.cols.max(1) as f64;
    format!(
        "{} .. {} UTC ({from}; 1 column = {})",
        super::us_time(a.start_us).format("%Y-%m-%d %H:%M:%S"),
        super::us_time(a.end_us).format("%Y-%m-%d %H:%M:%S"),
        human_seconds(step)
    )
}

/// The legend: what the markers are, when, and what the glyphs mean.
pub fn legend(t: &Timeline, ascii: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut marks: Vec<String> = t
        .markers
        .iter()
        .map(|m| format!("{} {} {}", m.kind.letter(), m.kind.name(), hhmmss(m.at)))
        .collect();
    if !t.markers.iter().any(|m| m.kind == MarkerKind::LikelyCause) {
        marks.push("no likely cause verified".into());
    }
    out.push(marks.join("   "));
    let g = |c| glyph(c, ascii);
    out.push(format!(
        "[ alert start  {} firing  {} pending  {} resolved  {}{}{} lines per column  * cited",
        g(Cell::Bar(AlertState::Firing)),
        g(Cell::Bar(AlertState::Pending)),
        g(Cell::Bar(AlertState::Resolved)),
        g(Cell::Level(1)),
        g(Cell::Level(4)),
        g(Cell::Level(8)),
    ));
    out
}

fn human_seconds(s: f64) -> String {
    match s {
        s if s < 1.0 => format!("{:.0} ms", s * 1000.0),
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.1} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

/// The whole picture in `width` columns.
pub fn render(t: &Timeline, width: usize, ascii: bool) -> Vec<String> {
    let (label_w, cols) = split(width);
    let a = Axis::full(t, cols);
    let pad = " ".repeat(label_w);
    let mut out = vec![truncate_width(&window_line(t, &a), width)];
    out.push(format!("{pad} {}", axis(&a)));
    out.push(format!("{:<label_w$} {}", "markers", marker_line(t, &a)));
    let rules = marker_columns(t, &a);
    for row in &t.rows {
        let mut line: Vec<char> = t
            .cells(row, &a)
            .into_iter()
            .map(|c| glyph(c, ascii))
            .collect();
        for c in &rules {
            if line.get(*c) == Some(&' ') {
                line[*c] = marker_rule(ascii);
            }
        }
        let label = row_label(row, label_w);
        let label = if ascii { ascii_only(&label) } else { label };
        out.push(format!("{label} {}", line.into_iter().collect::<String>()));
    }
    out.extend(legend(t, ascii));
    out.into_iter()
        .map(|l| {
            let l = if ascii { ascii_only(&l) } else { l };
            l.trim_end().to_string()
        })
        .collect()
}

/// Text for a terminal that shows only ASCII: the ellipsis as `...`,
/// anything else outside ASCII as `?`.
fn ascii_only(s: &str) -> String {
    s.replace('…', "...")
        .chars()
        .map(|c| if c.is_ascii() { c } else { '?' })
        .collect()
}
