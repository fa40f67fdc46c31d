//! Issue 19, item 6: a text file cut short is refused by its reader with the file, the line,
//! what a whole file has there and what was found — never read with a short last value
//! (`-2` for `-26.892`). Each case cuts a real file of `../shared/data` (through the one
//! field-data helper) and reads it through `catalog::read_summary`, the `read` command's
//! path; the whole file is read too, so each check is seen to pass as well as fail.

use std::path::{Path, PathBuf};

use hydrogeo_studio::catalog::read_summary;
use hydrogeo_studio::field_data;

/// Where a file is cut.
#[derive(Clone, Copy)]
enum Cut {
    /// Inside the last value of the last data row (before `marker` when given, e.g. a
    /// section's closing line).
    InLastValue(Option<&'static str>),
    /// At the line break before the last line holding `marker` (whole lines, no half row).
    BeforeLast(&'static str),
    /// Without its last line (at a line break: the rows left are whole).
    DropLastLine,
}

const SEPARATORS: [char; 4] = [',', ';', '\t', ' '];

/// `body` with about half of its last value removed.
fn cut_value(body: &str) -> String {
    let body = body.trim_end_matches(|c: char| c.is_whitespace() || SEPARATORS.contains(&c));
    let start = body.rfind(SEPARATORS).map_or(0, |i| i + 1);
    let token = &body[start..];
    let keep = token.len() - token.len().div_ceil(2);
    body[..start + keep].to_string()
}

fn cut(text: &str, how: Cut) -> String {
    match how {
        Cut::InLastValue(None) => cut_value(text),
        Cut::InLastValue(Some(marker)) => {
            let at = text.rfind(marker).expect("marker in the file");
            cut_value(&text[..at])
        }
        Cut::BeforeLast(marker) => {
            let at = text.rfind(marker).expect("marker in the file");
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            text[..line_start].to_string()
        }
        Cut::DropLastLine => {
            let body = text.trim_end();
            body[..body.rfind('\n').map_or(0, |i| i + 1)].to_string()
        }
    }
}

/// Read `rel` whole (must pass) and cut (must be refused naming the file and a line).
fn assert_cut_refused(rel: &str, how: Cut) {
    let Some(src) = field_data::data(rel) else {
        return;
    };
    read_summary(&src).unwrap_or_else(|e| panic!("{rel} whole must read: {e:#}"));
    let text = String::from_utf8_lossy(&std::fs::read(&src).unwrap()).into_owned();
    let dir = tempfile::tempdir().unwrap();
    let name = src.file_name().unwrap();
    let cut_file: PathBuf = dir.path().join(name);
    std::fs::write(&cut_file, cut(&text, how)).unwrap();
    let e = match read_summary(&cut_file) {
        Ok(v) => panic!("{rel} cut short was read: {v}"),
        Err(e) => format!("{e:#}"),
    };
    let named = Path::new(name).display().to_string();
    assert!(
        e.contains(&named) && e.contains(", line ") && e.contains("expected"),
        "{rel}: the refusal must name file, line and expectation: {e}"
    );
    assert!(
        e.contains("cut off"),
        "{rel}: the refusal must say why: {e}"
    );
}

#[test]
fn syscal_csv() {
    assert_cut_refused("ert/resipy/dc-2d_syscal.csv", Cut::InLastValue(None));
}

#[test]
fn ohmpi_csv() {
    assert_cut_refused("ert/resipy/parser_ohmpi.csv", Cut::InLastValue(None));
}

#[test]
fn lippmann_tx0() {
    assert_cut_refused("ert/resipy/parser_Lippmann_1.tx0", Cut::InLastValue(None));
}

#[test]
fn bgs_prime_tab() {
    assert_cut_refused("ert/resipy/parser_bgs-prime2.tab", Cut::InLastValue(None));
}

#[test]
fn ares_2dm() {
    assert_cut_refused("ert/resipy/parser_ARESII.2dm", Cut::InLastValue(None));
}

#[test]
fn das1_inside_a_row_and_at_a_line_break() {
    let f = "ert/resipy/parser_DAS-1_2D_DC.data";
    assert_cut_refused(f, Cut::InLastValue(Some("#data_end")));
    assert_cut_refused(f, Cut::BeforeLast("#data_end"));
}

#[test]
fn sting_fewer_records_than_declared() {
    // The header declares 712 records; the last one cut at its line break.
    assert_cut_refused("ert/resipy/parser_sting_2D_noIP.stg", Cut::DropLastLine);
}

#[test]
fn other_ert_text_formats() {
    assert_cut_refused(
        "ert/resipy/parser_electraWenner.ele",
        Cut::InLastValue(None),
    );
    assert_cut_refused(
        "ert/resipy/parser_abem-lund-norm.ohm",
        Cut::InLastValue(None),
    );
    assert_cut_refused("ert/resipy/dc-2d_protocol.dat", Cut::InLastValue(None));
    assert_cut_refused("ert/phgx/E4D/2021-10-08_1400.ohm", Cut::InLastValue(None));
}

#[test]
fn temfast() {
    assert_cut_refused("tdem/TEMfastLangeoog.tem", Cut::InLastValue(None));
}

#[test]
fn joint_tdem_csv_and_its_geometry() {
    assert_cut_refused(
        "tdem/phgx/EastRiver_VTEM/eastriver_vtem_area.csv",
        Cut::InLastValue(None),
    );
    assert_cut_refused(
        "tdem/phgx/EastRiver_VTEM/eastriver_vtem_area_geometry.csv",
        Cut::InLastValue(None),
    );
}

#[test]
fn emtf_xml_without_its_closing_elements() {
    assert_cut_refused("mt/NMX20.xml", Cut::BeforeLast("</Data>"));
    assert_cut_refused("mt/NMX20.xml", Cut::BeforeLast("</EM_TF>"));
}

#[test]
fn z_files_cut_inside_a_block_and_between_blocks() {
    assert_cut_refused("mt/tf_zmm.zmm", Cut::InLastValue(None));
    // Whole lines: the last block loses its residual covariance rows.
    assert_cut_refused("mt/tf_zmm.zmm", Cut::BeforeLast("Residual"));
    // Whole blocks: fewer periods than "number of frequencies" declares.
    assert_cut_refused("mt/tf_zss_tipper.zss", Cut::BeforeLast("period"));
}

#[test]
fn gravity_and_magnetic_tables() {
    assert_cut_refused(
        "gravmag/phgx/bushveld_gravity_disturbance.csv",
        Cut::InLastValue(None),
    );
    assert_cut_refused(
        "gravmag/phgx/britain_aeromagnetic_anomaly.csv",
        Cut::InLastValue(None),
    );
}

#[test]
fn seismic_travel_time_tables() {
    assert_cut_refused("seismic/gimli_koenigsee.sgt", Cut::InLastValue(None));
    assert_cut_refused(
        "seismic/refrapy_field_example_01.sgt",
        Cut::InLastValue(None),
    );
}
