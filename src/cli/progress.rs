//! The progress bar of a large log file read (and indexed) at start-up.
//! It is drawn on stderr before any screen opens: in place on a terminal,
//! else one line when the read begins and one when it ends.

use crate::tools::logs::index::MIN_INDEXED_BYTES;
use crate::tools::pack::{Pack, PackError};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::Instant;

const BAR_CELLS: u64 = 30;

/// Loads the pack at `dir`, its large `logs.jsonl` from its index in the
/// cache directory, or read and indexed with a progress bar.
pub fn load_pack(dir: &Path) -> Result<Pack, PackError> {
    let mut bar = Progress::new(std::io::stderr().is_terminal());
    let pack = Pack::load_with(
        dir,
        &crate::tools::logs::index::IndexPolicy::cache(),
        &mut |done, total| bar.update(done, total, &mut std::io::stderr()),
    );
    bar.finish(&mut std::io::stderr());
    pack
}

/// What has been drawn so far.
pub struct Progress {
    terminal: bool,
    /// The last percentage drawn; `None` before the first.
    shown: Option<u64>,
    started: Instant,
}

impl Progress {
    pub fn new(terminal: bool) -> Progress {
        Progress {
            terminal,
            shown: None,
            started: Instant::now(),
        }
    }

    /// (bytes read, bytes in all); files too small to index draw nothing.
    pub fn update(&mut self, done: u64, total: u64, out: &mut dyn Write) {
        if total < MIN_INDEXED_BYTES {
            return;
        }
        let pct = done.min(total) * 100 / total.max(1);
        if self.shown == Some(pct) {
            return;
        }
        let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
        if self.terminal {
            let filled = (pct * BAR_CELLS / 100) as usize;
            let _ = write!(
                out,
                "\rdiagraph: indexing logs [{}{}] {pct:>3}% of {:.0} MB",
                "#".repeat(filled),
                ".".repeat(BAR_CELLS as usize - filled),
                mb(total)
            );
        } else if self.shown.is_none() {
            let _ = writeln!(
                out,
                "diagraph: indexing logs ({:.0} MB), once for this content",
                mb(total)
            );
        }
        let _ = out.flush();
        self.shown = Some(pct);
    }

    pub fn finish(&mut self, out: &mut dyn Write) {
        if self.shown.is_none() {
            return;
        }
        let took = self.started.elapsed().as_secs_f64();
        let _ = if self.terminal {
            writeln!(out, " ({took:.1} s)")
        } else {
            writeln!(out, "diagraph: logs indexed in {took:.1} s")
        };
        self.shown = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_gets_a_bar_drawn_in_place_and_a_pipe_two_lines() {
        let big = MIN_INDEXED_BYTES * 2;
        let mut out = Vec::new();
        let mut p = Progress::new(true);
        p.update(big / 4, big, &mut out);
        p.update(big / 4, big, &mut out);
        p.update(big, big, &mut out);
        p.finish(&mut out);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches('\r').count(), 2, "{text:?}");
        assert!(
            text.contains("[#######.......................]  25%"),
            "{text:?}"
        );
        assert!(text.contains(" 100% of 16 MB ("), "{text:?}");
        assert!(text.ends_with(" s)\n"), "{text:?}");

        let mut out = Vec::new();
        let mut p = Progress::new(false);
        for i in 0..=10 {
            p.update(big / 10 * i, big, &mut out);
        }
        p.finish(&mut out);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 2, "{text:?}");
        assert!(!text.contains('\r'));
    }

    #[test]
    fn a_small_file_draws_nothing() {
        let mut out = Vec::new();
        let mut p = Progress::new(true);
        p.update(10, 100, &mut out);
        p.finish(&mut out);
        assert!(out.is_empty());
    }
}
