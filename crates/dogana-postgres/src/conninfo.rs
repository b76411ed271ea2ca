//! Where to connect: a `postgres://` URL completed, as libpq completes it, from the environment
//! (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`, `PGPASSFILE`) and `~/.pgpass`.
//! The `postgres` crate reads none of these itself.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The directory Debian's libpq looks for a server's socket in when no host is named.
const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// A connection target, complete. Its password is never shown: see [`Target::shown`].
#[derive(Clone)]
pub struct Target {
    pub(crate) user: String,
    pub(crate) password: Option<String>,
    /// A host name or address, or a socket directory (an absolute path).
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) dbname: String,
    pub(crate) schema: Option<String>,
    pub(crate) connect_timeout: Option<Duration>,
    pub(crate) application_name: Option<String>,
    /// Where the password came from, for the message of a failed authentication.
    pub(crate) password_from: &'static str,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

fn decode(s: &str, what: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("the {what} in the store URL has a bad %-escape"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("the {what} in the store URL is not UTF-8"))
}

fn encode(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || "-._~".contains(c) {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// The parts a URL names (each possibly missing).
#[derive(Default)]
struct Parts {
    user: Option<String>,
    password: Option<String>,
    host: Option<String>,
    port: Option<String>,
    dbname: Option<String>,
    schema: Option<String>,
    sslmode: Option<String>,
    connect_timeout: Option<String>,
    application_name: Option<String>,
}

fn parse_url(url: &str) -> Result<Parts, String> {
    let rest = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
        .ok_or("a Postgres store URL begins with postgres:// or postgresql://")?;
    let (main, query) = match rest.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match main.find('/') {
        Some(i) => (&main[..i], &main[i + 1..]),
        None => (main, ""),
    };
    let mut p = Parts::default();
    let hostport = match authority.rsplit_once('@') {
        Some((userinfo, hp)) => {
            match userinfo.split_once(':') {
                Some((u, pw)) => {
                    p.user = Some(decode(u, "user")?);
                    p.password = Some(decode(pw, "password")?);
                }
                None => p.user = Some(decode(userinfo, "user")?),
            }
            hp
        }
        None => authority,
    };
    if hostport.contains(',') {
        return Err("the store URL names several hosts; name one".into());
    }
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or("the store URL has an unclosed [ in its host")?;
        (h.to_owned(), after.strip_prefix(':').map(str::to_owned))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, port)) => (decode(h, "host")?, Some(port.to_owned())),
            None => (decode(hostport, "host")?, None),
        }
    };
    if !host.is_empty() {
        p.host = Some(host);
    }
    p.port = port.filter(|s| !s.is_empty());
    if !path.is_empty() {
        p.dbname = Some(decode(path, "database name")?);
    }
    for pair in query.unwrap_or("").split('&').filter(|s| !s.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = decode(v, k)?;
        match k {
            "schema" => p.schema = Some(v),
            "host" => p.host = Some(v),
            "port" => p.port = Some(v),
            "user" => p.user = Some(v),
            "password" => p.password = Some(v),
            "dbname" => p.dbname = Some(v),
            "sslmode" => p.sslmode = Some(v),
            "connect_timeout" => p.connect_timeout = Some(v),
            "application_name" => p.application_name = Some(v),
            other => {
                return Err(format!(
                    "the store URL has a parameter {other:?} dogana does not know; it knows schema, host, port, user, password, dbname, sslmode, connect_timeout, application_name"
                ))
            }
        }
    }
    Ok(p)
}

/// A `~/.pgpass` field, unescaped (`\:` and `\\`).
fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    fields.last_mut().expect("one field").push(n);
                }
            }
            ':' => fields.push(String::new()),
            c => fields.last_mut().expect("one field").push(c),
        }
    }
    fields
}

/// The password `~/.pgpass` (or `PGPASSFILE`) gives for this target, as libpq looks it up:
/// the first line whose host, port, database and user match (`*` matches anything); a file
/// that its group or others can read is ignored, as libpq ignores it.
pub(crate) fn pgpass_lookup(
    file: &Path,
    host: &str,
    port: u16,
    dbname: &str,
    user: &str,
) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(file).ok()?;
        if !meta.is_file() || meta.permissions().mode() & 0o077 != 0 {
            return None;
        }
    }
    let text = std::fs::read_to_string(file).ok()?;
    let port = port.to_string();
    let hosts: Vec<&str> = if host.starts_with('/') && host == DEFAULT_SOCKET_DIR {
        vec![host, "localhost"]
    } else {
        vec![host]
    };
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f = pgpass_fields(line);
        if f.len() < 5 {
            continue;
        }
        let m = |field: &str, value: &str| field == "*" || field == value;
        if hosts.iter().any(|h| m(&f[0], h))
            && m(&f[1], &port)
            && m(&f[2], dbname)
            && m(&f[3], user)
        {
            return Some(f[4..].join(":"));
        }
    }
    None
}

impl Target {
    /// The target a URL names, completed from `env` (the process environment in
    /// [`Target::from_url`]) as libpq completes it.
    pub(crate) fn from_url_with(
        url: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Target, String> {
        let p = parse_url(url)?;
        let nonempty = |k: &str| env(k).filter(|v| !v.is_empty());
        let sslmode = p.sslmode.or_else(|| nonempty("PGSSLMODE"));
        if let Some(mode) = sslmode {
            if !matches!(mode.as_str(), "disable" | "allow" | "prefer") {
                return Err(format!(
                    "sslmode={mode}: this dogana connects without TLS; use sslmode=disable (a server on this machine or a private network), or a TLS tunnel to the server"
                ));
            }
        }
        let user = match p.user.or_else(|| nonempty("PGUSER")) {
            Some(u) => u,
            None => nonempty("USER")
                .or_else(|| nonempty("LOGNAME"))
                .ok_or("the store URL names no user, and neither PGUSER nor USER is set: name one (postgres://USER@HOST/DB)")?,
        };
        let host = p.host.or_else(|| nonempty("PGHOST")).unwrap_or_else(|| {
            if Path::new(DEFAULT_SOCKET_DIR).is_dir() {
                DEFAULT_SOCKET_DIR.into()
            } else {
                "localhost".into()
            }
        });
        let port = match p.port.or_else(|| nonempty("PGPORT")) {
            Some(s) => s
                .parse::<u16>()
                .map_err(|_| format!("the port {s:?} is not a port number"))?,
            None => 5432,
        };
        let dbname = p
            .dbname
            .or_else(|| nonempty("PGDATABASE"))
            .unwrap_or_else(|| user.clone());
        let connect_timeout = match p.connect_timeout.or_else(|| nonempty("PGCONNECT_TIMEOUT")) {
            Some(s) => Some(Duration::from_secs(s.parse::<u64>().map_err(|_| {
                format!("connect_timeout {s:?} is not a number of seconds")
            })?)),
            None => None,
        };
        let (password, password_from) = if let Some(pw) = p.password {
            (Some(pw), "the URL")
        } else if let Some(pw) = env("PGPASSWORD") {
            (Some(pw), "PGPASSWORD")
        } else {
            let file = nonempty("PGPASSFILE")
                .map(PathBuf::from)
                .or_else(|| nonempty("HOME").map(|h| Path::new(&h).join(".pgpass")));
            match file.and_then(|f| pgpass_lookup(&f, &host, port, &dbname, &user)) {
                Some(pw) => (Some(pw), "~/.pgpass"),
                None => (None, "nowhere"),
            }
        };
        Ok(Target {
            user,
            password,
            host,
            port,
            dbname,
            schema: p.schema,
            connect_timeout,
            application_name: p.application_name.or_else(|| nonempty("PGAPPNAME")),
            password_from,
        })
    }

    /// The target a URL names, completed from the process environment.
    pub(crate) fn from_url(url: &str) -> Result<Target, String> {
        Target::from_url_with(url, &|k| std::env::var(k).ok())
    }

    /// `HOST:PORT`, as messages name the server.
    pub(crate) fn server(&self) -> String {
        if self.host.starts_with('/') {
            format!("{}/.s.PGSQL.{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The URL without its password, as every message shows the store.
    pub(crate) fn shown(&self) -> String {
        let host = if self.host.starts_with('/') {
            encode(&self.host)
        } else if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let mut s = format!(
            "postgres://{}@{host}:{}/{}",
            encode(&self.user),
            self.port,
            encode(&self.dbname)
        );
        if let Some(schema) = &self.schema {
            s.push_str(&format!("?schema={}", encode(schema)));
        }
        s
    }

    /// The client's configuration.
    pub(crate) fn config(&self) -> postgres::Config {
        let mut c = postgres::Config::new();
        c.user(&self.user)
            .dbname(&self.dbname)
            .port(self.port)
            .application_name(self.application_name.as_deref().unwrap_or("dogana"));
        if self.host.starts_with('/') {
            c.host_path(&self.host);
        } else {
            c.host(&self.host);
        }
        if let Some(pw) = &self.password {
            c.password(pw);
        }
        c.connect_timeout(self.connect_timeout.unwrap_or(Duration::from_secs(10)));
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn target(url: &str, env: &[(&str, &str)]) -> Result<Target, String> {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Target::from_url_with(url, &|k| env.get(k).cloned())
    }

    #[test]
    fn a_url_names_everything() {
        let t = target(
            "postgres://me:s%40cret@db.example:6543/shop?schema=raw",
            &[],
        )
        .unwrap();
        assert_eq!(
            (t.user.as_str(), t.password.as_deref(), t.host.as_str()),
            ("me", Some("s@cret"), "db.example")
        );
        assert_eq!((t.port, t.dbname.as_str()), (6543, "shop"));
        assert_eq!(t.schema.as_deref(), Some("raw"));
        assert_eq!(t.shown(), "postgres://me@db.example:6543/shop?schema=raw");
        assert!(!format!("{t:?}").contains("cret"));
    }

    #[test]
    fn the_environment_fills_what_the_url_leaves_out() {
        let t = target(
            "postgres://",
            &[
                ("PGHOST", "10.0.0.5"),
                ("PGPORT", "5999"),
                ("PGUSER", "loader"),
                ("PGPASSWORD", "pw"),
                ("PGDATABASE", "warehouse"),
            ],
        )
        .unwrap();
        assert_eq!(t.host, "10.0.0.5");
        assert_eq!(t.port, 5999);
        assert_eq!(t.user, "loader");
        assert_eq!(t.dbname, "warehouse");
        assert_eq!(t.password.as_deref(), Some("pw"));
        assert_eq!(t.password_from, "PGPASSWORD");
        // the URL wins over the environment; the database defaults to the user
        let t = target("postgres://u@h", &[("PGUSER", "other"), ("PGPORT", "1")]).unwrap();
        assert_eq!((t.user.as_str(), t.port, t.dbname.as_str()), ("u", 1, "u"));
    }

    #[test]
    fn pgpass_gives_the_first_matching_password() {
        let dir = std::env::temp_dir().join(format!("dogana-pgpass-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pgpass");
        std::fs::write(
            &file,
            "# comment\nother:5432:*:u:no\nh:5432:db:u:first\\:part\n*:*:*:*:fallback\n",
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let f = file.to_str().unwrap();
        let t = target("postgres://u@h:5432/db", &[("PGPASSFILE", f)]).unwrap();
        assert_eq!(t.password.as_deref(), Some("first:part"));
        assert_eq!(t.password_from, "~/.pgpass");
        let t = target("postgres://x@y/z", &[("PGPASSFILE", f)]).unwrap();
        assert_eq!(t.password.as_deref(), Some("fallback"));
        // a file others can read is ignored, as libpq ignores it
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
            let t = target("postgres://x@y/z", &[("PGPASSFILE", f)]).unwrap();
            assert_eq!(t.password, None);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn tls_and_unknown_parameters_are_refused() {
        assert!(target("postgres://u@h/d?sslmode=require", &[])
            .unwrap_err()
            .contains("without TLS"));
        assert!(target("postgres://u@h/d?bogus=1", &[])
            .unwrap_err()
            .contains("\"bogus\""));
        assert!(target("postgres://u@h:notaport/d", &[]).is_err());
    }
}
