//! The word classes fact comparison needs, in English and Chinese: which
//! words negate, which carry a state or polarity (the words whose loss or
//! addition flips what a text says), which are filler, and number units.
//!
//! Lists, not a dictionary: they name the small closed classes that decide
//! meaning in alert, log and runbook lines. Everything not listed is a
//! fact-bearing word and must be quoted as it stands.

/// English negators (after `n't` became the part `t`).
pub fn is_negator_en(w: &str) -> bool {
    matches!(
        w,
        "not"
            | "no"
            | "never"
            | "none"
            | "nothing"
            | "nobody"
            | "nowhere"
            | "neither"
            | "nor"
            | "without"
            | "cannot"
            | "unable"
            | "t"
    )
}

/// Chinese negator characters.
pub fn is_negator_han(c: char) -> bool {
    matches!(
        c,
        '不' | '没' | '沒' | '未' | '无' | '無' | '非' | '否' | '别' | '勿' | '莫' | '甭'
    )
}

/// Two-character Chinese words whose first character is a negator but
/// which do not negate (非常 "very", 不过 "but", 未来 "future"...).
pub fn is_han_non_negation(first: char, second: char) -> bool {
    matches!(
        (first, second),
        ('非', '常')
            | ('不', '过')
            | ('不', '断')
            | ('未', '来')
            | ('无', '论')
            | ('不', '仅')
            | ('否', '则')
    )
}

/// Chinese words whose *second* character is a negator but which do not
/// negate: 级别 "level", 特别 "especially", 区别 "difference", 是否
/// "whether", 能否 "whether it can"... A negator is read after the
/// character before it, not only before the one after it.
pub fn is_han_non_negation_after(before: char, negator: char) -> bool {
    match negator {
        '别' => matches!(
            before,
            '级' | '特'
                | '区'
                | '类'
                | '分'
                | '识'
                | '个'
                | '告'
                | '派'
                | '性'
                | '差'
                | '鉴'
                | '辨'
                | '判'
                | '组'
                | '型'
        ),
        '否' => matches!(before, '是' | '能' | '可' | '与' | '成' | '然' | '会'),
        '非' => matches!(before, '是' | '除'),
        _ => false,
    }
}

/// English state and polarity words: states of alerts, services and
/// checks, directions and comparisons. Losing or adding one changes what a
/// line says even when every other word is kept.
pub fn is_polarity_en(w: &str) -> bool {
    matches!(
        w,
        "firing"
            | "resolved"
            | "pending"
            | "inactive"
            | "up"
            | "down"
            | "ok"
            | "healthy"
            | "unhealthy"
            | "health"
            | "available"
            | "unavailable"
            | "reachable"
            | "unreachable"
            | "success"
            | "successful"
            | "successfully"
            | "succeeded"
            | "succeed"
            | "fail"
            | "failed"
            | "failing"
            | "failure"
            | "failures"
            | "above"
            | "below"
            | "over"
            | "under"
            | "exceed"
            | "exceeded"
            | "exceeds"
            | "exceeding"
            | "higher"
            | "lower"
            | "high"
            | "low"
            | "increase"
            | "increased"
            | "increasing"
            | "decrease"
            | "decreased"
            | "decreasing"
            | "rising"
            | "falling"
            | "dropped"
            | "enabled"
            | "disabled"
            | "true"
            | "false"
            | "open"
            | "closed"
            | "started"
            | "stopped"
            | "running"
            | "alive"
            | "dead"
            | "recovered"
            | "recovering"
            | "degraded"
            | "normal"
            | "normally"
            | "abnormal"
            | "stable"
            | "unstable"
            | "fine"
            | "broken"
            | "crashed"
            | "crash"
            | "crashing"
            | "killed"
            | "restarted"
            | "ruled"
            | "rule"
            | "excluded"
            | "exclude"
            | "eliminated"
            | "nonexistent"
            | "absent"
            | "clean"
            | "clear"
            | "cleared"
            | "confirmed"
    )
}

/// Two-character Chinese state and polarity words.
pub const POLARITY_HAN: &[&str] = &[
    "成功", "失败", "正常", "异常", "健康", "恢复", "可用", "超过", "高于", "低于", "升高", "降低",
    "下降", "上升", "增加", "减少", "排除", "停止", "启动", "宕机", "崩溃", "解决", "触发", "稳定",
    "故障", "确认", "存在", "良好", "无恙", "完好",
];

/// Words that carry no fact of their own: articles, auxiliaries,
/// prepositions, and the nouns a quotation wraps around its facts.
pub fn is_filler_en(w: &str) -> bool {
    matches!(
        w,
        "a" | "an"
            | "the"
            | "is"
            | "are"
            | "was"
            | "were"
            | "be"
            | "been"
            | "being"
            | "has"
            | "have"
            | "had"
            | "of"
            | "to"
            | "in"
            | "on"
            | "at"
            | "for"
            | "and"
            | "or"
            | "with"
            | "by"
            | "from"
            | "as"
            | "it"
            | "its"
            | "this"
            | "that"
            | "these"
            | "those"
            | "there"
            | "which"
            | "while"
            | "then"
            | "so"
            | "s"
            | "isn"
            | "aren"
            | "wasn"
            | "weren"
            | "doesn"
            | "don"
            | "didn"
            | "hasn"
            | "haven"
            | "hadn"
            | "couldn"
            | "shouldn"
            | "wouldn"
            | "won"
            | "mustn"
            | "needn"
            | "ca"
            | "alert"
            | "alerts"
            | "log"
            | "logs"
            | "line"
            | "entry"
            | "message"
            | "msg"
            | "value"
            | "current"
            | "currently"
            | "reported"
            | "reports"
            | "shows"
            | "showed"
            | "says"
            | "said"
            | "event"
            | "minutes"
            | "minute"
            | "mins"
            | "min"
            | "seconds"
            | "second"
            | "secs"
            | "sec"
            | "hours"
            | "hour"
            | "hrs"
            | "milliseconds"
            | "millis"
            | "percent"
            | "pct"
            | "days"
            | "day"
    )
}

/// Chinese characters that carry no fact of their own.
pub fn is_filler_han(c: char) -> bool {
    matches!(
        c,
        '的' | '了'
            | '在'
            | '是'
            | '和'
            | '与'
            | '及'
            | '等'
            | '其'
            | '有'
            | '为'
            | '着'
            | '个'
            | '条'
            | '该'
            | '此'
            | '这'
            | '那'
            | '中'
            | '里'
            | '已'
            | '经'
            | '被'
            | '将'
            | '会'
            | '当'
    )
}

/// The canonical unit of a unit word or suffix (`m`, `minutes`, `分钟` ->
/// `min`; `MB`, `req/s`, `%`), or None when it is not a time, size, rate
/// or percentage unit. Text is lower case (as [`super::FactText`] parts
/// are); a rate is written `x/y` whatever connector joined it.
pub fn canonical_unit(u: &str) -> Option<&'static str> {
    Some(match u {
        "" => "",
        "m" | "min" | "mins" | "minute" | "minutes" | "分钟" | "分" => "min",
        "s" | "sec" | "secs" | "second" | "seconds" | "秒" | "秒钟" => "s",
        "ms" | "millis" | "millisecond" | "milliseconds" | "毫秒" => "ms",
        "us" | "μs" | "µs" | "microsecond" | "microseconds" | "微秒" => "us",
        "ns" | "nanosecond" | "nanoseconds" | "纳秒" => "ns",
        "h" | "hr" | "hrs" | "hour" | "hours" | "小时" | "个小时" => "h",
        "d" | "day" | "days" | "天" => "d",
        "%" | "percent" | "pct" => "%",
        "b" | "byte" | "bytes" | "字节" => "b",
        "kb" | "kilobyte" | "kilobytes" => "kb",
        "mb" | "megabyte" | "megabytes" => "mb",
        "gb" | "gigabyte" | "gigabytes" => "gb",
        "tb" | "terabyte" | "terabytes" => "tb",
        "kib" => "kib",
        "mib" => "mib",
        "gib" => "gib",
        "tib" => "tib",
        "rps" | "req/s" | "reqs/s" | "request/s" | "requests/s" | "req/sec" => "req/s",
        "qps" | "q/s" | "queries/s" | "query/s" => "qps",
        "ops/s" | "op/s" | "ops/sec" => "ops/s",
        "b/s" | "bytes/s" => "b/s",
        "kb/s" => "kb/s",
        "mb/s" => "mb/s",
        "gb/s" => "gb/s",
        "kib/s" => "kib/s",
        "mib/s" => "mib/s",
        "gib/s" => "gib/s",
        _ => return None,
    })
}

/// English number words up to ninety-nine (`ninety`, `two`), with their value.
pub fn number_word(w: &str) -> Option<u64> {
    Some(match w {
        "zero" => 0,
        "one" => 1,
        "two" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "eleven" => 11,
        "twelve" => 12,
        "thirteen" => 13,
        "fourteen" => 14,
        "fifteen" => 15,
        "sixteen" => 16,
        "seventeen" => 17,
        "eighteen" => 18,
        "nineteen" => 19,
        "twenty" => 20,
        "thirty" => 30,
        "forty" => 40,
        "fifty" => 50,
        "sixty" => 60,
        "seventy" => 70,
        "eighty" => 80,
        "ninety" => 90,
        "hundred" => 100,
        "thousand" => 1000,
        _ => return None,
    })
}

/// Whether a single Chinese numeral before `rest` is a number: before a
/// time unit (五分钟, 一小时), or, other than 一 ("a"), before a measure
/// word (两次, 三个). Elsewhere a lone numeral is part of a word (一切,
/// 十分 "very", 一些).
pub fn lone_han_numeral_counts(c: char, rest: &str) -> bool {
    const TIME_UNITS: &[&str] = &["分钟", "秒", "毫秒", "微秒", "纳秒", "小时", "个小时", "天"];
    const MEASURES: &[char] = &[
        '个', '次', '条', '台', '倍', '项', '处', '名', '位', '例', '笔', '行', '遍', '种', '组',
        '块', '张', '份', '秒',
    ];
    TIME_UNITS.iter().any(|u| rest.starts_with(u))
        || (c != '一' && rest.chars().next().is_some_and(|n| MEASURES.contains(&n)))
}
