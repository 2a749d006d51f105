//! Links the release binary with the functions Gantry runs laid out together.
//!
//! A terminal UI that sits idle for hours is judged by its resident memory, and most of it is
//! the binary's own code: the kernel maps code around each page it faults in (64 KiB at a
//! time), and the few megabytes of functions a session runs were spread over all 27 MB of
//! code, so nearly two thirds of it ended up resident. `assets/code-order.txt` lists those
//! functions (recorded by `scripts/refresh-code-order`); the linker puts them first, next to
//! one another, and the rest is only mapped when something calls it. A name the build no
//! longer has is skipped, so a stale list costs memory, never correctness.

use std::env;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=assets/code-order.txt");
    println!("cargo::rerun-if-env-changed=GANTRY_CODE_ORDER");
    let wanted = env::var("GANTRY_CODE_ORDER").as_deref() != Ok("0");
    let release = env::var("PROFILE").is_ok_and(|p| p == "release");
    // The default linker of this target (rust-lld) reads the list; another one chosen through
    // RUSTFLAGS might not, so then nothing is asked of it.
    let target = env::var("TARGET").unwrap_or_default();
    let linker_chosen = env::var("CARGO_ENCODED_RUSTFLAGS")
        .is_ok_and(|f| f.contains("linker") || f.contains("fuse-ld"));
    if wanted && release && target == "x86_64-unknown-linux-gnu" && !linker_chosen {
        let dir = env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        println!(
            "cargo::rustc-link-arg-bins=-Wl,--symbol-ordering-file={dir}/assets/code-order.txt"
        );
        println!("cargo::rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
