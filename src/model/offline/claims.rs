//! Building executor_evidence_v2 claims from collected evidence.
//!
//! Claims come only from evidence refs: one claim per alert, one per log
//! group (with its count and time range, binding every line), one
//! negative_observation per query that found nothing. A root_cause claim
//! is made only when error logs sit on the service of a firing alert, and
//! binds both. Runbook text becomes hypotheses and actions, never claims.
//! Every binding's excerpt is the ref text itself.

use crate::evidence::facts::FactText;
use crate::evidence::facts::grounded::added;
use crate::model::offline::OfflineOptions;
use crate::model::offline::depend;
use crate::model::offline::evidence::{
    AlertItem, Collected, LogItem, NoEvidence, Source, Timing, group_count, group_logs,
    group_range, is_error_level, level_rank, timing,
};
use crate::model::offline::relevance::Relevance;
use crate::model::offline::text::{contains_ci, literal_pieces, whole_words};
use crate::vocab::contracts::{Claim, EvidenceBinding, Hypothesis, Lang, RecommendedAction};
use crate::vocab::tool::{LOOKUP_KNOWLEDGE, QUERY_METRICS};
use chrono::Duration;

const MAX_ALERT_CLAIMS: usize = 5;
const MAX_LOG_CLAIMS: usize = 4;
const MAX_NEGATIVE_CLAIMS: usize = 4;
const NARROW_MAX_CLAIMS: usize = 2;
/// Patterns below ERROR offered as possible causes when none is likely.
const MAX_POSSIBLE_CAUSES: usize = 2;
/// Error lines of one pattern needed before it may be called a cause.
const MIN_CAUSE_LINES: usize = 2;

/// The services the question asks about: its plan's subjects (services
/// and components) and the services its queries name. Empty: the
/// question names none, so any service may carry the cause.
#[derive(Debug, Clone, Default)]
pub struct AskedAbout {
    names: Vec<String>,
}

impl AskedAbout {
    pub fn new(plan: &crate::vocab::contracts::PlannerPlan) -> AskedAbout {
        let mut names: Vec<String> = plan
            .subjects
            .services
            .iter()
            .chain(&plan.subjects.components)
            .map(|s| s.to_lowercase())
            .collect();
        if !names.is_empty() {
            names.extend(
                plan.queries
                    .iter()
                    .filter_map(|q| q.arguments.get("service")?.as_str())
                    .map(str::to_lowercase),
            );
        }
        AskedAbout { names }
    }

    /// Whether `service` is one asked about (or nothing was named).
    fn includes(&self, service: &str) -> bool {
        let s = service.to_lowercase();
        self.names.is_empty()
            || self
                .names
                .iter()
                .any(|n| !n.is_empty() && (s.contains(n.as_str()) || n.contains(s.as_str())))
    }
}

/// Claims without ids yet; the caller numbers them.
pub struct Draft {
    pub claims: Vec<Claim>,
    pub hypotheses: Vec<Hypothesis>,
    pub actions: Vec<RecommendedAction>,
    pub missing: Vec<String>,
}

pub fn binding(src: &Source) -> EvidenceBinding {
    EvidenceBinding {
        source_type: "tool_trace".into(),
        source_id: String::new(),
        tool_name: src.tool.clone(),
        source_invocation_id: src.invocation_id,
        invalid_invocation_id: None,
        raw_path: Some(src.raw_path.clone()),
        evidence_excerpt: src.text.clone(),
    }
}

fn claim(claim_type: &str, text: String, bindings: Vec<EvidenceBinding>) -> Claim {
    Claim {
        claim_id: String::new(),
        claim_type: claim_type.into(),
        claim_text: text,
        support_level: "direct".into(),
        evidence_bindings: bindings,
    }
}

pub fn build(
    c: &Collected,
    question: &str,
    narrow: bool,
    lang: Lang,
    options: &OfflineOptions,
    asked: &AskedAbout,
) -> Draft {
    let zh = lang == Lang::Zh;
    let mut claims = Vec::new();
    let groups = group_logs(&c.logs);
    let mut used_alert: Vec<bool> = vec![false; c.alerts.len()];
    let mut used_group: Vec<bool> = vec![false; groups.len()];

    let mut history: Vec<bool> = vec![false; groups.len()];
    let mut possible: Vec<Hypothesis> = Vec::new();
    if !narrow {
        let mut found = cause(c, &groups, options.cause_margin, zh);
        // A cause on a service the question did not ask about answers
        // another question: its lines stay plain observations.
        if found.claim.is_some()
            && !found
                .alerts
                .iter()
                .all(|i| c.alerts.get(*i).is_some_and(|a| asked.includes(&a.service)))
        {
            found.claim = None;
            found.alerts.clear();
            found.groups.clear();
        }
        for (gi, h) in history.iter_mut().enumerate() {
            *h = found.history.contains(&gi);
        }
        if found.claim.is_none() {
            possible = possible_causes(c, &groups, options.cause_margin, zh);
        }
        if let Some(claim) = found.claim {
            claims.push(claim);
            for i in found.alerts {
                used_alert[i] = true;
            }
            for i in found.groups {
                used_group[i] = true;
            }
        }
    }
    // Firing alerts first, then the rest, in result order.
    let mut alert_order: Vec<usize> = (0..c.alerts.len()).collect();
    alert_order.sort_by_key(|i| {
        c.alerts
            .get(*i)
            .map_or(1, |a| u8::from(a.state != "firing"))
    });
    let alert_cap = if narrow {
        NARROW_MAX_CLAIMS
    } else {
        MAX_ALERT_CLAIMS
    };
    for i in alert_order
        .into_iter()
        .filter(|i| !used_alert[*i])
        .take(alert_cap)
    {
        if let Some(a) = c.alerts.get(i) {
            let kind = if !narrow && a.state == "firing" {
                "symptom"
            } else {
                "observation"
            };
            claims.push(claim(kind, alert_text(a, zh), vec![binding(&a.src)]));
        }
    }
    let log_cap = if narrow {
        NARROW_MAX_CLAIMS
    } else {
        MAX_LOG_CLAIMS
    };
    let log_claims = used_group.iter().filter(|u| **u).count();
    let mut order: Vec<usize> = (0..groups.len()).filter(|i| !used_group[*i]).collect();
    Relevance::new(question, &groups, &c.alerts, &asked.names).sort(&mut order, &groups);
    for (_, g) in order
        .into_iter()
        .filter_map(|i| Some((i, groups.get(i)?)))
        .take(log_cap.saturating_sub(log_claims))
    {
        // A group logged before the alerts became active says so by its own
        // times: "before" is a sequence no evidence text states, so the
        // statement check would not let it through.
        let text = group_text(g, zh);
        claims.push(claim(
            "observation",
            text,
            g.iter().map(|l| binding(&l.src)).collect(),
        ));
    }
    // A service no source names is one finding, bound to every query
    // that said so; it must not read like a quiet service.
    let unknown = unknown_services(c);
    for (service, refs) in &unknown {
        claims.push(claim(
            "negative_observation",
            unknown_service_text(service, refs, zh),
            refs.iter().map(|n| binding(&n.src)).collect(),
        ));
    }
    let negatives: Vec<&NoEvidence> = c
        .no_evidence
        .iter()
        .filter(|n| n.src.tool != LOOKUP_KNOWLEDGE && !n.narrowed)
        .filter(|n| {
            !unknown
                .iter()
                .any(|(_, refs)| refs.iter().any(|r| std::ptr::eq(*r, *n)))
        })
        .take(MAX_NEGATIVE_CLAIMS.saturating_sub(unknown.len()))
        .collect();
    for n in &negatives {
        claims.push(claim(
            "negative_observation",
            negative_text(n, zh),
            vec![binding(&n.src)],
        ));
    }
    if narrow {
        claims.truncate(NARROW_MAX_CLAIMS);
    }

    let mut missing: Vec<String> = c
        .failures
        .iter()
        .map(|f| {
            // A failed call checked nothing: it must not read as "found nothing".
            if zh {
                format!("未能检查（工具调用失败）：{f}")
            } else {
                format!("Could not check (the tool call failed): {f}")
            }
        })
        .collect();
    for (tool, query, returned, total) in &c.truncated {
        missing.push(if zh {
            format!("{tool} {query} 只返回了 {returned} 条（共 {total} 条匹配），上面的条数只统计返回的行")
        } else {
            format!("{tool} {query} returned {returned} of {total} matching lines; the counts above are of the returned lines only")
        });
    }
    if c.alerts.is_empty() && c.logs.is_empty() {
        missing.push(if zh {
            "本次查询没有检索到任何告警或日志证据，无法给出根因".into()
        } else {
            "The queries returned no alert or log evidence, so no cause can be stated".into()
        });
    } else if !claims.iter().any(|c| c.claim_type == "root_cause") && !narrow {
        missing.push(match (possible.is_empty(), zh) {
            (true, false) => "The evidence does not tie a repeated error pattern to a firing alert on the same service, so no cause is confirmed".into(),
            (true, true) => "证据没有把重复出现的错误日志与某个触发中的告警关联起来，根因无法由证据直接确定".into(),
            // The pattern that coincides is below ERROR: a lead, not a cause.
            (false, false) => "No ERROR-level pattern coincides with a firing alert on its service: the possible cause among the hypotheses (lines below ERROR in the alert's window) is not confirmed until an error or a metric shows it".into(),
            (false, true) => "没有 ERROR 级别的日志模式与同一服务上触发中的告警同时出现：假设中的可能原因（告警窗口内低于 ERROR 级别的日志）尚未确认，需要错误日志或指标来证实".into(),
        });
    }
    let (hypotheses, actions) = if narrow {
        (vec![], vec![])
    } else {
        let current: Vec<&str> = groups
            .iter()
            .enumerate()
            .filter(|(i, _)| !history[*i])
            .filter_map(|(_, g)| g.first().map(|l| l.template.as_str()))
            .collect();
        let (runbook, actions) =
            super::runbook::material(c, &super::runbook::Topic::new(question, c, &current), zh);
        // What this environment's evidence suggests leads; general runbook
        // guidance follows.
        possible.extend(runbook);
        (possible, actions)
    };
    Draft {
        claims,
        hypotheses,
        actions,
        missing,
    }
}

/// The likely cause the evidence supports, the alerts and groups it
/// binds, and the groups that are earlier history.
#[derive(Default)]
struct Cause {
    claim: Option<Claim>,
    alerts: Vec<usize>,
    groups: Vec<usize>,
    history: Vec<usize>,
}

/// A repeated error pattern is a likely cause only on the service of an
/// active alert and only when its lines reach into the alert's active
/// window (within `margin`); patterns that ended before every active
/// alert began are earlier history. When the pattern's lines blame
/// another service (a timeout to it, 5xx from it), the cause is that
/// service: stated with its own errors when they are here, else as a
/// cause still to be confirmed from its own evidence.
fn cause(c: &Collected, groups: &[Vec<&LogItem>], margin: Duration, zh: bool) -> Cause {
    let mut out = Cause::default();
    let repeated = |g: &[&LogItem]| {
        g.first().is_some_and(|f| {
            is_error_level(&f.level)
                && !f.service.is_empty()
                && group_count(g) >= MIN_CAUSE_LINES as u64
        })
    };
    let active: Vec<(usize, &AlertItem)> = c
        .alerts
        .iter()
        .enumerate()
        .filter(|(_, a)| a.is_active())
        .collect();
    // Older than every active alert's window: earlier history.
    for (gi, g) in groups.iter().enumerate() {
        if !active.is_empty()
            && active
                .iter()
                .all(|(_, a)| timing(g, a, margin) == Timing::Before)
        {
            out.history.push(gi);
        }
    }
    for (gi, g) in groups.iter().enumerate() {
        let Some(first) = g.first() else { continue };
        if !repeated(g) {
            continue;
        }
        let Some((ai, a)) = active.iter().copied().find(|(_, a)| {
            a.state == "firing"
                && a.service.eq_ignore_ascii_case(&first.service)
                && timing(g, a, margin) == Timing::Overlaps
        }) else {
            continue;
        };
        let blamed = g
            .iter()
            .flat_map(|l| depend::mentions(&l.src.text, &l.service))
            .next();
        let Some(dep) = blamed else {
            let mut b = vec![binding(&a.src)];
            b.extend(g.iter().map(|l| binding(&l.src)));
            out.claim = Some(claim("root_cause", root_cause_text(a, g, zh), b));
            out.alerts.push(ai);
            out.groups.push(gi);
            return out;
        };
        // The blamed service's own repeated errors, in the same window.
        let own = groups.iter().enumerate().find(|(_, h)| {
            h.first()
                .is_some_and(|f| f.service.eq_ignore_ascii_case(&dep))
                && repeated(h)
                && timing(h, a, margin) == Timing::Overlaps
        });
        match own {
            Some((hi, h)) => {
                let mut b = vec![binding(&a.src)];
                b.extend(h.iter().map(|l| binding(&l.src)));
                b.extend(g.iter().take(3).map(|l| binding(&l.src)));
                out.claim = Some(claim("root_cause", upstream_cause_text(a, g, h, zh), b));
                out.groups.push(hi);
            }
            None => {
                let mut b = vec![binding(&a.src)];
                b.extend(g.iter().map(|l| binding(&l.src)));
                out.claim = Some(claim("root_cause", blamed_text(&dep, a, g, zh), b));
            }
        }
        out.alerts.push(ai);
        out.groups.push(gi);
        return out;
    }
    out
}

/// Possible causes to state as hypotheses when no error pattern is a
/// likely cause: a repeated pattern below ERROR (WARN: GC pauses, slow
/// calls) on the service of a firing alert, reaching into the alert's
/// active window (the same time rule as a cause). Bound to the alert and
/// the pattern's first line, so the Gatekeeper checks what it rests on.
fn possible_causes(
    c: &Collected,
    groups: &[Vec<&LogItem>],
    margin: Duration,
    zh: bool,
) -> Vec<Hypothesis> {
    let mut out = Vec::new();
    for g in groups {
        let Some(first) = g.first() else { continue };
        let warn_or_worse = level_rank(&first.level) <= level_rank("WARN");
        if !warn_or_worse || first.service.is_empty() || group_count(g) < MIN_CAUSE_LINES as u64 {
            continue;
        }
        let Some(a) = c.alerts.iter().find(|a| {
            a.state == "firing"
                && a.service.eq_ignore_ascii_case(&first.service)
                && timing(g, a, margin) == Timing::Overlaps
        }) else {
            continue;
        };
        let since = a
            .details
            .iter()
            .find(|(k, _)| k == "since")
            .map(|(_, v)| v.as_str());
        let text = if zh {
            let since = since.map_or(String::new(), |s| format!("（自 {s} 起）"));
            format!(
                "{} 的可能原因（未经确认）： 告警 {} 处于 {}{since}期间，出现 {}{}，模式为 \"{}\"",
                first.service,
                a.alertname,
                a.state,
                lines_zh(g, &first.level),
                time_range(g, true),
                quote(g)
            )
        } else {
            let since = since.map_or(String::new(), |s| format!(" since {s}"));
            format!(
                "Possible cause on {}, not confirmed: {}{} matching \"{}\" while {} is {}{since}",
                first.service,
                lines_en(g, &first.level, "log"),
                time_range(g, false),
                quote(g),
                a.alertname,
                a.state
            )
        };
        out.push(Hypothesis {
            hypothesis_text: text,
            basis: if zh {
                format!(
                    "{} 的 {} 日志与告警 {} 的时间窗口重叠",
                    first.service, first.level, a.alertname
                )
            } else {
                format!(
                    "{} lines of {} overlap the active window of {}",
                    first.level, first.service, a.alertname
                )
            },
            needed_evidence: vec![if zh {
                "同一时间窗口内能直接说明原因的错误日志或指标".into()
            } else {
                "error lines or a metric in the same window that show the cause directly".into()
            }],
            evidence_bindings: vec![binding(&a.src), binding(&first.src)],
        });
        if out.len() >= MAX_POSSIBLE_CAUSES {
            break;
        }
    }
    out
}

/// The cause is upstream and its own errors are here.
fn upstream_cause_text(a: &AlertItem, g: &[&LogItem], h: &[&LogItem], zh: bool) -> String {
    let own = h.first().map_or("", |l| l.service.as_str());
    let level = h.first().map_or("ERROR", |l| l.level.as_str());
    let d = details(a);
    if zh {
        format!(
            "{own} 的可能根因（{} 的上游依赖）： {own} 记录了 {}{}，模式为 \"{}\"； {} 的日志指向 {own}，模式为 \"{}\"，同时告警 {} 处于 {}（{d}）",
            a.service,
            lines_zh(h, level),
            time_range(h, true),
            quote(h),
            a.service,
            quote(g),
            a.alertname,
            a.state
        )
    } else {
        format!(
            "Likely cause on {own}, upstream of {}: {}{} matching \"{}\"; {}'s own lines blame it (\"{}\") while {} is {} ({d})",
            a.service,
            lines_en(h, level, "log"),
            time_range(h, false),
            quote(h),
            a.service,
            quote(g),
            a.alertname,
            a.state
        )
    }
}

/// The cause is upstream and only the caller's lines name it: a cause
/// still to confirm from the blamed service's own evidence.
fn blamed_text(dep: &str, a: &AlertItem, g: &[&LogItem], zh: bool) -> String {
    let level = g.first().map_or("ERROR", |l| l.level.as_str());
    let d = details(a);
    if zh {
        // only words its evidence grounds: the caller's lines name `dep`
        format!(
            "{dep} 的可能根因： 告警 {} 处于 {}（{d}）期间，{} 记录了 {}{}，模式为 \"{}\"",
            a.alertname,
            a.state,
            a.service,
            lines_zh(g, level),
            time_range(g, true),
            quote(g)
        )
    } else {
        format!(
            "{dep}, the likely cause: {} logged {}{} matching \"{}\" while {} is {} ({d})",
            a.service,
            lines_en(g, level, ""),
            time_range(g, false),
            quote(g),
            a.alertname,
            a.state
        )
    }
}

fn details(a: &AlertItem) -> String {
    a.details
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn alert_text(a: &AlertItem, zh: bool) -> String {
    let name = if a.alertname.is_empty() {
        "(unnamed alert)"
    } else {
        &a.alertname
    };
    let state = if a.state.is_empty() {
        "unknown"
    } else {
        &a.state
    };
    let d = details(a);
    match (zh, a.service.is_empty()) {
        (false, false) => format!("{name} is {state} on {} ({d})", a.service),
        (false, true) => format!("{name} is {state} ({d})"),
        (true, false) => format!("{} 上的告警 {name} 状态为 {state}（{d}）", a.service),
        (true, true) => format!("告警 {name} 状态为 {state}（{d}）"),
    }
}

/// The quoted pattern of a group: its template when every literal piece of
/// it is in the first line's ref text (so a reader and the Verifier can
/// find it there) and, quoted in a claim, it states nothing that ref does
/// not (a template masks parts of names: `attempt_*_*_m_*` reads as a name
/// `attempt-m`, and a leading `*:` joins the word before the quote); else
/// the longest prefix of that line's message, in whole words, that states
/// nothing more.
fn quote(g: &[&LogItem]) -> String {
    let Some(first) = g.first() else {
        return String::new();
    };
    let evidence = [FactText::new(&first.src.text)];
    let grounded = |q: &str| {
        !q.is_empty()
            && [format!("matching \"{q}\""), format!("模式为 \"{q}\"")]
                .iter()
                .all(|s| added(&FactText::new(s), &evidence, &[]).is_none())
    };
    let t = first.template.replace('"', "'");
    if literal_pieces(&t)
        .iter()
        .all(|p| contains_ci(&first.src.text, p))
        && grounded(&t)
    {
        return t;
    }
    let message = message_of(first).replace('"', "'");
    [120, 80, 40]
        .into_iter()
        .map(|max| whole_words(&message, max))
        .find(|q| grounded(q))
        .unwrap_or_default()
}

/// The message of a log line's ref text: without the leading time, level
/// and service the tool writes, and without the figures it appends.
fn message_of(l: &LogItem) -> &str {
    let mut rest = l.src.text.as_str();
    if let Some(i) = rest.rfind(" | ").filter(|_| l.similar.is_some()) {
        rest = &rest[..i];
    }
    for word in [l.ts.as_str(), l.level.as_str(), l.service.as_str()] {
        let trimmed = rest.trim_start();
        rest = match trimmed.split_once(' ') {
            Some((head, tail)) if !word.is_empty() && head.eq_ignore_ascii_case(word) => tail,
            _ => trimmed,
        };
    }
    rest.trim()
}

/// How many lines a group stands for, when a ref it binds states it
/// (`… | N matching lines like this`). A count the sample merely shows
/// (ten refs bound) is in no ref text, so a statement carrying it would
/// add a number its evidence lacks; the citation (`x10`) shows it instead.
fn stated_count(g: &[&LogItem]) -> Option<u64> {
    g.iter()
        .any(|l| l.similar.is_some())
        .then(|| group_count(g))
}

/// `10 ERROR log lines`, or `ERROR log lines` / `an ERROR log line` when no
/// ref states the count. `log`: the word before "line(s)" ("" for none).
fn lines_en(g: &[&LogItem], level: &str, log: &str) -> String {
    let noun = |n: u64| if n == 1 { "line" } else { "lines" };
    let log = if log.is_empty() {
        String::new()
    } else {
        format!("{log} ")
    };
    match stated_count(g) {
        Some(n) => format!("{n} {level} {log}{}", noun(n)),
        None if g.len() == 1 => {
            let article = if level.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            format!("{article} {level} {log}line")
        }
        None => format!("{level} {log}lines"),
    }
}

/// `10 条 ERROR 日志`, or `ERROR 日志` when no ref states the count.
fn lines_zh(g: &[&LogItem], level: &str) -> String {
    match stated_count(g) {
        Some(n) => format!("{n} 条 {level} 日志"),
        None => format!("{level} 日志"),
    }
}

fn time_range(g: &[&LogItem], zh: bool) -> String {
    let range = group_range(g);
    let (first, last) = match &range {
        Some((a, b)) => (Some(a.as_str()), Some(b.as_str())),
        None => (None, None),
    };
    match (first, last, zh) {
        (Some(a), Some(b), false) if a != b => format!(" between {a} and {b}"),
        (Some(a), _, false) => format!(" at {a}"),
        (Some(a), Some(b), true) if a != b => format!("（{a} 至 {b}）"),
        (Some(a), _, true) => format!("（{a}）"),
        _ => String::new(),
    }
}

fn group_text(g: &[&LogItem], zh: bool) -> String {
    let Some(first) = g.first() else {
        return String::new();
    };
    let level = if first.level.is_empty() {
        "log"
    } else {
        &first.level
    };
    let who = if first.service.is_empty() {
        "The logs"
    } else {
        &first.service
    };
    if zh {
        let who = if first.service.is_empty() {
            "日志中"
        } else {
            &first.service
        };
        let q = quote(g);
        format!(
            "{who} 记录了 {}{}，模式为 \"{q}\"{}",
            lines_zh(g, level),
            time_range(g, true),
            masked_example(g, &q, true)
        )
    } else {
        let q = quote(g);
        format!(
            "{who} logged {}{} matching \"{q}\"{}",
            lines_en(g, level, ""),
            time_range(g, false),
            masked_example(g, &q, false)
        )
    }
}

static IPV4: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| crate::text::literal_regex(r"\b(?:\d{1,3}\.){3}\d{1,3}\b"));

/// A pattern that masks an address (`*.*.*.*`) loses which address it
/// was: the first line's own address is stated beside it, so an
/// attacker's or a peer's address is not lost to the template. Empty when
/// the pattern masks none or the line has none.
fn masked_example(g: &[&LogItem], quoted: &str, zh: bool) -> String {
    let Some(first) = g.first() else {
        return String::new();
    };
    if !quoted.contains("*.*.*.*") {
        return String::new();
    }
    let Some(ip) = IPV4.find(message_of(first)).map(|m| m.as_str()) else {
        return String::new();
    };
    let evidence = [FactText::new(&first.src.text)];
    let candidates = if zh {
        vec![format!("（例如 {ip}）"), format!("（{ip}）")]
    } else {
        vec![format!(" (e.g. {ip})"), format!(" ({ip})")]
    };
    candidates
        .into_iter()
        .find(|c| added(&FactText::new(c), &evidence, &[]).is_none())
        .unwrap_or_default()
}

fn root_cause_text(a: &AlertItem, g: &[&LogItem], zh: bool) -> String {
    let level = g.first().map_or("ERROR", |l| l.level.as_str());
    let d = details(a);
    if zh {
        format!(
            "{} 的可能根因： 告警 {} 处于 {}（{d}）期间，记录了 {}{}，模式为 \"{}\"",
            a.service,
            a.alertname,
            a.state,
            lines_zh(g, level),
            time_range(g, true),
            quote(g)
        )
    } else {
        format!(
            "Likely cause on {}: {}{} matching \"{}\", while {} is {} ({d})",
            a.service,
            lines_en(g, level, "log"),
            time_range(g, false),
            quote(g),
            a.alertname,
            a.state
        )
    }
}

/// Services that a source said it does not name, with the no-evidence
/// answers that said so, when nothing else returned anything about them.
fn unknown_services(c: &Collected) -> Vec<(String, Vec<&NoEvidence>)> {
    let mut out: Vec<(String, Vec<&NoEvidence>)> = Vec::new();
    for n in c.no_evidence.iter().filter(|n| n.unknown_service) {
        let Some(service) = &n.service else { continue };
        let seen = c
            .alerts
            .iter()
            .any(|a| a.service.eq_ignore_ascii_case(service))
            || c.logs
                .iter()
                .any(|l| l.service.eq_ignore_ascii_case(service));
        if seen {
            continue;
        }
        match out
            .iter_mut()
            .find(|(s, _)| s.eq_ignore_ascii_case(service))
        {
            Some((_, refs)) => refs.push(n),
            None => out.push((service.clone(), vec![n])),
        }
    }
    // Also bind the other no-evidence answers about the same service.
    for n in c.no_evidence.iter().filter(|n| !n.unknown_service) {
        let Some(service) = &n.service else { continue };
        if let Some((_, refs)) = out
            .iter_mut()
            .find(|(s, _)| s.eq_ignore_ascii_case(service))
        {
            refs.push(n);
        }
    }
    out
}

fn unknown_service_text(service: &str, refs: &[&NoEvidence], zh: bool) -> String {
    let queries: Vec<String> = refs
        .iter()
        .map(|n| format!("{} {}", n.src.tool, n.query))
        .collect();
    if zh {
        format!(
            "这些数据源中没有名为 {service} 的服务（查询：{}）",
            queries.join("；")
        )
    } else {
        format!(
            "No service named {service} in these sources (queried: {})",
            queries.join("; ")
        )
    }
}

fn negative_text(n: &NoEvidence, zh: bool) -> String {
    let (noun_en, noun_zh) = match n.src.tool.as_str() {
        QUERY_METRICS => ("alerts", "告警"),
        LOOKUP_KNOWLEDGE => ("documents", "文档"),
        _ => ("logs", "日志"),
    };
    if zh {
        format!(
            "本次查询 {} {} 未检索到匹配的{noun_zh}",
            n.src.tool, n.query
        )
    } else {
        format!(
            "The query {} {} found no matching {noun_en}",
            n.src.tool, n.query
        )
    }
}
