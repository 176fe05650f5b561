//! The `diagraph` binary: parses the command line and hands over to
//! `diagraph::cli`. Errors end as one line on stderr and a non-zero exit.

/// A run builds and drops many small JSON strings and maps; mimalloc's
/// per-thread free lists make that several times cheaper than glibc malloc.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    diagraph::cli::main()
}
