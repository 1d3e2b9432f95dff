//! Headless Chromium driven over the DevTools protocol, for browser tests that type: open a
//! page, press keys as a person would (`Input.dispatchKeyEvent`, so the page's own key
//! handlers run), reload it, and read values back with JavaScript.
//!
//! The protocol runs over `--remote-debugging-pipe` (JSON messages ending in a NUL byte on
//! file descriptors 3 and 4), reached through two named pipes a shell opens for Chromium —
//! no socket and no extra crate. Every host name but loopback fails to resolve, as in
//! `chromium::render`.

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long one protocol call, or one wait for the page, may take.
const LIMIT: Duration = Duration::from_secs(60);

pub struct Browser {
    child: Child,
    to_browser: File,
    from_browser: Receiver<Value>,
    next_id: u64,
    session: String,
    _scratch: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium with one blank tab and attaches to it.
    pub fn start() -> Self {
        let scratch = tempfile::tempdir().unwrap();
        let to_path = scratch.path().join("to-browser");
        let from_path = scratch.path().join("from-browser");
        for pipe in [&to_path, &from_path] {
            let made = Command::new("mkfifo").arg(pipe).status().unwrap();
            assert!(made.success(), "mkfifo {}", pipe.display());
        }
        let profile = scratch.path().join("profile");
        let child = Command::new("sh")
            .arg("-c")
            .arg(
                "exec \"$0\" --headless --no-sandbox --disable-gpu --disable-quic \
                 --no-first-run --disable-background-networking --disable-component-update \
                 --disable-sync '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1' \
                 --remote-debugging-pipe --user-data-dir=\"$3\" about:blank 3<\"$1\" 4>\"$2\"",
            )
            .arg(crate::chromium::chromium())
            .arg(&to_path)
            .arg(&from_path)
            .arg(&profile)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The shell opens the first pipe, then the second: open them in that order.
        let to_browser = File::options().write(true).open(&to_path).unwrap();
        let mut reader = File::open(&from_path).unwrap();
        let (send, from_browser) = channel();
        std::thread::spawn(move || {
            let mut pending = Vec::new();
            let mut buffer = [0u8; 65536];
            while let Ok(read) = reader.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                pending.extend_from_slice(&buffer[..read]);
                while let Some(end) = pending.iter().position(|&b| b == 0) {
                    let message: Vec<u8> = pending.drain(..=end).collect();
                    let parsed = serde_json::from_slice(&message[..end]).unwrap();
                    if send.send(parsed).is_err() {
                        return;
                    }
                }
            }
        });
        let mut browser = Self {
            child,
            to_browser,
            from_browser,
            next_id: 0,
            session: String::new(),
            _scratch: scratch,
        };
        let target = browser.call("Target.createTarget", json!({"url": "about:blank"}));
        let attached = browser.call(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_owned();
        browser.call("Page.enable", json!({}));
        browser
    }

    /// Sends one command (to the tab once attached) and returns its result.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            message["sessionId"] = json!(self.session);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.to_browser.write_all(&bytes).unwrap();
        let started = Instant::now();
        loop {
            let left = LIMIT.saturating_sub(started.elapsed());
            match self.from_browser.recv_timeout(left) {
                Ok(answer) if answer["id"] == json!(id) => {
                    assert!(answer.get("error").is_none(), "{method}: {answer}");
                    return answer["result"].clone();
                }
                Ok(_event) => {}
                Err(RecvTimeoutError::Timeout) => panic!("{method}: no answer in {LIMIT:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("{method}: chromium went away"),
            }
        }
    }

    pub fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
    }

    pub fn reload(&mut self) {
        self.call("Page.reload", json!({"ignoreCache": true}));
    }

    /// The value of a JavaScript expression in the page.
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        result["result"]["value"].clone()
    }

    /// Waits until `expression` is `expected`; panics with its last value after the limit.
    pub fn wait_for(&mut self, expression: &str, expected: &Value) {
        let started = Instant::now();
        loop {
            let value = self.eval(expression);
            if &value == expected {
                return;
            }
            assert!(
                started.elapsed() < LIMIT,
                "`{expression}` is {value}, not {expected}, after {LIMIT:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Presses and releases `key` (a DOM key name: `"3"`, `"n"`, `"ArrowRight"`).
    pub fn press(&mut self, key: &str) {
        let (code, virtual_code, text) = match key {
            "ArrowRight" => ("ArrowRight".to_owned(), 39, None),
            "ArrowLeft" => ("ArrowLeft".to_owned(), 37, None),
            single if single.len() == 1 => {
                let c = single.chars().next().unwrap();
                let code = if c.is_ascii_digit() {
                    format!("Digit{c}")
                } else {
                    format!("Key{}", c.to_ascii_uppercase())
                };
                (code, u32::from(c.to_ascii_uppercase()), Some(single))
            }
            other => panic!("no key code known for {other}"),
        };
        let mut down = json!({
            "type": if text.is_some() { "keyDown" } else { "rawKeyDown" },
            "key": key,
            "code": code,
            "windowsVirtualKeyCode": virtual_code,
        });
        if let Some(text) = text {
            down["text"] = json!(text);
        }
        self.call("Input.dispatchKeyEvent", down);
        self.call(
            "Input.dispatchKeyEvent",
            json!({"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": virtual_code}),
        );
    }

    /// A PNG of the page, for a person to look at after the run.
    pub fn screenshot(&mut self, path: &Path) {
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let data = shot["data"].as_str().unwrap();
        std::fs::write(path, decode_base64(data)).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64 (with padding) to bytes.
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    for chunk in text.as_bytes().chunks(4) {
        let digits: Vec<u8> = chunk.iter().copied().filter(|&c| c != b'=').collect();
        let mut bits = 0u32;
        for &c in &digits {
            bits = (bits << 6) | value(c);
        }
        bits <<= 6 * (4 - digits.len() as u32);
        let bytes = bits.to_be_bytes();
        out.extend_from_slice(&bytes[1..digits.len()]);
    }
    out
}

#[test]
fn base64_decodes_as_rfc_4648_says() {
    // RFC 4648 section 10's test vectors.
    for (encoded, decoded) in [
        ("", ""),
        ("Zg==", "f"),
        ("Zm8=", "fo"),
        ("Zm9v", "foo"),
        ("Zm9vYg==", "foob"),
        ("Zm9vYmE=", "fooba"),
        ("Zm9vYmFy", "foobar"),
    ] {
        assert_eq!(decode_base64(encoded), decoded.as_bytes());
    }
}
