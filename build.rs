//! Embeds the shipped pack and scenarios (`fixtures/packs/shop`,
//! `fixtures/scenarios`) in the binary, so an installed `diagraph` runs its
//! defaults from any directory. `cli::shipped` writes them out once per
//! content into the cache directory.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const ROOTS: [&str; 2] = ["fixtures/packs/shop", "fixtures/scenarios"];

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let fixtures = manifest.join("fixtures");
    let mut files = Vec::new();
    for root in ROOTS {
        println!("cargo:rerun-if-changed={root}");
        walk(&manifest.join(root), &mut files);
    }
    let mut code = String::from("pub static FILES: &[(&str, &[u8])] = &[\n");
    for file in &files {
        let Ok(rel) = file.strip_prefix(&fixtures) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        let _ = writeln!(
            code,
            "    ({rel:?}, include_bytes!({:?})),",
            file.to_string_lossy()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("shipped.rs");
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=cannot write {}: {e}", out.display());
    }
}
