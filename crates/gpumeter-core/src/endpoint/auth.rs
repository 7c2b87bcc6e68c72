//! Who may ask: `serve` listens on loopback unless told otherwise, and any other address needs
//! a bearer token, read from `--token-file PATH` or `GPUMETER_SERVE_TOKEN` (never from the
//! command line, where `ps` shows it to every user). Requests then need
//! `Authorization: Bearer <token>`, compared in constant time. A token file that group or others
//! may read is used with a warning (secrets mounted by container platforms often are);
//! one that others may write is refused.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use subtle::ConstantTimeEq;

/// The environment variable that may carry the token.
pub const TOKEN_ENV: &str = "GPUMETER_SERVE_TOKEN";

/// Shortest token accepted (a guessable token is no protection).
pub const MIN_TOKEN_LEN: usize = 16;

/// Why the server may not start as asked.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AuthError {
    #[error(
        "refusing to listen on {0} without a token: anyone who can reach that address could read \
         this machine's processes and spend. Listen on 127.0.0.1, or pass --token-file PATH \
         (or set {TOKEN_ENV}) and give scrapers the token"
    )]
    NonLoopbackWithoutToken(SocketAddr),
    #[error("cannot read the token file {path}: {reason}")]
    Unreadable { path: PathBuf, reason: String },
    #[error("the token file {0} is writable by others (chmod 600 it): refusing to use it")]
    WorldWritable(PathBuf),
    #[error("the token from {0} is shorter than {MIN_TOKEN_LEN} characters")]
    TooShort(String),
}

/// A bearer token.
#[derive(Clone)]
pub struct Token(Vec<u8>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

impl Token {
    /// A token from its text (surrounding whitespace, such as a file's final newline, dropped).
    pub fn new(text: &str, origin: &str) -> Result<Token, AuthError> {
        let t = text.trim();
        if t.chars().count() < MIN_TOKEN_LEN {
            return Err(AuthError::TooShort(origin.to_string()));
        }
        Ok(Token(t.as_bytes().to_vec()))
    }

    /// The `Authorization` header value that carries this token (for clients: `fleet`).
    pub fn bearer(&self) -> String {
        format!("Bearer {}", String::from_utf8_lossy(&self.0))
    }

    /// Whether an `Authorization` header value carries this token (constant time in the
    /// token's bytes; the scheme is case-insensitive as RFC 7235 says).
    pub fn accepts(&self, header: Option<&[u8]>) -> bool {
        let Some(h) = header else {
            return false;
        };
        let Some((scheme, given)) = split_scheme(h) else {
            return false;
        };
        scheme.eq_ignore_ascii_case(b"bearer") && bool::from(given.ct_eq(&self.0))
    }
}

fn split_scheme(h: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = h.iter().position(|b| *b == b' ')?;
    let (scheme, rest) = h.split_at(at);
    let token = rest.trim_ascii();
    Some((scheme, token))
}

/// The token to require: from the file if given, else the environment; `None` when neither.
/// `warn` receives a line when the file's permissions are loose.
pub fn load_token(
    file: Option<&Path>,
    env: Option<String>,
    warn: &mut dyn FnMut(String),
) -> Result<Option<Token>, AuthError> {
    if let Some(path) = file {
        let unreadable = |e: std::io::Error| AuthError::Unreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        };
        let meta = std::fs::metadata(path).map_err(unreadable)?;
        let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
        if mode & 0o002 != 0 {
            return Err(AuthError::WorldWritable(path.to_path_buf()));
        }
        if mode & 0o044 != 0 {
            warn(format!(
                "the token file {} is readable by group or others (mode {:o}); chmod 600 it",
                path.display(),
                mode & 0o777
            ));
        }
        let text = std::fs::read_to_string(path).map_err(unreadable)?;
        return Token::new(&text, &path.display().to_string()).map(Some);
    }
    match env {
        Some(v) if !v.is_empty() => Token::new(&v, TOKEN_ENV).map(Some),
        _ => Ok(None),
    }
}

/// Checks the rule: a non-loopback address needs a token.
pub fn check_listen(addr: SocketAddr, token: Option<&Token>) -> Result<(), AuthError> {
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(AuthError::NonLoopbackWithoutToken(addr));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const T: &str = "0123456789abcdef-secret";

    #[test]
    fn only_the_exact_bearer_token_is_accepted() {
        let t = Token::new(&format!("{T}\n"), "test").unwrap();
        assert!(t.accepts(Some(format!("Bearer {T}").as_bytes())));
        assert!(t.accepts(Some(format!("bearer  {T} ").as_bytes())));
        assert!(!t.accepts(None));
        assert!(!t.accepts(Some(T.as_bytes())), "no scheme");
        assert!(!t.accepts(Some(format!("Basic {T}").as_bytes())));
        assert!(!t.accepts(Some(format!("Bearer {T}x").as_bytes())));
        assert!(!t.accepts(Some(format!("Bearer {}", &T[1..]).as_bytes())));
        assert!(!t.accepts(Some(b"Bearer ")));
    }

    #[test]
    fn short_tokens_are_refused_and_debug_hides_the_token() {
        assert_eq!(
            Token::new("short", "GPUMETER_SERVE_TOKEN").unwrap_err(),
            AuthError::TooShort("GPUMETER_SERVE_TOKEN".into())
        );
        let t = Token::new(T, "x").unwrap();
        assert!(!format!("{t:?}").contains("secret"));
    }

    #[test]
    fn non_loopback_needs_a_token_loopback_does_not() {
        let t = Token::new(T, "x").unwrap();
        let any: SocketAddr = "0.0.0.0:9958".parse().unwrap();
        let lo: SocketAddr = "127.0.0.1:9958".parse().unwrap();
        let lo6: SocketAddr = "[::1]:9958".parse().unwrap();
        let err = check_listen(any, None).unwrap_err();
        assert!(err.to_string().contains("--token-file"), "{err}");
        assert!(check_listen(any, Some(&t)).is_ok());
        assert!(check_listen(lo, None).is_ok());
        assert!(check_listen(lo6, None).is_ok());
    }

    #[test]
    fn token_files_are_read_and_loose_permissions_warn_or_refuse() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, format!("{T}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut warnings = Vec::new();
        let t = load_token(Some(&path), None, &mut |w| warnings.push(w)).unwrap();
        assert!(t.unwrap().accepts(Some(format!("Bearer {T}").as_bytes())));
        assert!(warnings.is_empty());

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        load_token(Some(&path), None, &mut |w| warnings.push(w)).unwrap();
        assert!(warnings[0].contains("chmod 600"), "{warnings:?}");

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = load_token(Some(&path), None, &mut |_| {}).unwrap_err();
        assert_eq!(err, AuthError::WorldWritable(path.clone()));

        let missing = dir.path().join("nope");
        let err = load_token(Some(&missing), None, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");

        // The file wins over the environment; the environment alone works; neither is None.
        assert!(
            load_token(None, Some(T.into()), &mut |_| {})
                .unwrap()
                .is_some()
        );
        assert!(
            load_token(None, Some(String::new()), &mut |_| {})
                .unwrap()
                .is_none()
        );
        assert!(load_token(None, None, &mut |_| {}).unwrap().is_none());
    }
}
