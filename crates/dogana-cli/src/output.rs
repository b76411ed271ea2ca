//! Writing outputs: standard output, or a file replaced atomically (CLI-12, CLI-13).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use dogana_json::needs_escape;

use crate::input::shown;
use crate::refusal::{refuse, Refusal, Result};
use dogana_codes as codes;

/// Writes `bytes` to standard output. A closed pipe (`dogana claims ... | head`) is not an
/// error: the reader has what it wanted.
pub fn stdout(bytes: &[u8]) -> Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => refuse!(
            codes::OUTPUT_UNWRITABLE,
            "cannot write to standard output: {e}"
        ),
    }
}

/// Refuses an existing `path` unless `force` (CLI-12); checked before any work is done, and
/// again, atomically, when the file is put in place.
pub fn check_free(path: &Path, force: bool, what: &str) -> Result<()> {
    if !force && std::fs::symlink_metadata(path).is_ok() {
        refuse!(
            codes::OUTPUT_EXISTS,
            "{} exists; pass --force to replace the {what}, or -o to write elsewhere",
            shown(path)
        )
    }
    Ok(())
}

fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, flushed to disk,
/// then renamed over the target, so a reader sees the old file or the new one, never a part
/// (CLI-12). Without `force`, an existing file is refused, also when it appears meanwhile.
pub fn file(path: &Path, bytes: &[u8], force: bool, what: &str) -> Result<()> {
    let cannot = |e: &io::Error| {
        // a full disk is transient: the same call succeeds once there is room
        let code = match e.kind() {
            io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => codes::DISK_FULL,
            _ => codes::OUTPUT_UNWRITABLE,
        };
        Refusal::new(
            code,
            format!(
                "cannot write the {what} {}: {e}; check the directory exists and is writable",
                shown(path)
            ),
        )
    };
    let dir = directory_of(path);
    let mut tmp = tempfile::Builder::new()
        .prefix(".dogana-")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(|e| cannot(&e))?;
    tmp.write_all(bytes).map_err(|e| cannot(&e))?;
    set_permissions(tmp.as_file(), path).map_err(|e| cannot(&e))?;
    tmp.as_file().sync_all().map_err(|e| cannot(&e))?;
    let placed = if force {
        tmp.persist(path).map(drop)
    } else {
        tmp.persist_noclobber(path).map(drop)
    };
    if let Err(e) = placed {
        if e.error.kind() == io::ErrorKind::AlreadyExists {
            check_free(path, false, what)?;
        }
        return Err(cannot(&e.error));
    }
    // Make the rename itself durable; best effort, as not every system can sync a directory.
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The new file gets the permissions of the one it replaces, or rw-r--r-- (a temporary file is
/// created private).
#[cfg(unix)]
fn set_permissions(tmp: &std::fs::File, target: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let permissions = match std::fs::metadata(target) {
        Ok(m) => m.permissions(),
        Err(_) => std::fs::Permissions::from_mode(0o644),
    };
    tmp.set_permissions(permissions)
}

#[cfg(not(unix))]
fn set_permissions(_tmp: &std::fs::File, _target: &Path) -> io::Result<()> {
    Ok(())
}

/// Text a sender wrote (a table or shape name from a manifest, a ledger or a receipt, a check's
/// detail), made safe to print on a terminal: `dogana_json::shown`, the one place that
/// decides which characters are escaped and how.
pub fn sender_text(text: &str) -> std::borrow::Cow<'_, str> {
    dogana_json::shown(text)
}

/// JSON for a terminal: every character [`sender_text`] would escape (controls, line and
/// paragraph separators, bidirectional controls), but the line breaks between documents,
/// written as a JSON `\uXXXX` escape. Such a character can only stand inside a JSON string
/// (the structure is ASCII), so the document means the same, identities included; only
/// `dogana canonical` prints RFC 8785's exact bytes.
pub fn json_text(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && needs_escape(c)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c != '\n' && needs_escape(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Writes JSON documents to standard output, as [`json_text`] makes them safe.
pub fn json(text: &str) -> Result<()> {
    stdout(json_text(text).as_bytes())
}

/// Output for a terminal built line by line: each line is passed through [`sender_text`] as
/// a whole when it is pushed, so a sender's text inside it (a source, a table, shape or
/// column name, a value quoted in a check's detail) can hold a line break and still end up on
/// that one line, escaped: no line of the output can be forged.
#[derive(Debug, Default)]
pub struct Lines(String);

impl Lines {
    /// No lines yet.
    pub fn new() -> Lines {
        Lines::default()
    }

    /// Appends one line (a line break inside `text` is escaped, not kept).
    pub fn line(&mut self, text: impl AsRef<str>) {
        self.0.push_str(&sender_text(text.as_ref()));
        self.0.push('\n');
    }

    /// The lines, each ended by a line break.
    pub fn text(&self) -> &str {
        &self.0
    }

    /// Writes the lines to standard output.
    pub fn print(&self) -> Result<()> {
        stdout(self.0.as_bytes())
    }
}

/// Lines for a terminal: each line of `text` through [`sender_text`], the line breaks kept.
/// For output that mixes our words with a sender's (names, sources, check details).
pub fn shown_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        out.push_str(&sender_text(body));
        out.push_str(end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::sender_text;

    #[test]
    fn sender_text_is_shown_never_executed() {
        // rule: TRUST-07 (text from a sender is shown, never executed)
        assert_eq!(sender_text("orders"), "orders");
        assert_eq!(sender_text("é \"quoted\" \\ path"), "é \"quoted\" \\ path");
        assert_eq!(
            sender_text("a\u{1b}[2Jb\nc\r\td\u{7f}\u{9b}31m"),
            "a\\u{1b}[2Jb\\nc\\r\\td\\u{7f}\\u{9b}31m"
        );
        assert_eq!(
            sender_text("abc\u{202e}fed\u{2066}x\u{2028}"),
            "abc\\u{202e}fed\\u{2066}x\\u{2028}"
        );
        // the result holds no control character at all
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        assert!(!sender_text(&all).chars().any(|c| c.is_control()));
    }
}
