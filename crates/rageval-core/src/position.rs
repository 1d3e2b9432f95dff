//! Where in a text file an error lies, for messages that name a file, a line and a field:
//! the 1-based line of a byte offset, and the field a TOML parser's message names. Knows no
//! format's grammar; parsers stay with their callers.

/// The 1-based line of byte `offset` in `text` (an offset past the end counts as the end).
pub fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The field a serde message names in backticks (`missing field `name``, `unknown field
/// `x``), when the message is about a field.
pub fn field_in_message(message: &str) -> Option<&str> {
    message
        .split('`')
        .nth(1)
        .filter(|_| message.contains("field"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_fields() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 99), 3);
        assert_eq!(field_in_message("missing field `name`"), Some("name"));
        assert_eq!(field_in_message("invalid type: `x`"), None);
    }
}
