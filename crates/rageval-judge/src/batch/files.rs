//! Batch input files within a provider's limits: requests are cut into files of at most
//! [`BatchLimits::max_requests_per_file`] lines and [`BatchLimits::max_bytes_per_file`]
//! bytes, in the order given, and written to disk atomically (a temporary file renamed), so
//! a crash never leaves half a file that a resumed run would submit.
//!
//! The defaults are OpenAI's documented limits (50,000 requests and 200 MB per input file);
//! other providers differ (say so with [`BatchLimits`]). Per-model limits on tokens queued
//! at once are not modelled here.

use std::path::{Path, PathBuf};

use crate::batch::lines::BatchRequest;
use crate::error::JudgeError;

/// Most requests in one OpenAI batch input file.
pub const OPENAI_MAX_REQUESTS_PER_FILE: usize = 50_000;
/// Largest OpenAI batch input file, in bytes (200 MB, read as decimal megabytes to stay
/// under either reading).
pub const OPENAI_MAX_BYTES_PER_FILE: u64 = 200_000_000;

/// How big one batch input file may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchLimits {
    /// Most request lines per file.
    pub max_requests_per_file: usize,
    /// Most bytes per file, newlines included.
    pub max_bytes_per_file: u64,
}

impl Default for BatchLimits {
    fn default() -> Self {
        BatchLimits {
            max_requests_per_file: OPENAI_MAX_REQUESTS_PER_FILE,
            max_bytes_per_file: OPENAI_MAX_BYTES_PER_FILE,
        }
    }
}

/// One input file's content, ready to upload or write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFile {
    /// The `custom_id` of each line, in order.
    pub custom_ids: Vec<String>,
    /// The JSONL text, one request per line, each line ending with `\n`.
    pub jsonl: Vec<u8>,
}

impl RequestFile {
    /// Number of requests.
    pub fn len(&self) -> usize {
        self.custom_ids.len()
    }

    /// Whether it holds no request.
    pub fn is_empty(&self) -> bool {
        self.custom_ids.is_empty()
    }
}

/// Cuts `requests` into as few files as the limits allow, keeping their order. A request
/// that alone is larger than a file may be fails (no provider would take it).
pub fn split_requests(
    requests: &[BatchRequest],
    limits: &BatchLimits,
) -> Result<Vec<RequestFile>, JudgeError> {
    if limits.max_requests_per_file == 0 || limits.max_bytes_per_file == 0 {
        return Err(JudgeError::Settings(
            "batch limits must allow at least one request and one byte per file".into(),
        ));
    }
    let mut files = Vec::new();
    let mut current = RequestFile {
        custom_ids: Vec::new(),
        jsonl: Vec::new(),
    };
    for request in requests {
        let mut line = serde_json::to_vec(request)
            .map_err(|e| JudgeError::Task(format!("cannot encode batch request: {e}")))?;
        line.push(b'\n');
        let size = line.len() as u64;
        if size > limits.max_bytes_per_file {
            return Err(JudgeError::Settings(format!(
                "batch request {} is {size} bytes, more than the {} bytes a batch file may \
                 hold",
                request.custom_id, limits.max_bytes_per_file
            )));
        }
        let full = current.len() == limits.max_requests_per_file
            || current.jsonl.len() as u64 + size > limits.max_bytes_per_file;
        if full {
            files.push(std::mem::replace(
                &mut current,
                RequestFile {
                    custom_ids: Vec::new(),
                    jsonl: Vec::new(),
                },
            ));
        }
        current.custom_ids.push(request.custom_id.clone());
        current.jsonl.extend_from_slice(&line);
    }
    if !current.is_empty() {
        files.push(current);
    }
    Ok(files)
}

/// Writes `files` into `dir` (created if needed) as `{stem}-0001.jsonl`, `{stem}-0002.jsonl`,
/// ..., each atomically; returns their paths in order.
pub fn write_request_files(
    dir: &Path,
    stem: &str,
    files: &[RequestFile],
) -> Result<Vec<PathBuf>, JudgeError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| JudgeError::BatchIo { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    files
        .iter()
        .enumerate()
        .map(|(index, file)| {
            let path = dir.join(format!("{stem}-{:04}.jsonl", index + 1));
            let partial = path.with_extension("jsonl.partial");
            std::fs::write(&partial, &file.jsonl).map_err(io(&partial))?;
            std::fs::rename(&partial, &path).map_err(io(&path))?;
            Ok(path)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn requests(n: usize) -> Vec<BatchRequest> {
        (0..n)
            .map(|i| BatchRequest::with_body(format!("k{i:03}"), json!({"model": "m", "i": i})))
            .collect()
    }

    fn line_bytes(request: &BatchRequest) -> u64 {
        serde_json::to_vec(request).unwrap().len() as u64 + 1
    }

    #[test]
    fn splits_at_the_request_limit_exactly() {
        let limits = BatchLimits {
            max_requests_per_file: 4,
            ..BatchLimits::default()
        };
        let files = split_requests(&requests(9), &limits).unwrap();
        let sizes: Vec<usize> = files.iter().map(RequestFile::len).collect();
        assert_eq!(sizes, [4, 4, 1]);
        assert_eq!(files[1].custom_ids[0], "k004");
        let exact = split_requests(&requests(8), &limits).unwrap();
        assert_eq!(exact.len(), 2);
        assert!(split_requests(&[], &limits).unwrap().is_empty());
    }

    #[test]
    fn splits_at_the_byte_limit_exactly_and_keeps_lines_whole() {
        let all = requests(10);
        let line = line_bytes(&all[0]);
        assert!(all.iter().all(|r| line_bytes(r) == line));
        // Room for exactly three lines, then one byte short of three.
        for (max_bytes, per_file) in [(3 * line, 3), (3 * line - 1, 2)] {
            let limits = BatchLimits {
                max_requests_per_file: 100,
                max_bytes_per_file: max_bytes,
            };
            let files = split_requests(&all, &limits).unwrap();
            assert!(files.iter().all(|f| f.jsonl.len() as u64 <= max_bytes));
            assert_eq!(files[0].len(), per_file, "{max_bytes}");
            let total: usize = files.iter().map(RequestFile::len).sum();
            assert_eq!(total, 10);
            for file in &files {
                let text = std::str::from_utf8(&file.jsonl).unwrap();
                let parsed = crate::batch::parse_requests(text, "f").unwrap();
                let ids: Vec<String> = parsed.into_iter().map(|r| r.custom_id).collect();
                assert_eq!(ids, file.custom_ids);
            }
        }
        let tiny = BatchLimits {
            max_requests_per_file: 100,
            max_bytes_per_file: line - 1,
        };
        let error = split_requests(&all, &tiny).unwrap_err();
        assert!(
            error.to_string().contains("batch request k000 is"),
            "{error}"
        );
    }

    #[test]
    fn writes_numbered_files_whole() {
        let dir = tempfile::tempdir().unwrap();
        let limits = BatchLimits {
            max_requests_per_file: 2,
            ..BatchLimits::default()
        };
        let files = split_requests(&requests(3), &limits).unwrap();
        let paths = write_request_files(&dir.path().join("out"), "stage-1", &files).unwrap();
        let names: Vec<String> = paths
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["stage-1-0001.jsonl", "stage-1-0002.jsonl"]);
        assert_eq!(std::fs::read(&paths[1]).unwrap(), files[1].jsonl);
        let leftovers = std::fs::read_dir(dir.path().join("out")).unwrap().count();
        assert_eq!(leftovers, 2);
    }
}
