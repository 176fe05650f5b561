//! Architecture invariants of `src/`, checked the way rust-analyzer's tidy
//! tests check theirs: the top-level modules (engine, model, tools, store,
//! tui, vocab, ...) form layers without import cycles, the lower floors
//! (`text`, then `vocab`, then `evidence`) import nothing above them, and
//! only `tui`, `cli` and the binary know the terminal crates.
//!
//! A top-level module's imports are the `crate::<top>` paths (also
//! `crate::{a, b::c}`, `$crate::`, and `super::` chains that climb to the
//! crate root) in its files, outside `#[cfg(test)]` items and test files,
//! with comments and string literals ignored. The terminal rule is
//! stricter: it reads test code too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Where one import was seen: a file relative to the repository, and a line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Site {
    file: String,
    line: usize,
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Import edges between top-level modules, each with its first site.
type Edges = BTreeMap<String, BTreeMap<String, Site>>;

/// The terminal crates; only these may use them.
const TERMINAL_CRATES: [&str; 3] = ["ratatui", "ratatui_textarea", "crossterm"];
const TERMINAL_MODULES: [&str; 3] = ["tui", "cli", "main"];

/// The lower floors and what each of their modules may import: `text`
/// (text hygiene) at the bottom, the shared vocabulary on it, and the
/// evidence check on both.
const FLOOR: [(&str, &[&str]); 3] = [
    ("evidence", &["text", "vocab"]),
    ("vocab", &["text"]),
    ("text", &[]),
];

/// Every top-level module's floor, from the ground up, exactly as
/// ARCHITECTURE.md draws them under "Layering" (a test compares the two):
/// a module imports only modules of floors below its own.
const FLOORS: [&[&str]; 10] = [
    &["text"],
    &["vocab"],
    &["evidence", "config"],
    &["model", "knowledge"],
    &["tools"],
    &["engine", "store"],
    &["scenario", "report", "eval"],
    &["server"],
    &["tui"],
    &["cli"],
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|f| f.contains(&module))
}

// ---- reading src/ ------------------------------------------------------

struct SourceFile {
    /// Path relative to the repository, e.g. `src/engine/run/mod.rs`.
    rel: String,
    /// Module path inside the crate: `["engine", "run"]`; `[]` for lib.rs.
    module: Vec<String>,
    /// The code with comments and literals blanked (lines kept).
    code: String,
}

impl SourceFile {
    /// The top-level module, or `lib` / `main` for the crate roots.
    fn top(&self) -> &str {
        if self.module.is_empty() {
            self.rel.trim_start_matches("src/").trim_end_matches(".rs")
        } else {
            &self.module[0]
        }
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Module path of a file below `src/`: `engine/run/mod.rs` -> engine::run.
fn module_path(rel_to_src: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel_to_src
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    let is_root = parts.is_empty() && (stem == "lib" || stem == "main");
    if stem != "mod" && !is_root {
        parts.push(stem.to_string());
    }
    parts
}

/// Every `src/**/*.rs` file except test-only files (`#[cfg(test)] mod x;`
/// and everything below them).
fn sources() -> Vec<SourceFile> {
    let src = repo().join("src");
    let mut paths = Vec::new();
    rs_files(&src, &mut paths);
    let mut files: Vec<SourceFile> = paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            SourceFile {
                rel: format!("src/{}", p.strip_prefix(&src).unwrap().display()),
                module: module_path(p.strip_prefix(&src).unwrap()),
                code: blank_comments_and_literals(&text),
            }
        })
        .collect();
    let test_modules: Vec<Vec<String>> = files
        .iter()
        .flat_map(|f| {
            test_file_modules(&f.code)
                .into_iter()
                .map(|name| [f.module.clone(), vec![name]].concat())
        })
        .collect();
    files.retain(|f| !test_modules.iter().any(|t| f.module.starts_with(t)));
    files
}

// ---- lexing ------------------------------------------------------------

/// `text` with comments, string and char literals replaced by spaces
/// (newlines kept, so byte offsets keep their line numbers).
fn blank_comments_and_literals(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| i + n);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if (b[i] == b'r' || rest.starts_with(b"br"))
            && (i == 0 || !ident(b[i - 1]))
            && raw_string_start(&b[i..]).is_some()
        {
            let (open, hashes) = raw_string_start(&b[i..]).unwrap();
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let body = i + open;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |n| body + n + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{1b}', '{'), or a lifetime.
            let char_end = if b.get(i + 1) == Some(&b'\\') {
                // Skip the escaped character itself ('\'' and '\\').
                let from = (i + 3).min(b.len());
                b[from..].iter().position(|&c| c == b'\'').map(|n| from + n)
            } else {
                let len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 1 + len)
            };
            match char_end {
                Some(end) => {
                    blank(&mut out, i, end + 1);
                    i = end + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `r"`, `r#"`, `br##"`...: the length of the opening and the `#` count.
fn raw_string_start(b: &[u8]) -> Option<(usize, usize)> {
    let after_r = if b.starts_with(b"br") { 2 } else { 1 };
    let hashes = b[after_r..].iter().take_while(|&&c| c == b'#').count();
    (b.get(after_r + hashes) == Some(&b'"')).then_some((after_r + hashes + 1, hashes))
}

/// Byte ranges of the items marked `#[cfg(test)]` (their attribute
/// included): up to the `;` or the closing `}` at their own depth.
fn test_items(code: &str) -> Vec<(usize, usize)> {
    let b = code.as_bytes();
    let mut ranges = Vec::new();
    let mut from = 0;
    while let Some(n) = code[from..].find("#[cfg(test)]") {
        let start = from + n;
        let mut j = start + "#[cfg(test)]".len();
        let mut depth = 0i32;
        while j < b.len() {
            match b[j] {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' => depth -= 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b';' if depth == 0 => break,
                _ => {}
            }
            j += 1;
        }
        ranges.push((start, j + 1));
        from = j + 1;
    }
    ranges
}

/// `code` without its `#[cfg(test)]` items.
fn without_tests(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    for (from, to) in test_items(code) {
        for c in &mut out[from..to.min(code.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Names of `#[cfg(test)] mod name;` declarations (test-only files).
fn test_file_modules(code: &str) -> Vec<String> {
    test_items(code)
        .into_iter()
        .filter_map(|(from, to)| {
            let item = code[from + "#[cfg(test)]".len()..to].trim();
            let name = item.strip_prefix("mod ")?.strip_suffix(';')?.trim();
            Some(name.to_string())
        })
        .collect()
}

fn ident_at(code: &str, at: usize) -> &str {
    let rest = &code[at..];
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    &rest[..end]
}

fn line_of(code: &str, at: usize) -> usize {
    code[..at].matches('\n').count() + 1
}

/// The top-level modules a file's code names, with the line of the first
/// mention: `crate::x`, `$crate::x`, `crate::{x, y::z}`, and `super::`
/// chains from `module` that climb to the crate root.
fn crate_refs(code: &str, module: &[String]) -> BTreeMap<String, usize> {
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    let mut note = |name: &str, at: usize| {
        if !name.is_empty() {
            found
                .entry(name.to_string())
                .or_insert_with(|| line_of(code, at));
        }
    };
    let bytes = code.as_bytes();
    let boundary =
        |at: usize| at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
    for (at, _) in code.match_indices("crate::") {
        if !boundary(at) {
            continue;
        }
        let after = code[at + "crate::".len()..].trim_start();
        let pos = code.len() - after.len();
        if after.starts_with('{') {
            // The first segment of each item of the group.
            let mut depth = 0;
            let mut item_start = true;
            for (k, c) in after.char_indices() {
                match c {
                    '{' => {
                        depth += 1;
                        item_start = depth == 1;
                    }
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => item_start = true,
                    c if item_start && (c.is_ascii_alphabetic() || c == '_') => {
                        note(ident_at(code, pos + k), pos + k);
                        item_start = false;
                    }
                    c if !c.is_whitespace() => item_start = false,
                    _ => {}
                }
            }
        } else {
            note(ident_at(code, pos), pos);
        }
    }
    for (at, _) in code.match_indices("super::") {
        if !boundary(at) || code[..at].ends_with("::") {
            continue;
        }
        let mut climbs = 0;
        let mut k = at;
        while code[k..].starts_with("super::") {
            climbs += 1;
            k += "super::".len();
        }
        if climbs >= module.len() {
            note(ident_at(code, k), k);
        }
    }
    found
}

/// Uses of the terminal crates as path roots (`ratatui::`, `crossterm::`),
/// with their line.
fn terminal_uses(code: &str) -> Vec<(String, usize)> {
    let bytes = code.as_bytes();
    let mut uses = Vec::new();
    for krate in TERMINAL_CRATES {
        let needle = format!("{krate}::");
        for (at, _) in code.match_indices(&needle) {
            let before = at.checked_sub(1).map(|p| bytes[p]);
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
                continue;
            }
            uses.push((krate.to_string(), line_of(code, at)));
        }
    }
    uses
}

// ---- the graph ---------------------------------------------------------

/// Import edges between top-level modules of `files` (crate roots and
/// names that are not top-level modules, such as macros, left out).
fn edges(files: &[SourceFile]) -> Edges {
    let tops: BTreeSet<&str> = files
        .iter()
        .map(SourceFile::top)
        .filter(|t| *t != "lib" && *t != "main")
        .collect();
    let mut edges = Edges::new();
    for f in files {
        let from = f.top();
        if !tops.contains(from) {
            continue;
        }
        for (to, line) in crate_refs(&without_tests(&f.code), &f.module) {
            if to != from && tops.contains(to.as_str()) {
                let site = Site {
                    file: f.rel.clone(),
                    line,
                };
                let slot = edges
                    .entry(from.to_string())
                    .or_default()
                    .entry(to)
                    .or_insert_with(|| site.clone());
                if site < *slot {
                    *slot = site;
                }
            }
        }
    }
    edges
}

/// The strongly connected components with more than one module (Tarjan):
/// each is a set of modules that import each other in a cycle.
fn cycles(edges: &Edges) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        edges: &'a Edges,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.edges.get(v).into_iter().flat_map(|m| m.keys()) {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.on_stack.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on_stack.remove(w);
                    comp.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.out.push(comp);
                }
            }
        }
    }
    let mut t = Tarjan {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out.sort();
    t.out
}

/// One concrete cycle through `comp`'s first module (breadth-first, so a
/// shortest one): `[a, b, c, a]`.
fn cycle_path(edges: &Edges, comp: &[String]) -> Vec<String> {
    let start = &comp[0];
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.as_str()]);
    while let Some(v) = queue.pop_front() {
        for w in edges.get(v).into_iter().flat_map(|m| m.keys()) {
            if !comp.contains(w) {
                continue;
            }
            if w == start {
                let mut path = vec![start.clone()];
                let mut at = v;
                while at != start {
                    path.push(at.to_string());
                    at = came_from[at];
                }
                path.push(start.clone());
                path.reverse();
                return path;
            }
            if !came_from.contains_key(w.as_str()) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    unreachable!("{comp:?} is a strongly connected component")
}

/// A readable report of every cycle: the path, then each edge of it with
/// the first place that import is made.
fn describe_cycles(edges: &Edges) -> Option<String> {
    let found = cycles(edges);
    if found.is_empty() {
        return None;
    }
    let mut out = String::from(
        "import cycles between top-level modules of src/ (each layer may only \
         import layers below it; see the module direction in src/lib.rs):\n",
    );
    for comp in found {
        let path = cycle_path(edges, &comp);
        out.push_str(&format!("  cycle: {}\n", path.join(" -> ")));
        for pair in path.windows(2) {
            let site = &edges[&pair[0]][&pair[1]];
            out.push_str(&format!("    {} -> {}  e.g. {site}\n", pair[0], pair[1]));
        }
        if comp.len() + 1 > path.len() {
            out.push_str(&format!("    (all modules in it: {})\n", comp.join(", ")));
        }
    }
    Some(out)
}

// ---- the checks on src/ ------------------------------------------------

#[test]
fn no_import_cycles_between_top_level_modules() {
    let files = sources();
    assert!(
        files.iter().any(|f| f.top() == "engine"),
        "src/ not found or empty"
    );
    if let Some(report) = describe_cycles(&edges(&files)) {
        panic!("{report}");
    }
}

#[test]
fn the_lower_floors_import_nothing_above_them() {
    let edges = edges(&sources());
    let mut wrong = Vec::new();
    for (module, allowed) in FLOOR {
        for (to, site) in edges.get(module).into_iter().flatten() {
            if !allowed.contains(&to.as_str()) {
                wrong.push(format!("  {module} -> {to}  e.g. {site}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the lower floors may import only the floors below them (evidence: text, vocab; vocab: text; text: nothing):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_module_imports_only_floors_below_its_own() {
    let files = sources();
    let mut wrong = Vec::new();
    for top in files.iter().map(SourceFile::top).collect::<BTreeSet<_>>() {
        if top != "lib" && top != "main" && floor_of(top).is_none() {
            wrong.push(format!(
                "  {top} is on no floor: add it to FLOORS and ARCHITECTURE.md"
            ));
        }
    }
    for (from, tos) in &edges(&files) {
        for (to, site) in tos {
            if let (Some(a), Some(b)) = (floor_of(from), floor_of(to))
                && b >= a
            {
                wrong.push(format!(
                    "  {from} (floor {a}) -> {to} (floor {b})  e.g. {site}"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a module imports only the floors below its own (FLOORS):\n{}",
        wrong.join("\n")
    );
}

/// The drawing under "### Layering" in ARCHITECTURE.md: its floors, top
/// line first, one module name per word.
fn drawn_floors() -> Vec<Vec<String>> {
    let doc = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).unwrap();
    let at = doc
        .find("### Layering")
        .expect("ARCHITECTURE.md has a Layering section");
    let rest = &doc[at..];
    let open = rest.find("```\n").expect("a drawing under Layering") + 4;
    let close = open + rest[open..].find("```").expect("the drawing ends");
    rest[open..close]
        .lines()
        .map(|l| {
            l.split_whitespace()
                .take_while(|w| !w.starts_with('('))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|f| !f.is_empty())
        .collect()
}

#[test]
fn the_checked_floors_are_the_drawn_ones() {
    let mut drawn = drawn_floors();
    drawn.reverse();
    let checked: Vec<Vec<String>> = FLOORS
        .iter()
        .map(|f| f.iter().map(|m| m.to_string()).collect())
        .collect();
    let sorted = |v: Vec<Vec<String>>| -> Vec<Vec<String>> {
        v.into_iter()
            .map(|mut f| {
                f.sort();
                f
            })
            .collect()
    };
    assert_eq!(
        sorted(drawn),
        sorted(checked),
        "ARCHITECTURE.md's Layering drawing and FLOORS in this file must list the same floors"
    );
}

#[test]
fn only_tui_cli_and_the_binary_know_the_terminal() {
    let mut wrong = Vec::new();
    for f in sources() {
        if TERMINAL_MODULES.contains(&f.top()) {
            continue;
        }
        for (krate, line) in terminal_uses(&f.code) {
            wrong.push(format!("  {krate} in {}:{line}", f.rel));
        }
    }
    assert!(
        wrong.is_empty(),
        "only tui, cli and main.rs may use ratatui or crossterm:\n{}",
        wrong.join("\n")
    );
}

// ---- the checker checks itself ----------------------------------------

fn synthetic(pairs: &[(&str, &str)]) -> Edges {
    let mut e = Edges::new();
    for (i, (a, b)) in pairs.iter().enumerate() {
        e.entry(a.to_string()).or_default().insert(
            b.to_string(),
            Site {
                file: format!("src/{a}/x.rs"),
                line: i + 1,
            },
        );
    }
    e
}

#[test]
fn a_cycle_is_found_and_named_with_an_example_file() {
    let layered = synthetic(&[
        ("tui", "engine"),
        ("tui", "store"),
        ("engine", "model"),
        ("engine", "vocab"),
        ("store", "vocab"),
        ("model", "vocab"),
    ]);
    assert!(cycles(&layered).is_empty());
    assert_eq!(describe_cycles(&layered), None);

    // store -> engine closes engine -> model -> store.
    let mut cyclic = synthetic(&[
        ("tui", "engine"),
        ("engine", "model"),
        ("model", "store"),
        ("store", "engine"),
        ("store", "vocab"),
        ("text", "vocab"),
        ("vocab", "text"),
    ]);
    assert_eq!(
        cycles(&cyclic),
        vec![
            vec!["engine".to_string(), "model".into(), "store".into()],
            vec!["text".to_string(), "vocab".into()],
        ]
    );
    let report = describe_cycles(&cyclic).unwrap();
    assert!(
        report.contains("cycle: engine -> model -> store -> engine"),
        "{report}"
    );
    assert!(
        report.contains("store -> engine  e.g. src/store/x.rs:4"),
        "{report}"
    );
    assert!(report.contains("cycle: text -> vocab -> text"), "{report}");

    // A self-import is not a cycle between modules.
    cyclic = synthetic(&[("engine", "engine")]);
    assert!(cycles(&cyclic).is_empty());
}

#[test]
fn imports_are_read_from_code_not_tests_comments_or_strings() {
    let text = r##"
//! Docs may name crate::tui freely.
use crate::{engine::Engine, model, vocab::{a, b}};
use crate::store::Store;
pub(crate) fn f() -> &'static str {
    let _c = '{';
    let _q = '\'';
    let _e = '"';
    let _s = "crate::knowledge";
    let _r = r#"crate::config " "#;
    super::super::scenario::load();
    super::sibling();
    $crate::tools::x!();
    /* crate::cli /* nested */ crate::cli */
    "}"
}
#[cfg(test)]
mod tests {
    use crate::tui::fixtures;
    fn g() { let _ = "}"; }
}
#[cfg(test)]
mod more_tests;
fn after() { crate::text::clean(); }
"##;
    let module = vec!["engine".to_string(), "run".to_string()];
    let code = without_tests(&blank_comments_and_literals(text));
    let refs: Vec<String> = crate_refs(&code, &module).into_keys().collect();
    assert_eq!(
        refs,
        [
            "engine", "model", "scenario", "store", "text", "tools", "vocab"
        ]
    );
    assert_eq!(
        test_file_modules(&blank_comments_and_literals(text)),
        ["more_tests"]
    );
    assert_eq!(module_path(Path::new("engine/run/mod.rs")), module);
    assert_eq!(module_path(Path::new("engine/run.rs")), module);
    assert_eq!(module_path(Path::new("lib.rs")), Vec::<String>::new());
    let term = terminal_uses("use ratatui::Frame;\nlet x = my_crossterm::y;\ncrossterm::a();");
    assert_eq!(
        term,
        [("ratatui".to_string(), 1), ("crossterm".to_string(), 3)]
    );
}
