//! What a page or an answer may show of a path: run names and relative paths, never where
//! the server's files lie. A manifest records its dataset as `eval` was given it, often an
//! absolute path on the machine that ran it; pages show its file name instead. Errors name
//! files relative to the runs directory (`ReportError::relative_to`).

use std::path::Path;

use rageval_report::{Manifest, escape_html};

/// A recorded path as shown: relative paths as they are, absolute ones by file name.
pub(crate) fn shown_path(path: &str) -> String {
    let as_path = Path::new(path);
    if as_path.is_absolute() {
        as_path
            .file_name()
            .map_or_else(String::new, |name| name.to_string_lossy().into_owned())
    } else {
        path.to_string()
    }
}

/// The manifest with its dataset path as [`shown_path`] gives it.
pub(crate) fn public_manifest(manifest: &Manifest) -> Manifest {
    let mut shown = manifest.clone();
    shown.dataset.path = shown_path(&manifest.dataset.path);
    shown
}

/// A stored `report.html` as served: the dataset path its manifest records and the runs
/// directory are replaced by what [`shown_path`] shows and by nothing.
pub(crate) fn public_report(html: &str, root: &Path, manifest: &Manifest) -> String {
    let recorded = escape_html(&manifest.dataset.path);
    let mut shown = html.replace(&recorded, &escape_html(&shown_path(&manifest.dataset.path)));
    let root = escape_html(&format!("{}/", root.display()));
    if root.len() > 1 {
        shown = shown.replace(&root, "");
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_paths_show_their_file_name_only() {
        assert_eq!(shown_path("/home/me/data/kids.jsonl"), "kids.jsonl");
        assert_eq!(shown_path("data/kids.jsonl"), "data/kids.jsonl");
        assert_eq!(shown_path("/"), "");
    }
}
