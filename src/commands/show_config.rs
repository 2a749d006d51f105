//! `gantry config`: the effective configuration (the seed's defaults with the file over them).

use crate::settings::Settings;

pub fn run(settings: &Settings) -> i32 {
    match toml::to_string_pretty(&settings.config) {
        Ok(text) => {
            crate::output::write_stdout(text.as_bytes());
            0
        }
        Err(e) => {
            crate::errln!("gantry: cannot print the configuration: {e}");
            1
        }
    }
}
