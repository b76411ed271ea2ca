//! A walk over a Parquet file's footer, before the parquet crate decodes it, that refuses a
//! footer declaring more than it holds.
//!
//! The footer is Thrift's compact protocol. parquet 58 reserves a list's memory from the count
//! its header declares before reading an element, so a damaged or crafted footer of a few
//! hundred bytes that declares a list of two billion row groups asks the allocator for tens of
//! gigabytes, and a failed allocation aborts the process: no error, no `catch_unwind`
//! (apache/arrow-rs#9874; fixed in parquet 60 by bounding the count by the bytes left,
//! apache/arrow-rs#10979; dogana stays on 58 with the rest of the workspace's arrow, see
//! docs/decisions.md). This walk applies the same bound first: every element of a list, set
//! or map takes at least one byte on the wire, and a binary value its length, so a count or
//! length above the bytes left is a damaged footer. It allocates nothing, and goes no deeper
//! than [`MAX_DEPTH`] nested values.
//!
//! It is a partial guard, and says so: it walks the footer by the types the footer itself
//! declares, while parquet 58 reads each known field as the type its schema gives, whatever
//! type the field's header names. A footer whose header names a byte where parquet expects
//! the schema's list passes this walk and still reaches the oversized reservation (the fuzz
//! target `parquet_rows` found one; docs/decisions.md, "A damaged Parquet file"). What it
//! stops is the damage that keeps the types: a count or a length grown past the bytes.

use std::io::{self, Read, Seek, SeekFrom};

/// How deeply values may nest (a Parquet footer nests about six deep).
const MAX_DEPTH: usize = 64;

/// Checks the footer of the Parquet file `file` of `bytes` bytes, leaving `file` at its start.
/// `Ok` when the footer declares no more than it holds, or when the file has no footer this
/// walk can find (the parquet crate then says what is wrong); `Err` says what the footer
/// declares and what it holds.
pub(crate) fn check_footer<F: Read + Seek>(
    file: &mut F,
    bytes: u64,
) -> io::Result<Result<(), String>> {
    let outcome = footer(file, bytes)?.map_or(Ok(()), |footer| {
        let mut walk = Walk {
            buf: &footer,
            pos: 0,
        };
        walk.structure(0)
            .map_err(|why| format!("the Parquet file is damaged: its footer {why}"))
    });
    file.rewind()?;
    Ok(outcome)
}

/// The footer's bytes: the `len` bytes before the last eight (`len` as 4 bytes little-endian,
/// then `PAR1`). `None` when the file is too short, ends otherwise (an encrypted footer ends
/// `PARE`), or declares a footer longer than itself.
fn footer<F: Read + Seek>(file: &mut F, bytes: u64) -> io::Result<Option<Vec<u8>>> {
    if bytes < 12 {
        return Ok(None);
    }
    let mut tail = [0u8; 8];
    file.seek(SeekFrom::Start(bytes - 8))?;
    file.read_exact(&mut tail)?;
    if &tail[4..] != b"PAR1" {
        return Ok(None);
    }
    let len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if len > bytes - 12 {
        return Ok(None);
    }
    let mut footer = vec![0u8; len as usize];
    file.seek(SeekFrom::Start(bytes - 8 - len))?;
    file.read_exact(&mut footer)?;
    Ok(Some(footer))
}

/// A position in the footer's bytes.
struct Walk<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Walk<'_> {
    fn left(&self) -> u64 {
        (self.buf.len() - self.pos) as u64
    }

    fn byte(&mut self) -> Result<u8, String> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| format!("ends inside a value, at byte {}", self.pos))?;
        self.pos += 1;
        Ok(b)
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<(), String> {
        if n > self.left() {
            return Err(format!(
                "declares {n} bytes of {what} at byte {} with {} left",
                self.pos,
                self.left()
            ));
        }
        self.pos += n as usize;
        Ok(())
    }

    /// An unsigned LEB128 varint of at most ten bytes.
    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f).checked_shl(shift).unwrap_or(0);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(format!(
            "has a varint longer than ten bytes before byte {}",
            self.pos
        ))
    }

    /// A count of `count` elements, each at least one byte, must fit in what is left.
    fn elements(&self, count: u64, what: &str) -> Result<(), String> {
        if count > self.left() {
            return Err(format!(
                "declares a {what} of {count} elements at byte {} with {} bytes left",
                self.pos,
                self.left()
            ));
        }
        Ok(())
    }

    /// A struct's fields up to its stop byte.
    fn structure(&mut self, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("nests deeper than {MAX_DEPTH} values"));
        }
        loop {
            let header = self.byte()?;
            // as the parquet crate reads it: a field of type 0 is the stop, whatever its delta
            if header & 0x0f == 0 {
                return Ok(());
            }
            if header >> 4 == 0 {
                self.varint()?; // the field id, in full
            }
            match header & 0x0f {
                // a boolean field's value is its type
                1 | 2 => {}
                ty => self.value(ty, depth)?,
            }
        }
    }

    /// One value of compact type `ty` (booleans as one byte, as in a list).
    fn value(&mut self, ty: u8, depth: usize) -> Result<(), String> {
        match ty {
            1..=3 => self.skip(1, "a byte"),
            4..=6 => self.varint().map(drop),
            7 => self.skip(8, "a double"),
            8 => {
                let len = self.varint()?;
                self.skip(len, "a binary value")
            }
            9 | 10 => self.list(depth + 1),
            11 => self.map(depth + 1),
            12 => self.structure(depth + 1),
            13 => self.skip(16, "a UUID"),
            other => Err(format!(
                "has a value of unknown type {other} at byte {}",
                self.pos
            )),
        }
    }

    fn list(&mut self, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("nests deeper than {MAX_DEPTH} values"));
        }
        let header = self.byte()?;
        let mut count = u64::from(header >> 4);
        if count == 15 {
            count = self.varint()?;
        }
        self.elements(count, "list")?;
        for _ in 0..count {
            self.value(header & 0x0f, depth)?;
        }
        Ok(())
    }

    fn map(&mut self, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("nests deeper than {MAX_DEPTH} values"));
        }
        let count = self.varint()?;
        if count == 0 {
            return Ok(());
        }
        let types = self.byte()?;
        self.elements(count, "map")?;
        for _ in 0..count {
            self.value(types >> 4, depth)?;
            self.value(types & 0x0f, depth)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::check_footer;

    /// A file of `body` then the footer `footer`, its length and `PAR1`.
    fn file(footer: &[u8]) -> Cursor<Vec<u8>> {
        let mut f = b"PAR1".to_vec();
        f.extend_from_slice(footer);
        f.extend_from_slice(&(footer.len() as u32).to_le_bytes());
        f.extend_from_slice(b"PAR1");
        Cursor::new(f)
    }

    fn check(footer: &[u8]) -> Result<(), String> {
        let mut f = file(footer);
        let n = f.get_ref().len() as u64;
        let r = check_footer(&mut f, n).unwrap();
        assert_eq!(f.position(), 0, "the file is left at its start");
        r
    }

    #[test]
    fn a_footer_that_holds_what_it_declares_passes() {
        // rule: CHECK-08 — field 1 i32 version 1; field 2 a list of two structs, each one
        // binary field of three bytes; field 3 i64 (delta 1); stop
        let footer = [
            0x15, 0x02, // version
            0x19, 0x2c, // list of 2 structs
            0x18, 0x03, b'a', b'b', b'c', 0x00, // struct: binary "abc", stop
            0x18, 0x00, 0x00, // struct: empty binary, stop
            0x16, 0x04, // i64
            0x11, // a bool field, true
            0x00,
        ];
        assert_eq!(check(&footer), Ok(()));
    }

    #[test]
    fn a_list_declaring_more_elements_than_bytes_left_is_refused() {
        // rule: CHECK-08 — two billion row groups in eight bytes
        let footer = [0x15, 0x02, 0x49, 0xfc, 0xfc, 0xff, 0xff, 0xff, 0x07, 0x00];
        let why = check(&footer).unwrap_err();
        assert!(why.contains("a list of 2147483644 elements"), "{why}");
        assert!(
            why.starts_with("the Parquet file is damaged: its footer"),
            "{why}"
        );
    }

    #[test]
    fn a_binary_longer_than_the_footer_is_refused() {
        // rule: CHECK-08
        let why = check(&[0x18, 0xff, 0xff, 0x03, b'x', 0x00]).unwrap_err();
        assert!(why.contains("65535 bytes of a binary value"), "{why}");
    }

    #[test]
    fn a_map_declaring_more_entries_than_bytes_left_is_refused() {
        // rule: CHECK-08
        let why = check(&[0x1b, 0x80, 0x80, 0x04, 0x88, 0x00]).unwrap_err();
        assert!(why.contains("a map of 65536 elements"), "{why}");
    }

    #[test]
    fn nesting_past_the_limit_is_refused_without_recursing_further() {
        // rule: CHECK-08 — a struct in a struct in a struct …
        let mut footer = vec![0x1c; 200];
        footer.extend(vec![0x00; 201]);
        let why = check(&footer).unwrap_err();
        assert!(why.contains("nests deeper than 64"), "{why}");
    }

    #[test]
    fn a_truncated_footer_is_refused_and_a_file_without_one_is_left_to_the_reader() {
        // rule: CHECK-08
        assert!(check(&[0x15]).unwrap_err().contains("ends inside a value"));
        let mut short = Cursor::new(b"id\n1\n".to_vec());
        assert_eq!(check_footer(&mut short, 5).unwrap(), Ok(()));
        let encrypted = b"PAR1 not a footer this walk reads PARE".to_vec();
        let n = encrypted.len() as u64;
        assert_eq!(
            check_footer(&mut Cursor::new(encrypted), n).unwrap(),
            Ok(())
        );
    }
}
