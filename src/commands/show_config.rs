//! `gantry config`: the effective configuration (the seed's defaults with the file over them).

use crate::connect::Target;

pub fn run(target: &Target) -> i32 {
    match crate::connect::load_config(target) {
        Ok(config) => match toml::to_string_pretty(&config) {
            Ok(text) => {
                crate::output::write_stdout(text.as_bytes());
                0
            }
            Err(e) => {
                crate::errln!("gantry: cannot print the configuration: {e}");
                1
            }
        },
        Err(e) => {
            crate::errln!("gantry: {e}");
            2
        }
    }
}
