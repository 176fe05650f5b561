//! What every tool backend shares, below all of them: reading a call's
//! arguments ([`args`]), the timestamps of arguments and refs ([`time`]),
//! and what a backend says about the data it read ([`source`]). No
//! backend imports another for these; a helper two backends need goes
//! here.

pub mod args;
pub mod source;
pub mod time;

pub use args::{Args, query_summary};
pub use source::{FileWarnings, PackWarning, Readable, too_many_bad};
pub use time::{fmt_time, human_duration, parse_time};
