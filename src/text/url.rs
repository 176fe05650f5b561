//! URLs in messages and in `diagraph config` output, with their secrets
//! masked. The URL may not even parse (that is often why it is being
//! shown), so this works on the text and hides more when in doubt.

const MASK: &str = "***";

/// Query and fragment parameters whose names contain one of these are
/// secrets: `api_key`, `apikey`, `access_token`, `client_secret`,
/// `password`, `passwd`, `pwd`, `auth`, `X-Amz-Signature`, `sig`,
/// `X-Amz-Credential`, `session`, `jwt`.
const SECRET_PARAM_WORDS: &[&str] = &[
    "key",
    "token",
    "secret",
    "pass",
    "pwd",
    "auth",
    "sig",
    "credential",
    "session",
    "jwt",
];

/// `url` with every secret replaced by `***`:
/// - userinfo: `scheme://user:secret@host` -> `scheme://user:***@host`; a
///   userinfo without a password is masked whole (`https://TOKEN@host`),
///   since it is how tokens travel in URLs;
/// - a password holding an unencoded `/`, `?` or `#` (the URL is then
///   malformed) is masked up to the last `@`;
/// - query and fragment parameters with a secret-looking name
///   (`?api_key=…`, `&token=…`, `#access_token=…`) keep their name only.
pub fn mask_url(url: &str) -> String {
    let (head, tail) = mask_userinfo(url);
    match tail.find(['?', '#']) {
        Some(q) => format!("{head}{}{}", &tail[..q], mask_params(&tail[q..])),
        None => format!("{head}{tail}"),
    }
}

/// Splits `url` into its masked `scheme://userinfo@` part and the rest.
fn mask_userinfo(url: &str) -> (String, &str) {
    let Some(scheme_end) = url.find("://") else {
        return (String::new(), url);
    };
    let rest_start = scheme_end + 3;
    let rest = &url[rest_start..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let (userinfo, host) = match authority.rfind('@') {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        // No `@` in the authority, but one later with a `user:` before
        // it: a password with an unencoded delimiter in it.
        None => match rest.rfind('@') {
            Some(at) if rest[..at].contains(':') => (&rest[..at], &rest[at + 1..]),
            _ => return (String::new(), url),
        },
    };
    if userinfo.is_empty() {
        return (String::new(), url);
    }
    let masked = match userinfo.split_once(':') {
        Some((user, _)) => format!("{user}:{MASK}"),
        None => MASK.to_string(),
    };
    (format!("{}{masked}@", &url[..rest_start]), host)
}

/// `?a=1&token=x#frag` with the secret values masked; `part` starts with
/// `?` or `#`.
fn mask_params(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    let mut rest = part;
    while let Some(sep) = rest.chars().next() {
        out.push(sep);
        rest = &rest[sep.len_utf8()..];
        let end = rest.find(['&', ';', '#']).unwrap_or(rest.len());
        let (param, after) = rest.split_at(end);
        match param.split_once('=') {
            Some((name, value)) if !value.is_empty() && is_secret_name(name) => {
                out.push_str(name);
                out.push('=');
                out.push_str(MASK);
            }
            _ => out.push_str(param),
        }
        rest = after;
    }
    out
}

/// Whether a parameter, flag or variable called `name` holds a secret
/// (`api_key`, `--token`, `GITHUB_PAT`…: see [`SECRET_PARAM_WORDS`]).
pub fn is_secret_name(name: &str) -> bool {
    let name = percent_decode_lower(name);
    SECRET_PARAM_WORDS.iter().any(|w| name.contains(w))
}

/// Lower-cased, with `%XX` escapes of ASCII decoded, so `api%5Fkey` and
/// `API_KEY` are recognised too.
fn percent_decode_lower(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < bytes.len() {
        let decoded = (bytes[i] == b'%')
            .then(|| s.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .filter(u8::is_ascii);
        match decoded {
            Some(b) => {
                out.push(char::from(b).to_ascii_lowercase());
                i += 3;
            }
            None => {
                let c = s[i..].chars().next().unwrap_or_default();
                out.extend(c.to_lowercase());
                i += c.len_utf8().max(1);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_in_userinfo_are_masked() {
        assert_eq!(
            mask_url("mysql://diag:hunter2@db.internal:3306/diagraph"),
            "mysql://diag:***@db.internal:3306/diagraph"
        );
        assert_eq!(mask_url("mysql://u:p@h"), "mysql://u:***@h");
        assert_eq!(mask_url("mysql://u:@h/db"), "mysql://u:***@h/db");
        // A password with an `@` in it: the last `@` ends the userinfo.
        assert_eq!(mask_url("mysql://u:p@ss@h/db"), "mysql://u:***@h/db");
        assert_eq!(mask_url("https://u:p:q@h"), "https://u:***@h");
    }

    #[test]
    fn a_lone_userinfo_is_a_token() {
        assert_eq!(
            mask_url("https://ghp_secret@example.com/x"),
            "https://***@example.com/x"
        );
        assert_eq!(
            mask_url("mysql://root@127.0.0.1/test"),
            "mysql://***@127.0.0.1/test"
        );
    }

    #[test]
    fn malformed_passwords_do_not_leak() {
        assert_eq!(mask_url("mysql://u:pa/ss@h/db"), "mysql://u:***@h/db");
        assert_eq!(mask_url("mysql://u:pa?ss@h/db"), "mysql://u:***@h/db");
        assert_eq!(mask_url("mysql://u:pa#ss@h/db"), "mysql://u:***@h/db");
        for url in [
            "mysql://u:s3cr/et@h",
            "x://u:s3cr?et@h",
            "x://u:s3cr@et@h/p?q",
        ] {
            assert!(!mask_url(url).contains("s3cr"), "{url}");
        }
    }

    #[test]
    fn secrets_in_query_strings_are_masked() {
        assert_eq!(
            mask_url("https://api.example.com/v1?api_key=sk-123&model=qwen"),
            "https://api.example.com/v1?api_key=***&model=qwen"
        );
        assert_eq!(
            mask_url("http://prom:9090/api?token=abc;x=1#access_token=def"),
            "http://prom:9090/api?token=***;x=1#access_token=***"
        );
        for (name, secret) in [
            ("key", "k1"),
            ("API_KEY", "k2"),
            ("apiKey", "k3"),
            ("password", "k4"),
            ("passwd", "k5"),
            ("secret", "k6"),
            ("client_secret", "k7"),
            ("X-Amz-Signature", "k8"),
            ("api%5Fkey", "k9"),
            ("%6Bey", "k0"),
        ] {
            let url = format!("https://h/p?a=1&{name}={secret}&b=2");
            let masked = mask_url(&url);
            assert!(!masked.contains(secret), "{masked}");
            assert!(masked.contains(&format!("{name}=***")), "{masked}");
            assert!(
                masked.contains("?a=1&") && masked.ends_with("&b=2"),
                "{masked}"
            );
        }
        // Both at once, and a URL without a scheme.
        assert_eq!(mask_url("https://u:p@h/?key=x"), "https://u:***@h/?key=***");
        assert_eq!(
            mask_url("sqlite:/tmp/a.db?password=x"),
            "sqlite:/tmp/a.db?password=***"
        );
    }

    #[test]
    fn harmless_urls_are_unchanged() {
        for url in [
            "",
            "not a url",
            "sqlite:/var/lib/diagraph/file.db",
            "https://api.openai.com/v1",
            "http://127.0.0.1:9090",
            "https://h/p?q=rate(x[5m])&step=15",
            "https://h/p?token=",
            "https://h/p?token",
            "https://h/users/@me",
            "https://h/中文?名=值",
            "://@",
        ] {
            assert_eq!(mask_url(url), url, "{url}");
        }
    }
}
