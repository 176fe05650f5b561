//! Knowledge search latency on a generated 10,000-document pack.
//!
//! Prints `lookup_knowledge_p50_ms=X` (target <= 2 ms), p95, the index
//! build time and the whole pack load time. Run: `cargo bench --bench knowledge`.

// A benchmark whose set-up fails should stop loudly, like a test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// The allocator the `diagraph` binary uses, so figures match the product.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use diagraph::knowledge::KnowledgeIndex;
use diagraph::tools::pack::Pack;
use std::time::Instant;

const DOCS: usize = 10_000;
const QUERIES: usize = 500;

const WORDS: &[&str] = &[
    "connection",
    "pool",
    "timeout",
    "latency",
    "cpu",
    "memory",
    "heap",
    "gc",
    "pause",
    "disk",
    "network",
    "packet",
    "loss",
    "dns",
    "certificate",
    "expired",
    "queue",
    "lag",
    "consumer",
    "replica",
    "leader",
    "election",
    "etcd",
    "kafka",
    "redis",
    "eviction",
    "throttling",
    "limit",
    "restart",
    "probe",
    "liveness",
    "readiness",
    "deploy",
    "rollback",
    "config",
    "secret",
    "token",
    "rate",
    "error",
    "5xx",
    "gateway",
    "upstream",
    "retry",
    "circuit",
    "breaker",
    "index",
    "query",
    "lock",
    "deadlock",
    "transaction",
    "replication",
    "backup",
    "snapshot",
    "quota",
    "ingress",
];
const HAN: &[&str] = &[
    "连接池",
    "超时",
    "内存",
    "重启",
    "磁盘",
    "网络",
    "延迟",
    "数据库",
    "证书",
    "队列",
];

/// A tiny deterministic generator so runs are comparable.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
    fn words(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| WORDS[self.next(WORDS.len())])
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("pack.toml"), "name = \"bench\"\n").expect("write");
    let mut rng = Lcg(42);
    for i in 0..DOCS {
        let domain = format!("domain{}", i % 12);
        let folder = d.join("knowledge").join(&domain);
        std::fs::create_dir_all(&folder).expect("mkdir");
        let han = HAN[rng.next(HAN.len())];
        let text = format!(
            "---\ntitle: Runbook {i} {}\nwhen_to_retrieve: {}\n---\n# Runbook {i}\n\n## Meaning\n{}\n\n## Diagnosis\n{} {han}\n\n### Commands\n{}\n\n## Mitigation\n{}\n",
            rng.words(3),
            rng.words(6),
            rng.words(60),
            rng.words(80),
            rng.words(40),
            rng.words(50),
        );
        std::fs::write(folder.join(format!("rb{i}.md")), text).expect("write");
    }

    let t = Instant::now();
    let pack = Pack::load(d).expect("pack loads");
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    let chunks = pack.index.chunks().to_vec();
    let n_chunks = chunks.len();
    let t = Instant::now();
    let index = KnowledgeIndex::build(chunks).expect("index builds");
    let build_ms = t.elapsed().as_secs_f64() * 1e3;

    let queries: Vec<(String, Option<String>)> = (0..QUERIES)
        .map(|i| {
            let q = if i % 10 == 0 {
                format!("{} {}", HAN[rng.next(HAN.len())], HAN[rng.next(HAN.len())])
            } else {
                rng.words(2 + i % 4)
            };
            let domain = (i % 4 == 0).then(|| format!("domain{}", i % 12));
            (q, domain)
        })
        .collect();
    // Warm up caches once, as a long-running session would be.
    for (q, dom) in queries.iter().take(20) {
        std::hint::black_box(index.search(q, dom.as_deref(), 5));
    }
    let mut times: Vec<f64> = Vec::with_capacity(QUERIES);
    let mut empty = 0;
    for (q, dom) in &queries {
        let t = Instant::now();
        let hits = index.search(q, dom.as_deref(), 5);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        if hits.is_empty() {
            empty += 1;
        }
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        times
            .get(((times.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(0.0)
    };
    println!(
        "documents={} chunks={n_chunks} queries={QUERIES} empty_results={empty}",
        pack.documents.len()
    );
    println!("pack_load_ms={load_ms:.1}");
    println!("index_build_ms={build_ms:.1}");
    println!("lookup_knowledge_p50_ms={:.3}", pct(0.5));
    println!("lookup_knowledge_p95_ms={:.3}", pct(0.95));
    println!("lookup_knowledge_max_ms={:.3}", pct(1.0));
}
