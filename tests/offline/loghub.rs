//! Evaluation packs built at test time from ../shared/realdata: the LogHub
//! samples (each system in its own line format) parsed into `logs.jsonl`,
//! alerts named after awesome-prometheus-alerts rules and timed where the
//! logs show an incident, and the prometheus-operator runbooks as
//! knowledge. The real text is read here, never copied into the
//! repository; what the repository keeps is this generator and the
//! question sets (`tests/eval/*.toml`) written against its packs.

use crate::helpers::copy_dir;
use serde_json::{Value, json};
use std::path::Path;

/// One parsed log line.
#[derive(Debug, Clone)]
pub struct Line {
    pub ts: String,
    pub service: String,
    pub level: String,
    pub message: String,
    pub extra: Vec<(&'static str, String)>,
}

impl Line {
    fn to_json(&self) -> Value {
        let mut v = json!({"ts": self.ts, "service": self.service, "level": self.level,
            "message": self.message});
        for (k, x) in &self.extra {
            v[*k] = json!(x);
        }
        v
    }
}

fn month(m: &str) -> Option<u32> {
    let i = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|x| *x == m)?;
    Some(i as u32 + 1)
}

/// `2015-07-29 17:41:44,747 - WARN  [thread] - message`
fn zookeeper(l: &str) -> Option<Line> {
    let (ts, rest) = l.split_once(" - ")?;
    let (level, rest) = rest.trim_start().split_once(' ')?;
    let (thread, message) = match rest.trim_start().split_once("] - ") {
        Some((t, m)) => (t.trim_start_matches('['), m),
        None => ("", rest),
    };
    Some(Line {
        ts: format!("{}Z", ts.replacen(' ', "T", 1).replace(',', ".")),
        service: "zookeeper".into(),
        level: level.into(),
        message: message.trim().into(),
        extra: vec![("thread", thread.into())],
    })
}

/// `2015-10-18 18:01:47,978 INFO [main] org.apache…MRAppMaster: message`
fn hadoop(l: &str) -> Option<Line> {
    let mut it = l.splitn(4, ' ');
    let (date, time, level, rest) = (it.next()?, it.next()?, it.next()?, it.next()?);
    let (thread, rest) = rest.strip_prefix('[')?.split_once("] ")?;
    let (class, message) = rest.split_once(": ").unwrap_or(("", rest));
    Some(Line {
        ts: format!("{date}T{}Z", time.replace(',', ".")),
        service: "hadoop-mrappmaster".into(),
        level: level.into(),
        message: message.trim().into(),
        extra: vec![("thread", thread.into()), ("logger", class.into())],
    })
}

/// `17/06/09 20:10:40 INFO executor.CoarseGrainedExecutorBackend: message`
fn spark(l: &str) -> Option<Line> {
    let mut it = l.splitn(4, ' ');
    let (date, time, level, rest) = (it.next()?, it.next()?, it.next()?, it.next()?);
    let mut d = date.split('/');
    let (y, m, dd) = (d.next()?, d.next()?, d.next()?);
    let (class, message) = rest.split_once(": ").unwrap_or(("", rest));
    Some(Line {
        ts: format!("20{y}-{m}-{dd}T{time}Z"),
        service: "spark-executor".into(),
        level: level.into(),
        message: message.trim().into(),
        extra: vec![("logger", class.into())],
    })
}

/// `081109 203615 148 INFO dfs.DataNode$PacketResponder: message`
fn hdfs(l: &str) -> Option<Line> {
    let mut it = l.splitn(5, ' ');
    let (date, time, _pid, level, rest) =
        (it.next()?, it.next()?, it.next()?, it.next()?, it.next()?);
    if date.len() != 6 || time.len() != 6 {
        return None;
    }
    let (class, message) = rest.split_once(": ").unwrap_or(("", rest));
    let service = if class.contains("FSNamesystem") || class.contains("NameNode") {
        "hdfs-namenode"
    } else {
        "hdfs-datanode"
    };
    Some(Line {
        ts: format!(
            "20{}-{}-{}T{}:{}:{}Z",
            &date[0..2],
            &date[2..4],
            &date[4..6],
            &time[0..2],
            &time[2..4],
            &time[4..6]
        ),
        service: service.into(),
        level: level.into(),
        message: message.trim().into(),
        extra: vec![("logger", class.into())],
    })
}

/// `- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872
/// R02-M1-N0-C:J12-U11 RAS KERNEL INFO message` (the first column is the
/// alert label, which is ground truth and never copied into the line).
fn bgl(l: &str) -> Option<Line> {
    let parts: Vec<&str> = l.splitn(10, ' ').collect();
    let [
        _label,
        _epoch,
        _date,
        node,
        ts,
        _node2,
        _kind,
        component,
        level,
        message,
    ] = parts.as_slice()
    else {
        return None;
    };
    // 2005-06-03-15.42.50.675872
    let (date, time) = ts.get(..10).zip(ts.get(11..))?;
    let time = time.replacen('.', ":", 2);
    Some(Line {
        ts: format!("{date}T{time}Z"),
        service: format!("bgl-{}", component.to_ascii_lowercase()),
        level: (*level).into(),
        message: message.trim().into(),
        extra: vec![("node", (*node).into())],
    })
}

/// `nova-api.log.1.2017-05-16_13:53:08 2017-05-16 00:00:00.008 25746 INFO
/// nova.osapi_compute.wsgi.server [req-…] message`
fn openstack(l: &str) -> Option<Line> {
    let mut it = l.splitn(7, ' ');
    let (file, date, time, _pid, level, logger, message) = (
        it.next()?,
        it.next()?,
        it.next()?,
        it.next()?,
        it.next()?,
        it.next()?,
        it.next()?,
    );
    let service = file.split(".log").next()?;
    Some(Line {
        ts: format!("{date}T{time}Z"),
        service: service.into(),
        level: level.into(),
        message: message.trim().into(),
        extra: vec![("logger", logger.into())],
    })
}

/// `[Sun Dec 04 04:47:44 2005] [error] message`
fn apache(l: &str) -> Option<Line> {
    let (ts, rest) = l.strip_prefix('[')?.split_once("] [")?;
    let (level, message) = rest.split_once("] ")?;
    let f: Vec<&str> = ts.split_whitespace().collect();
    let [_dow, mon, day, time, year] = f.as_slice() else {
        return None;
    };
    let day: u32 = day.parse().ok()?;
    Some(Line {
        ts: format!("{year}-{:02}-{day:02}T{time}Z", month(mon)?),
        service: "apache-httpd".into(),
        level: level.into(),
        message: message.trim().into(),
        extra: vec![],
    })
}

/// Reads one line of a system's format.
type Parser = fn(&str) -> Option<Line>;

/// The LogHub systems: directory name and line parser.
pub const SYSTEMS: &[(&str, Parser)] = &[
    ("Zookeeper", zookeeper),
    ("Hadoop", hadoop),
    ("Spark", spark),
    ("HDFS", hdfs),
    ("BGL", bgl),
    ("OpenStack", openstack),
    ("Apache", apache),
];

/// Every line of one system's 2k sample, parsed, in time order.
pub fn lines(src: &Path, system: &str) -> Vec<Line> {
    let parse = SYSTEMS
        .iter()
        .find(|(s, _)| *s == system)
        .map(|(_, p)| *p)
        .expect("a known LogHub system");
    let path = src.join(format!("loghub/{system}/{system}_2k.log"));
    let text = std::fs::read_to_string(&path).expect("loghub sample");
    let mut out: Vec<Line> = text.lines().filter_map(parse).collect();
    out.sort_by(|a, b| a.ts.cmp(&b.ts));
    out
}

/// An alert of the pack, named after a rule of awesome-prometheus-alerts.
pub struct AlertSpec {
    /// The rule's `name:` in rules.yml.
    pub rule: &'static str,
    pub service: &'static str,
    pub state: &'static str,
    pub active_at: &'static str,
}

/// What one evaluation pack holds.
pub struct PackSpec {
    pub name: &'static str,
    pub systems: &'static [&'static str],
    pub alerts: &'static [AlertSpec],
    /// pack.toml `now`; default: the newest timestamp of the pack.
    pub now: Option<&'static str>,
}

/// `Zookeeper missing leader` -> (`ZookeeperMissingLeader`, its description).
fn rule(rules: &str, name: &str) -> (String, String, String) {
    let mut lines = rules
        .lines()
        .skip_while(|l| l.trim() != format!("- name: {name}"));
    lines.next().unwrap_or_else(|| panic!("rule {name} exists"));
    let mut description = String::new();
    let mut severity = "warning".to_string();
    for l in lines.take(8) {
        let t = l.trim();
        if t.starts_with("- name:") {
            break;
        }
        if let Some(d) = t.strip_prefix("description:") {
            description = d.trim().trim_matches(['"', '\'']).to_string();
        }
        if let Some(s) = t.strip_prefix("severity:") {
            severity = s.trim().to_string();
        }
    }
    let alertname: String = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    (alertname, description, severity)
}

/// Writes the pack `spec` under `dst` from the material in `src`.
pub fn build_pack(src: &Path, dst: &Path, spec: &PackSpec, skills: Option<&Path>) {
    std::fs::create_dir_all(dst).unwrap();
    let mut logs: Vec<Line> = spec.systems.iter().flat_map(|s| lines(src, s)).collect();
    logs.sort_by(|a, b| a.ts.cmp(&b.ts));
    let mut services: Vec<String> = logs.iter().map(|l| l.service.clone()).collect();
    services.sort();
    services.dedup();
    let mut manifest = format!(
        "name = \"{}\"\ndescription = \"LogHub {} sample with alerts and runbooks\"\nservices = [{}]\n",
        spec.name,
        spec.systems.join(", "),
        services
            .iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(now) = spec.now {
        manifest.push_str(&format!("now = \"{now}\"\n"));
    }
    std::fs::write(dst.join("pack.toml"), manifest).unwrap();
    let body: String = logs.iter().map(|l| format!("{}\n", l.to_json())).collect();
    std::fs::write(dst.join("logs.jsonl"), body).unwrap();

    let rules = std::fs::read_to_string(src.join("alerts/rules.yml")).unwrap();
    let alerts: Vec<Value> = spec
        .alerts
        .iter()
        .map(|a| {
            let (alertname, description, severity) = rule(&rules, a.rule);
            json!({"labels": {"alertname": alertname, "service": a.service, "severity": severity},
                   "annotations": {"summary": description.replace("{{ $labels.instance }}", a.service)},
                   "state": a.state, "activeAt": a.active_at, "value": "1"})
        })
        .collect();
    std::fs::write(
        dst.join("alerts.json"),
        json!({"status": "success", "data": {"alerts": alerts}}).to_string(),
    )
    .unwrap();

    let runbooks = src.join("runbooks/content/runbooks");
    for group in std::fs::read_dir(&runbooks).unwrap().flatten() {
        if !group.file_type().unwrap().is_dir() {
            continue;
        }
        let kdir = dst.join("knowledge").join(group.file_name());
        std::fs::create_dir_all(&kdir).unwrap();
        for e in std::fs::read_dir(group.path()).unwrap().flatten() {
            std::fs::copy(e.path(), kdir.join(e.file_name())).unwrap();
        }
    }
    if let Some(skills) = skills {
        copy_dir(skills, &dst.join("skills"));
    }
}

/// The evaluation packs the question sets in `tests/eval/` are written
/// against: each LogHub system with alerts where its logs show trouble.
pub const PACKS: &[PackSpec] = &[
    PackSpec {
        name: "zookeeper",
        systems: &["Zookeeper"],
        alerts: &[AlertSpec {
            rule: "Zookeeper missing leader",
            service: "zookeeper",
            state: "firing",
            active_at: "2015-08-24T15:27:00Z",
        }],
        now: None,
    },
    PackSpec {
        name: "hadoop",
        systems: &["Hadoop"],
        alerts: &[AlertSpec {
            rule: "Hadoop Resource Manager Down",
            service: "hadoop-mrappmaster",
            state: "firing",
            active_at: "2015-10-18T18:05:00Z",
        }],
        now: None,
    },
    PackSpec {
        name: "bgl",
        systems: &["BGL"],
        alerts: &[],
        now: None,
    },
    PackSpec {
        name: "openstack",
        systems: &["OpenStack"],
        alerts: &[],
        now: None,
    },
    PackSpec {
        name: "apache",
        systems: &["Apache"],
        alerts: &[AlertSpec {
            rule: "Apache down",
            service: "apache-httpd",
            state: "firing",
            active_at: "2005-12-05T19:00:00Z",
        }],
        now: None,
    },
    PackSpec {
        name: "spark-hdfs",
        systems: &["Spark", "HDFS"],
        alerts: &[],
        now: None,
    },
];

#[test]
fn every_loghub_line_format_parses() {
    let Some(src) = crate::realdata::realdata() else {
        return;
    };
    for (system, _) in SYSTEMS {
        let parsed = lines(&src, system);
        assert!(
            parsed.len() >= 1990,
            "{system}: only {} of 2000 lines parsed",
            parsed.len()
        );
        for l in &parsed {
            assert!(
                diagraph::vocab::level::Level::parse(&l.level).is_some(),
                "{system}: level {:?}",
                l.level
            );
            assert!(
                chrono::DateTime::parse_from_rfc3339(&l.ts).is_ok(),
                "{system}: ts {:?}",
                l.ts
            );
        }
    }
}

/// Writes every evaluation pack under `$DIAGRAPH_EVAL_PACKS` (default
/// `target/eval-packs`), for trying questions by hand:
/// `cargo test --test offline write_eval_packs -- --ignored`, then
/// `diagraph ask --pack target/eval-packs/hadoop "…"`.
#[test]
#[ignore = "writes the packs for manual use"]
fn write_eval_packs() {
    let Some(src) = crate::realdata::realdata() else {
        return;
    };
    let out = std::env::var_os("DIAGRAPH_EVAL_PACKS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/eval-packs"),
        std::path::PathBuf::from,
    );
    for spec in PACKS {
        let dir = out.join(spec.name);
        let _ = std::fs::remove_dir_all(&dir);
        build_pack(&src, &dir, spec, None);
    }
}

/// `diagraph eval` on the question sets of `tests/eval/`, over packs built
/// here, held to thresholds: what CI runs.
#[test]
fn eval_sets_meet_their_thresholds() {
    let Some(src) = crate::realdata::realdata() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for spec in PACKS {
        build_pack(&src, &dir.path().join(spec.name), spec, None);
    }
    let set = dir.path().join("loghub.toml");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/eval/loghub.toml"),
        &set,
    )
    .unwrap();
    let (ok, report, stderr) = run_eval(dir.path(), &set, "0.85");
    assert!(ok, "{stderr}\n{report:#}");
    assert_eq!(report["totals"]["traceable"], 1.0, "{report:#}");
    assert_eq!(report["totals"]["cases"], 41);
}

/// `diagraph eval --json` on `set` with a store under `dir`, held to
/// `min_recall` and no over-claim: (exit status ok, report, stderr).
fn run_eval(dir: &Path, set: &Path, min_recall: &str) -> (bool, Value, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_diagraph"))
        .env_remove("DIAGRAPH_PACK")
        .env_remove("DIAGRAPH_MODEL")
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .arg("--database-url")
        .arg(format!("sqlite:{}", dir.join("eval.db").display()))
        .args([
            "eval",
            "--json",
            "--min-recall",
            min_recall,
            "--max-over-claims",
            "0",
        ])
        .arg(set)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.success(),
        report,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The shop pack's question set (`tests/eval/shop.toml`): every case
/// recalled, traceable, no over-claim. Needs no real data.
#[test]
fn shop_eval_set_meets_its_thresholds() {
    let dir = tempfile::tempdir().unwrap();
    let set = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/eval/shop.toml");
    let (ok, report, stderr) = run_eval(dir.path(), &set, "1.0");
    assert!(ok, "{stderr}\n{report:#}");
    assert_eq!(report["totals"]["traceable"], 1.0, "{report:#}");
    assert_eq!(report["totals"]["over_claims"], 0, "{report:#}");
}
