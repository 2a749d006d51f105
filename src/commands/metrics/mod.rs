//! `gantry metrics [--attempt N] [--json | --csv] [FILE...]`: the training metrics in saved
//! logs, after the pods are gone and with no network. Without files, the logs the tailer saved
//! for the newest attempt of this cluster's Job (or attempt N), one source per pod; with files,
//! one source per file. Every point is read, none downsampled: a table for a person, JSON or
//! CSV for scripts.

mod export;
mod read;

mod table;

use std::path::{Path, PathBuf};

use crate::cli::MetricsArgs;
use crate::settings::Settings;

use super::connect::{cluster_label, fail};
use export::Out;

/// A log to read, and the name it goes by in the output.
struct Source {
    name: String,
    path: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Format {
    Table,
    Json,
    Csv,
}

pub fn run(args: MetricsArgs, settings: &Settings) -> i32 {
    // clap refuses --json with --csv.
    let format = match (args.json, args.csv) {
        (true, _) => Format::Json,
        (false, true) => Format::Csv,
        (false, false) => Format::Table,
    };
    let (heading, sources) = if args.files.is_empty() {
        match saved_sources(args.attempt, settings) {
            Ok(found) => found,
            Err(code) => return code,
        }
    } else {
        (None, file_sources(&args.files))
    };
    // Every source is checked before anything is printed: a typo in the fifth file name is
    // not found after four sources of output.
    for source in &sources {
        if let Err(e) = readable(&source.path) {
            return fail(&unreadable(source, &e), 2);
        }
    }
    print(format, heading, &sources)
}

fn file_sources(files: &[PathBuf]) -> Vec<Source> {
    files
        .iter()
        .map(|path| Source {
            name: path.to_string_lossy().into_owned(),
            path: path.clone(),
        })
        .collect()
}

/// The pods' saved logs of the attempt asked for, or the newest; with a line that says which.
fn saved_sources(
    attempt: Option<u32>,
    settings: &Settings,
) -> Result<(Option<String>, Vec<Source>), i32> {
    let config = &settings.config;
    let job = config.job.name.clone();
    let cluster = cluster_label(settings.target(), config);
    let cluster_dir = crate::k8s::logs::logs_dir(&cluster, &job)
        .and_then(|d| d.parent().map(Path::to_path_buf))
        .ok_or_else(|| {
            fail(
                &"no state directory to find saved logs in: set HOME or XDG_STATE_HOME, or give files: gantry metrics FILE...",
                2,
            )
        })?;
    let found = crate::k8s::logs::saved::attempts(&cluster_dir, &job).map_err(|e| {
        fail(
            &format!(
                "cannot read the saved logs under {}: {e}; give files instead: gantry metrics FILE...",
                cluster_dir.display()
            ),
            2,
        )
    })?;
    let chosen = match attempt {
        None => found.last(),
        Some(n) => found.iter().find(|a| a.number == n),
    };
    let Some(chosen) = chosen else {
        let message = match attempt {
            Some(n) if !found.is_empty() => format!(
                "no saved logs of attempt #{n} of job {job} under {}: attempts found: {}; choose one with --attempt N",
                cluster_dir.display(),
                found
                    .iter()
                    .map(|a| format!("#{} ({})", a.number, a.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => format!(
                "no saved logs of job {job} under {}: run `gantry logs` or the TUI while it runs, or give files: gantry metrics FILE...",
                cluster_dir.display()
            ),
        };
        return Err(fail(&message, 2));
    };
    let heading = format!(
        "attempt #{} ({}): {} pod{} saved in {}",
        chosen.number,
        chosen.name,
        chosen.pods.len(),
        if chosen.pods.len() == 1 { "" } else { "s" },
        chosen.dir.display()
    );
    let sources = chosen
        .pods
        .iter()
        .map(|(pod, path)| Source {
            name: pod.clone(),
            path: path.clone(),
        })
        .collect();
    Ok((Some(heading), sources))
}

/// Whether a source can be read as a log: it opens, and is not a directory.
fn readable(path: &Path) -> std::io::Result<()> {
    let file = std::fs::File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    Ok(())
}

fn unreadable(source: &Source, e: &std::io::Error) -> String {
    format!(
        "cannot read {}: {e}; give log files that exist and can be read",
        source.path.display()
    )
}

/// Reads and prints one source at a time. A source that fails while it is read is reported
/// and left out (exit 2); the others are still printed, and JSON stays one valid document.
fn print(format: Format, heading: Option<String>, sources: &[Source]) -> i32 {
    let mut out = Out::default();
    let mut code = 0;
    match format {
        Format::Table => {
            if let Some(heading) = heading {
                crate::outln!("{heading}");
            }
        }
        Format::Json => out.push("{\"sources\":["),
        Format::Csv => out.push(export::CSV_HEADER),
    }
    let mut printed = 0;
    for source in sources {
        let series = match std::fs::File::open(&source.path).and_then(read::read) {
            Ok(series) => series,
            Err(e) => {
                crate::errln!("gantry: {}", unreadable(source, &e));
                code = 2;
                continue;
            }
        };
        let written = match format {
            Format::Table => {
                if printed > 0 {
                    crate::outln!("");
                }
                for line in table::lines(&source.name, &series) {
                    crate::outln!("{line}");
                }
                true
            }
            Format::Json => match export::json_source(&source.name, &series) {
                Ok(text) => {
                    if printed > 0 {
                        out.push(",");
                    }
                    out.push(&text);
                    out.flush()
                }
                Err(e) => return fail(&e, 1),
            },
            Format::Csv => export::csv_rows(&mut out, &source.name, &series),
        };
        if !written {
            return code;
        }
        printed += 1;
    }
    if format == Format::Json {
        out.push("]}\n");
    }
    out.flush();
    code
}
