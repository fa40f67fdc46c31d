//! Scenario pieces several integration tests share: an electrode table in an unexpected
//! layout and the reader a model would write for it, a data table a recovery script repairs,
//! and a registry whose steps read them with the real readers and write the real report.

#![allow(dead_code)]

use hydrogeo_studio::methods::ert::readers::electrodes::read_electrode_table;
use hydrogeo_studio::report::{self, ReportInput};
use hydrogeo_studio::runtime::{JsonProduct, Outputs, Registry, RunContext, Tool, scratch};
use serde_json::{Value, json};

use super::model_server::Turn;

/// The electrode table as a field crew wrote it: labels and units in every cell.
pub const ODD_ELECTRODES: &str =
    "# electrodes, line 1\nE1; 0.0 m; 100.0 m\nE2; 1.0 m; 100.5 m\nE3; 2.0 m; 100.7 m\n";

/// The reader a model would write for it.
pub const READER: &str = "def adapt(text):\n    rows = []\n    for line in text.splitlines():\n        if line.startswith('#') or not line.strip():\n            continue\n        parts = [p.strip().split(' ')[0] for p in line.split(';')]\n        rows.append([float(parts[0][1:]), float(parts[1]), float(parts[2])])\n    return rows\n";

/// A data table with semicolons where the step wants commas.
pub const SEMICOLONS: &str = "1;2\n3;4\n5;6\n";

/// The recovery script a model would write for it.
pub const FIX_SCRIPT: &str = "def main(inputs, out):\n    text = open(inputs['data_file'], encoding='utf-8').read()\n    fixed = text.replace(';', ',')\n    (out / 'fixed.csv').write_text(fixed, encoding='utf-8')\n    return {'replacement': 'fixed.csv', 'rows': len(fixed.splitlines())}\n";

pub fn no_python() -> bool {
    if scratch::python().is_none() {
        eprintln!("skipping: no python3 on this machine, so no generated code can run");
        return true;
    }
    false
}

/// Reads the electrode table with the real ERT reader (its error names file, line, expected
/// and found); reads `data_file` as comma-separated pairs; writes the real report.
pub fn registry() -> Registry {
    let mut reg = Registry::new();
    reg.register(
        Tool::new(
            "load_electrodes",
            "Read the electrode positions.",
            |ctx: &mut RunContext| {
                let path = ctx
                    .input_path("electrode_file")
                    .ok_or_else(|| anyhow::anyhow!("no electrode_file"))?;
                let t = read_electrode_table(&path)?;
                Ok((
                    format!("{} electrodes", t.electrodes.len()),
                    Outputs::new().with(
                        "electrodes",
                        JsonProduct::new("electrodes", json!(t.electrodes.len())),
                    ),
                ))
            },
        )
        .produces(&["electrodes"])
        .when(|ctx| ctx.has_input("electrode_file"))
        .adapts(
            "electrode_file",
            3,
            "3 columns: number (index), x (m), elevation (m)",
        ),
    )
    .unwrap();
    reg.register(
        Tool::new(
            "load_table",
            "Read the comma-separated data table.",
            |ctx: &mut RunContext| {
                let path = ctx
                    .input_path("data_file")
                    .ok_or_else(|| anyhow::anyhow!("no data_file"))?;
                let text = std::fs::read_to_string(&path)?;
                for (i, line) in text.lines().enumerate() {
                    if line.split(',').count() != 2 {
                        anyhow::bail!(
                            "{}: line {}: expected 'a,b', found '{line}'",
                            path.display(),
                            i + 1
                        );
                    }
                }
                Ok((
                    format!("{} rows", text.lines().count()),
                    Outputs::new().with("table", JsonProduct::new("table", Value::Null)),
                ))
            },
        )
        .produces(&["table"])
        .when(|ctx| ctx.has_input("data_file")),
    )
    .unwrap();
    reg.register(
        Tool::new(
            "write_report",
            "Write the report.",
            |ctx: &mut RunContext| {
                let dir = ctx.output_dir.clone().unwrap();
                let files = report::write(ctx, &ReportInput::default(), &dir)?;
                Ok((
                    format!("wrote {}", files.markdown.display()),
                    Outputs::new().with("report_files", JsonProduct::new("report", Value::Null)),
                ))
            },
        )
        .produces(&["report_files"]),
    )
    .unwrap();
    reg
}

/// The model side of a reader scenario: choose the loader, diagnose "adapt", write `code`.
pub fn reader_turns(code: &str) -> Vec<Turn> {
    vec![
        Turn::choose("load_electrodes", "the electrodes come first"),
        Turn::diagnose(json!({
            "cause": "the table has labels and units in every cell",
            "action": "adapt", "file_key": "electrode_file",
            "why": "the numbers are there in another layout"})),
        Turn::code(
            "Splits each row on semicolons and drops the labels and units.",
            code,
        ),
    ]
}
