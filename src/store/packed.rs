//! Large stored texts kept compact: prompts, model answers, journal events,
//! tool bodies and self-evaluations are stored zstd-compressed once they are
//! long enough for it to pay.
//!
//! A packed value is the bytes of a zstd frame; any other value is the
//! text's own UTF-8. The two cannot be confused: a zstd frame begins with
//! the bytes 28 B5 2F FD, and 0xB5 cannot follow '(' in UTF-8. Rows
//! written before packing existed therefore read back unchanged.

/// Texts shorter than this are stored as they are: a zstd frame's own
/// overhead would eat what compression saves.
const PACK_FROM: usize = 256;

/// zstd's default level: about fourfold on JSON at a few hundred MB/s.
const LEVEL: i32 = 3;

const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// The stored form of `text`: compressed when that makes it smaller.
pub(crate) fn pack(text: &str) -> Vec<u8> {
    if text.len() >= PACK_FROM
        && let Ok(z) = zstd::bulk::compress(text.as_bytes(), LEVEL)
        && z.len() < text.len()
    {
        return z;
    }
    text.as_bytes().to_vec()
}

/// The text a stored value holds. A value that is neither a readable frame
/// nor UTF-8 is a damaged row, reported as such.
pub(crate) fn unpack(stored: Vec<u8>) -> Result<String, String> {
    if stored.starts_with(&MAGIC) {
        let mut out = Vec::new();
        zstd::stream::copy_decode(stored.as_slice(), &mut out)
            .map_err(|e| format!("a compressed value does not decompress: {e}"))?;
        return String::from_utf8(out).map_err(|_| "a compressed value is not UTF-8".to_string());
    }
    String::from_utf8(stored).map_err(|_| "a stored text is not UTF-8".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_stay_as_they_are() {
        assert_eq!(pack("hello"), b"hello");
        assert_eq!(unpack(b"hello".to_vec()).as_deref(), Ok("hello"));
    }

    #[test]
    fn long_texts_shrink_and_come_back_whole() {
        let text = r#"{"type":"tool_invoked","text":"payment-service p99 latency"}"#.repeat(40);
        let stored = pack(&text);
        assert!(stored.len() * 4 < text.len(), "{} bytes", stored.len());
        assert!(stored.starts_with(&MAGIC));
        assert_eq!(unpack(stored).as_deref(), Ok(text.as_str()));
    }

    #[test]
    fn a_text_that_does_not_compress_is_stored_plain() {
        // 300 distinct characters: zstd cannot make this smaller.
        let text: String = (0..300u32)
            .filter_map(|i| char::from_u32(0x4E00 + i * 7))
            .collect();
        let stored = pack(&text);
        assert_eq!(unpack(stored).as_deref(), Ok(text.as_str()));
    }

    #[test]
    fn damaged_values_are_errors_not_panics() {
        let mut broken = MAGIC.to_vec();
        broken.extend_from_slice(&[1, 2, 3]);
        assert!(unpack(broken).is_err());
        assert!(unpack(vec![0xff, 0xfe]).is_err());
    }
}
