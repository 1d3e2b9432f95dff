//! Fitting text into a prompt window: splitting a text that is too long alone, and packing
//! consecutive items (texts, or context indices for the ranking's batches and windows) into
//! groups that fit. Both take a `fits` test that counts the tokens of
//! exactly the prompt that would be sent, so a group is only ever formed after its own count
//! was checked.

use std::ops::Range;

/// Where a split may prefer to fall: after whitespace or a sentence or clause mark (Chinese
/// and Latin).
const BREAK_AFTER: &[char] = &[
    '。', '！', '？', '；', '，', '、', '.', '!', '?', ';', ',', ':', '：',
];

/// Splits `text` into consecutive pieces that each pass `fits`, as long as possible. A piece
/// ends after a space or punctuation mark when one lies in its last quarter, else mid-word.
/// `None` when not even one character fits. An empty text gives one empty piece.
///
/// `fits` must be monotone: if a text fits, so does each of its prefixes.
pub fn split_to_fit(text: &str, fits: impl Fn(&str) -> bool) -> Option<Vec<&str>> {
    if fits(text) {
        return Some(vec![text]);
    }
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let mut pieces = Vec::new();
    let mut start = 0; // index into `bounds`
    let last = bounds.len() - 1;
    while start < last {
        // Largest end with text[start..end] fitting, by binary search over char bounds.
        let (mut low, mut high) = (start, last);
        while low < high {
            let middle = (low + high).div_ceil(2);
            if fits(&text[bounds[start]..bounds[middle]]) {
                low = middle;
            } else {
                high = middle - 1;
            }
        }
        if low == start {
            return None;
        }
        let mut end = low;
        if end < last {
            let soft_floor = start + (end - start) * 3 / 4;
            if let Some(soft) = (soft_floor.max(start + 1)..end).rev().find(|&b| {
                text[bounds[b - 1]..bounds[b]]
                    .chars()
                    .all(|c| c.is_whitespace() || BREAK_AFTER.contains(&c))
            }) {
                end = soft;
            }
        }
        pieces.push(&text[bounds[start]..bounds[end]]);
        start = end;
    }
    Some(pieces)
}

/// Packs `items` in order into groups of at most `max_items` (0 counts as 1) that pass
/// `fits`, greedily: an item joins the current group when the group with it still fits.
/// An item that does not fit even alone gets a group of its own; callers check.
pub fn pack<T>(items: &[T], max_items: usize, fits: impl Fn(&[T]) -> bool) -> Vec<Range<usize>> {
    let max_items = max_items.max(1);
    let mut groups = Vec::new();
    let mut start = 0;
    for end in 1..=items.len() {
        let grown = start..end;
        let keeps = end - start <= max_items && (end - start == 1 || fits(&items[grown]));
        if !keeps {
            groups.push(start..end - 1);
            start = end - 1;
        }
    }
    if start < items.len() {
        groups.push(start..items.len());
    }
    groups
}

/// The size of each of the fewest groups of at most `max_items` (0 counts as 1) that hold
/// `count` items, made as equal as possible: 61 items at most 10 a group give groups of 9
/// (and one of 7) rather than six of 10 and a lone one.
pub fn balanced_size(count: usize, max_items: usize) -> usize {
    let max_items = max_items.max(1);
    match count.div_ceil(max_items) {
        0 => max_items,
        groups => count.div_ceil(groups),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars_at_most(limit: usize) -> impl Fn(&str) -> bool {
        move |text: &str| text.chars().count() <= limit
    }

    #[test]
    fn a_text_that_fits_stays_whole() {
        assert_eq!(
            split_to_fit("short", chars_at_most(10)),
            Some(vec!["short"])
        );
        assert_eq!(split_to_fit("", chars_at_most(10)), Some(vec![""]));
    }

    #[test]
    fn splits_cover_the_text_fit_and_prefer_breaks() {
        let text =
            "第一句话很长。第二句话也很长，还有更多内容。English words follow here and there.";
        let pieces = split_to_fit(text, chars_at_most(9)).unwrap_or_default();
        assert_eq!(pieces.concat(), text);
        assert!(
            pieces
                .iter()
                .all(|p| p.chars().count() <= 9 && !p.is_empty()),
            "{pieces:?}"
        );
        assert_eq!(pieces[0], "第一句话很长。");
    }

    #[test]
    fn nothing_fits_is_none() {
        assert_eq!(split_to_fit("abc", chars_at_most(0)), None);
    }

    #[test]
    fn packs_greedily_within_the_size_and_the_window() {
        let items = ["aaaa", "bb", "cc", "dddddd", "e", "f", "g"];
        let fits = |group: &[&str]| group.iter().map(|s| s.len()).sum::<usize>() <= 6;
        assert_eq!(pack(&items, 10, fits), vec![0..2, 2..3, 3..4, 4..7]);
        assert_eq!(pack(&items, 2, fits), vec![0..2, 2..3, 3..4, 4..6, 6..7]);
        let too_long = ["xxxxxxxxx", "y"];
        assert_eq!(pack(&too_long, 5, fits), vec![0..1, 1..2]);
        assert!(pack::<&str>(&[], 5, fits).is_empty());
    }

    #[test]
    fn balanced_sizes_leave_no_lone_remainder() {
        assert_eq!(balanced_size(61, 10), 9);
        assert_eq!(balanced_size(60, 10), 10);
        assert_eq!(balanced_size(7, 10), 7);
        assert_eq!(balanced_size(0, 10), 10);
        assert_eq!(balanced_size(5, 0), 1);
    }
}
