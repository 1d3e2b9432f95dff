//! A small `multipart/form-data` reader (RFC 7578) for the mock's file upload: named parts,
//! an optional file name, the raw bytes. Enough for what OpenAI clients send; no streaming,
//! no nested parts, no transfer encodings. Hand-written because axum's `multipart` feature
//! brings multer and its dependencies for two form fields.

/// One form field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    /// The field name.
    pub(crate) name: String,
    /// The file name, for a file field.
    pub(crate) filename: Option<String>,
    /// The content.
    pub(crate) data: Vec<u8>,
}

/// The parts of `body`, given the request's `Content-Type`; `Err` says what is malformed.
pub(crate) fn parse(content_type: &str, body: &[u8]) -> Result<Vec<Part>, String> {
    let boundary = content_type
        .split(';')
        .map(str::trim)
        .find_map(|param| param.strip_prefix("boundary="))
        .map(|b| b.trim_matches('"'))
        .filter(|b| !b.is_empty())
        .ok_or("content type has no multipart boundary")?;
    let delimiter = format!("--{boundary}").into_bytes();
    let mut at = find(body, &delimiter, 0).ok_or("body holds no boundary")? + delimiter.len();
    let mut parts = Vec::new();
    loop {
        if body[at..].starts_with(b"--") {
            return Ok(parts);
        }
        at += if body[at..].starts_with(b"\r\n") {
            2
        } else {
            0
        };
        let head_end = find(body, b"\r\n\r\n", at).ok_or("part without headers' end")?;
        let head = String::from_utf8_lossy(&body[at..head_end]).into_owned();
        let data_start = head_end + 4;
        let mut closing = b"\r\n".to_vec();
        closing.extend_from_slice(&delimiter);
        let data_end = find(body, &closing, data_start).ok_or("part not closed")?;
        let disposition = head
            .lines()
            .find(|line| {
                line.to_ascii_lowercase()
                    .starts_with("content-disposition:")
            })
            .ok_or("part without content-disposition")?;
        parts.push(Part {
            name: quoted_param(disposition, "name").ok_or("part without a name")?,
            filename: quoted_param(disposition, "filename"),
            data: body[data_start..data_end].to_vec(),
        });
        at = data_end + closing.len();
    }
}

/// `key="value"` of a header line.
fn quoted_param(line: &str, key: &str) -> Option<String> {
    line.split(';').map(str::trim).find_map(|param| {
        let value = param.strip_prefix(key)?.strip_prefix('=')?;
        Some(value.trim_matches('"').to_owned())
    })
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|window| window == needle)
        .map(|i| i + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_and_files_and_rejects_garbage() {
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"in.jsonl\"\r\n\
Content-Type: application/jsonl\r\n\r\n{\"a\":1}\n--XyZx\n\r\n--XyZ--\r\n";
        let parts = parse("multipart/form-data; boundary=\"XyZ\"", body).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(
            (parts[0].name.as_str(), parts[0].data.as_slice()),
            ("purpose", &b"batch"[..])
        );
        assert_eq!(parts[1].filename.as_deref(), Some("in.jsonl"));
        assert_eq!(parts[1].data, b"{\"a\":1}\n--XyZx\n");
        assert!(parse("multipart/form-data", body).is_err());
        assert!(parse("multipart/form-data; boundary=Q", body).is_err());
        assert!(parse("multipart/form-data; boundary=XyZ", b"--XyZ\r\nno end").is_err());
    }
}
