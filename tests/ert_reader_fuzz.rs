//! No panics from user data: every ERT reader gets arbitrary bytes and mutated real files and
//! must return Ok or Err (proptest; the property is "returns", any panic fails the test).

#[macro_use]
#[path = "support/field_data.rs"]
mod field_data;

use hydrogeo_studio::methods::ert::readers::{self, Instrument, electrodes};
use proptest::prelude::*;
use std::path::Path;

const ALL: [Instrument; 17] = [
    Instrument::Auto,
    Instrument::Unified,
    Instrument::E4d,
    Instrument::SyscalCsv,
    Instrument::SyscalBin,
    Instrument::AbemLund,
    Instrument::AbemLs,
    Instrument::Res2dinv,
    Instrument::Das1,
    Instrument::Sting,
    Instrument::R2Protocol,
    Instrument::AresII,
    Instrument::Lippmann,
    Instrument::Electra,
    Instrument::OhmPi,
    Instrument::BgsPrime,
    Instrument::PlainCsv,
];

const FILES: [&str; 14] = [
    "ert/gimli/gallery.dat",
    "ert/phgx/Bert/fielddataline2.dat",
    "ert/phgx/E4D/2021-10-08_1400.ohm",
    "ert/resipy/dc-2d_syscal.csv",
    "ert/resipy/parser_syscal-bin.bin",
    "ert/resipy/parser_abem-lund-norm.ohm",
    "ert/resipy/parser_res2dinv-dd.dat",
    "ert/resipy/parser_DAS-1_2D_DC.data",
    "ert/resipy/parser_sting_2D_noIP.stg",
    "ert/resipy/dc-2d_protocol.dat",
    "ert/resipy/parser_ARESII.2dm",
    "ert/resipy/parser_electraWenner.ele",
    "ert/resipy/parser_ohmpi.csv",
    "ert/resipy/parser_bgs-prime2.tab",
];

fn run_all(bytes: &[u8]) {
    for ins in ALL {
        let _ = readers::parse_survey(Path::new("fuzz.dat"), bytes, ins);
    }
    let _ =
        electrodes::parse_electrode_table(Path::new("fuzz.csv"), &String::from_utf8_lossy(bytes));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        run_all(&bytes);
    }

    #[test]
    fn arbitrary_text_lines_never_panic(lines in proptest::collection::vec("[0-9a-zA-Z#,;:.\\-\\t *=/_\\[\\]]{0,40}", 0..40)) {
        run_all(lines.join("\n").as_bytes());
    }
}

/// A mutation of a file: cut it, flip bytes, drop or duplicate a line.
#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Replace(usize, u8),
    DropLine(usize),
    DupLine(usize),
}

fn mutate(bytes: &[u8], muts: &[Mutation]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    for m in muts {
        if b.is_empty() {
            break;
        }
        match *m {
            Mutation::Truncate(k) => b.truncate(k % (b.len() + 1)),
            Mutation::Replace(k, v) => {
                let n = b.len();
                b[k % n] = v;
            }
            Mutation::DropLine(k) | Mutation::DupLine(k) => {
                let text = String::from_utf8_lossy(&b).into_owned();
                let mut lines: Vec<&str> = text.split('\n').collect();
                let i = k % lines.len();
                if matches!(m, Mutation::DropLine(_)) {
                    lines.remove(i);
                } else {
                    let l = lines[i];
                    lines.insert(i, l);
                }
                b = lines.join("\n").into_bytes();
            }
        }
    }
    b
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(k, v)| Mutation::Replace(k, v)),
        (
            any::<usize>(),
            prop::sample::select(vec![b'0', b'9', b'-', b'#', b',', b'\n', b' ', b'x', 0xff])
        )
            .prop_map(|(k, v)| Mutation::Replace(k, v)),
        any::<usize>().prop_map(Mutation::DropLine),
        any::<usize>().prop_map(Mutation::DupLine),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn mutated_real_files_never_panic(which in 0usize..FILES.len(), muts in proptest::collection::vec(mutation(), 1..6)) {
        let Some(path) = field_data::data(FILES[which]) else { return Ok(()); };
        let bytes = std::fs::read(&path).expect("readable");
        let m = mutate(&bytes, &muts);
        let _ = readers::parse_survey(&path, &m, Instrument::Auto);
        for ins in ALL {
            let _ = readers::parse_survey(&path, &m, ins);
        }
    }
}
