//! Lists the speech-to-text protocols from their folder, so that a protocol is its own files and
//! nothing else: every `src/core/stt/protocols/<name>.rs` (but `mod.rs`) is a module with a
//! `pub const PROFILE`, and every `tests/protocols/<name>.rs` is the shared suites' fixture for it.
//! Writes into `OUT_DIR`:
//!
//! - `protocols.rs`: the modules and `ALL`, every profile in name order (`src/core/stt/protocols/mod.rs`
//!   includes it);
//! - `protocol_union.d.ts`: the TypeScript union of their names (`TranscriberProtocol`);
//! - `fixtures.rs`: the fixture modules and `FIXTURES` (the shared suites include it).
//!
//! A protocol's name is its file's name with `-` for `_` (`deepgram_flux.rs`: `"deepgram-flux"`);
//! a test checks each `PROFILE.name` against it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs, io};

fn main() -> io::Result<()> {
    let root = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default());
    let protocols = root.join("src/core/stt/protocols");
    let fixtures = root.join("tests/protocols");
    println!("cargo:rerun-if-changed={}", protocols.display());
    println!("cargo:rerun-if-changed={}", fixtures.display());

    let modules = modules_in(&protocols)?;
    // A custom build for pages that speak fewer providers: `TURNGUARD_PROTOCOLS=deepgram,openai`
    // lists only those (their names as `options.protocol` spells them); the others' code is
    // never referenced and leaves the wasm. Unset or empty: every protocol.
    println!("cargo:rerun-if-env-changed=TURNGUARD_PROTOCOLS");
    let chosen: Vec<String> = env::var("TURNGUARD_PROTOCOLS")
        .unwrap_or_default()
        .split(',')
        .map(|name| name.trim().replace('-', "_"))
        .filter(|name| !name.is_empty())
        .collect();
    for name in &chosen {
        if !modules.iter().any(|(module, _)| module == name) {
            let known: Vec<String> = modules.iter().map(|(m, _)| m.replace('_', "-")).collect();
            let message = format!(
                "TURNGUARD_PROTOCOLS names {:?}, not a protocol: one of {}",
                name.replace('_', "-"),
                known.join(", ")
            );
            return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
        }
    }
    let listed: Vec<&(String, String)> = modules
        .iter()
        .filter(|(module, _)| chosen.is_empty() || chosen.contains(module))
        .collect();
    let mut code = String::from("// Written by build.rs from src/core/stt/protocols/.\n");
    for (module, path) in &modules {
        let _ = writeln!(code, "#[path = {path:?}]\npub mod {module};");
    }
    code.push_str(
        "\n/// Every protocol of this build, in name order.\npub const ALL: &[&Profile] = &[",
    );
    for (module, _) in &listed {
        let _ = write!(code, "&{module}::PROFILE, ");
    }
    code.push_str("];\n");
    // Gladia live v2 unless a custom build leaves it out: then the first one listed.
    let default = if listed.iter().any(|(module, _)| module == "gladia") {
        "gladia"
    } else {
        listed
            .first()
            .map_or("gladia", |(module, _)| module.as_str())
    };
    let _ = writeln!(
        code,
        "\n/// The protocol of a transcriber whose options name none.\npub const DEFAULT: &Profile = &{default}::PROFILE;"
    );
    fs::write(out.join("protocols.rs"), code)?;
    // Gladia's development-only `gladiaProvisioner` goes with Gladia's protocol.
    println!("cargo::rustc-check-cfg=cfg(turnguard_gladia)");
    if listed.iter().any(|(module, _)| module == "gladia") {
        println!("cargo::rustc-cfg=turnguard_gladia");
    }

    let names: Vec<String> = listed
        .iter()
        .map(|(module, _)| format!("{:?}", module.replace('_', "-")))
        .collect();
    let union = format!(
        "/** A wire protocol `LiveTranscriber` speaks (docs/providers.md). */\nexport type TranscriberProtocol = {};\n",
        names.join(" | ")
    );
    fs::write(out.join("protocol_union.d.ts"), union)?;

    let mut code = String::from("// Written by build.rs from tests/protocols/.\n");
    let fixture_modules = if fixtures.is_dir() {
        modules_in(&fixtures)?
    } else {
        Vec::new()
    };
    for (module, path) in &fixture_modules {
        let _ = writeln!(code, "#[path = {path:?}]\nmod {module};");
    }
    code.push_str(
        "\n/// Every protocol's fixture, in name order.\npub const FIXTURES: &[&Fixture] = &[",
    );
    for (module, _) in &fixture_modules {
        let _ = write!(code, "&{module}::FIXTURE, ");
    }
    code.push_str("];\n");
    fs::write(out.join("fixtures.rs"), code)?;
    Ok(())
}

/// The `.rs` files of `dir` but `mod.rs`, as (module name, path), in name order.
fn modules_in(dir: &Path) -> io::Result<Vec<(String, String)>> {
    let mut modules = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        let Some(stem) = path.file_stem().and_then(|stem| stem.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|ext| ext == "rs") && stem != "mod" {
            modules.push((stem.to_owned(), path.to_string_lossy().into_owned()));
        }
    }
    modules.sort();
    Ok(modules)
}
