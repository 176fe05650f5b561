//! Line numbers of the items of one array in a JSON text.
//!
//! serde_json's `Value` forgets positions, but a warning about a bad alert
//! should name its line. This scanner walks an already-valid JSON text and
//! records where each item of the array at a key path starts.

/// 1-based lines of the items of the array at `target` (object keys from the
/// root; `[]` is the root itself). `None` if the text does not scan.
pub fn array_item_lines(text: &str, target: &[&str]) -> Option<Vec<usize>> {
    let mut s = Scan {
        b: text.as_bytes(),
        i: 0,
        path: Vec::new(),
        target,
        offsets: Vec::new(),
    };
    s.value(0)?;
    let mut lines = Vec::with_capacity(s.offsets.len());
    let mut line = 1;
    let mut pos = 0;
    for off in s.offsets {
        line += s.b.get(pos..off)?.iter().filter(|&&c| c == b'\n').count();
        pos = off;
        lines.push(line);
    }
    Some(lines)
}

struct Scan<'a, 't> {
    b: &'a [u8],
    i: usize,
    path: Vec<String>,
    target: &'t [&'t str],
    offsets: Vec<usize>,
}

/// Deeper than serde_json's own limit cannot be valid input.
const MAX_DEPTH: usize = 256;

impl Scan<'_, '_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn string(&mut self) -> Option<String> {
        let start = self.i + 1;
        self.i += 1;
        loop {
            match self.peek()? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some(
                        String::from_utf8_lossy(self.b.get(start..self.i - 1)?).into_owned(),
                    );
                }
                _ => self.i += 1,
            }
        }
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match self.peek()? {
            b'{' => {
                self.i += 1;
                loop {
                    self.ws();
                    match self.peek()? {
                        b'}' => {
                            self.i += 1;
                            return Some(());
                        }
                        b',' => self.i += 1,
                        b'"' => {
                            let key = self.string()?;
                            self.ws();
                            if self.peek()? != b':' {
                                return None;
                            }
                            self.i += 1;
                            self.path.push(key);
                            self.value(depth + 1)?;
                            self.path.pop();
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let is_target = self.path.len() == self.target.len()
                    && self.path.iter().zip(self.target).all(|(a, b)| a == b);
                self.path.push("[]".into());
                loop {
                    self.ws();
                    match self.peek()? {
                        b']' => {
                            self.i += 1;
                            self.path.pop();
                            return Some(());
                        }
                        b',' => self.i += 1,
                        _ => {
                            if is_target {
                                self.offsets.push(self.i);
                            }
                            self.value(depth + 1)?;
                        }
                    }
                }
            }
            b'"' => self.string().map(|_| ()),
            _ => {
                while self
                    .peek()
                    .is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace())
                {
                    self.i += 1;
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_item_lines_at_path() {
        let text = "{\"status\": \"ok\",\n \"data\": {\"alerts\": [\n  {\"a\": [1,2]},\n  {\"b\": \"x]\"}\n]}}";
        assert_eq!(
            array_item_lines(text, &["data", "alerts"]),
            Some(vec![3, 4])
        );
        assert_eq!(array_item_lines("[1,\n2]", &[]), Some(vec![1, 2]));
    }
}
