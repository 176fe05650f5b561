//! Chinese words of operations text with the English words that say the
//! same thing, so a Chinese statement about an English log line can be
//! compared fact by fact (`无法获取连接` speaks of the same connection as
//! "Connection is not available"). A gloss only ever *finds* a word in
//! the evidence; it never makes a statement pass on its own.

/// (Chinese word, English words of the same meaning, lower case).
const GLOSS: &[(&str, &[&str])] = &[
    ("连接池", &["pool", "pools"]),
    (
        "连接",
        &[
            "connection",
            "connections",
            "connect",
            "connected",
            "connecting",
        ],
    ),
    ("错误", &["error", "errors"]),
    ("报错", &["error", "errors"]),
    ("超时", &["timeout", "timeouts", "timed"]),
    ("请求", &["request", "requests"]),
    ("响应", &["response", "responses", "respond", "responded"]),
    (
        "获取",
        &["get", "got", "acquire", "acquired", "obtain", "obtained"],
    ),
    ("延迟", &["latency", "delay", "delayed"]),
    ("延时", &["latency", "delay", "delayed"]),
    ("内存", &["memory", "mem"]),
    ("磁盘", &["disk", "disks"]),
    ("告警", &["alert", "alerts", "alertname"]),
    ("日志", &["log", "logs"]),
    ("数据库", &["database", "db"]),
    ("线程", &["thread", "threads"]),
    ("队列", &["queue", "queues"]),
    ("重试", &["retry", "retries", "retried"]),
    ("拒绝", &["refused", "rejected", "denied"]),
    ("找到", &["found", "find"]),
    ("访问", &["access", "accessed"]),
    ("读取", &["read"]),
    ("写入", &["write", "written"]),
];

/// The English words that a run of Chinese text glosses (every gloss
/// word found in it, longest first so 连接池 is read before 连接).
pub fn english_of(han: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (zh, en) in GLOSS {
        if han.contains(zh) {
            out.extend(en.iter().copied());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glosses_find_the_english_words() {
        assert!(english_of("无法获取连接").contains(&"connection"));
        assert!(english_of("连接池耗尽").contains(&"pool"));
        assert!(english_of("一切如常").is_empty());
    }
}
