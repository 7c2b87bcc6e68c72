//! User names for uids, from `<etc>/passwd` (beside the proc root). Names are cached; the file
//! is re-read when an unknown uid shows up, at most once a minute. A uid with no entry (users
//! from LDAP/NSS, or a container's own users) is shown as its number, like `ps` does.

use std::collections::HashMap;
use std::path::PathBuf;

use gpumeter_model::SharedStr;

use super::system::read_capped;
use crate::sanitize::{MAX_NAME_CHARS, sanitize};

/// Least time between two reads of the passwd file.
const RELOAD_AFTER_MS: i64 = 60_000;
/// Largest passwd file read.
const MAX_PASSWD_BYTES: u64 = 8 << 20;

#[derive(Debug)]
pub(super) struct UserNames {
    passwd: PathBuf,
    /// Shared: every process of a user holds the same name.
    names: HashMap<u32, SharedStr>,
    loaded_at_ms: Option<i64>,
}

impl UserNames {
    pub(super) fn new(passwd: PathBuf) -> Self {
        Self {
            passwd,
            names: HashMap::new(),
            loaded_at_ms: None,
        }
    }

    /// The (sanitized) name of `uid`, or the uid as text when passwd does not know it.
    pub(super) fn name(&mut self, uid: u32, now_ms: i64) -> SharedStr {
        if !self.names.contains_key(&uid) && self.may_reload(now_ms) {
            self.reload(now_ms);
        }
        self.names
            .get(&uid)
            .cloned()
            .unwrap_or_else(|| uid.to_string().into())
    }

    fn may_reload(&self, now_ms: i64) -> bool {
        match self.loaded_at_ms {
            None => true,
            // A clock stepped backwards also allows a reload.
            Some(at) => now_ms >= at.saturating_add(RELOAD_AFTER_MS) || now_ms < at,
        }
    }

    fn reload(&mut self, now_ms: i64) {
        self.loaded_at_ms = Some(now_ms);
        if let Ok(raw) = read_capped(&self.passwd, MAX_PASSWD_BYTES) {
            self.names = parse_passwd(&String::from_utf8_lossy(&raw));
        }
    }
}

/// `name:password:uid:gid:...` lines; the first entry for a uid wins, as with getpwuid.
fn parse_passwd(text: &str) -> HashMap<u32, SharedStr> {
    let mut names = HashMap::new();
    for line in text.lines() {
        let mut fields = line.split(':');
        let (Some(name), Some(_), Some(uid)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        let Ok(uid) = uid.trim().parse::<u32>() else {
            continue;
        };
        let name = sanitize(name, MAX_NAME_CHARS);
        if !name.is_empty() && !name.starts_with('#') {
            names.entry(uid).or_insert_with(|| name.into());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_skips_junk() {
        let names = parse_passwd(
            "root:x:0:0:root:/root:/bin/bash\n# comment\nbroken\nbad:x:notanumber:0::/:/bin/sh\n\
             alice:x:1000:1000::/home/alice:/bin/sh\nalias:x:1000:1000::/:/bin/sh\n\
             evil\u{1b}[31m:x:1001:1001::/:/bin/sh\n",
        );
        assert_eq!(names.get(&0).map(|n| &**n), Some("root"));
        assert_eq!(names.get(&1000).map(|n| &**n), Some("alice"));
        assert_eq!(names.get(&1001).map(|n| &**n), Some("evil"));
        assert_eq!(names.len(), 3);
    }

    #[test]
    fn unknown_uid_is_numeric_and_reload_is_rate_limited() {
        let dir = tempfile::TempDir::new().unwrap();
        let passwd = dir.path().join("passwd");
        std::fs::write(&passwd, "root:x:0:0::/:/bin/sh\n").unwrap();
        let mut users = UserNames::new(passwd.clone());
        assert_eq!(&*users.name(0, 0), "root");
        assert_eq!(&*users.name(1000, 1_000), "1000");
        std::fs::write(
            &passwd,
            "root:x:0:0::/:/bin/sh\nbob:x:1000:1000::/:/bin/sh\n",
        )
        .unwrap();
        // Within a minute of the last read the file is not read again.
        assert_eq!(&*users.name(1000, 30_000), "1000");
        assert_eq!(&*users.name(1000, 61_000), "bob");
    }
}
