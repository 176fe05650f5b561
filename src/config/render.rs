//! `diagraph config`: the effective configuration as TOML, secrets masked.

use super::*;

pub(super) fn render(c: &Config, env: &dyn Fn(&str) -> Option<String>) -> String {
    let q = |s: &str| toml::Value::String(s.to_string()).to_string();
    let opt = |k: &str, v: Option<String>| match v {
        Some(v) => format!("{k} = {}\n", q(&v)),
        None => format!("# {k} = (not set)\n"),
    };
    let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    let mut out = String::new();
    out.push_str(&match &c.file {
        Some(f) => format!("# config file: {}\n", f.display()),
        None => "# config file: none (defaults, environment and flags only)\n".into(),
    });
    out.push_str(&opt(
        "database_url",
        c.database_url.as_deref().map(mask_url),
    ));
    out.push_str(&opt("pack", path(&c.pack)));
    out.push_str(&opt("prompts_dir", path(&c.prompts_dir)));
    out.push_str(&format!("theme = {}\n", q(&c.theme)));
    out.push_str(&opt(
        "otlp_endpoint",
        c.otlp_endpoint.as_deref().map(mask_url),
    ));

    render_model(&mut out, &c.model, "model", env);
    if !c.model.roles.is_empty() {
        out.push_str("\n[model.roles]\n");
        for (role, name) in &c.model.roles {
            out.push_str(&format!("{} = {}\n", toml_key(role), q(name)));
        }
    }
    if !c.model.fallbacks.is_empty() {
        out.push_str("\n[model.fallbacks]\n");
        for (role, names) in &c.model.fallbacks {
            let list: Vec<String> = names.iter().map(|n| q(n)).collect();
            out.push_str(&format!("{} = [{}]\n", toml_key(role), list.join(", ")));
        }
    }
    for (name, m) in &c.model.models {
        render_model(
            &mut out,
            m,
            &format!("model.models.{}", toml_key(name)),
            env,
        );
    }

    let r = &c.run;
    out.push_str("\n[run]\n");
    out.push_str(&match r.deadline_secs {
        Some(d) => format!("deadline_secs = {d}\n"),
        None => "# deadline_secs = (not set: no deadline)\n".into(),
    });
    out.push_str(&format!("max_tool_calls = {}\n", r.max_tool_calls));
    out.push_str(&format!("max_executor_turns = {}\n", r.max_executor_turns));
    out.push_str(&format!(
        "cause_margin_minutes = {}\n",
        r.cause_margin_minutes
    ));

    let x = &c.metrics;
    out.push_str("\n[metrics]\n");
    out.push_str(&format!("backend = {}\n", q(x.backend.as_str())));
    out.push_str(&opt(
        "prometheus_url",
        x.prometheus_url.as_deref().map(mask_url),
    ));
    out.push_str(&format!("promql_template = {}\n", q(&x.promql_template)));
    out.push_str(&format!("service_label = {}\n", q(&x.service_label)));
    out.push_str(&format!("timeout_secs = {}\n", x.timeout_secs));

    let l = &c.logs;
    out.push_str("\n[logs]\n");
    out.push_str(&format!("backend = {}\n", q(l.backend.as_str())));
    out.push_str(&format!("timeout_secs = {}\n", l.timeout_secs));
    let f = &l.files;
    out.push_str("\n[logs.files]\n");
    out.push_str(&opt("paths", f.paths.clone()));
    out.push_str(&format!("format = {}\n", q(&f.format)));
    out.push_str(&opt("pattern", f.pattern.clone()));
    out.push_str(&opt("ts_format", f.ts_format.clone()));
    out.push_str(&opt("service", f.service.clone()));
    let k = &l.loki;
    let list = |v: &[String]| {
        toml::Value::Array(v.iter().map(|s| toml::Value::String(s.clone())).collect()).to_string()
    };
    let secret = |k: &str, v: &Option<String>| match v {
        Some(_) => format!("{k} = \"***\"\n"),
        None => format!("# {k} = (not set)\n"),
    };
    out.push_str("\n[logs.loki]\n");
    out.push_str(&opt("url", k.url.as_deref().map(mask_url)));
    out.push_str(&format!("service_labels = {}\n", list(&k.service_labels)));
    out.push_str(&format!("level_labels = {}\n", list(&k.level_labels)));
    out.push_str(&format!("max_lines = {}\n", k.max_lines));
    out.push_str(&format!(
        "default_window_hours = {}\n",
        k.default_window_hours
    ));
    out.push_str(&secret("bearer_token", &k.bearer_token));
    out.push_str(&opt("username", k.username.clone()));
    out.push_str(&secret("password", &k.password));
    out.push_str(&opt("tenant", k.tenant.clone()));
    let e = &l.elasticsearch;
    out.push_str("\n[logs.elasticsearch]\n");
    out.push_str(&opt("url", e.url.as_deref().map(mask_url)));
    out.push_str(&format!("index = {}\n", q(&e.index)));
    out.push_str(&format!("timestamp_field = {}\n", q(&e.timestamp_field)));
    out.push_str(&format!("service_fields = {}\n", list(&e.service_fields)));
    out.push_str(&format!("level_fields = {}\n", list(&e.level_fields)));
    out.push_str(&format!("message_field = {}\n", q(&e.message_field)));
    out.push_str(&format!("max_lines = {}\n", e.max_lines));
    out.push_str(&format!(
        "default_window_hours = {}\n",
        e.default_window_hours
    ));
    out.push_str(&secret("api_key", &e.api_key));
    out.push_str(&opt("username", e.username.clone()));
    out.push_str(&secret("password", &e.password));

    out.push_str("\n[mcp]\n");
    out.push_str(&format!("retry_seconds = {}\n", c.mcp.retry_seconds));
    for (name, server) in &c.mcp.servers {
        out.push_str(&format!("\n[mcp.servers.{}]\n", toml_key(name)));
        if let Some(command) = &server.command {
            out.push_str(&format!("command = {}\n", q(command)));
            let args: Vec<String> = super::mcp::masked_args(&server.args)
                .iter()
                .map(|a| q(a))
                .collect();
            out.push_str(&format!("args = [{}]\n", args.join(", ")));
        }
        if let Some(url) = &server.url {
            out.push_str(&format!("url = {}\n", q(&mask_url(url))));
        }
        if !server.env.is_empty() {
            let env: Vec<String> = server
                .env
                .keys()
                .map(|k| format!("{} = \"***\"", toml_key(k)))
                .collect();
            out.push_str(&format!("env = {{ {} }}\n", env.join(", ")));
        }
        out.push_str(&format!("timeout_secs = {}\n", server.timeout_secs));
    }

    out.push_str("\n[tui]\n");
    out.push_str(&format!("mouse = {}\n", c.tui.mouse));

    if !c.keys.is_empty() {
        out.push_str("\n[keys]\n");
        for (k, v) in &c.keys {
            out.push_str(&format!("{} = {}\n", toml_key(k), q(v)));
        }
    }
    out
}

fn render_model(
    out: &mut String,
    m: &ModelConfig,
    table: &str,
    env: &dyn Fn(&str) -> Option<String>,
) {
    let q = |s: &str| toml::Value::String(s.to_string()).to_string();
    out.push_str(&format!("\n[{table}]\n"));
    out.push_str(&format!("provider = {}\n", q(m.provider.as_str())));
    out.push_str(&format!("base_url = {}\n", q(&mask_url(&m.base_url))));
    out.push_str(&format!("model = {}\n", q(&m.model)));
    out.push_str(&format!("api_key_env = {}\n", q(&m.api_key_env)));
    let key = match m.api_key_source(env) {
        Some(var) => format!("*** (from {var})"),
        None if m.api_key_env.trim().is_empty() => "not used (keyless endpoint)".into(),
        None => format!("not set (export {})", m.api_key_env.trim()),
    };
    out.push_str(&format!("api_key = {}\n", q(&key)));
    out.push_str(&format!("timeout_secs = {}\n", m.timeout_secs));
    out.push_str(&match m.max_tokens {
        Some(t) => format!("max_tokens = {t}\n"),
        None => "# max_tokens = (not set)\n".into(),
    });
    out.push_str(&format!(
        "max_tokens_field = {}\n",
        q(m.max_tokens_field.as_str())
    ));
    out.push_str(&match m.temperature {
        Some(t) => format!("temperature = {t}\n"),
        None => "# temperature = (not set: not sent)\n".into(),
    });
    out.push_str(&format!("streaming = {}\n", m.streaming));
    out.push_str(&format!("stream_usage = {}\n", m.stream_usage));
    out.push_str(&format!(
        "retry_after_cap_secs = {}\n",
        m.retry_after_cap_secs
    ));
    if let Some(p) = m.price_per_million {
        out.push_str(&format!(
            "price_per_million = {{ prompt = {}, completion = {} }}\n",
            p.prompt, p.completion
        ));
    }
    if !m.extra_body.is_empty() {
        out.push_str(&format!("\n[{table}.extra_body]\n"));
        for (k, v) in &m.extra_body {
            let value =
                toml::Value::try_from(v).map_or_else(|_| q(&v.to_string()), |t| t.to_string());
            out.push_str(&format!("{} = {value}\n", toml_key(k)));
        }
    }
}

pub(super) fn toml_key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        toml::Value::String(k.to_string()).to_string()
    }
}
