//! Who may ask: `serve` listens on loopback unless told otherwise, and any other address needs
//! a bearer token, read from `--token-file PATH` or `GPUMETER_SERVE_TOKEN` (never from the
//! command line, where `ps` shows it to every user). Requests then need
//! `Authorization: Bearer <token>`, compared in constant time. A token file that group or others
//! may read is used with a warning (secrets mounted by container platforms often are);
//! one that others may write is refused. So is anything but a small regular file of one line: a
//! FIFO or device is refused at once (opened without blocking), a file over [`MAX_TOKEN_FILE`]
//! bytes without being read whole, and a second line (two tokens, or a stray paste) by name.

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
    /// Asked to listen on a non-loopback address with no token configured.
    #[error(
        "refusing to listen on {0} without a token: anyone who can reach that address could read \
         this machine's processes and spend. Listen on 127.0.0.1, or pass --token-file PATH \
         (or set {TOKEN_ENV}) and give scrapers the token"
    )]
    NonLoopbackWithoutToken(SocketAddr),
    /// The token file could not be opened or read.
    #[error("cannot read the token file {path}: {reason}")]
    Unreadable {
        /// The `--token-file` path.
        path: PathBuf,
        /// The I/O error (or why its contents are not text).
        reason: String,
    },
    /// The token file may be written by users other than its owner (mode `o+w`).
    #[error("the token file {0} is writable by others (chmod 600 it): refusing to use it")]
    WorldWritable(PathBuf),
    /// The token (from the named file or variable) has fewer than [`MIN_TOKEN_LEN`] characters.
    #[error("the token from {0} is shorter than {MIN_TOKEN_LEN} characters")]
    TooShort(String),
    /// The token file is a FIFO, device or directory, refused without reading it.
    #[error("the token file {0} is not a regular file (a FIFO, device or directory): refusing it")]
    NotRegular(PathBuf),
    /// The token file is over [`MAX_TOKEN_FILE`] bytes.
    #[error("the token file {0} is larger than {MAX_TOKEN_FILE} bytes: a token is one short line")]
    TooLarge(PathBuf),
    /// The token file holds more than one line once blank lines around the token are dropped.
    #[error("the token file {0} has more than one line: put one token on one line")]
    SeveralLines(PathBuf),
}

/// Largest token file read (a token is one line of tens of bytes; this leaves room for long ones).
pub const MAX_TOKEN_FILE: u64 = 4096;

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
        let (file, meta) = crate::textfile::open_regular(path).map_err(|e| match e {
            crate::textfile::OpenError::NotRegular => AuthError::NotRegular(path.to_path_buf()),
            crate::textfile::OpenError::Io(e) => unreadable(e),
        })?;
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
        // Read at most one byte past the cap: the size can change after the metadata call.
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(&file, MAX_TOKEN_FILE + 1),
            &mut bytes,
        )
        .map_err(unreadable)?;
        if meta.len() > MAX_TOKEN_FILE || bytes.len() as u64 > MAX_TOKEN_FILE {
            return Err(AuthError::TooLarge(path.to_path_buf()));
        }
        let text = String::from_utf8(bytes).map_err(|e| AuthError::Unreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        if text.trim().lines().count() > 1 {
            return Err(AuthError::SeveralLines(path.to_path_buf()));
        }
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

    #[test]
    fn two_lines_a_large_file_a_fifo_and_a_device_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
            p
        };
        let two = write("two", &format!("{T}\n{T}-other\n"));
        let err = load_token(Some(&two), None, &mut |_| {}).unwrap_err();
        assert_eq!(err, AuthError::SeveralLines(two.clone()));
        assert!(err.to_string().contains("two"), "{err}");
        // A trailing newline (or blank lines around) is still one line.
        let one = write("one", &format!("\n{T}\n\n"));
        assert!(load_token(Some(&one), None, &mut |_| {}).unwrap().is_some());

        let big = write("big", &"a".repeat(MAX_TOKEN_FILE as usize + 1));
        let err = load_token(Some(&big), None, &mut |_| {}).unwrap_err();
        assert_eq!(err, AuthError::TooLarge(big));

        // A FIFO with no writer: a blocking open would hang here; the test bounds it at 5 s.
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let f = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(load_token(Some(&f), None, &mut |_| {}));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("a FIFO token file hung start-up");
        assert_eq!(got.unwrap_err(), AuthError::NotRegular(fifo));

        let dev = Path::new("/dev/zero");
        let err = load_token(Some(dev), None, &mut |_| {}).unwrap_err();
        assert_eq!(err, AuthError::NotRegular(dev.to_path_buf()));
    }
}
