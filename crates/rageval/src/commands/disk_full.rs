//! A full disk told apart from bad input: exit 74 ([`super::Exit::DiskFull`]) and the
//! hint to free space and resume. Only the binary's error mapping uses it.

/// What to do when the disk or the quota is full.
pub(super) const HINT: &str = "free space on that disk (or raise the quota), then run the \
     same command again: what was journaled is kept and the run resumes";

/// Whether `error` comes of a full disk or quota (exit [`super::Exit::DiskFull`]), not of
/// the input.
pub fn is_disk_full(error: &anyhow::Error) -> bool {
    error.chain().any(rageval_core::files::caused_by_disk_full)
}
