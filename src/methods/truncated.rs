//! Truncation detection for text tables (issue 19, item 6): a file cut inside its last row
//! (a copy that stopped, a full disk, a transfer that broke) must not hand a reader a short
//! last value (`-2` for `-26.892`) to use as if it were data.
//!
//! A cut can only shorten the *last* field of the *last* line — every field before it is
//! whole. So a text that does not end with a line break is compared with the data rows
//! above its last line: fewer fields than the nearest, or a last field of a shape none of the
//! rows with as many fields has
//! (no decimal point where they all have one, fewer decimals or exponent digits than any of
//! them, or shorter than a column whose every value has one length), is a cut. A text that
//! ends with a line break, or whose last line is not a row of numbers, is left to the
//! reader (a cut exactly at a line break leaves whole rows; readers with a declared count or
//! closing element check those).

use std::path::Path;

use super::io::{ReadError, fields, parse_f64};

/// How many rows above the last one (with as many fields) its shape is compared with.
const ROWS_COMPARED: usize = 20;
/// At least this many such rows, or the shape is not judged.
const MIN_ROWS: usize = 3;
/// How many lines above the last one are looked at for those rows.
const LINES_LOOKED_AT: usize = 400;

/// The shape of one numeric or text token, as far as a cut can change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    chars: usize,
    has_point: bool,
    decimals: usize,
    exponent_digits: Option<usize>,
}

fn shape(token: &str) -> Shape {
    let (mantissa, exponent) = match token.find(['e', 'E', 'D', 'd']) {
        Some(i) if parse_f64(token).is_some() => (&token[..i], Some(&token[i + 1..])),
        _ => (token, None),
    };
    let point = mantissa.find('.');
    Shape {
        chars: token.chars().count(),
        has_point: point.is_some(),
        decimals: point.map_or(0, |i| mantissa[i + 1..].len()),
        exponent_digits: exponent.map(|e| e.chars().filter(char::is_ascii_digit).count()),
    }
}

/// Whether a line is a data row: at least two of its fields, and at least half, are
/// numbers (a Syscal row starts with words, `Mixed / non conventional`; an OhmPi row with
/// a time stamp; a heading such as `period : 2.0` has one number).
fn is_row(line: &str) -> bool {
    let f = fields(line);
    let numbers = f.iter().filter(|t| parse_f64(t).is_some()).count();
    numbers >= 2 && 2 * numbers >= f.len()
}

/// Why `last` (the cut-off last token) cannot be a whole value of a column whose values
/// above have these shapes; `None` when it can.
fn short_by(last: Shape, above: &[Shape]) -> Option<String> {
    if above.iter().all(|s| s.has_point) && !last.has_point {
        return Some("a decimal point, as in every row above".into());
    }
    let min_decimals = above.iter().map(|s| s.decimals).min().unwrap_or(0);
    if last.has_point && last.decimals < min_decimals {
        return Some(format!(
            "at least {min_decimals} decimals, as in every row above"
        ));
    }
    if let Some(min_exp) = above
        .iter()
        .map(|s| s.exponent_digits)
        .collect::<Option<Vec<_>>>()
        .and_then(|v| v.into_iter().min())
        && last.exponent_digits.unwrap_or(0) < min_exp
    {
        return Some(format!(
            "an exponent of {min_exp} digits, as in every row above"
        ));
    }
    let width = above[0].chars;
    if above.iter().all(|s| s.chars == width) && last.chars < width {
        return Some(format!("{width} characters, as in every row above"));
    }
    None
}

/// An error when `text` ends inside its last row (see the module documentation); the error
/// names the file, the line, what a whole row there holds and what was found.
pub fn check_last_row(path: &Path, text: &str) -> Result<(), ReadError> {
    if text.is_empty() || text.ends_with('\n') {
        return Ok(());
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let last_no = lines.len();
    let last = lines[last_no - 1].trim_end_matches('\r');
    if last.trim().is_empty() || !is_row(last) {
        return Ok(());
    }
    let tokens = fields(last);
    // The rows above, nearest first, across any text lines between them (a Z-file's blocks
    // are separated by headings), as far back as LINES_LOOKED_AT lines.
    let above: Vec<(usize, Vec<&str>)> = lines[..last_no - 1]
        .iter()
        .enumerate()
        .rev()
        .take(LINES_LOOKED_AT)
        .filter(|(_, l)| is_row(l))
        .map(|(i, l)| (i + 1, fields(l)))
        .collect();
    let Some((prev_no, prev)) = above.first() else {
        return Ok(());
    };
    let cut = |expected: String| {
        Err(ReadError::malformed(
            path,
            last_no,
            format!("a whole last row ({expected}); the file ends inside it, so it looks cut off"),
            last,
        ))
    };
    if tokens.len() < prev.len() {
        return cut(format!("{} fields, as line {prev_no} has", prev.len()));
    }
    let k = tokens.len() - 1;
    let column: Vec<Shape> = above
        .iter()
        .filter(|(_, f)| f.len() == tokens.len())
        .take(ROWS_COMPARED)
        .map(|(_, f)| shape(f[k]))
        .collect();
    // Fewer than MIN_ROWS rows to compare with is too little to tell a cut from a value
    // written shorter (a hand-made table of two rows).
    if column.len() < MIN_ROWS {
        return Ok(());
    }
    match short_by(shape(tokens[k]), &column) {
        Some(why) => cut(format!("field {} with {why}", k + 1)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<(), String> {
        check_last_row(Path::new("t.csv"), text).map_err(|e| e.to_string())
    }

    const TABLE: &str = "x,z,g_mgal\n0.0,1.50,-26.892\n1.0,1.52,-25.004\n2.0,1.49,-24.118\n";

    #[test]
    fn whole_tables_pass_with_or_without_a_final_line_break() {
        assert_eq!(check(TABLE), Ok(()));
        assert_eq!(check(TABLE.trim_end()), Ok(()));
        assert_eq!(check(""), Ok(()));
        // A footer that is not a row of numbers is the reader's business.
        assert_eq!(check(&format!("{TABLE}END")), Ok(()));
        assert_eq!(check(&format!("{TABLE}period : 2")), Ok(()));
    }

    #[test]
    fn a_cut_inside_the_last_value_is_an_error_naming_file_line_and_found() {
        // The case: -26.892 cut to -2.
        let text = "x,z,g\n0.0,1.50,-26.892\n1.0,1.52,-25.004\n2.0,1.49,-24.118\n3.0,1.50,-2";
        let e = check(text).unwrap_err();
        assert!(
            e.starts_with("t.csv, line 5: expected a whole last row"),
            "{e}"
        );
        assert!(
            e.contains("decimal point") && e.contains("found \"3.0,1.50,-2\""),
            "{e}"
        );
        let e = check(&format!("{TABLE}3.0,1.50,-26.8")).unwrap_err();
        assert!(e.contains("at least 3 decimals"), "{e}");
    }

    #[test]
    fn rows_that_start_with_words_or_a_time_are_rows() {
        // Syscal's export: `,Mixed / non conventional,5.25,…,9.717`.
        let row = ",Mixed / non conventional,5.25,5.75,52.40,-34.30,9.717\n";
        let text = row.repeat(4) + ",Mixed / non conventional,5.25,5.75,52.40,-34.30,9.";
        assert!(check(&text).unwrap_err().contains("at least 3 decimals"));
        // OhmPi's: a time stamp first, a word last.
        let row = "2025-08-25T23:15:16,1,2,3,4,500.0,safe,\n";
        let text = row.repeat(4) + "2025-08-25T23:15:16,1,2,3,4,500.0,sa";
        assert!(check(&text).unwrap_err().contains("4 characters"));
    }

    #[test]
    fn a_cut_between_fields_is_an_error() {
        let e = check("a b m n r\n1 2 3 4 10.5\n2 3 4 5 11.25\n3 4 5").unwrap_err();
        assert!(e.contains("5 fields, as line 3 has"), "{e}");
    }

    #[test]
    fn rows_are_compared_across_headings_with_rows_of_as_many_fields() {
        // A Z-file's residual covariance: rows of 2, 4, 6 values per block, blocks separated
        // by text. The cut last row is compared with the 6-value row of the block above.
        let block = "Residual Covariance\n 1.0E-01 0.0E+00\n 2.0E-01 0.0E+00 3.0E-01 0.0E+00\n 4.0E-01 0.0E+00 5.0E-01 0.0E+00 6.0E-01 0.0E+00\n";
        let text =
            format!("{block}period : 2.0\n{block}period : 3.0\n{block}period : 4.0\n{block}");
        assert_eq!(check(&text), Ok(()));
        let cut = &text[..text.len() - 6];
        let e = check(cut).unwrap_err();
        assert!(e.contains("line 19") && e.contains("field 6"), "{e}");
        // Two rows to compare with are too few to judge.
        assert_eq!(check("x,g\n0,2.5\n1,2.25\n2,3"), Ok(()));
    }

    #[test]
    fn exponents_and_fixed_width_columns() {
        let sci = "t v\n1 1.3e-03\n1 1.5e-03\n2 1.7e-03\n3 1.9e-0";
        assert!(check(sci).unwrap_err().contains("exponent of 2 digits"));
        let ids = "n x\n1 0001\n2 0002\n3 0003\n4 00";
        assert!(check(ids).unwrap_err().contains("4 characters"));
        // Integers of varying width cannot be told from a cut: accepted.
        assert_eq!(check("n x\n1 9\n2 10\n3 11\n4 7"), Ok(()));
        // Varying precision: a value with fewer decimals than one row above, but as many
        // as the least precise, is whole.
        assert_eq!(check("n x\n0 1.125\n1 1.25\n2 1.5\n3 1.7"), Ok(()));
    }
}
