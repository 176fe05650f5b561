//! File globs: `*` and `?` within one path component, `[abc]` classes,
//! `**` for any depth; several globs joined by `:` (as `PATH` is). Hidden
//! files are matched only by a component that starts with `.`. Matches
//! are sorted, so the same files are read in the same order each time.

use regex::Regex;
use std::path::{Path, PathBuf};

/// Directory levels `**` descends at most; symlinked directories are not
/// followed, so a loop cannot hold a query.
const MAX_DEPTH: usize = 16;

/// The files the globs name, sorted and without duplicates; a component
/// that is not a valid pattern is an error naming it.
pub fn expand(globs: &str) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for g in globs.split(':').map(str::trim).filter(|g| !g.is_empty()) {
        let path = Path::new(g);
        let (root, rest): (PathBuf, Vec<String>) = {
            let mut root = PathBuf::new();
            let mut rest = Vec::new();
            for c in path.components() {
                let s = c.as_os_str().to_string_lossy().into_owned();
                if rest.is_empty() && !has_meta(&s) {
                    root.push(c);
                } else {
                    rest.push(s);
                }
            }
            (root, rest)
        };
        if rest.is_empty() {
            if root.is_file() {
                out.push(root);
            }
            continue;
        }
        let parts = rest
            .iter()
            .map(|p| Part::new(p))
            .collect::<Result<Vec<_>, _>>()?;
        let start = if root.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            root
        };
        walk(&start, &parts, 0, &mut out);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn has_meta(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

enum Part {
    AnyDepth,
    Literal(String),
    Pattern { re: Regex, dot: bool },
}

impl Part {
    fn new(s: &str) -> Result<Part, String> {
        if s == "**" {
            return Ok(Part::AnyDepth);
        }
        if !has_meta(s) {
            return Ok(Part::Literal(s.to_string()));
        }
        let mut re = String::from("^");
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '*' => re.push_str(".*"),
                '?' => re.push('.'),
                '[' => {
                    let mut class = String::new();
                    let mut closed = false;
                    for d in chars.by_ref() {
                        if d == ']' && !class.is_empty() {
                            closed = true;
                            break;
                        }
                        class.push(d);
                    }
                    if !closed {
                        return Err(format!("unclosed '[' in the glob component {s:?}"));
                    }
                    let class = class
                        .strip_prefix('!')
                        .map_or(class.clone(), |c| format!("^{c}"));
                    re.push('[');
                    re.push_str(&class.replace('\\', "\\\\"));
                    re.push(']');
                }
                c => re.push_str(&regex::escape(&c.to_string())),
            }
        }
        re.push('$');
        let re = Regex::new(&re).map_err(|e| format!("bad glob component {s:?}: {e}"))?;
        Ok(Part::Pattern {
            re,
            dot: s.starts_with('.'),
        })
    }

    fn matches(&self, name: &str) -> bool {
        match self {
            Part::AnyDepth => true,
            Part::Literal(l) => l == name,
            Part::Pattern { re, dot } => (*dot || !name.starts_with('.')) && re.is_match(name),
        }
    }
}

fn walk(dir: &Path, parts: &[Part], depth: usize, out: &mut Vec<PathBuf>) {
    let Some((part, rest)) = parts.split_first() else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    if let Part::AnyDepth = part {
        // `**` matches no directory at all, or any one more level.
        walk(dir, rest, depth, out);
        for sub in entries(dir)
            .into_iter()
            .filter(|(n, d)| *d && !n.starts_with('.'))
        {
            walk(&dir.join(sub.0), parts, depth + 1, out);
        }
        return;
    }
    if let Part::Literal(name) = part {
        let p = dir.join(name);
        visit(&p, rest, depth, out);
        return;
    }
    for (name, _) in entries(dir) {
        if part.matches(&name) {
            visit(&dir.join(name), rest, depth, out);
        }
    }
}

fn visit(p: &Path, rest: &[Part], depth: usize, out: &mut Vec<PathBuf>) {
    if rest.is_empty() {
        if p.is_file() {
            out.push(p.to_path_buf());
        }
    } else if p.is_dir() {
        walk(p, rest, depth + 1, out);
    }
}

/// (name, is a real directory) of the entries of `dir`.
fn entries(dir: &Path) -> Vec<(String, bool)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flatten()
        .map(|e| {
            let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
            (e.file_name().to_string_lossy().into_owned(), is_dir)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_components_depths_and_lists() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        for f in [
            "a.log",
            "b.log",
            "c.txt",
            ".hidden.log",
            "x/d.log",
            "x/y/e.log",
            "x/y/f.json",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        let names = |g: &str| -> Vec<String> {
            expand(g)
                .unwrap()
                .iter()
                .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
                .collect()
        };
        let r = root.display();
        assert_eq!(names(&format!("{r}/*.log")), ["a.log", "b.log"]);
        assert_eq!(names(&format!("{r}/.*.log")), [".hidden.log"]);
        assert_eq!(
            names(&format!("{r}/**/*.log")),
            ["a.log", "b.log", "x/d.log", "x/y/e.log"]
        );
        assert_eq!(
            names(&format!("{r}/x/*/?.json:{r}/[ab].log")),
            ["a.log", "b.log", "x/y/f.json"]
        );
        assert_eq!(names(&format!("{r}/[!a].log")), ["b.log"]);
        assert_eq!(names(&format!("{r}/c.txt:{r}/c.txt")), ["c.txt"]);
        assert!(names(&format!("{r}/nothing/*.log")).is_empty());
        assert!(expand(&format!("{r}/[ab.log")).is_err());
    }
}
