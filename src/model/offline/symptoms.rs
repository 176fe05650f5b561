//! The symptom vocabulary: error words in English and Chinese, the log
//! keywords that find them, and the terms that find their runbooks.
//!
//! Keywords are chosen to match real log text generically ("timed out",
//! "pool", "outofmemory"), not any one pack's lines.

/// One kind of symptom the question may name, with how to look for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symptom {
    pub id: &'static str,
    /// Lowercase English phrases, matched as whole words.
    pub(super) en: &'static [&'static str],
    /// Chinese phrases, matched as substrings.
    pub(super) zh: &'static [&'static str],
    /// Substrings to search log messages for (query_logs `keyword`).
    pub log_keywords: &'static [&'static str],
    /// Terms for the knowledge lookup.
    pub knowledge: &'static str,
}

pub const SYMPTOMS: &[Symptom] = &[
    Symptom {
        id: "connection_pool",
        en: &[
            "connection pool",
            "pool exhausted",
            "hikari",
            "hikaricp",
            "hikaripool",
            "db pool",
            "pool exhaustion",
        ],
        zh: &["连接池"],
        log_keywords: &["pool"],
        knowledge: "connection pool exhausted",
    },
    Symptom {
        id: "timeout",
        en: &["timeout", "timeouts", "timed out", "time out", "time-out"],
        zh: &["超时"],
        log_keywords: &["timeout", "timed out"],
        knowledge: "timeout",
    },
    Symptom {
        id: "oom",
        en: &[
            "oom",
            "oomkilled",
            "out of memory",
            "outofmemory",
            "outofmemoryerror",
            "memory leak",
        ],
        zh: &["内存溢出", "内存不足", "内存泄漏", "oom"],
        log_keywords: &["outofmemory", "out of memory"],
        knowledge: "out of memory",
    },
    Symptom {
        id: "memory",
        en: &["memory", "heap"],
        zh: &["内存"],
        log_keywords: &["memory"],
        knowledge: "memory usage",
    },
    Symptom {
        id: "http_5xx",
        en: &[
            "5xx",
            "5xxs",
            "500",
            "502",
            "503",
            "504",
            "500s",
            "502s",
            "503s",
            "504s",
            "internal server error",
            "bad gateway",
            "service unavailable",
            "gateway timeout",
        ],
        zh: &["5xx"],
        log_keywords: &[],
        knowledge: "5xx error rate",
    },
    Symptom {
        id: "cpu",
        en: &["cpu", "throttling", "throttled"],
        zh: &["cpu"],
        log_keywords: &["cpu"],
        knowledge: "high cpu usage",
    },
    Symptom {
        id: "latency",
        en: &[
            "slow",
            "slowness",
            "latency",
            "latencies",
            "response time",
            "p99",
            "p95",
            "sluggish",
        ],
        zh: &["慢", "延迟", "卡顿", "响应时间", "耗时"],
        log_keywords: &["slow"],
        knowledge: "high latency slow response",
    },
    Symptom {
        id: "gc",
        en: &["gc", "garbage collection", "gc pause"],
        zh: &["垃圾回收", "gc"],
        log_keywords: &["gc"],
        knowledge: "garbage collection pause",
    },
    Symptom {
        id: "disk",
        en: &[
            "disk",
            "no space",
            "filesystem",
            "file system",
            "inode",
            "inodes",
        ],
        zh: &["磁盘", "空间不足"],
        log_keywords: &["disk", "no space"],
        knowledge: "disk space filling up",
    },
    Symptom {
        id: "restart",
        en: &[
            "restart",
            "restarts",
            "restarting",
            "crash",
            "crashes",
            "crashing",
            "crashloop",
            "crashloopbackoff",
            "crashlooping",
        ],
        zh: &["重启", "崩溃"],
        log_keywords: &["restart", "crash"],
        knowledge: "crash looping restart",
    },
    Symptom {
        id: "connection",
        en: &[
            "connection refused",
            "connection reset",
            "connection error",
            "connection errors",
            "cannot connect",
            "can't connect",
            "unreachable",
            "network",
        ],
        zh: &["连接失败", "连接拒绝", "连接异常", "网络"],
        log_keywords: &["connection"],
        knowledge: "connection refused network",
    },
    Symptom {
        id: "deadlock",
        en: &["deadlock", "deadlocks", "lock wait"],
        zh: &["死锁", "锁等待"],
        log_keywords: &["deadlock"],
        knowledge: "deadlock lock wait",
    },
    Symptom {
        id: "down",
        en: &["down", "unavailable", "outage", "not responding"],
        zh: &["宕机", "不可用", "挂了"],
        log_keywords: &[],
        knowledge: "service down unavailable",
    },
    Symptom {
        id: "errors",
        en: &[
            "error",
            "errors",
            "exception",
            "exceptions",
            "failing",
            "failure",
            "failures",
            "failed",
        ],
        zh: &["错误", "异常", "报错", "失败"],
        log_keywords: &[],
        knowledge: "errors",
    },
];
