//! Issue 19, item 6: a text file cut short is refused by its reader with the file, the line,
//! what a whole file has there and what was found — never read with a short last value
//! (`-2` for `-26.892`). Each case cuts a real file of `../shared/data` (through the one
//! field-data helper) and reads it through `catalog::read_summary`, the `read` command's
//! path; the whole file is read too, so each check is seen to pass as well as fail.

#[macro_use]
#[path = "support/field_data.rs"]
mod field_data;

use std::path::{Path, PathBuf};

use hydrogeo_studio::catalog::read_summary;

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
    assert_cut_refused_beside(rel, rel, &[], how);
}

/// Read `read_rel` whole (must pass), then again in a folder holding it and `beside` (names
/// in the same folder, copied whole) with `cut_rel` (one of them, or `read_rel`) written cut
/// over its copy: the read must be refused, naming the cut file and a line. For readers that take a file with its companions (PyRefra
/// picks with their .geo files, a GPR topography table beside its radar line).
fn assert_cut_refused_beside(read_rel: &str, cut_rel: &str, beside: &[&str], how: Cut) {
    let (Some(src), Some(cut_src)) = (field_data::data(read_rel), field_data::data(cut_rel)) else {
        return;
    };
    read_summary(&src).unwrap_or_else(|e| panic!("{read_rel} whole must read: {e:#}"));
    let dir = tempfile::tempdir().unwrap();
    let folder = src.parent().unwrap();
    let own = src.file_name().unwrap().to_str().unwrap();
    for other in beside.iter().copied().chain([own]) {
        std::fs::copy(folder.join(other), dir.path().join(other)).unwrap();
    }
    let rel = cut_rel;
    let text = String::from_utf8_lossy(&std::fs::read(&cut_src).unwrap()).into_owned();
    let name = cut_src.file_name().unwrap();
    let cut_file: PathBuf = dir.path().join(name);
    std::fs::write(&cut_file, cut(&text, how)).unwrap();
    let read_file = dir.path().join(own);
    let e = match read_summary(&read_file) {
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

#[test]
fn seismic_unified_files_and_station_table() {
    // pyGIMLi unified travel times with a .dat extension (found by its s/g tokens).
    assert_cut_refused("seismic/phgx/srtfieldline2.dat", Cut::InLastValue(None));
    // Its last line is the count of a (empty) trailing section: cut inside the last data
    // value before it.
    assert_cut_refused(
        "seismic/phgx/synthetic_seismic_data.dat",
        Cut::InLastValue(Some("\n0\n")),
    );
    assert_cut_refused("seismic/phgx/location.txt", Cut::InLastValue(None));
}

#[test]
fn pyrefra_picks_and_each_geometry_file() {
    let dir = "seismic/pyrefra_example";
    let picks = format!("{dir}/picks.dat");
    // The companions are copied whole, then the one under test is written cut over its copy.
    for cut_one in ["picks.dat", "shots.geo", "receivers.geo"] {
        assert_cut_refused_beside(
            &picks,
            &format!("{dir}/{cut_one}"),
            &["shots.geo", "receivers.geo"],
            Cut::InLastValue(None),
        );
    }
}

#[test]
fn gpr_topography_beside_its_radar_line() {
    assert_cut_refused_beside(
        "gpr/gprpy/SnS_ComOffs_GPS.xyz",
        "gpr/gprpy/SnS_ComOffs_GPS.xyz",
        &["SnS_ComOffs_XLINE00.DT1", "SnS_ComOffs_XLINE00.HD"],
        Cut::InLastValue(None),
    );
}
