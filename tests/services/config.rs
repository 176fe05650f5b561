//! Configuration layers (defaults < file < env < flags), masking of
//! secrets, and errors for bad files and values.

use diagraph::config::{Config, ConfigError, ConfigFlags, MetricsBackend, Provider};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k: &str| map.get(k).cloned()
}

fn write(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("config.toml");
    std::fs::write(&p, text).unwrap();
    p
}

const FILE: &str = r#"
database_url = "sqlite:/var/lib/diagraph/file.db"
pack = "packs/shop"
theme = "light"

[model]
provider = "openai"
base_url = "https://dashscope.aliyuncs.com/compatible-mode/v1"
model = "qwen-plus"
api_key_env = "DASHSCOPE_API_KEY"
timeout_secs = 30

[metrics]
backend = "prometheus"
prometheus_url = "http://prom.internal:9090"

[keys]
quit = "q"
"#;

#[test]
fn defaults_without_any_file() {
    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), None).unwrap();
    assert_eq!(c.model.provider, Provider::Offline);
    assert_eq!(c.model.api_key_env, "DIAGRAPH_OPENAI_API_KEY");
    assert_eq!(c.metrics.backend, MetricsBackend::Pack);
    assert_eq!(c.theme, "dark");
    assert!(c.database_url.is_none() && c.pack.is_none() && c.file.is_none());
}

#[test]
fn a_missing_default_file_is_fine() {
    let dir = tempfile::tempdir().unwrap();
    let c = Config::load_with(
        &ConfigFlags::default(),
        &env_of(&[]),
        Some(&dir.path().join("nope/config.toml")),
    )
    .unwrap();
    assert!(c.file.is_none());
}

#[test]
fn file_then_env_then_flags() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), FILE);

    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path)).unwrap();
    assert_eq!(c.file.as_deref(), Some(path.as_path()));
    assert_eq!(c.model.provider, Provider::OpenAi);
    assert_eq!(c.model.model, "qwen-plus");
    assert_eq!(c.model.timeout_secs, 30);
    assert_eq!(c.theme, "light");
    assert_eq!(c.keys.get("quit").map(String::as_str), Some("q"));
    assert_eq!(c.metrics.backend, MetricsBackend::Prometheus);
    // Relative paths in the file are relative to the file.
    assert_eq!(
        c.pack.as_deref(),
        Some(dir.path().join("packs/shop").as_path())
    );
    // Unset fields of a section keep their defaults.
    assert_eq!(c.metrics.timeout_secs, 10);

    let env = env_of(&[
        ("DIAGRAPH_DATABASE_URL", "sqlite:/tmp/env.db"),
        ("DIAGRAPH_OPENAI_MODEL", "qwen-max"),
        ("DIAGRAPH_OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"),
        ("DIAGRAPH_MODEL", "offline"),
        ("DIAGRAPH_PACK", "/srv/pack"),
        ("DIAGRAPH_PROMETHEUS_URL", "http://127.0.0.1:9999"),
    ]);
    let c = Config::load_with(&ConfigFlags::default(), &env, Some(&path)).unwrap();
    assert_eq!(c.database_url.as_deref(), Some("sqlite:/tmp/env.db"));
    assert_eq!(c.model.model, "qwen-max");
    assert_eq!(c.model.base_url, "http://127.0.0.1:8000/v1");
    assert_eq!(c.model.provider, Provider::Offline);
    assert_eq!(c.pack.as_deref(), Some(Path::new("/srv/pack")));
    assert_eq!(
        c.metrics.prometheus_url.as_deref(),
        Some("http://127.0.0.1:9999")
    );

    let flags = ConfigFlags {
        database_url: Some("sqlite:/tmp/flag.db".into()),
        model: Some("openai".into()),
        pack: Some("/flag/pack".into()),
        theme: Some("solarized".into()),
        prompts_dir: Some("/flag/prompts".into()),
        prometheus_url: Some("http://127.0.0.1:7777".into()),
        config_file: None,
        no_mouse: false,
    };
    let c = Config::load_with(&flags, &env, Some(&path)).unwrap();
    assert_eq!(c.database_url.as_deref(), Some("sqlite:/tmp/flag.db"));
    assert_eq!(c.model.provider, Provider::OpenAi);
    assert_eq!(c.pack.as_deref(), Some(Path::new("/flag/pack")));
    assert_eq!(c.theme, "solarized");
    assert_eq!(c.prompts_dir.as_deref(), Some(Path::new("/flag/prompts")));
    assert_eq!(
        c.metrics.prometheus_url.as_deref(),
        Some("http://127.0.0.1:7777")
    );
}

#[test]
fn the_mouse_setting_layers_file_env_and_flag_and_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let load = |flags: &ConfigFlags, env: &[(&str, &str)], path: Option<&Path>| {
        Config::load_with(flags, &env_of(env), path).unwrap()
    };
    let no_mouse = ConfigFlags {
        no_mouse: true,
        ..Default::default()
    };
    // On by default, and the rendering says so as TOML.
    let c = load(&ConfigFlags::default(), &[], None);
    assert!(c.tui.mouse);
    let parsed: toml::Table = toml::from_str(&c.render_masked_with(&env_of(&[]))).unwrap();
    assert_eq!(parsed["tui"]["mouse"].as_bool(), Some(true));
    // The file turns it off; the environment back on; the flag off again.
    let off = write(dir.path(), "[tui]\nmouse = false\n");
    assert!(!load(&ConfigFlags::default(), &[], Some(&off)).tui.mouse);
    for on in ["true", "1", "yes", "ON"] {
        let env = [("DIAGRAPH_TUI_MOUSE", on)];
        assert!(
            load(&ConfigFlags::default(), &env, Some(&off)).tui.mouse,
            "{on}"
        );
    }
    let env = [("DIAGRAPH_TUI_MOUSE", "true")];
    let c = load(&no_mouse, &env, Some(&off));
    assert!(!c.tui.mouse);
    let parsed: toml::Table = toml::from_str(&c.render_masked_with(&env_of(&[]))).unwrap();
    assert_eq!(parsed["tui"]["mouse"].as_bool(), Some(false));
    for off_word in ["false", "0", "no", "Off"] {
        let env = [("DIAGRAPH_TUI_MOUSE", off_word)];
        assert!(
            !load(&ConfigFlags::default(), &env, None).tui.mouse,
            "{off_word}"
        );
    }
    // A value that is not a switch, or a key [tui] does not have, is an
    // error naming where it came from.
    let err = Config::load_with(
        &ConfigFlags::default(),
        &env_of(&[("DIAGRAPH_TUI_MOUSE", "maybe")]),
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("DIAGRAPH_TUI_MOUSE"), "{err}");
    assert!(err.to_string().contains("maybe"), "{err}");
    let typo = write(dir.path(), "[tui]\nmosue = false\n");
    let err = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&typo)).unwrap_err();
    assert!(matches!(err, ConfigError::Invalid { .. }), "{err}");
    assert!(err.to_string().contains("mosue"), "{err}");
}

#[test]
fn prometheus_url_in_env_switches_the_backend() {
    let env = env_of(&[("DIAGRAPH_PROMETHEUS_URL", "http://127.0.0.1:9090")]);
    let c = Config::load_with(&ConfigFlags::default(), &env, None).unwrap();
    assert_eq!(c.metrics.backend, MetricsBackend::Prometheus);
}

#[test]
fn log_files_in_env_or_file_switch_the_logs_backend() {
    use diagraph::config::LogsBackend;
    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), None).unwrap();
    assert_eq!(c.logs.backend, LogsBackend::Pack);
    let env = env_of(&[("DIAGRAPH_LOG_FILES", "/var/log/app/*.log:/var/log/syslog")]);
    let c = Config::load_with(&ConfigFlags::default(), &env, None).unwrap();
    assert_eq!(c.logs.backend, LogsBackend::Files);
    assert_eq!(
        c.logs.files.paths.as_deref(),
        Some("/var/log/app/*.log:/var/log/syslog")
    );
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "[logs]\nbackend = \"files\"\ntimeout_secs = 5\n[logs.files]\npaths = \"/srv/*.log\"\nformat = \"syslog\"\nservice = \"edge\"\n",
    );
    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path)).unwrap();
    assert_eq!(c.logs.timeout_secs, 5);
    assert_eq!(c.logs.files.format, "syslog");
    assert_eq!(c.logs.files.service.as_deref(), Some("edge"));
    let shown: toml::Table = toml::from_str(&c.render_masked_with(&env_of(&[]))).unwrap();
    assert_eq!(shown["logs"]["backend"].as_str(), Some("files"));
    assert_eq!(shown["logs"]["files"]["paths"].as_str(), Some("/srv/*.log"));
    // The files backend without paths, or a typo, is named.
    let path = write(dir.path(), "[logs]\nbackend = \"files\"\n");
    let err = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path)).unwrap_err();
    assert!(err.to_string().contains("logs.files.paths"), "{err}");
    let path = write(dir.path(), "[logs.files]\npath = \"/x\"\n");
    let err = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path)).unwrap_err();
    assert!(err.to_string().contains("line 2"), "{err}");
}

#[test]
fn loki_is_chosen_by_its_url_and_its_credentials_are_never_shown() {
    use diagraph::config::LogsBackend;
    let env = env_of(&[("DIAGRAPH_LOKI_URL", "http://loki:3100")]);
    let c = Config::load_with(&ConfigFlags::default(), &env, None).unwrap();
    assert_eq!(c.logs.backend, LogsBackend::Loki);
    assert_eq!(
        c.logs.loki.service_labels,
        ["service", "service_name", "app", "job"]
    );
    assert_eq!(c.logs.loki.level_labels, ["level", "detected_level"]);
    let both = env_of(&[
        ("DIAGRAPH_LOKI_URL", "http://loki:3100"),
        ("DIAGRAPH_LOG_FILES", "/x/*.log"),
    ]);
    let err = Config::load_with(&ConfigFlags::default(), &both, None).unwrap_err();
    assert!(err.to_string().contains("one backend"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "[logs]\nbackend = \"loki\"\n[logs.loki]\nurl = \"https://ops:pw-in-url@loki.internal\"\nbearer_token = \"tok-very-secret\"\nusername = \"ops\"\npassword = \"pw-very-secret\"\ntenant = \"team-a\"\nservice_labels = [\"app\"]\n",
    );
    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path)).unwrap();
    let shown = c.render_masked_with(&env_of(&[]));
    for secret in ["tok-very-secret", "pw-very-secret", "pw-in-url"] {
        assert!(!shown.contains(secret), "{shown}");
        assert!(!format!("{c:?}").contains(secret));
    }
    let json = serde_json::to_string(&c).unwrap();
    assert!(!json.contains("tok-very-secret") && !json.contains("pw-very-secret"));
    let t: toml::Table = toml::from_str(&shown).unwrap();
    assert_eq!(t["logs"]["loki"]["bearer_token"].as_str(), Some("***"));
    assert_eq!(t["logs"]["loki"]["tenant"].as_str(), Some("team-a"));
    assert_eq!(t["logs"]["loki"]["service_labels"][0].as_str(), Some("app"));
    let path = write(
        dir.path(),
        "[logs]\nbackend = \"loki\"\n[logs.loki]\nurl = \"loki:3100\"\n",
    );
    let err = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path)).unwrap_err();
    assert!(err.to_string().contains("logs.loki.url"), "{err}");
}

#[test]
fn an_explicit_file_that_is_missing_is_an_error() {
    let flags = ConfigFlags {
        config_file: Some("/definitely/not/here.toml".into()),
        ..Default::default()
    };
    let err = Config::load_with(&flags, &env_of(&[]), None).unwrap_err();
    assert!(matches!(err, ConfigError::Unreadable { .. }));
    assert!(
        err.to_string().contains("/definitely/not/here.toml"),
        "{err}"
    );
}

#[test]
fn bad_toml_and_unknown_keys_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    for (text, line, needle) in [
        ("theme = \"dark\"\n[model\nprovider = \"openai\"\n", 2, ""),
        ("theme = \"dark\"\n\n[model]\nmodle = \"gpt\"\n", 4, "modle"),
        ("[model]\ntimeout_secs = \"ten\"\n", 2, ""),
        ("[model]\napi_key = \"sk-in-a-file\"\n", 2, "api_key"),
        ("[metrics]\nbackend = \"graphite\"\n", 2, "graphite"),
    ] {
        let path = write(dir.path(), text);
        let flags = ConfigFlags {
            config_file: Some(path.clone()),
            ..Default::default()
        };
        let err = Config::load_with(&flags, &env_of(&[]), None).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, ConfigError::Invalid { .. }), "{msg}");
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(msg.contains(&format!("line {line}")), "{text:?}: {msg}");
        assert!(msg.contains(needle), "{msg}");
        assert!(!msg.contains('\n'), "one line: {msg}");
        // A key written into a file must not be echoed back.
        assert!(!msg.contains("sk-in-a-file"), "{msg}");
    }
}

#[test]
fn bad_values_are_errors_naming_their_source() {
    let err = Config::load_with(
        &ConfigFlags::default(),
        &env_of(&[("DIAGRAPH_MODEL", "gpt")]),
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("DIAGRAPH_MODEL"), "{err}");

    let flags = ConfigFlags {
        model: Some("claude".into()),
        ..Default::default()
    };
    let err = Config::load_with(&flags, &env_of(&[]), None).unwrap_err();
    assert!(err.to_string().contains("--model"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "[metrics]\nbackend = \"prometheus\"\n");
    let err = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path)).unwrap_err();
    assert!(err.to_string().contains("prometheus_url"), "{err}");

    let path = write(
        dir.path(),
        "[model]\nprovider = \"openai\"\nbase_url = \"api.openai.com\"\n",
    );
    let err = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path)).unwrap_err();
    assert!(err.to_string().contains("base_url"), "{err}");
}

#[test]
fn api_key_resolution_and_fallback() {
    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), None).unwrap();
    assert_eq!(c.api_key_with(&env_of(&[])), None);
    assert_eq!(
        c.api_key_with(&env_of(&[("OPENAI_API_KEY", "sk-fallback")]))
            .as_deref(),
        Some("sk-fallback")
    );
    assert_eq!(
        c.api_key_with(&env_of(&[
            ("OPENAI_API_KEY", "sk-fallback"),
            ("DIAGRAPH_OPENAI_API_KEY", "sk-primary")
        ]))
        .as_deref(),
        Some("sk-primary")
    );
    // A custom variable has no fallback: the user named exactly one.
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), FILE);
    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path)).unwrap();
    assert_eq!(c.api_key_with(&env_of(&[("OPENAI_API_KEY", "sk-x")])), None);
    assert_eq!(
        c.api_key_with(&env_of(&[("DASHSCOPE_API_KEY", "sk-ds")]))
            .as_deref(),
        Some("sk-ds")
    );
}

#[test]
fn rendering_masks_secrets_and_is_valid_toml() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        &FILE.replace(
            "sqlite:/var/lib/diagraph/file.db",
            "mysql://diag:hunter2@db.internal:3306/diagraph",
        ),
    );
    let env = env_of(&[("DASHSCOPE_API_KEY", "sk-very-secret-value")]);
    let c = Config::load_with(&ConfigFlags::default(), &env, Some(&path)).unwrap();
    let out = c.render_masked_with(&env);
    assert!(!out.contains("sk-very-secret-value"), "{out}");
    assert!(!out.contains("hunter2"), "{out}");
    assert!(
        out.contains("api_key = \"*** (from DASHSCOPE_API_KEY)\""),
        "{out}"
    );
    assert!(
        out.contains("mysql://diag:***@db.internal:3306/diagraph"),
        "{out}"
    );
    assert!(!format!("{c:?}").contains("sk-very-secret-value"));
    let parsed: toml::Table = toml::from_str(&out).unwrap();
    assert_eq!(parsed["model"]["model"].as_str(), Some("qwen-plus"));
    assert_eq!(parsed["metrics"]["backend"].as_str(), Some("prometheus"));

    let unset = c.render_masked_with(&env_of(&[]));
    assert!(
        unset.contains("api_key = \"not set (export DASHSCOPE_API_KEY)\""),
        "{unset}"
    );
}

#[test]
fn the_metrics_section_builds_the_prometheus_tool() {
    use diagraph::tools::prometheus::{PrometheusConfig, PrometheusMetrics};
    let env = env_of(&[("DIAGRAPH_PROMETHEUS_URL", "http://127.0.0.1:9090")]);
    let c = Config::load_with(&ConfigFlags::default(), &env, None).unwrap();
    let p = PrometheusConfig::from_config(&c).unwrap();
    assert_eq!(p.base_url, "http://127.0.0.1:9090");
    assert_eq!(p.timeout.as_secs(), 10);
    assert!(PrometheusMetrics::new(&c.metrics).is_ok());

    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), None).unwrap();
    assert!(PrometheusConfig::from_config(&c).is_none());
    // No URL: a clear construction error, not a tool that fails later.
    assert!(PrometheusMetrics::new(&c.metrics).is_err());
}

#[test]
fn the_model_section_builds_the_openai_provider() {
    use diagraph::model::ChatModel;
    use diagraph::model::openai::OpenAiModel;
    let env = env_of(&[
        ("DIAGRAPH_MODEL", "openai"),
        ("DIAGRAPH_OPENAI_BASE_URL", "http://localhost:11434/v1"),
        ("DIAGRAPH_OPENAI_MODEL", "qwen2.5"),
    ]);
    let c = Config::load_with(&ConfigFlags::default(), &env, None).unwrap();
    // Both the whole config and its [model] section are accepted.
    assert_eq!(
        OpenAiModel::from_config(&c).unwrap().name(),
        "openai:qwen2.5"
    );
    assert_eq!(
        OpenAiModel::from_config(&c.model).unwrap().name(),
        "openai:qwen2.5"
    );
}

#[test]
fn per_model_settings_run_limits_and_the_model_timeout_variable() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        r#"
[model]
provider = "openai"
base_url = "https://dashscope.aliyuncs.com/compatible-mode/v1"
model = "qwen3-32b"
temperature = 0.2
max_tokens = 2048
max_tokens_field = "max_completion_tokens"
[model.extra_body]
enable_thinking = false
top_k = 20

[run]
deadline_secs = 120
max_tool_calls = 6
max_executor_turns = 4
"#,
    );
    let flags = ConfigFlags {
        config_file: Some(path.clone()),
        ..Default::default()
    };
    let c = Config::load_with(&flags, &env_of(&[("DIAGRAPH_MODEL_TIMEOUT", "90")]), None).unwrap();
    assert_eq!(c.model.temperature, Some(0.2));
    assert_eq!(
        c.model.max_tokens_field,
        diagraph::config::MaxTokensField::MaxCompletionTokens
    );
    assert_eq!(
        c.model.extra_body["enable_thinking"],
        serde_json::json!(false)
    );
    assert_eq!(c.model.extra_body["top_k"], serde_json::json!(20));
    assert_eq!(c.model.timeout_secs, 90, "the environment beats the file");
    assert_eq!(c.run.deadline_secs, Some(120));
    assert_eq!((c.run.max_tool_calls, c.run.max_executor_turns), (6, 4));
    let shown = c.render_masked_with(&env_of(&[]));
    for line in [
        "temperature = 0.2",
        "max_tokens_field = \"max_completion_tokens\"",
        "enable_thinking = false",
        "deadline_secs = 120",
        "max_tool_calls = 6",
    ] {
        assert!(shown.contains(line), "{line} in {shown}");
    }
    // The run limits reach the engine.
    let e = diagraph::cli::engine_config(&c);
    assert_eq!(e.run_deadline, Some(std::time::Duration::from_secs(120)));
    assert_eq!((e.max_tool_calls, e.max_executor_turns), (6, 4));

    // Unset temperature: not set at all (so never sent).
    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), None).unwrap();
    assert_eq!(c.model.temperature, None);
    assert!(
        c.render_masked_with(&env_of(&[]))
            .contains("# temperature = (not set")
    );
}

#[test]
fn bad_model_settings_are_named() {
    for (env, file, name) in [
        (
            vec![("DIAGRAPH_MODEL_TIMEOUT", "soon")],
            "",
            "DIAGRAPH_MODEL_TIMEOUT",
        ),
        (
            vec![("DIAGRAPH_MODEL_TIMEOUT", "0")],
            "",
            "model.timeout_secs",
        ),
        (vec![], "[model]\ntemperature = 3.5\n", "model.temperature"),
        (
            vec![],
            "[model.extra_body]\nmessages = []\n",
            "model.extra_body",
        ),
        (
            vec![],
            "[model]\nmax_tokens_field = \"tokens\"\n",
            "max_completion_tokens",
        ),
        (vec![], "[run]\ndeadline_secs = 0\n", "run.deadline_secs"),
        (
            vec![],
            "[run]\nmax_executor_turns = 0\n",
            "run.max_executor_turns",
        ),
        (vec![], "[run]\nretries = 2\n", "retries"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let flags = ConfigFlags {
            config_file: Some(write(dir.path(), file)),
            ..Default::default()
        };
        let e = Config::load_with(&flags, &env_of(&env), None).unwrap_err();
        assert!(e.to_string().contains(name), "{name}: {e}");
    }
}

#[test]
fn named_models_roles_fallbacks_prices_and_their_errors() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
[model]
provider = "openai"
model = "gpt-4o-mini"
retry_after_cap_secs = 10
price_per_million = { prompt = 0.15, completion = 0.6 }

[model.models.reasoner]
provider = "openai"
base_url = "https://api.deepseek.com/v1"
model = "deepseek-reasoner"
api_key_env = "DEEPSEEK_API_KEY"

[model.models.local]
provider = "openai"
base_url = "http://127.0.0.1:11434/v1"
model = "qwen3:8b"
api_key_env = ""

[model.roles]
verifier = "reasoner"

[model.fallbacks]
verifier = ["local"]
"#;
    let flags = ConfigFlags {
        config_file: Some(write(dir.path(), text)),
        ..Default::default()
    };
    let c = Config::load_with(&flags, &env_of(&[("DEEPSEEK_API_KEY", "sk-deep")]), None).unwrap();
    assert_eq!(c.model.retry_after_cap_secs, 10);
    assert_eq!(c.model.price_per_million.unwrap().completion, 0.6);
    assert_eq!(c.model.roles["verifier"], "reasoner");
    assert_eq!(c.model.fallbacks["verifier"], vec!["local".to_string()]);
    assert_eq!(c.model.models["reasoner"].model, "deepseek-reasoner");
    let shown = c.render_masked_with(&env_of(&[("DEEPSEEK_API_KEY", "sk-deep")]));
    for line in [
        "[model.models.reasoner]",
        "api_key = \"*** (from DEEPSEEK_API_KEY)\"",
        "[model.roles]",
        "verifier = [\"local\"]",
        "price_per_million = { prompt = 0.15, completion = 0.6 }",
    ] {
        assert!(shown.contains(line), "{line} in {shown}");
    }
    assert!(!shown.contains("sk-deep"));
    toml::from_str::<toml::Value>(&shown).unwrap();

    for (bad, name) in [
        ("[model.roles]\nplanner = \"nope\"\n", "model.roles.planner"),
        (
            "[model.roles]\njudge = \"x\"\n[model.models.x]\n",
            "model.roles.judge",
        ),
        (
            "[model.fallbacks]\ncomposer = [\"ghost\"]\n",
            "model.fallbacks.composer",
        ),
        (
            "[model.models.x]\ntimeout_secs = 0\n",
            "model.models.x.timeout_secs",
        ),
        (
            "[model.models.x.roles]\nplanner = \"x\"\n",
            "model.models.x",
        ),
        (
            "[model]\nprice_per_million = { prompt = -1.0, completion = 1.0 }\n",
            "price_per_million",
        ),
    ] {
        let flags = ConfigFlags {
            config_file: Some(write(dir.path(), bad)),
            ..Default::default()
        };
        let e = Config::load_with(&flags, &env_of(&[]), None).unwrap_err();
        assert!(e.to_string().contains(name), "{name}: {e}");
    }
}

#[test]
fn mcp_servers_are_read_checked_and_rendered_without_their_env_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        r#"
[mcp.servers.k8s]
command = "bin/k8s-mcp"
args = ["--read-only"]
env = { KUBE_TOKEN = "tok-very-secret" }

[mcp.servers.grafana]
url = "http://user:pw-secret@grafana.internal:8000/mcp"
timeout_secs = 5
"#,
    );
    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path)).unwrap();
    let k8s = &c.mcp.servers["k8s"];
    // A relative command path is next to the file.
    assert_eq!(
        k8s.command.as_deref(),
        Some(dir.path().join("bin/k8s-mcp").to_str().unwrap())
    );
    assert_eq!(k8s.timeout_secs, diagraph::config::DEFAULT_MCP_TIMEOUT_SECS);
    assert_eq!(c.mcp.servers["grafana"].timeout_secs, 5);
    let out = c.render_masked();
    assert!(!out.contains("tok-very-secret"), "{out}");
    assert!(!out.contains("pw-secret"), "{out}");
    assert!(out.contains("KUBE_TOKEN = \"***\""), "{out}");
    let parsed: toml::Table = toml::from_str(&out).unwrap();
    assert_eq!(
        parsed["mcp"]["servers"]["k8s"]["args"][0].as_str(),
        Some("--read-only")
    );
}

#[test]
fn a_malformed_mcp_server_is_an_error_that_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("[mcp.servers.a__b]\ncommand = \"x\"", "mcp.servers.a__b"),
        ("[mcp.servers.\"sp ace\"]\ncommand = \"x\"", "server name"),
        ("[mcp.servers.s]\n", "needs a command"),
        ("[mcp.servers.s]\ncommand = \" \"", "needs a command"),
        (
            "[mcp.servers.s]\ncommand = \"x\"\nurl = \"http://h/mcp\"",
            "not both",
        ),
        (
            "[mcp.servers.s]\nurl = \"ftp://h/mcp\"",
            "not an http(s) URL",
        ),
        (
            "[mcp.servers.s]\nurl = \"http://h/mcp\"\nargs = [\"a\"]",
            "args and env are for a command",
        ),
        (
            "[mcp.servers.s]\ncommand = \"x\"\ntimeout_secs = 0",
            "mcp.servers.s.timeout_secs",
        ),
        (
            "[mcp.servers.s]\ncommand = \"x\"\nport = 1",
            "unknown field `port`",
        ),
        ("[mcp.servers.s]\ncommand = 7", "line 2"),
    ];
    for (text, want) in cases {
        let path = write(dir.path(), text);
        let err = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path))
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{text}: {err}");
    }
}

/// The config as `diagraph config` shows it, read back.
fn shown(c: &Config) -> toml::Table {
    toml::from_str(&c.render_masked_with(&env_of(&[]))).unwrap()
}

#[test]
fn stream_usage_is_on_unless_the_file_turns_it_off() {
    use diagraph::model::openai::OpenAiConfig;
    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), None).unwrap();
    assert!(c.model.stream_usage);
    assert!(OpenAiConfig::from_config(&c).stream_usage);
    assert_eq!(shown(&c)["model"]["stream_usage"].as_bool(), Some(true));

    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "[model]\nstreaming = true\nstream_usage = false\n\n\
         [model.models.gateway]\nstreaming = true\n",
    );
    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path)).unwrap();
    assert!(!c.model.stream_usage);
    assert!(!OpenAiConfig::from_config(&c).stream_usage);
    // A named model has the same defaults as [model], not its values.
    assert!(c.model.models["gateway"].stream_usage);
    let t = shown(&c);
    assert_eq!(t["model"]["stream_usage"].as_bool(), Some(false));
    assert_eq!(
        t["model"]["models"]["gateway"]["stream_usage"].as_bool(),
        Some(true)
    );
}

#[test]
fn the_mcp_retry_interval_is_30_s_unless_the_file_sets_it() {
    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), None).unwrap();
    assert_eq!(c.mcp.retry_seconds, 30);
    assert_eq!(c.mcp.retry_interval(), std::time::Duration::from_secs(30));
    assert_eq!(shown(&c)["mcp"]["retry_seconds"].as_integer(), Some(30));

    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "[mcp]\nretry_seconds = 5\n\n[mcp.servers.k8s]\ncommand = \"kubectl-mcp\"\n",
    );
    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path)).unwrap();
    assert_eq!(c.mcp.retry_seconds, 5);
    assert!(c.mcp.servers.contains_key("k8s"));
    assert_eq!(shown(&c)["mcp"]["retry_seconds"].as_integer(), Some(5));

    // Servers alone keep the default interval; a negative one is refused
    // with the line it is on.
    let path = write(dir.path(), "[mcp.servers.k8s]\ncommand = \"kubectl-mcp\"\n");
    let c = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path)).unwrap();
    assert_eq!(c.mcp.retry_seconds, 30);
    let path = write(dir.path(), "[mcp]\nretry_seconds = -1\n");
    let err = Config::load_with(&ConfigFlags::default(), &env_of(&[]), Some(&path)).unwrap_err();
    assert!(matches!(err, ConfigError::Invalid { .. }), "{err}");
    assert!(err.to_string().contains("line 2"), "{err}");
}
