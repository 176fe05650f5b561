//! The `diagraph` binary: parses the command line and hands over to
//! `diagraph::cli`. Errors end as one line on stderr and a non-zero exit.

fn main() -> std::process::ExitCode {
    diagraph::cli::main()
}
