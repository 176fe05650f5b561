//! Standard output for the commands. Each command builds its text and
//! writes it once; a reader that closed the pipe (`diagraph trace 4 |
//! head -1`) ends the command quietly instead of a panic.

use super::CliError;
use std::io::{ErrorKind, Write};

/// Writes `text` to stdout and flushes it.
pub fn emit(text: &str) -> Result<(), CliError> {
    write_to(&mut std::io::stdout().lock(), text)
}

/// [`emit`] to any writer (tests give a closed one).
pub fn write_to(out: &mut dyn Write, text: &str) -> Result<(), CliError> {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Err(CliError::closed_stdout()),
        Err(e) => Err(CliError::other(format!("cannot write the output: {e}"))),
    }
}

/// `text` plus a newline, for building a command's output.
pub fn line(buf: &mut String, text: impl AsRef<str>) {
    buf.push_str(text.as_ref());
    buf.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from(ErrorKind::BrokenPipe))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_is_quiet_and_other_errors_are_not() {
        let e = write_to(&mut Closed, "x").unwrap_err();
        assert_eq!(e.code, 0);
        let mut full = std::io::Cursor::new([0u8; 1]);
        let e = write_to(&mut full, "xyz").unwrap_err();
        assert_eq!(e.code, super::super::EXIT_OTHER);
    }
}
