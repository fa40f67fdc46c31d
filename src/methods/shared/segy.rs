//! SEG-Y's encodings (SEG Technical Standards Committee, SEG-Y rev 1, 2002; rev 2.0, 2017),
//! shared by the seismic and the radar readers.
//!
//! IBM System/360 single precision (sample format 1): sign bit, 7-bit base-16 exponent biased
//! by 64, 24-bit fraction: `x = (−1)^s · 0.F · 16^(e − 64)`.

/// IBM float32 bits to a value (module docs give the layout).
pub fn ibm_to_f64(bits: u32) -> f64 {
    let sign = if bits >> 31 == 1 { -1.0 } else { 1.0 };
    let exp = ((bits >> 24) & 0x7f) as i32;
    let frac = f64::from(bits & 0x00ff_ffff) / 16_777_216.0;
    sign * frac * 16f64.powi(exp - 64)
}

/// A value to IBM float32 bits, rounded to the nearest representable value (0 for values
/// too small, the largest magnitude for values too large).
pub fn f64_to_ibm(x: f64) -> u32 {
    if x == 0.0 || !x.is_finite() {
        return 0;
    }
    let sign = if x < 0.0 { 0x8000_0000u32 } else { 0 };
    let mut a = x.abs();
    let mut exp = 64i32;
    while a >= 1.0 && exp < 127 {
        a /= 16.0;
        exp += 1;
    }
    while a < 1.0 / 16.0 && exp > 0 {
        a *= 16.0;
        exp -= 1;
    }
    let mut frac = (a * 16_777_216.0).round() as u64;
    if frac >= 1 << 24 {
        frac >>= 4;
        exp += 1;
    }
    if exp > 127 {
        return sign | 0x7fff_ffff;
    }
    sign | ((exp as u32) << 24) | (frac as u32 & 0x00ff_ffff)
}

use super::bytes::Bytes;

/// The textual header as ASCII lines of 80 characters, trailing blank lines dropped, and whether
/// it was EBCDIC (detected by its space 0x40 and letters ≥ 0x80 outnumbering ASCII's).
pub fn textual_header(t: &[u8]) -> (String, bool) {
    let ebcdic_like = t.iter().filter(|&&c| c == 0x40 || c >= 0x80).count();
    let ascii_like = t
        .iter()
        .filter(|&&c| c == b' ' || c.is_ascii_alphanumeric())
        .count();
    let ebcdic = ebcdic_like > ascii_like;
    let chars: String = t
        .iter()
        .map(|&c| {
            if ebcdic {
                ebcdic_to_ascii(c)
            } else if c.is_ascii_graphic() {
                c as char
            } else {
                ' '
            }
        })
        .collect();
    let lines: Vec<String> = chars
        .as_bytes()
        .chunks(80)
        .map(|l| String::from_utf8_lossy(l).trim_end().to_string())
        .collect();
    (lines.join("\n").trim_end().to_string(), ebcdic)
}

/// Bytes per sample and name of a data sample format code (binary header bytes 3225–3226;
/// rev 2.0 table 2).
pub fn format_info(code: u16) -> Option<(usize, &'static str)> {
    Some(match code {
        1 => (4, "IBM float32"),
        2 => (4, "int32"),
        3 => (2, "int16"),
        5 => (4, "IEEE float32"),
        6 => (8, "IEEE float64"),
        8 => (1, "int8"),
        9 => (8, "int64"),
        10 => (4, "uint32"),
        11 => (2, "uint16"),
        12 => (8, "uint64"),
        16 => (1, "uint8"),
        _ => return None,
    })
}

/// The sample of format `code` at `off` (0 past the end or for an unknown code).
pub(crate) fn sample(r: Bytes, off: usize, code: u16) -> f64 {
    match code {
        1 => r.u32(off).map_or(0.0, ibm_to_f64),
        2 => r.i32(off).map_or(0.0, f64::from),
        3 => r.i16(off).map_or(0.0, f64::from),
        5 => r.f32(off).map_or(0.0, f64::from),
        6 => r.f64(off).unwrap_or(0.0),
        8 => r.u8(off).map_or(0.0, |v| f64::from(v as i8)),
        9 => r.i64(off).map_or(0.0, |v| v as f64),
        10 => r.u32(off).map_or(0.0, f64::from),
        11 => r.u16(off).map_or(0.0, f64::from),
        12 => r.u64(off).map_or(0.0, |v| v as f64),
        16 => r.u8(off).map_or(0.0, f64::from),
        _ => 0.0,
    }
}

/// EBCDIC (code page 037) to ASCII for the printable characters a textual header uses;
/// anything else becomes a space.
pub fn ebcdic_to_ascii(b: u8) -> char {
    match b {
        0x40 => ' ',
        0x4b => '.',
        0x4c => '<',
        0x4d => '(',
        0x4e => '+',
        0x50 => '&',
        0x5b => '$',
        0x5c => '*',
        0x5d => ')',
        0x5e => ';',
        0x60 => '-',
        0x61 => '/',
        0x6b => ',',
        0x6c => '%',
        0x6d => '_',
        0x6e => '>',
        0x6f => '?',
        0x7a => ':',
        0x7b => '#',
        0x7c => '@',
        0x7d => '\'',
        0x7e => '=',
        0x7f => '"',
        0x81..=0x89 => (b'a' + (b - 0x81)) as char,
        0x91..=0x99 => (b'j' + (b - 0x91)) as char,
        0xa2..=0xa9 => (b's' + (b - 0xa2)) as char,
        0xc1..=0xc9 => (b'A' + (b - 0xc1)) as char,
        0xd1..=0xd9 => (b'J' + (b - 0xd1)) as char,
        0xe2..=0xe9 => (b'S' + (b - 0xe2)) as char,
        0xf0..=0xf9 => (b'0' + (b - 0xf0)) as char,
        _ => ' ',
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ibm_floats_round_trip() {
        // The standard's examples: 0x42640000 = 100, 0xC276A000 = −118.625, 0x41100000 = 1.
        assert_eq!(ibm_to_f64(0x4264_0000), 100.0);
        assert_eq!(ibm_to_f64(0xC276_A000), -118.625);
        assert_eq!(ibm_to_f64(0x4110_0000), 1.0);
        assert_eq!(ibm_to_f64(0), 0.0);
        // Dyadic values are exact; others round to the 24-bit fraction (≤ 2⁻²⁰ relative,
        // the fraction's last bit at the smallest normalised mantissa 1/16).
        for x in [1.0, -118.625, 7.5e6] {
            assert_eq!(ibm_to_f64(f64_to_ibm(x)), x);
        }
        for x in [3.25e-3, -0.1, 123.456e-7] {
            let back = ibm_to_f64(f64_to_ibm(x));
            assert!((back / x - 1.0).abs() < 2f64.powi(-20), "{x} → {back}");
        }
        assert_eq!(ebcdic_to_ascii(0xc1), 'A');
        assert_eq!(ebcdic_to_ascii(0xf7), '7');
        assert_eq!(ebcdic_to_ascii(0x00), ' ');
    }
}
