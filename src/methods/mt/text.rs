//! Small text helpers shared by the MT readers.

use std::path::Path;

use crate::methods::io::{ReadError, parse_f64};

/// Split a line of numbers the way Fortran writes them: on whitespace and commas, and also
/// where a sign follows a digit without a separator (`0.12E+00-0.34E+00` is two numbers).
pub fn number_tokens(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for field in line.split(|c: char| c.is_whitespace() || c == ',') {
        if field.is_empty() {
            continue;
        }
        let bytes = field.as_bytes();
        let mut start = 0;
        for i in 1..bytes.len() {
            let prev = bytes[i - 1];
            if (bytes[i] == b'-' || bytes[i] == b'+')
                && (prev.is_ascii_digit() || prev == b'.')
                && i > start
            {
                out.push(&field[start..i]);
                start = i;
            }
        }
        out.push(&field[start..]);
    }
    out
}

/// Parse every number of a data line; a token made only of `*` (Fortran overflow, used as
/// "no value") becomes NaN. Anything else that is not a number is a malformed-line error.
pub fn parse_numbers(
    path: &Path,
    line_no: usize,
    line: &str,
    what: &str,
) -> Result<Vec<f64>, ReadError> {
    number_tokens(line)
        .into_iter()
        .map(|tok| {
            if let Some(v) = parse_f64(tok) {
                Ok(v)
            } else if tok.chars().all(|c| c == '*') {
                Ok(f64::NAN)
            } else {
                Err(ReadError::malformed(
                    path,
                    line_no,
                    format!("a number ({what})"),
                    tok,
                ))
            }
        })
        .collect()
}

/// A latitude or longitude written as decimal degrees or `dd:mm:ss.s` (sign on the degrees,
/// optional hemisphere letter N/S/E/W).
pub fn parse_degrees(text: &str) -> Option<f64> {
    let t = text.trim().trim_matches('"');
    if t.is_empty() {
        return None;
    }
    let (body, hemi_sign) = match t.chars().last() {
        Some('N' | 'n' | 'E' | 'e') if t.len() > 1 => (&t[..t.len() - 1], 1.0),
        Some('S' | 's' | 'W' | 'w') if t.len() > 1 => (&t[..t.len() - 1], -1.0),
        _ => (t, 1.0),
    };
    let v = if body.contains(':') {
        let parts: Vec<&str> = body.split(':').collect();
        if parts.len() > 3 {
            return None;
        }
        let negative = parts[0].trim().starts_with('-');
        let mut deg = 0.0;
        for (k, p) in parts.iter().enumerate() {
            let x = parse_f64(p)?.abs();
            deg += x / 60f64.powi(k as i32);
        }
        if negative { -deg } else { deg }
    } else {
        parse_f64(body)?
    };
    let v = v * hemi_sign;
    (v.is_finite() && v.abs() <= 360.0).then_some(v)
}

/// `KEY=VALUE` pairs of a line, tolerating spaces around `=` (`AZM= 107.`) and quoted values.
/// Keys are upper-cased. Text after `//` is ignored.
pub fn key_values(text: &str) -> Vec<(String, String)> {
    let text = text.split("//").next().unwrap_or("");
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let n = chars.len();
    while i < n {
        // key
        while i < n && chars[i].is_whitespace() {
            i += 1;
        }
        let ks = i;
        while i < n && !chars[i].is_whitespace() && chars[i] != '=' {
            i += 1;
        }
        let key: String = chars[ks..i].iter().collect();
        while i < n && chars[i].is_whitespace() {
            i += 1;
        }
        if i >= n || chars[i] != '=' {
            continue;
        }
        i += 1;
        while i < n && chars[i].is_whitespace() {
            i += 1;
        }
        let value: String = if i < n && chars[i] == '"' {
            i += 1;
            let vs = i;
            while i < n && chars[i] != '"' {
                i += 1;
            }
            let v = chars[vs..i].iter().collect();
            i += 1;
            v
        } else {
            let vs = i;
            while i < n && !chars[i].is_whitespace() {
                i += 1;
            }
            chars[vs..i].iter().collect()
        };
        if !key.is_empty() {
            out.push((key.to_ascii_uppercase(), value));
        }
    }
    out
}

/// The count after `//` on a block header (`>ZXYR ROT=ZROT //73`), if any.
pub fn slash_count(text: &str) -> Option<usize> {
    let after = text.split_once("//")?.1;
    after.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_glued_numbers_split() {
        assert_eq!(
            number_tokens(" 0.12E+00-0.34E+00  5.6,7 -8"),
            vec!["0.12E+00", "-0.34E+00", "5.6", "7", "-8"]
        );
        assert_eq!(number_tokens("1.0e-5"), vec!["1.0e-5"]);
    }

    #[test]
    fn degrees_in_every_form() {
        assert!((parse_degrees("22:41:28.962").unwrap() - 22.691378333).abs() < 1e-8);
        assert!((parse_degrees("-22:49:25.4").unwrap() + 22.823722222).abs() < 1e-8);
        assert!((parse_degrees("-34.64600").unwrap() + 34.646).abs() < 1e-12);
        assert!((parse_degrees("34.5S").unwrap() + 34.5).abs() < 1e-12);
        assert_eq!(parse_degrees(""), None);
        assert_eq!(parse_degrees("abc"), None);
    }

    #[test]
    fn key_values_tolerate_spaces_and_quotes() {
        let kv = key_values("ID=    11.001 CHTYPE=HX X=    4858. AZM= 107. NAME=\"a b\" //49");
        assert_eq!(
            kv,
            vec![
                ("ID".into(), "11.001".into()),
                ("CHTYPE".into(), "HX".into()),
                ("X".into(), "4858.".into()),
                ("AZM".into(), "107.".into()),
                ("NAME".into(), "a b".into()),
            ]
        );
        assert_eq!(slash_count(">FREQ NFREQ=3 //73"), Some(73));
        assert_eq!(slash_count(">SPECTRA FREQ=3 // 49"), Some(49));
    }
}
