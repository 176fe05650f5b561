//! Server-Sent Events framing (the `text/event-stream` format), read
//! incrementally from bytes cut anywhere. Both ends of the program read
//! it: the OpenAI-compatible provider's streamed completions and the TUI
//! following a `diagraph serve` run.

/// One Server-Sent Event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseFrame {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: String,
}

/// Reads SSE frames from a byte stream cut anywhere (even inside a UTF-8
/// character): lines end with LF, CR LF or CR, a blank line ends a frame,
/// `:` lines are comments, several `data:` lines join with LF.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    frame: SseFrame,
    has_data: bool,
    /// The previous byte was a CR, so an LF right after it is the same
    /// line end.
    after_cr: bool,
}

impl SseParser {
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseFrame> {
        let mut out = Vec::new();
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if let Some(frame) = self.line_done(&String::from_utf8_lossy(&line)) {
                        out.push(frame);
                    }
                }
                _ => self.line.push(b),
            }
        }
        out
    }

    /// At the end of the bytes: the frame whose last line ended but whose
    /// blank line never came (servers that close right after
    /// `data: [DONE]\n`). A line cut before its end is not a frame.
    pub fn finish(&mut self) -> Option<SseFrame> {
        if !self.line.is_empty() {
            return None;
        }
        self.line_done("")
    }

    fn line_done(&mut self, line: &str) -> Option<SseFrame> {
        if line.is_empty() {
            let frame = std::mem::take(&mut self.frame);
            let had_data = std::mem::take(&mut self.has_data);
            return (had_data || frame.event.is_some()).then_some(frame);
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.frame.data.push('\n');
                }
                self.frame.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.frame.event = Some(value.to_string()),
            "id" => self.frame.id = Some(value.to_string()),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(chunks: &[&[u8]]) -> Vec<SseFrame> {
        let mut p = SseParser::default();
        chunks.iter().flat_map(|c| p.feed(c)).collect()
    }

    #[test]
    fn frames_are_read_across_any_cut() {
        let text = "id: 1\ndata: {\"a\":\"é\"}\n\n: keep-alive\n\nevent: end\ndata: {}\n\n";
        let whole = frames(&[text.as_bytes()]);
        assert_eq!(
            whole,
            vec![
                SseFrame {
                    id: Some("1".into()),
                    event: None,
                    data: "{\"a\":\"é\"}".into()
                },
                SseFrame {
                    id: None,
                    event: Some("end".into()),
                    data: "{}".into()
                },
            ]
        );
        let bytes = text.as_bytes();
        for cut in 1..bytes.len() {
            assert_eq!(
                frames(&[&bytes[..cut], &bytes[cut..]]),
                whole,
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn crlf_cr_and_multi_line_data() {
        let got = frames(&[b"data: a\r\ndata: b\r\rdata:c\r", b"\n\r\n"]);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].data, "a\nb");
        assert_eq!(got[1].data, "c");
    }

    #[test]
    fn comments_and_empty_frames_yield_nothing() {
        assert!(frames(&[b": ping\n\n\n\nretry: 5\n\n"]).is_empty());
    }

    #[test]
    fn a_frame_without_its_blank_line_ends_only_at_finish_and_a_cut_line_never() {
        let mut p = SseParser::default();
        assert!(p.feed(b"data: [DONE]\n").is_empty());
        assert_eq!(p.finish().map(|f| f.data).as_deref(), Some("[DONE]"));
        let mut p = SseParser::default();
        assert!(p.feed(b"data: {\"cho").is_empty());
        assert_eq!(p.finish(), None);
    }
}
