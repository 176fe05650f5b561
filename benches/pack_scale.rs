//! Benchmark: `diagraph ask` on a pack of a million log lines, against one
//! `grep -c` scan of the same `logs.jsonl` measured in the same run.
//!
//! The pack is generated here and never committed: the loghub samples of
//! `../shared/realdata` (else the shipped pack's logs) read with the
//! shipped log formats, written as `logs.jsonl` lines and repeated, each
//! copy a minute later, up to `DIAGRAPH_BENCH_LINES` lines (default
//! 1,000,000). Then, with its own cache, data and config directories:
//! `grep -c` (best of 3); the first `ask`, which reads the file and writes
//! its index (cold); and `ask` again (warm, best and worst of 5). Each
//! `ask` is the release binary as a child process; its peak resident
//! memory is the child's `ru_maxrss`. Prints `name=value` lines; the goal
//! is `warm_ask_ms_best < grep_c_ms_best` and `warm_ask_max_rss_mb <= 150`.
//!
//! Run with `cargo bench --bench pack_scale`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use diagraph::tools::logs::LogLine;
use diagraph::tools::logs::format::{Defaults, Format};
use diagraph::tools::logs::index::SETTLE;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const DEFAULT_LINES: usize = 1_000_000;
const QUESTION: &str = "why is hadoop failing?";
const NEEDLE: &str = "ERROR IN CONTACTING RM";

fn main() {
    let lines: usize = std::env::var("DIAGRAPH_BENCH_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_LINES);
    let work =
        std::env::temp_dir().join(format!("diagraph-bench-pack-scale-{}", std::process::id()));
    let pack = work.join("pack");
    std::fs::create_dir_all(&pack).unwrap();
    let started = Instant::now();
    let (base, services) = base_lines();
    let written = write_pack(&pack, &base, &services, lines);
    let logs = pack.join("logs.jsonl");
    let bytes = std::fs::metadata(&logs).unwrap().len();
    println!("pack_lines={written}");
    println!("pack_mb={:.0}", bytes as f64 / 1e6);
    println!("pack_generate_ms={}", started.elapsed().as_millis());
    // A file changed within SETTLE of its read is not indexed on disk.
    std::thread::sleep(SETTLE + Duration::from_millis(200));

    let grep = (0..3)
        .map(|_| {
            let t = Instant::now();
            let out = Command::new("grep")
                .arg("-c")
                .arg(NEEDLE)
                .arg(&logs)
                .output()
                .unwrap();
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            let n: u64 = String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .unwrap_or(0);
            (ms, n)
        })
        .collect::<Vec<_>>();
    let grep_best = grep.iter().map(|g| g.0).fold(f64::MAX, f64::min);
    println!("grep_c_matches={}", grep[0].1);
    println!("grep_c_ms_best={grep_best:.0}");

    let bin = PathBuf::from(env!("CARGO_BIN_EXE_diagraph"));
    let cold = ask(&bin, &work, &pack);
    println!("cold_ask_ms={:.0}", cold.ms);
    println!("cold_ask_max_rss_mb={:.0}", cold.rss_mb);
    let index_mb: u64 = std::fs::read_dir(work.join("cache/diagraph/log-index"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0);
    println!("index_mb={:.0}", index_mb as f64 / 1e6);
    let warm: Vec<Ask> = (0..5).map(|_| ask(&bin, &work, &pack)).collect();
    let best = warm.iter().map(|a| a.ms).fold(f64::MAX, f64::min);
    let worst = warm.iter().map(|a| a.ms).fold(0.0, f64::max);
    let rss = warm.iter().map(|a| a.rss_mb).fold(0.0, f64::max);
    println!("warm_ask_ms_best={best:.0}");
    println!("warm_ask_ms_worst={worst:.0}");
    println!("warm_ask_max_rss_mb={rss:.0}");
    println!(
        "warm_ask_faster_than_grep_c={}",
        if best < grep_best { "yes" } else { "no" }
    );
    println!(
        "warm_ask_within_150mb={}",
        if rss <= 150.0 { "yes" } else { "no" }
    );
    // The answer states the exact count of the flood, not a sample's.
    let count = grep[0].1.to_string();
    println!(
        "answer_states_exact_count={}",
        if warm.iter().all(|a| a.stdout.contains(&count)) {
            "yes"
        } else {
            "no"
        }
    );
    if std::env::var_os("DIAGRAPH_BENCH_SHOW").is_some() {
        println!("{}", warm[0].stdout);
    }
    std::fs::remove_dir_all(&work).ok();
}

struct Ask {
    ms: f64,
    rss_mb: f64,
    stdout: String,
}

/// One `diagraph ask` with its own directories: wall time, peak RSS.
fn ask(bin: &Path, work: &Path, pack: &Path) -> Ask {
    let mut cmd = Command::new(bin);
    cmd.args(["--model", "offline", "--pack"])
        .arg(pack)
        .args(["ask", QUESTION])
        .env("XDG_CACHE_HOME", work.join("cache"))
        .env("XDG_DATA_HOME", work.join("data"))
        .env("XDG_CONFIG_HOME", work.join("config"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    for (k, _) in std::env::vars() {
        if k.starts_with("DIAGRAPH_") {
            cmd.env_remove(k);
        }
    }
    let t = Instant::now();
    // Reaped by wait4 in wait_with_rss, which std's wait cannot report.
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.spawn().unwrap();
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    let (code, rss_kb) = wait_with_rss(&child);
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    assert!(code == 0 || code == 3, "ask exited {code}: {stdout}");
    Ask {
        ms,
        rss_mb: rss_kb as f64 / 1024.0,
        stdout,
    }
}

/// Waits for the child and reads its own peak resident memory (KiB).
fn wait_with_rss(child: &std::process::Child) -> (i32, i64) {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data the call fills; the pid is our child,
    // waited for here only (std's Child is not waited on afterwards).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4 failed");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, usage.ru_maxrss)
}

/// The lines to repeat, as `logs.jsonl` objects, and their services.
fn base_lines() -> (Vec<LogLine>, Vec<String>) {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let real = [
        manifest.join("../shared/realdata"),
        PathBuf::from("/work/shared/realdata"),
    ]
    .into_iter()
    .find(|d| d.join("loghub").is_dir());
    let mut out = Vec::new();
    let mut services = Vec::new();
    if let Some(real) = real {
        let mut sets: Vec<PathBuf> = std::fs::read_dir(real.join("loghub"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        sets.sort();
        for set in sets {
            let name = set.file_name().unwrap().to_string_lossy().to_lowercase();
            let Some(log) = std::fs::read_dir(&set)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .find(|p| p.to_string_lossy().ends_with("_2k.log"))
            else {
                continue;
            };
            let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
            let first: Vec<&str> = text.lines().take(20).collect();
            let Some(format) = Format::detect(&first) else {
                eprintln!("{}: format not recognised; left out", log.display());
                continue;
            };
            let defaults = Defaults {
                service: Some(name.clone()),
                strict: false,
            };
            let before = out.len();
            out.extend(text.lines().filter_map(|l| format.parse(l, &defaults).ok()));
            if out.len() > before {
                services.push(name);
            }
        }
    }
    if out.is_empty() {
        eprintln!("realdata not found: repeating the shipped pack's logs");
        let shop = manifest.join("fixtures/packs/shop/logs.jsonl");
        for l in std::fs::read_to_string(shop).unwrap().lines() {
            if let Ok(line) = serde_json::from_str::<LogLine>(l) {
                if !services.contains(&line.service) {
                    services.push(line.service.clone());
                }
                out.push(line);
            }
        }
    }
    (out, services)
}

/// Writes the pack: its `logs.jsonl` the base lines repeated up to `want`
/// lines, and a firing alert on the first service. Returns lines written.
fn write_pack(dir: &Path, base: &[LogLine], services: &[String], want: usize) -> usize {
    let list: Vec<String> = services.iter().map(|s| format!("{s:?}")).collect();
    std::fs::write(
        dir.join("pack.toml"),
        format!("name = \"scale\"\nservices = [{}]\n", list.join(", ")),
    )
    .unwrap();
    let target = services
        .iter()
        .find(|s| *s == "hadoop")
        .unwrap_or(&services[0]);
    let newest = base.iter().map(|l| l.ts).max().unwrap();
    let alerts = serde_json::json!([{
        "labels": {"alertname": "ResourceManagerUnreachable", "service": target, "severity": "critical"},
        "annotations": {"summary": "the resource manager cannot be reached"},
        "state": "firing",
        "activeAt": newest,
        "value": "1"
    }]);
    std::fs::write(dir.join("alerts.json"), alerts.to_string()).unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(dir.join("logs.jsonl")).unwrap());
    let mut n = 0;
    'copies: for copy in 0.. {
        for l in base {
            if n >= want {
                break 'copies;
            }
            let mut line = l.clone();
            line.ts -= chrono::Duration::minutes(copy);
            serde_json::to_writer(&mut out, &line).unwrap();
            out.write_all(b"\n").unwrap();
            n += 1;
        }
    }
    out.flush().unwrap();
    n
}
