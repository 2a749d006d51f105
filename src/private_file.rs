//! Files that may hold a credential (a kubeconfig, a token, a CA): readable by their owner only,
//! and replaced whole, so a reader never sees half of one and a crash leaves the old one.

use std::io::Write;
use std::path::Path;

/// Options that create a file readable by its owner only; the caller says how it is opened.
pub fn options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
}

/// Writes a file readable by its owner only (it may hold a credential), atomically.
pub fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    // A bare file name (`KUBECONFIG=config`) has the empty path as its parent.
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_string());
    let tmp = dir.join(format!(".{file_name}.tmp{}", std::process::id()));
    {
        let mut file = options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    // The rename is durable only once the directory is: else a crash can bring the old file back.
    // The file is written either way, so a filesystem that cannot sync a directory is no error.
    #[cfg(unix)]
    if let Err(e) = std::fs::File::open(dir).and_then(|d| d.sync_all()) {
        tracing::debug!("could not sync {}: {e}", dir.display());
    }
    Ok(())
}
