//! Finding a table's columns by name, once.

/// The position of the column named exactly `name` in `header`.
pub fn index<S: AsRef<str>>(header: &[S], name: &str) -> Option<usize> {
    header.iter().position(|h| h.as_ref() == name)
}

/// The position of the column named `name` in `header`, ignoring ASCII case.
pub fn index_ignore_case<S: AsRef<str>>(header: &[S], name: &str) -> Option<usize> {
    header
        .iter()
        .position(|h| h.as_ref().eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_found_by_name() {
        let h = ["A", "b", "Rho"];
        assert_eq!(index(&h, "b"), Some(1));
        assert_eq!(index(&h, "rho"), None);
        assert_eq!(index_ignore_case(&h, "rho"), Some(2));
        let owned: Vec<String> = h.iter().map(|s| s.to_string()).collect();
        assert_eq!(index(&owned, "A"), Some(0));
    }
}
