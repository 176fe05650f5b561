//! A pack built in a temp dir from ../shared/realdata: loghub Zookeeper and
//! Hadoop lines as logs.jsonl, alert names and descriptions from
//! awesome-prometheus-alerts' rules.yml as alerts.json, and
//! prometheus-operator runbooks as knowledge. Real text the offline model
//! was not written against.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The real public material (`../shared/realdata` next to the checkout,
/// else `/work/shared/realdata`), or None with a note: the tests that need
/// it skip where it is not present, CI included (it is not shipped).
pub fn realdata() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/realdata");
    let dir = if dir.exists() {
        dir
    } else {
        PathBuf::from("/work/shared/realdata")
    };
    if !dir.exists() {
        eprintln!("SKIP: realdata not present at {}", dir.display());
        return None;
    }
    Some(dir)
}

/// `2015-07-29 17:41:44,747` -> `2015-07-29T17:41:44.747Z`.
fn rfc3339(date: &str, time: &str) -> String {
    format!("{date}T{}Z", time.replace(',', "."))
}

/// Zookeeper: `DATE TIME - LEVEL [thread] - message`; Hadoop: `DATE TIME LEVEL [thread] class: message`.
fn loghub_lines(path: &Path, service: &str, take: usize) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("loghub sample");
    text.lines()
        .filter_map(|l| {
            let mut it = l.splitn(3, ' ');
            let (date, time, rest) = (it.next()?, it.next()?, it.next()?);
            let rest = rest.trim_start_matches("- ").trim_start();
            let (level, message) = rest.split_once(' ')?;
            Some(
                json!({"ts": rfc3339(date, time), "service": service, "level": level,
                        "message": message.trim_start_matches(['-', ' '])}),
            )
        })
        .take(take)
        .collect()
}

/// Name and description of a rule in awesome-prometheus-alerts' rules.yml.
fn rule(rules: &str, name: &str) -> (String, String) {
    let mut lines = rules
        .lines()
        .skip_while(|l| l.trim() != format!("- name: {name}"));
    lines.next().expect("rule exists");
    let description = lines
        .find_map(|l| {
            l.trim()
                .strip_prefix("description:")
                .map(|d| d.trim().trim_matches('"').to_string())
        })
        .unwrap_or_default();
    let alertname: String = name
        .split_whitespace()
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    (alertname, description)
}

pub fn build_realdata_pack(src: &Path, dst: &Path) {
    std::fs::write(
        dst.join("pack.toml"),
        "name = \"realdata\"\ndescription = \"built from loghub, awesome-prometheus-alerts and prometheus-operator runbooks\"\nservices = [\"zookeeper\", \"hadoop-mrappmaster\"]\n",
    )
    .unwrap();
    let mut logs = loghub_lines(
        &src.join("loghub/Zookeeper/Zookeeper_2k.log"),
        "zookeeper",
        600,
    );
    logs.extend(loghub_lines(
        &src.join("loghub/Hadoop/Hadoop_2k.log"),
        "hadoop-mrappmaster",
        2000,
    ));
    logs.sort_by(|a, b| a["ts"].as_str().cmp(&b["ts"].as_str()));
    let body: String = logs.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dst.join("logs.jsonl"), body).unwrap();
    let rules = std::fs::read_to_string(src.join("alerts/rules.yml")).unwrap();
    let alert = |name: &str, service: &str, state: &str, at: &str| {
        let (alertname, description) = rule(&rules, name);
        json!({"labels": {"alertname": alertname, "service": service, "severity": "critical"},
               "annotations": {"summary": description}, "state": state, "activeAt": at, "value": "1"})
    };
    let alerts = json!({"status": "success", "data": {"alerts": [
        alert("Zookeeper missing leader", "zookeeper", "firing", "2015-07-29T19:00:00Z"),
        alert("Hadoop Resource Manager Down", "hadoop-mrappmaster", "firing", "2015-10-18T18:05:00Z"),
        alert("Hadoop Map Reduce Task Failures", "hadoop-mrappmaster", "pending", "2015-10-18T18:06:00Z"),
    ]}});
    std::fs::write(dst.join("alerts.json"), alerts.to_string()).unwrap();
    let kdir = dst.join("knowledge/runbooks");
    std::fs::create_dir_all(&kdir).unwrap();
    for group in ["general", "kubernetes", "node", "etcd"] {
        let Ok(entries) = std::fs::read_dir(src.join("runbooks/content/runbooks").join(group))
        else {
            continue;
        };
        for e in entries.flatten() {
            let name = format!("{group}-{}", e.file_name().to_string_lossy());
            std::fs::copy(e.path(), kdir.join(name)).unwrap();
        }
    }
}
