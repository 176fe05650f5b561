//! The shipped pack and scenarios, embedded in the binary by `build.rs`.
//!
//! They are written out once per content into the cache directory
//! (`$XDG_CACHE_HOME/diagraph/shipped/<hash>/`), keeping their layout, so
//! the pack loader, the scenario files' relative `pack` paths and the run
//! record (a pack path) all work as they do for a pack on disk, and an
//! installed binary needs no source checkout.

use super::CliError;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/shipped.rs"));
}

/// Marks a complete copy; a directory without it is a write that died.
const COMPLETE: &str = ".complete";

fn content_hash() -> String {
    let mut h = Sha256::new();
    for (path, bytes) in embedded::FILES {
        h.update(path.as_bytes());
        h.update([0]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    hex::encode(&h.finalize()[..8])
}

fn cache_root() -> Result<PathBuf, CliError> {
    use etcetera::BaseStrategy;
    let base = etcetera::choose_base_strategy()
        .map_err(|e| CliError::other(format!("no cache directory for the shipped pack: {e}")))?;
    Ok(base.cache_dir().join("diagraph").join("shipped"))
}

/// The directory holding `packs/shop/` and `scenarios/`, written on first
/// use. Concurrent processes each write a private copy and rename it into
/// place; the first rename wins and the others use it.
pub fn shipped_root() -> Result<PathBuf, CliError> {
    let dir = cache_root()?.join(content_hash());
    if dir.join(COMPLETE).is_file() {
        return Ok(dir);
    }
    write_out(&dir).map_err(|e| {
        CliError::other(format!(
            "cannot write the shipped pack to {}: {e}",
            dir.display()
        ))
    })?;
    Ok(dir)
}

fn write_out(dir: &Path) -> std::io::Result<()> {
    let parent = dir.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent)?;
    let tmp = parent.join(format!(".tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    for (path, bytes) in embedded::FILES {
        let target = tmp.join(path);
        if let Some(p) = target.parent() {
            std::fs::create_dir_all(p)?;
        }
        std::fs::write(target, bytes)?;
    }
    std::fs::write(tmp.join(COMPLETE), b"")?;
    match std::fs::rename(&tmp, dir) {
        Ok(()) => Ok(()),
        // Another process got there first (or left a dead, incomplete
        // copy, which is replaced).
        Err(_) if dir.join(COMPLETE).is_file() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(())
        }
        Err(_) => {
            let _ = std::fs::remove_dir_all(dir);
            std::fs::rename(&tmp, dir)
        }
    }
}

/// The shipped pack, used when neither flag, env nor config names one.
pub fn shipped_pack_dir() -> Result<PathBuf, CliError> {
    Ok(shipped_root()?.join("packs").join("shop"))
}

/// The shipped demo scenarios.
pub fn shipped_scenarios_dir() -> Result<PathBuf, CliError> {
    Ok(shipped_root()?.join("scenarios"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_file_is_embedded() {
        let names: Vec<&str> = embedded::FILES.iter().map(|(p, _)| *p).collect();
        for want in [
            "packs/shop/pack.toml",
            "packs/shop/alerts.json",
            "packs/shop/logs.jsonl",
            "scenarios/01_pass.toml",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        assert!(names.iter().any(|n| n.starts_with("packs/shop/knowledge/")));
        assert!(names.iter().any(|n| n.starts_with("packs/shop/skills/")));
    }

    #[test]
    fn writing_out_twice_and_over_a_dead_copy_gives_one_complete_copy() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("abc");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("half-written"), b"x").unwrap();
        write_out(&dir).unwrap();
        write_out(&dir).unwrap();
        assert!(dir.join(COMPLETE).is_file());
        assert!(dir.join("packs/shop/pack.toml").is_file());
        assert!(!dir.join("half-written").exists());
        let scenario = std::fs::read_to_string(dir.join("scenarios/01_pass.toml")).unwrap();
        assert!(scenario.contains("../packs/shop"));
    }
}
