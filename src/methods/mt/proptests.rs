//! No reader panics on user data: arbitrary bytes, and arbitrary mutations of the real files
//! in `../shared/data/mt`, each return `Ok` or `Err` (issue 8 acceptance).

use std::path::Path;

use proptest::prelude::*;

use super::*;

fn all_parsers(name: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let p = Path::new(name);
    let _ = edi::parse_edi(p, &text);
    let _ = emtfxml::parse_emtf_xml(p, &text);
    let _ = zfile::parse_zfile(p, &text);
    let _ = jfile::parse_jfile(p, &text);
    let _ = avg::parse_avg(p, &text);
    let _ = table::parse_sounding_table(p, &text);
    // Whatever reads must also summarise and convert without panicking.
    for tf in [
        edi::parse_edi(p, &text),
        emtfxml::parse_emtf_xml(p, &text),
        zfile::parse_zfile(p, &text),
        jfile::parse_jfile(p, &text),
        avg::parse_avg(p, &text),
    ]
    .into_iter()
    .flatten()
    {
        let _ = tf_summary(&tf);
        let _ = dimensionality(&tf);
        for mode in [OccamMode::Det, OccamMode::Both] {
            if let Ok(s) = sounding_from_tf(
                &tf,
                &SoundingOptions {
                    mode,
                    z_error_floor_percent: 5.0,
                },
            ) {
                let _ = static_shift_indicator(&s);
            }
        }
    }
}

/// One edit of a file: overwrite, delete or insert a byte, or cut the file.
#[derive(Debug, Clone)]
enum Edit {
    Set(usize, u8),
    Delete(usize),
    Insert(usize, u8),
    Truncate(usize),
    DuplicateLine(usize),
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Set(i, b)),
        any::<usize>().prop_map(Edit::Delete),
        (
            any::<usize>(),
            prop::sample::select(b"0123456789.-+eE >/=*\n\t,#$<".to_vec())
        )
            .prop_map(|(i, b)| Edit::Insert(i, b)),
        any::<usize>().prop_map(Edit::Truncate),
        any::<usize>().prop_map(Edit::DuplicateLine),
    ]
}

fn apply(bytes: &mut Vec<u8>, edits: &[Edit]) {
    for e in edits {
        let n = bytes.len();
        match *e {
            Edit::Set(i, b) if n > 0 => bytes[i % n] = b,
            Edit::Delete(i) if n > 0 => {
                bytes.remove(i % n);
            }
            Edit::Insert(i, b) => bytes.insert(i % (n + 1), b),
            Edit::Truncate(i) if n > 0 => bytes.truncate(i % n),
            Edit::DuplicateLine(i) if n > 0 => {
                let start = bytes[..i % n]
                    .iter()
                    .rposition(|&c| c == b'\n')
                    .map_or(0, |p| p + 1);
                let end = bytes[start..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(n, |p| start + p + 1);
                let line = bytes[start..end].to_vec();
                for (k, c) in line.into_iter().enumerate() {
                    bytes.insert(end + k, c);
                }
            }
            _ => {}
        }
    }
}

fn staged(name: &str) -> Option<Vec<u8>> {
    let p = crate::field_data::data(&format!("mt/{name}"))?;
    std::fs::read(p).ok()
}

const FILES: [&str; 9] = [
    "tf_edi_metronix.edi",
    "tf_edi_no_error.edi",
    "tf_edi_phoenix.edi",
    "tf_edi_spectra_in.edi",
    "NMX20.xml",
    "tf_zmm.zmm",
    "tf_zss_tipper.zss",
    "tf_jfile.j",
    "occam_aushield_Cull1985.dat",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..3000)) {
        all_parsers("fuzz.edi", &bytes);
    }

    #[test]
    fn arbitrary_text_with_format_keywords_never_panics(
        parts in prop::collection::vec(
            prop::sample::select(vec![
                ">HEAD\n", ">=MTSECT\n", ">=SPECTRASECT\n", "NCHAN=7\n", ">FREQ //3\n", ">ZXYR //3\n",
                ">ZXYI //3\n", ">SPECTRA FREQ=1 AVGT=10 //49\n", ">RHOXY //3\n", ">PHSXY //3\n",
                "1 2 3\n", "-1e32 1.0E32 ***\n", ">END\n", "<EM_TF>", "<Data>", "<Period value=\"1\">",
                "<Z units=\"[mV/km]/[nT]\">", "<value output=\"Ex\" input=\"Hy\">1 2</value>", "</Z>",
                "</Period>", "</Data>", "</EM_TF>", "<!--", "]]>", "period : 1.0\n",
                " TRANSFER FUNCTIONS IN MEASUREMENT COORDINATES\n", "number of channels 5 number of frequencies 1\n",
                " Transfer Functions\n", " Residual Covariance\n", "ZXY S.I.\n", "2\n", "-999 -999 -999 -999\n",
                "$Rx.Cmp = Zxy\n", "Skp,Freq,Z.mag,Z.phz\n", "2, 1, 3, 400\n", "# period rho erho phs ephs\n",
                "    1     0.00     0.00 S  Hx\n", "    2    90.00     0.00 S  Hy\n",
            ]),
            0..60,
        )
    ) {
        let text: String = parts.concat();
        all_parsers("kw.edi", text.as_bytes());
    }

    #[test]
    fn mutated_real_files_never_panic(
        which in 0..FILES.len(),
        edits in prop::collection::vec(edit_strategy(), 1..12),
    ) {
        if let Some(mut bytes) = staged(FILES[which]) {
            apply(&mut bytes, &edits);
            all_parsers(FILES[which], &bytes);
            // And through the dispatcher, by extension, on a temporary copy.
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join(FILES[which]);
            std::fs::write(&p, &bytes).unwrap();
            let _ = read_transfer_function(&p);
            let _ = read_summary(&p);
        }
    }
}

/// Malformed-file errors name the file, the line, what was expected and what was found —
/// checked on cut-down real files.
#[test]
fn errors_on_real_files_name_file_line_expected_found() {
    let Some(bytes) = staged("tf_edi_metronix.edi") else {
        return;
    };
    let text = String::from_utf8_lossy(&bytes).replace(
        " 4.896760912964e+00  5.306272489366e+00",
        " 4.896760912964e+00  five",
    );
    let e = edi::parse_edi(Path::new("tf_edi_metronix.edi"), &text).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tf_edi_metronix.edi, line 69: expected a number (value of the >ZXXR block), found \"five\""
    );
    let Some(bytes) = staged("tf_jfile.j") else {
        return;
    };
    let text = String::from_utf8_lossy(&bytes).replacen("14\n", "fourteen\n", 1);
    let e = jfile::parse_jfile(Path::new("tf_jfile.j"), &text).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tf_jfile.j, line 31: expected the number of rows of the block, found \"fourteen\""
    );
}
