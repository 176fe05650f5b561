//! Splitting a markdown document into searchable sections.
//!
//! Each heading opens a section whose breadcrumb is the path of headings
//! above it, led by the document title ("Title > Diagnosis > Pool"). Text
//! before the first heading belongs to the title itself. Headings inside
//! fenced code blocks are code, not structure. Very long sections are cut at
//! paragraph boundaries so one section cannot drown a search result.

use crate::knowledge::KnowledgeChunk;

/// Sections longer than this (bytes) are split at paragraph breaks.
const MAX_CHUNK_BYTES: usize = 3000;

/// Sections of `body` as chunks of `source` in `domain`.
pub fn chunk_markdown(source: &str, title: &str, domain: &str, body: &str) -> Vec<KnowledgeChunk> {
    let mut chunks = Vec::new();
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut current = String::new();
    let mut in_fence = false;
    let emit = |stack: &[(usize, String)], text: &mut String, chunks: &mut Vec<KnowledgeChunk>| {
        let body = std::mem::take(text);
        if body.trim().is_empty() {
            return;
        }
        let breadcrumb = breadcrumb(title, stack);
        for (i, part) in split_long(body.trim()).into_iter().enumerate() {
            let crumb = if i == 0 {
                breadcrumb.clone()
            } else {
                format!("{breadcrumb} (part {})", i + 1)
            };
            chunks.push(KnowledgeChunk {
                source: source.to_string(),
                breadcrumb: crumb,
                domain: domain.to_string(),
                text: part,
            });
        }
    };
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if !in_fence && let Some((level, heading)) = heading(line) {
            emit(&stack, &mut current, &mut chunks);
            while stack.last().is_some_and(|(l, _)| *l >= level) {
                stack.pop();
            }
            stack.push((level, heading));
            continue;
        }
        current.push_str(line);
        current.push('\n');
    }
    emit(&stack, &mut current, &mut chunks);
    chunks
}

/// `## Foo` -> (2, "Foo"). At most three leading spaces, 1-6 hashes, a space.
fn heading(line: &str) -> Option<(usize, String)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let t = line.trim_start_matches(' ');
    let level = t.len() - t.trim_start_matches('#').len();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = t.get(level..)?;
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    let text = rest.trim().trim_end_matches('#').trim().to_string();
    Some((level, text))
}

fn breadcrumb(title: &str, stack: &[(usize, String)]) -> String {
    let mut parts: Vec<&str> = vec![title];
    for (_, h) in stack {
        // A document's own H1 usually repeats its title.
        if h.is_empty() || parts.last().is_some_and(|p| p.eq_ignore_ascii_case(h)) {
            continue;
        }
        if parts.len() == 1 && normalise(h) == normalise(title) {
            continue;
        }
        parts.push(h);
    }
    parts.join(" > ")
}

fn normalise(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn split_long(text: &str) -> Vec<String> {
    if text.len() <= MAX_CHUNK_BYTES {
        return vec![text.to_string()];
    }
    let mut parts = Vec::new();
    let mut cur = String::new();
    for para in text.split("\n\n") {
        if !cur.is_empty() && cur.len() + para.len() > MAX_CHUNK_BYTES {
            parts.push(std::mem::take(&mut cur));
        }
        if para.len() > MAX_CHUNK_BYTES {
            // One huge paragraph: cut on char boundaries.
            let mut piece = String::new();
            for c in para.chars() {
                if piece.len() + c.len_utf8() > MAX_CHUNK_BYTES {
                    parts.push(std::mem::take(&mut piece));
                }
                piece.push(c);
            }
            cur = piece;
            continue;
        }
        if !cur.is_empty() {
            cur.push_str("\n\n");
        }
        cur.push_str(para);
    }
    if !cur.trim().is_empty() {
        parts.push(cur);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_get_breadcrumbs() {
        let body = "intro\n# Pool Exhaustion\n## Meaning\nmeaning text\n## Diagnosis\n### Check pool\nstep\n```\n# not a heading\n```\n## Empty\n";
        let c = chunk_markdown("db/pool.md", "Pool exhaustion", "database", body);
        let crumbs: Vec<&str> = c.iter().map(|c| c.breadcrumb.as_str()).collect();
        assert_eq!(
            crumbs,
            vec![
                "Pool exhaustion",
                "Pool exhaustion > Meaning",
                "Pool exhaustion > Diagnosis > Check pool"
            ]
        );
        assert!(c[2].text.contains("# not a heading"));
        assert_eq!(c[1].domain, "database");
    }

    #[test]
    fn long_sections_are_split() {
        let para = "word ".repeat(400);
        let body = format!("## Big\n{para}\n\n{para}\n\n{para}");
        let c = chunk_markdown("a.md", "A", "d", &body);
        assert!(c.len() >= 2);
        assert!(c.iter().all(|c| c.text.len() <= MAX_CHUNK_BYTES));
        assert_eq!(c[1].breadcrumb, "A > Big (part 2)");
    }
}
