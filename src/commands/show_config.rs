//! `gantry config`: the effective configuration (the seed's defaults with the file over them).

use crate::connect::Target;

pub fn run(target: &Target) -> i32 {
    match crate::connect::load_config(target) {
        Ok(config) => match toml::to_string_pretty(&config) {
            Ok(text) => {
                print!("{text}");
                0
            }
            Err(e) => {
                eprintln!("gantry: cannot print the configuration: {e}");
                1
            }
        },
        Err(e) => {
            eprintln!("gantry: {e}");
            2
        }
    }
}
