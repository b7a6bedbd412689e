//! Command output and messages for the whole crate: the `print!`/`println!`/`eprint!`/
//! `eprintln!` macros every module uses (they shadow std's, so that a stream that cannot be
//! written never panics) and what they write through. Declared first in `lib.rs`, below every
//! layer: it imports nothing of the crate.

/// `eprintln!` and `eprint!` for the whole crate, shadowing std's: a message that cannot be
/// written (stderr on a full disk, a closed pipe) is dropped instead of panicking, because with
/// `panic = "abort"` std's panic there killed a run that was stopping cleanly (SIGABRT, exit
/// 134, instead of exit 2). Defined before the modules, so every module's messages use it.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` and `print!` for the whole crate, shadowing std's: command output goes through
/// [`out`], so a reader that went away (`| head`) ends it quietly, and any other failure (a
/// full disk under `> file`) makes the exit code 2 instead of a panic, never 0 for a result
/// cut short.
macro_rules! println {
    () => {
        $crate::console::out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::console::out(format_args!("{}\n", format_args!($($arg)*)))
    };
}
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::console::out(format_args!($($arg)*))
    };
}

/// The first failure to write command output, other than a reader that went away.
static STDOUT_FAILED: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Writes command output to stdout (what the crate's `print!`/`println!` call): a closed pipe
/// ends the output quietly; another failure is kept, and `main` exits 2 naming it.
#[doc(hidden)]
pub fn out(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_fmt(args).and_then(|()| o.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        let _ = STDOUT_FAILED.set(format!("cannot write to standard output: {e}"));
    }
}

/// The failure to write command output that `main` turns into exit 2, if one happened.
pub fn stdout_failed() -> Option<&'static str> {
    STDOUT_FAILED.get().map(String::as_str)
}
