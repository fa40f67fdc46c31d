//! EMTF XML reader (Kelbert 2020, Geophysics 85(1) F1–F17; the IRIS SPUD EMTF format).
//!
//! `<EM_TF>` holds `<Site>` (id, location) and `<Data>` with one `<Period value=… units=…>`
//! per period; inside, `<Z>`, `<Z.VAR>`, `<T>`, `<T.VAR>` hold `<Value>` (or `<value>`)
//! elements whose `output`/`input` attributes (Ex/Ey/Hz × Hx/Hy) place them. Impedance units
//! come from the `units` attribute: `[mV/km]/[nT]` (field units), `[V/m]/[A/m]` or `Ohm` (SI),
//! `[V/m]/[T]`. A small tolerant XML tokenizer is used (no DTDs, no entities beyond the five
//! predefined ones); every malformed-markup error names the line.

use std::path::Path;

use num_complex::Complex64;

use super::tf::{TfFormat, TransferFunction, ohm_to_field};
use crate::methods::io::{ReadError, parse_f64, read_text};

/// Read an EMTF XML file.
pub fn read_emtf_xml(path: &Path) -> Result<TransferFunction, ReadError> {
    let text = read_text(path)?;
    parse_emtf_xml(path, &text)
}

#[derive(Debug, Clone, PartialEq)]
enum Event {
    Start {
        name: String,
        attrs: Vec<(String, String)>,
        empty: bool,
        line: usize,
    },
    End {
        name: String,
        line: usize,
    },
    Text(String),
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Tokenise XML into start/end/text events, skipping comments, declarations and
/// processing instructions.
fn tokenize(path: &Path, text: &str) -> Result<Vec<Event>, ReadError> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut line = 1;
    let mut out = Vec::new();
    let count_lines = |s: &[u8]| s.iter().filter(|&&c| c == b'\n').count();
    while i < b.len() {
        if b[i] != b'<' {
            let start = i;
            while i < b.len() && b[i] != b'<' {
                i += 1;
            }
            let chunk = &text[start..i];
            line += count_lines(chunk.as_bytes());
            if !chunk.trim().is_empty() {
                out.push(Event::Text(unescape(chunk.trim())));
            }
            continue;
        }
        let rest = &text[i..];
        let skip_to = |pat: &str, what: &str| -> Result<usize, ReadError> {
            rest.find(pat).map(|p| p + pat.len()).ok_or_else(|| {
                ReadError::malformed(
                    path,
                    line,
                    format!("the end of the {what} ('{pat}')"),
                    "end of file",
                )
            })
        };
        if rest.starts_with("<!--") {
            let n = skip_to("-->", "comment")?;
            line += count_lines(&b[i..i + n]);
            i += n;
            continue;
        }
        if rest.starts_with("<![CDATA[") {
            let n = skip_to("]]>", "CDATA section")?;
            let inner = &text[i + 9..i + n - 3];
            line += count_lines(&b[i..i + n]);
            if !inner.trim().is_empty() {
                out.push(Event::Text(inner.trim().to_string()));
            }
            i += n;
            continue;
        }
        if rest.starts_with("<?") || rest.starts_with("<!") {
            let n = skip_to(">", "declaration")?;
            line += count_lines(&b[i..i + n]);
            i += n;
            continue;
        }
        // A tag: find its closing '>' outside quotes.
        let tag_line = line;
        let mut j = i + 1;
        let mut quote: Option<u8> = None;
        while j < b.len() {
            match (quote, b[j]) {
                (None, b'"' | b'\'') => quote = Some(b[j]),
                (Some(q), c) if c == q => quote = None,
                (None, b'>') => break,
                _ => {}
            }
            j += 1;
        }
        if j >= b.len() {
            let snippet: String = text[i..].chars().take(40).collect();
            return Err(ReadError::malformed(
                path,
                tag_line,
                "'>' closing the tag",
                snippet,
            ));
        }
        let inner = &text[i + 1..j];
        line += count_lines(inner.as_bytes());
        i = j + 1;
        if let Some(name) = inner.strip_prefix('/') {
            out.push(Event::End {
                name: name.trim().to_string(),
                line: tag_line,
            });
            continue;
        }
        let (inner, empty) = match inner.strip_suffix('/') {
            Some(s) => (s, true),
            None => (inner, false),
        };
        let name_end = inner
            .find(|c: char| c.is_whitespace())
            .unwrap_or(inner.len());
        let name = inner[..name_end].to_string();
        if name.is_empty() {
            return Err(ReadError::malformed(
                path,
                tag_line,
                "a tag name after '<'",
                inner,
            ));
        }
        let attrs = parse_attrs(path, tag_line, &inner[name_end..])?;
        out.push(Event::Start {
            name,
            attrs,
            empty,
            line: tag_line,
        });
    }
    Ok(out)
}

fn parse_attrs(path: &Path, line: usize, s: &str) -> Result<Vec<(String, String)>, ReadError> {
    let mut out = Vec::new();
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        let eq = rest
            .find('=')
            .ok_or_else(|| ReadError::malformed(path, line, "attribute=\"value\"", rest))?;
        let key = rest[..eq].trim().to_string();
        let after = rest[eq + 1..].trim_start();
        let q = after.chars().next().filter(|c| *c == '"' || *c == '\'');
        let Some(q) = q else {
            return Err(ReadError::malformed(
                path,
                line,
                "a quoted attribute value",
                after,
            ));
        };
        let body = &after[1..];
        let end = body.find(q).ok_or_else(|| {
            ReadError::malformed(path, line, "the closing quote of an attribute", body)
        })?;
        out.push((key, unescape(&body[..end])));
        rest = body[end + 1..].trim_start();
    }
    Ok(out)
}

fn attr<'a>(attrs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.as_str())
}

/// Scale from the file's impedance unit to (mV/km)/nT, and whether the unit is known.
fn unit_scale(units: &str) -> Option<Complex64> {
    let u: String = units
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    match u.as_str() {
        "[mv/km]/[nt]" | "mv/km/nt" | "[mv/km]/nt" | "(mv/km)/nt" => Some(Complex64::new(1.0, 0.0)),
        "[v/m]/[a/m]" | "ohm" | "ohms" | "[ohm]" | "v/m/a/m" => {
            Some(ohm_to_field(Complex64::new(1.0, 0.0)))
        }
        "[v/m]/[t]" | "v/m/t" => Some(Complex64::new(1e-3, 0.0)),
        _ => None,
    }
}

/// The `yyyy-mm-dd` at the start of an ISO 8601 time stamp, if it is one.
fn iso_date_prefix(s: &str) -> Option<String> {
    let d = s.trim().get(..10)?;
    let b = d.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    (digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10))
        .then(|| d.to_string())
}

/// Parse EMTF XML text.
pub fn parse_emtf_xml(path: &Path, text: &str) -> Result<TransferFunction, ReadError> {
    if !text.contains("<EM_TF") {
        return Err(ReadError::format(
            path,
            "not an EMTF XML file: no <EM_TF> element",
        ));
    }
    let events = tokenize(path, text)?;
    let mut tf = TransferFunction::empty(TfFormat::EmtfXml);
    let mut stack: Vec<String> = Vec::new();
    let mut site_id: Option<String> = None;
    let mut z_units_decl: Option<String> = None;
    // Per period: (period, z, zvar, t, tvar)
    let mut periods: Vec<f64> = Vec::new();
    let mut zs: Vec<[[Complex64; 2]; 2]> = Vec::new();
    let mut zvar: Vec<[[f64; 2]; 2]> = Vec::new();
    let mut ts: Vec<[Complex64; 2]> = Vec::new();
    let mut tvar: Vec<[f64; 2]> = Vec::new();
    let nan_c = Complex64::new(f64::NAN, f64::NAN);
    let mut any_z = false;
    let mut any_t = false;
    let mut block_units: Option<String> = None;
    let mut pending_value: Option<(String, String, String, usize)> = None; // (block, out, in, line)
    let mut sign_convention: Option<String> = None;

    for ev in &events {
        match ev {
            Event::Start {
                name,
                attrs,
                empty,
                line,
            } => {
                let lname = name.to_ascii_lowercase();
                let parent = stack.last().map(|s| s.to_ascii_lowercase());
                if lname == "period" && stack.iter().any(|s| s.eq_ignore_ascii_case("data")) {
                    let v = attr(attrs, "value").and_then(parse_f64).ok_or_else(|| {
                        ReadError::malformed(
                            path,
                            *line,
                            "<Period value=\"…\"> with a number",
                            attr(attrs, "value").unwrap_or("no value"),
                        )
                    })?;
                    let units = attr(attrs, "units").unwrap_or("secs").to_ascii_lowercase();
                    let p = if units.starts_with("hz") { 1.0 / v } else { v };
                    periods.push(p);
                    zs.push([[nan_c; 2]; 2]);
                    zvar.push([[f64::NAN; 2]; 2]);
                    ts.push([nan_c; 2]);
                    tvar.push([f64::NAN; 2]);
                }
                if parent.as_deref() == Some("period") && matches!(lname.as_str(), "z" | "t") {
                    block_units = attr(attrs, "units").map(str::to_string);
                    if lname == "z"
                        && let Some(u) = &block_units
                    {
                        z_units_decl.get_or_insert_with(|| u.clone());
                    }
                }
                if lname == "datatype"
                    && attr(attrs, "name").is_some_and(|n| n.eq_ignore_ascii_case("z"))
                    && let Some(u) = attr(attrs, "units")
                {
                    z_units_decl.get_or_insert_with(|| u.to_string());
                }
                if lname == "value"
                    && !*empty
                    && let Some(block) = parent.clone()
                {
                    let out = attr(attrs, "output").unwrap_or("").to_ascii_lowercase();
                    let inp = attr(attrs, "input").unwrap_or("").to_ascii_lowercase();
                    let (out, inp) = if out.is_empty() || inp.is_empty() {
                        // Fall back on the name: Zxy → (ex, hy), Tx → (hz, hx).
                        from_name(attr(attrs, "name").unwrap_or(""))
                    } else {
                        (out, inp)
                    };
                    pending_value = Some((block, out, inp, *line));
                }
                if !*empty {
                    stack.push(name.clone());
                }
            }
            Event::End { name, line } => {
                match stack.pop() {
                    Some(open) if open == *name => {}
                    Some(open) => {
                        return Err(ReadError::malformed(
                            path,
                            *line,
                            format!("</{open}>"),
                            format!("</{name}>"),
                        ));
                    }
                    None => {
                        return Err(ReadError::malformed(
                            path,
                            *line,
                            "no closing tag here",
                            format!("</{name}>"),
                        ));
                    }
                }
                if name.eq_ignore_ascii_case("value") {
                    pending_value = None;
                }
            }
            Event::Text(s) => {
                let parent = stack.last().map(|s| s.to_ascii_lowercase());
                let grand = stack
                    .len()
                    .checked_sub(2)
                    .map(|i| stack[i].to_ascii_lowercase());
                if parent.as_deref() == Some("id") && grand.as_deref() == Some("site") {
                    site_id.get_or_insert_with(|| s.clone());
                }
                if grand.as_deref() == Some("location") {
                    let v = parse_f64(s);
                    match parent.as_deref() {
                        Some("latitude") => tf.latitude_deg = tf.latitude_deg.or(v),
                        Some("longitude") => tf.longitude_deg = tf.longitude_deg.or(v),
                        Some("elevation") => tf.elevation_m = tf.elevation_m.or(v),
                        _ => {}
                    }
                }
                if parent.as_deref() == Some("start")
                    && grand.as_deref() == Some("timeperiod")
                    && tf.acquired_date.is_none()
                {
                    tf.acquired_date = iso_date_prefix(s);
                }
                if parent.as_deref() == Some("signconvention") {
                    sign_convention = Some(s.clone());
                }
                let Some((block, out, inp, line)) = pending_value.take() else {
                    continue;
                };
                let Some(k) = periods.len().checked_sub(1) else {
                    continue;
                };
                let nums: Vec<f64> = s
                    .split_whitespace()
                    .map(|t| {
                        parse_f64(t).or(if t.eq_ignore_ascii_case("nan") {
                            Some(f64::NAN)
                        } else {
                            None
                        })
                    })
                    .collect::<Option<Vec<f64>>>()
                    .ok_or_else(|| {
                        ReadError::malformed(path, line, format!("numbers in a <{block}> value"), s)
                    })?;
                let row = match out.as_str() {
                    "ex" => Some(0),
                    "ey" => Some(1),
                    "hz" => Some(0),
                    _ => None,
                };
                let col = match inp.as_str() {
                    "hx" => Some(0),
                    "hy" => Some(1),
                    _ => None,
                };
                let (Some(r), Some(c)) = (row, col) else {
                    continue;
                };
                match block.as_str() {
                    "z" if out != "hz" => {
                        if nums.len() != 2 {
                            return Err(ReadError::malformed(
                                path,
                                line,
                                "two numbers (real imaginary) in a <Z> value",
                                s,
                            ));
                        }
                        zs[k][r][c] = Complex64::new(nums[0], nums[1]);
                        any_z = true;
                        if let Some(u) = &block_units {
                            z_units_decl.get_or_insert_with(|| u.clone());
                        }
                    }
                    "z.var" if out != "hz" => {
                        zvar[k][r][c] = nums.first().copied().unwrap_or(f64::NAN);
                    }
                    "t" if out == "hz" => {
                        if nums.len() != 2 {
                            return Err(ReadError::malformed(
                                path,
                                line,
                                "two numbers (real imaginary) in a <T> value",
                                s,
                            ));
                        }
                        ts[k][c] = Complex64::new(nums[0], nums[1]);
                        any_t = true;
                    }
                    "t.var" if out == "hz" => {
                        tvar[k][c] = nums.first().copied().unwrap_or(f64::NAN);
                    }
                    _ => {}
                }
            }
        }
    }
    // A file cut before its closing elements (issue 19) is refused: its last period may
    // hold half a value.
    if let Some(open) = stack.last() {
        let still_open: Vec<String> = stack.iter().rev().map(|n| format!("</{n}>")).collect();
        return Err(ReadError::malformed(
            path,
            text.lines().count().max(1),
            format!(
                "the closing element </{open}> (still open: {}); the file ends before them, so it looks cut off",
                still_open.join(" ")
            ),
            "the end of the file",
        ));
    }
    if periods.is_empty() {
        return Err(ReadError::format(
            path,
            "no <Period> elements inside <Data>",
        ));
    }
    if !any_z && !any_t {
        return Err(ReadError::format(
            path,
            "the periods hold neither <Z> nor <T> values",
        ));
    }
    tf.site = site_id.unwrap_or_default();
    tf.period_s = periods;
    if any_z {
        let units = z_units_decl.unwrap_or_else(|| "not stated".into());
        let scale = match unit_scale(&units) {
            Some(s) => s,
            None => {
                tf.units_guessed = true;
                tf.notes.push(format!(
                    "Impedance units \"{units}\" not recognised: taken as (mV/km)/nT (a guess)."
                ));
                Complex64::new(1.0, 0.0)
            }
        };
        tf.units_in_file = units;
        let s2 = scale.norm_sqr();
        tf.z_mv_km_nt = Some(
            zs.iter()
                .map(|t| {
                    [
                        [t[0][0] * scale, t[0][1] * scale],
                        [t[1][0] * scale, t[1][1] * scale],
                    ]
                })
                .collect(),
        );
        tf.z_std_mv_km_nt = Some(
            zvar.iter()
                .map(|v| {
                    let f = |x: f64| (x.abs() * s2).sqrt();
                    [[f(v[0][0]), f(v[0][1])], [f(v[1][0]), f(v[1][1])]]
                })
                .collect(),
        );
        if zvar.iter().all(|v| v.iter().flatten().all(|x| x.is_nan())) {
            tf.notes
                .push("No <Z.VAR> in the file: impedance errors must come from a floor.".into());
        }
    }
    if any_t {
        tf.tipper = Some(ts);
        tf.tipper_std = Some(
            tvar.iter()
                .map(|v| [v[0].abs().sqrt(), v[1].abs().sqrt()])
                .collect(),
        );
    }
    if let Some(sc) = sign_convention {
        tf.notes
            .push(format!("Sign convention stated in the file: {sc}."));
    }
    let dropped = tf.sort_and_clean();
    if dropped > 0 {
        tf.notes.push(format!(
            "{dropped} periods that are not finite and positive were dropped."
        ));
    }
    Ok(tf)
}

fn from_name(name: &str) -> (String, String) {
    let n = name.to_ascii_lowercase();
    let (o, i) = match n.as_str() {
        "zxx" => ("ex", "hx"),
        "zxy" => ("ex", "hy"),
        "zyx" => ("ey", "hx"),
        "zyy" => ("ey", "hy"),
        "tx" | "tzx" => ("hz", "hx"),
        "ty" | "tzy" => ("hz", "hy"),
        _ => ("", ""),
    };
    (o.to_string(), i.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = r#"<?xml version="1.0"?>
<EM_TF>
  <!-- a comment with <tags> inside -->
  <Site><Id>S1</Id><Location><Latitude>34.5</Latitude><Longitude>-108.7</Longitude></Location></Site>
  <Data count="2">
    <Period value="10.0" units="secs">
      <Z units="[V/m]/[A/m]">
        <value name="Zxy" output="Ex" input="Hy">1e-3 2e-3</value>
        <value name="Zyx" output="Ey" input="Hx">-1e-3 -2e-3</value>
      </Z>
    </Period>
    <Period value="1.0" units="secs">
      <Z units="[V/m]/[A/m]"><value name="Zxy">3e-3 4e-3</value></Z>
      <T units="[]"><value name="Tx" output="Hz" input="Hx">0.1 0.2</value></T>
    </Period>
  </Data>
</EM_TF>"#;

    #[test]
    fn si_impedance_is_converted_and_sorted() {
        let tf = parse_emtf_xml(Path::new("a.xml"), XML).unwrap();
        assert_eq!(tf.site, "S1");
        assert_eq!(tf.period_s, vec![1.0, 10.0]);
        let z = tf.z_mv_km_nt.as_ref().unwrap();
        let expected = ohm_to_field(Complex64::new(1e-3, 2e-3));
        assert!((z[1][0][1] - expected).norm() < 1e-15 * expected.norm());
        // The name-only value lands on Zxy.
        assert!((z[0][0][1] - ohm_to_field(Complex64::new(3e-3, 4e-3))).norm() < 1e-12);
        assert_eq!(tf.tipper.as_ref().unwrap()[0][0], Complex64::new(0.1, 0.2));
        assert!(tf.tipper.as_ref().unwrap()[1][0].re.is_nan());
        assert_eq!(tf.latitude_deg, Some(34.5));
    }

    #[test]
    fn mismatched_tags_name_the_line() {
        let bad = XML.replace(
            "</Z>\n    </Period>\n    <Period value=\"1.0\"",
            "</T>\n    </Period>\n    <Period value=\"1.0\"",
        );
        let e = parse_emtf_xml(Path::new("a.xml"), &bad).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a.xml, line 10: expected </Z>, found \"</T>\""
        );
    }

    #[test]
    fn bad_value_text_names_the_line() {
        let bad = XML.replace("1e-3 2e-3", "1e-3 two");
        let e = parse_emtf_xml(Path::new("a.xml"), &bad).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("a.xml, line 8: expected numbers in a <z> value"),
            "{e}"
        );
    }
}
