//! What every tool backend says about the data it read: whether a
//! source could answer at all ([`Readable`]), and warnings naming a file
//! and line ([`PackWarning`], collected per file by [`FileWarnings`]).
//!
//! "Could not check" must never read as "found nothing": a source read in
//! part or not at all makes its tool say so or fail.

use crate::text::clean;
use crate::tools::ToolError;
use serde::{Deserialize, Serialize};

/// Per-file cap on itemised warnings; the rest are counted.
const MAX_WARNINGS_PER_FILE: usize = 20;

/// More than one item in twenty unusable: the file as a whole cannot be
/// trusted to answer "is there any X", so its tool fails instead of
/// answering from the rest. Fewer are warnings recorded with the run.
pub fn too_many_bad(bad: usize, total: usize) -> bool {
    bad > 0 && bad * 20 > total
}

/// How completely one data source was read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Readable {
    #[default]
    Whole,
    /// Read in part; says what was left out. Tools answer from the rest
    /// and say so, and a query that finds nothing there fails, since the
    /// unread part was not checked.
    Partial(String),
    /// Missing, unreadable or corrupt; says why. Its tool fails with it.
    Unreadable(String),
    /// The pack has none of this data by design (no `knowledge/`): its
    /// tool is not offered at all, so nothing is planned against it.
    Absent,
}

impl Readable {
    /// Whether a tool over this source may answer: `Err` with the reason
    /// when it cannot, else what part was left out (if any).
    pub fn check(&self) -> Result<Option<&str>, ToolError> {
        match self {
            Readable::Whole => Ok(None),
            Readable::Partial(why) => Ok(Some(why)),
            Readable::Unreadable(why) => Err(ToolError::Unreadable(why.clone())),
            Readable::Absent => Err(ToolError::Unreadable(
                "the pack has none of this data".into(),
            )),
        }
    }

    /// A query that found nothing in a source read in part did not check
    /// the rest: a failure that says so, never "no evidence".
    pub fn nothing_found_in_part(partial: &str) -> ToolError {
        ToolError::Unreadable(format!(
            "{partial}; nothing matched in the part that was read, and the rest was not checked"
        ))
    }
}

/// A problem with one file (and line) of a source; the rest still loads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackWarning {
    /// File relative to the source's directory (the pack's, for a pack).
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for PackWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.file, l, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Collects warnings for one file, itemising the first few.
pub struct FileWarnings<'a> {
    file: String,
    out: &'a mut Vec<PackWarning>,
    count: usize,
}

impl<'a> FileWarnings<'a> {
    pub fn new(file: &str, out: &'a mut Vec<PackWarning>) -> Self {
        FileWarnings {
            file: file.to_string(),
            out,
            count: 0,
        }
    }

    pub fn warn(&mut self, line: Option<usize>, message: impl Into<String>) {
        self.count += 1;
        if self.count <= MAX_WARNINGS_PER_FILE {
            self.out.push(PackWarning {
                file: self.file.clone(),
                line,
                message: clean(&message.into(), 300),
            });
        }
    }
}

impl Drop for FileWarnings<'_> {
    fn drop(&mut self) {
        if self.count > MAX_WARNINGS_PER_FILE {
            self.out.push(PackWarning {
                file: self.file.clone(),
                line: None,
                message: format!(
                    "{} more problems in this file not listed",
                    self.count - MAX_WARNINGS_PER_FILE
                ),
            });
        }
    }
}
