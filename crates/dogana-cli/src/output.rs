//! Writing outputs: standard output, or a file replaced atomically (CLI-12, CLI-13).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

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
/// detail), made safe to print on a terminal: shown, never executed. Control characters
/// (C0, DEL and C1, so every escape sequence's introducer: ESC, CSI), line breaks and the
/// Unicode controls that reorder or hide text (bidirectional overrides and isolates, the
/// line and paragraph separators) are written as Rust escapes (`\n`, `\t`, `\r`,
/// `\u{1b}`); everything else is kept as it is, so text without such characters prints
/// unchanged.
///
/// The receiver's commands print the same way: `receiver.rs` should pass every sender string
/// it prints (receipt checks' details, table names, sources) through this function.
pub fn sender_text(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether a character must not reach a terminal as itself.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}'
                | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
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
