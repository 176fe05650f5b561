//! Paging the runs list through the stored history: a page of runs is
//! read when the selection comes near the end of what is listed, and a
//! filter reads the store for its matches below what is listed.
//!
//! Every page is "all runs (matching a filter) newer than its oldest", so
//! the list stays exact as pages join it: the unfiltered pages make the
//! floor under which nothing is listed unless a filter read it, and a
//! filter continues from the floor, or from its own oldest match.

use super::Command;
use crate::tui::state::{AppState, RunsPages};
use crate::vocab::run::RunSummary;

/// Runs per page read from the store.
pub const PAGE: usize = 500;
/// A page is read once the selection is this close to the list's end.
const AHEAD: usize = 100;

/// The page to read next, when the selection is near the end of the
/// listed runs and the store holds more. Only a list read from a store
/// pages (its first page counted the runs).
pub(super) fn more(state: &mut AppState) -> Option<Command> {
    let pages = &state.runs_pages;
    let complete = pages
        .complete
        .as_deref()
        .is_some_and(|f| f.is_empty() || *f == state.filter);
    if pages.pending || pages.total.is_none() || complete {
        return None;
    }
    let listed = state.filtered_runs().len();
    if state.sel.runs + AHEAD < listed {
        return None;
    }
    let before = cursor(pages, &state.filter);
    state.runs_pages.pending = true;
    Some(Command::LoadRunsPage {
        filter: state.filter.clone(),
        before,
    })
}

/// Where the next page for `filter` starts: below the floor, or below the
/// filter's oldest match read so far when that is lower.
fn cursor(pages: &RunsPages, filter: &str) -> Option<i64> {
    match &pages.search {
        Some((f, Some(oldest))) if f == filter && !filter.is_empty() => {
            Some(pages.floor.map_or(*oldest, |floor| floor.min(*oldest)))
        }
        _ => pages.floor,
    }
}

/// A page arrived: its runs join the list, and the cursors move on.
pub(super) fn on_page(
    state: &mut AppState,
    filter: &str,
    result: Result<(Vec<RunSummary>, u64), String>,
) {
    state.runs_pages.pending = false;
    let (rows, total) = match result {
        Ok(page) => page,
        Err(e) => {
            state.runs_error = Some(e);
            return;
        }
    };
    // The page holds every matching run older than `before`, and every
    // run newer than `before` was listed already (`before` is the floor
    // or below it), so the list now holds every match down to its oldest.
    let oldest = rows.iter().map(|r| r.run_id).min();
    let lower = |a: Option<i64>, b: Option<i64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let pages = &mut state.runs_pages;
    if filter.is_empty() {
        pages.floor = lower(pages.floor, oldest);
    } else {
        let searched = match &pages.search {
            Some((f, o)) if f == filter => lower(*o, oldest),
            _ => oldest,
        };
        pages.search = Some((filter.to_string(), searched));
    }
    if rows.len() < PAGE {
        pages.complete = Some(filter.to_string());
    }
    pages.total = Some((filter.to_string(), total));
    // Rows already listed take the page's version; a map keeps joining a
    // page to a long list linear.
    let mut merged = state.runs.clone();
    let at: std::collections::HashMap<i64, usize> = merged
        .iter()
        .enumerate()
        .map(|(i, r)| (r.run_id, i))
        .collect();
    for row in rows {
        match at.get(&row.run_id) {
            Some(&i) => merged[i] = row,
            None => merged.push(row),
        }
    }
    super::events::set_runs(state, merged);
}

/// How many stored runs match the filter, when the store counted them
/// for this filter.
pub fn stored_total(state: &AppState) -> Option<u64> {
    match &state.runs_pages.total {
        Some((f, n)) if *f == state.filter => Some(*n),
        _ => None,
    }
}
