//! The one evidence check: whether a text says only what recorded tool
//! results say. It owns
//!
//! - the fact tokenizer ([`facts::FactText`]: a text normalised and split
//!   into the facts it states) and its per-run cache;
//! - excerpt support ([`excerpt::supports`]: does an Executor's excerpt
//!   quote the ref it cites), which the Gatekeeper runs for every binding;
//! - statement grounding (does a Composer statement or a finding say more
//!   than the verified evidence of the claims it names);
//! - the answer's code-written parts ([`answer`]: section titles, labels,
//!   the verdict banner, citations, the negative-finding template), one
//!   copy that the answer and fallback nodes and the offline model share.
//!
//! It sits one floor above `vocab` and imports only `text` and `vocab`:
//! no I/O, no routing, no engine state. The Gatekeeper, the answer and
//! fallback nodes and the offline model call it.

pub mod answer;
pub mod excerpt;
pub mod facts;
pub mod fields;
pub mod ground;
pub mod lexicon;
