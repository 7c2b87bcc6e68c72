//! Which servers the fleet watches: `http(s)://host[:port]` addresses from the command line or a
//! hosts file, each with an optional bearer token. Parsing and validation only (plus reading the
//! token files they name); no network.
//!
//! A hosts file has one host a line; `#` starts a comment (a whole line, or after a space);
//! blank lines are skipped. After the address, `key=value` words may follow:
//!
//! ```text
//! # the training boxes
//! http://10.0.0.5:9958
//! https://gpu-7.example.com:9958  token_file=tokens/gpu-7   name=trainer-7
//! ```
//!
//! `token_file=` (relative to the hosts file's folder) overrides `--token-file` for that host;
//! `name=` replaces the shown name (default: `host:port`). A bad line is an error naming the
//! file and line.

use std::path::{Path, PathBuf};

use crate::endpoint::DEFAULT_PORT;
use crate::endpoint::auth::{self, Token};

/// Longest name shown for a host.
const MAX_NAME_CHARS: usize = 40;

/// One server to poll.
#[derive(Debug, Clone)]
pub struct Host {
    /// What the screen calls it (`name=`, else `host:port`).
    pub name: String,
    /// `scheme://host:port`, no trailing slash.
    pub base: String,
    /// Sent as `Authorization: Bearer …`.
    pub token: Option<Token>,
}

impl Host {
    /// The snapshot endpoint.
    pub fn snapshot_url(&self) -> String {
        format!("{}/api/v1/snapshot", self.base)
    }
}

/// Why the host list could not be built.
#[derive(Debug, thiserror::Error)]
pub enum HostsError {
    /// Neither a URL on the command line nor a hosts file with a host in it.
    #[error("no hosts to watch: give URLs (gpumeter fleet http://10.0.0.5:9958 …) or --hosts FILE")]
    NoHosts,
    /// The hosts file could not be read.
    #[error("cannot read the hosts file {path}: {reason}")]
    Unreadable {
        /// The hosts file, as given.
        path: PathBuf,
        /// Why not (the read error), in words.
        reason: String,
    },
    /// A line of the hosts file is bad (address, `key=value` word or token file).
    #[error("{path}:{line}: {message}")]
    Line {
        /// The hosts file, as given.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// What is wrong with the line.
        message: String,
    },
    /// A URL given on the command line is bad or listed twice; the message quotes it.
    #[error("{0}")]
    Url(String),
    /// A token file could not be used (the token loader's error, converted).
    #[error("{0}")]
    Token(#[from] auth::AuthError),
}

/// A checked address: `scheme://host:port` and the `host:port` part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// `scheme://host:port`, the port filled in, no trailing slash.
    pub base: String,
    /// `host:port` (the default name shown for the host).
    pub authority: String,
}

/// Checks one `http(s)://host[:port][/]` address (port 9958 when left out).
pub fn parse_address(text: &str) -> Result<Address, String> {
    let s = text.trim();
    let (scheme, rest) = if let Some(r) = s.strip_prefix("http://") {
        ("http", r)
    } else if let Some(r) = s.strip_prefix("https://") {
        ("https", r)
    } else {
        return Err(format!(
            "'{s}' is not an http:// or https:// address (example: http://10.0.0.5:{DEFAULT_PORT})"
        ));
    };
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.contains(['/', '?', '#']) {
        return Err(format!(
            "'{s}': give the server's address without a path (the fleet asks for /api/v1/snapshot)"
        ));
    }
    if authority.contains('@') {
        return Err(format!(
            "'{s}': no user or password in the address; put the token in a file (token_file=PATH)"
        ));
    }
    let (host, port) = split_host_port(authority).ok_or_else(|| format!("'{s}': bad host:port"))?;
    if host.is_empty() || host.contains(char::is_whitespace) {
        return Err(format!("'{s}': no host name"));
    }
    // DNS names stop at 253 characters; anything longer is not an address.
    if host.len() > 253 {
        return Err(format!(
            "'{s}': the host name is longer than 253 characters"
        ));
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 => n,
            _ => return Err(format!("'{s}': '{p}' is not a port (1–65535)")),
        },
    };
    let authority = format!("{host}:{port}");
    Ok(Address {
        base: format!("{scheme}://{authority}"),
        authority,
    })
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`.
fn split_host_port(a: &str) -> Option<(&str, Option<&str>)> {
    if let Some(rest) = a.strip_prefix('[') {
        let end = rest.find(']')?;
        let host = &a[..end + 2];
        return match &rest[end + 1..] {
            "" => Some((host, None)),
            p => p.strip_prefix(':').map(|p| (host, Some(p))),
        };
    }
    match a.rsplit_once(':') {
        Some((h, _)) if h.contains(':') => None,
        Some((h, p)) => Some((h, Some(p))),
        None => Some((a, None)),
    }
}

/// Reads a token file (the same rules as `serve --token-file`: not writable by others, a
/// warning when others may read it).
pub fn read_token(path: &Path, warn: &mut dyn FnMut(String)) -> Result<Token, auth::AuthError> {
    match auth::load_token(Some(path), None, warn)? {
        Some(t) => Ok(t),
        // Not reached: with a file, load_token returns its token or an error.
        None => Err(auth::AuthError::Unreadable {
            path: path.to_path_buf(),
            reason: "no token".into(),
        }),
    }
}

/// The hosts from the command line's URLs and the hosts file's lines (in that order), with
/// `default_token` for those that name none. Duplicate addresses are an error.
pub fn collect(
    urls: &[String],
    file: Option<(&Path, &str)>,
    default_token: Option<&Token>,
    warn: &mut dyn FnMut(String),
) -> Result<Vec<Host>, HostsError> {
    let mut hosts = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    for u in urls {
        let a = parse_address(u).map_err(HostsError::Url)?;
        if let Some((_, at)) = seen.iter().find(|(b, _)| *b == a.base) {
            return Err(HostsError::Url(format!(
                "{} is listed twice ({at})",
                a.base
            )));
        }
        seen.push((a.base.clone(), "on the command line".into()));
        hosts.push(Host {
            name: a.authority,
            base: a.base,
            token: default_token.cloned(),
        });
    }
    if let Some((path, text)) = file {
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let err = |message: String| HostsError::Line {
                path: path.to_path_buf(),
                line,
                message,
            };
            let Some(entry) = parse_line(raw).map_err(err)? else {
                continue;
            };
            let a = parse_address(entry.address).map_err(err)?;
            if let Some((_, at)) = seen.iter().find(|(b, _)| *b == a.base) {
                return Err(err(format!("{} is listed twice (also {at})", a.base)));
            }
            seen.push((a.base.clone(), format!("line {line}")));
            let token = match entry.token_file {
                Some(t) => {
                    let t = Path::new(t);
                    let full = if t.is_relative() {
                        path.parent().unwrap_or(Path::new(".")).join(t)
                    } else {
                        t.to_path_buf()
                    };
                    Some(read_token(&full, warn).map_err(|e| err(e.to_string()))?)
                }
                None => default_token.cloned(),
            };
            hosts.push(Host {
                name: entry.name.map_or(a.authority, |n| {
                    crate::sanitize::sanitize(n, MAX_NAME_CHARS)
                }),
                base: a.base,
                token,
            });
        }
    }
    if hosts.is_empty() {
        return Err(HostsError::NoHosts);
    }
    Ok(hosts)
}

/// One hosts-file line's parts.
#[derive(Debug, PartialEq, Eq)]
struct Entry<'a> {
    address: &'a str,
    token_file: Option<&'a str>,
    name: Option<&'a str>,
}

/// `None` for a blank or comment line.
fn parse_line(raw: &str) -> Result<Option<Entry<'_>>, String> {
    // A comment starts at a `#` that begins the line or follows white space.
    let mut end = raw.len();
    let bytes = raw.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'#' && (i == 0 || bytes[i - 1].is_ascii_whitespace()) {
            end = i;
            break;
        }
    }
    let mut words = raw[..end].split_whitespace();
    let Some(address) = words.next() else {
        return Ok(None);
    };
    let mut entry = Entry {
        address,
        token_file: None,
        name: None,
    };
    for w in words {
        let (key, value) = w
            .split_once('=')
            .ok_or_else(|| format!("'{w}' is not key=value (known keys: token_file, name)"))?;
        if value.is_empty() {
            return Err(format!("{key}= needs a value"));
        }
        let slot = match key {
            "token_file" => &mut entry.token_file,
            "name" => &mut entry.name,
            _ => return Err(format!("unknown key '{key}' (known: token_file, name)")),
        };
        if slot.replace(value).is_some() {
            return Err(format!("{key}= is given twice"));
        }
    }
    Ok(Some(entry))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> Result<Vec<Host>, HostsError> {
        collect(
            &[],
            Some((Path::new("/etc/hosts.txt"), text)),
            None,
            &mut |_| {},
        )
    }

    fn line_error(text: &str) -> (usize, String) {
        match file(text) {
            Err(HostsError::Line { line, message, .. }) => (line, message),
            other => panic!("{text:?}: {other:?}"),
        }
    }

    #[test]
    fn addresses_are_normalised_with_the_default_port() {
        let a = parse_address("http://10.0.0.5:9000/").unwrap();
        assert_eq!(a.base, "http://10.0.0.5:9000");
        assert_eq!(a.authority, "10.0.0.5:9000");
        assert_eq!(
            parse_address("https://gpu-7").unwrap().base,
            "https://gpu-7:9958"
        );
        assert_eq!(
            parse_address("http://[::1]:80").unwrap().authority,
            "[::1]:80"
        );
        assert_eq!(
            parse_address("http://[::1]").unwrap().authority,
            "[::1]:9958"
        );
        for (bad, says) in [
            ("10.0.0.5:9958", "not an http"),
            ("ftp://x:1", "not an http"),
            ("http://x:1/metrics", "without a path"),
            ("http://u:p@x:1", "no user or password"),
            ("http://x:0", "not a port"),
            ("http://x:99999", "not a port"),
            ("http://:1", "no host"),
            ("http://a:b:c", "bad host:port"),
        ] {
            let e = parse_address(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_hosts_file_skips_comments_and_blanks_and_reads_names() {
        let hosts = file(
            "# fleet\n\n  http://a:1  # first\nhttp://b:2 name=trainer-b\nhttp://c:3#frag-is-not-a-comment-here\n",
        );
        // `#` glued to the address is not a comment: the address then has a fragment, refused.
        let (line, msg) = match hosts {
            Err(HostsError::Line { line, message, .. }) => (line, message),
            other => panic!("{other:?}"),
        };
        assert_eq!(line, 5);
        assert!(msg.contains("without a path"), "{msg}");
        let hosts = file("# fleet\n\n  http://a:1  # first\nhttp://b:2 name=trainer-b\n").unwrap();
        let names: Vec<&str> = hosts.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["a:1", "trainer-b"]);
        assert_eq!(hosts[1].snapshot_url(), "http://b:2/api/v1/snapshot");
        assert!(hosts[0].token.is_none());
    }

    #[test]
    fn bad_lines_name_their_line_and_the_problem() {
        for (text, line, says) in [
            ("http://a:1\nnot-a-url\n", 2, "not an http"),
            ("http://a:1\nhttp://a:1/\n", 2, "listed twice (also line 1)"),
            ("http://a:1 colour=red\n", 1, "unknown key 'colour'"),
            ("http://a:1 token_file\n", 1, "not key=value"),
            ("http://a:1 name=\n", 1, "needs a value"),
            ("http://a:1 name=x name=y\n", 1, "given twice"),
            (
                "\n\nhttp://a:1 token_file=/nonexistent/tok\n",
                3,
                "cannot read the token file",
            ),
        ] {
            let (l, m) = line_error(text);
            assert_eq!(l, line, "{text:?}: {m}");
            assert!(m.contains(says), "{text:?}: {m}");
        }
        let e = file("# only comments\n\n").unwrap_err();
        assert!(matches!(e, HostsError::NoHosts), "{e}");
        assert!(e.to_string().contains("--hosts FILE"));
        let shown = HostsError::Line {
            path: "/x/hosts.txt".into(),
            line: 4,
            message: "m".into(),
        };
        assert_eq!(shown.to_string(), "/x/hosts.txt:4: m");
    }

    #[test]
    fn tokens_come_from_the_line_else_the_default_and_relative_paths_follow_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let tok = dir.path().join("box.token");
        std::fs::write(&tok, "a-token-of-sixteen-chars-or-more\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tok, std::fs::Permissions::from_mode(0o600)).unwrap();
        let hosts_path = dir.path().join("hosts.txt");
        let default = Token::new("the-default-token-0123456789", "t").unwrap();
        let hosts = collect(
            &["http://cli:1".to_string()],
            Some((&hosts_path, "http://a:1 token_file=box.token\nhttp://b:1\n")),
            Some(&default),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(hosts.len(), 3);
        let header = |h: &Host| h.token.as_ref().map(Token::bearer);
        assert_eq!(
            header(&hosts[0]).as_deref(),
            Some("Bearer the-default-token-0123456789")
        );
        assert_eq!(
            header(&hosts[1]).as_deref(),
            Some("Bearer a-token-of-sixteen-chars-or-more")
        );
        assert_eq!(header(&hosts[2]), header(&hosts[0]));
        // A URL on the command line and the same one in the file: said, not polled twice.
        let e = collect(
            &["http://a:1".to_string()],
            Some((&hosts_path, "http://b:1\nhttp://a:1\n")),
            None,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("hosts.txt:2: http://a:1 is listed twice"),
            "{e}"
        );
    }
}
