//! Headless Chromium for the browser tests: render a page, keep a screenshot, return the DOM
//! as the browser built it, and read tables back out of that DOM.
//!
//! Chromium is Debian's `chromium`, installed by `scripts/setup-chromium.sh` (which
//! `scripts/test.sh` runs first). A machine without it fails these tests with that advice
//! rather than skipping them, so CI can never pass without having looked.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one page may take to render before the test gives up.
const RENDER_LIMIT: Duration = Duration::from_secs(90);

pub fn chromium() -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("chromium"))
        .find(|path| path.is_file())
        .unwrap_or_else(|| {
            panic!(
                "chromium is not installed: run scripts/setup-chromium.sh (the browser tests \
                 render report.html and the `rageval serve` pages in headless Chromium)"
            )
        })
}

/// Where screenshots go: `target/tmp/browser/NAME.png`, kept after the run for a person to
/// look at.
pub fn screenshot_path(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{name}.png"))
}

/// Renders `url` in a fresh headless Chromium with every host name unresolvable (a page that
/// needs the network shows it), writes a `1280 × height` screenshot to `shot`, and returns
/// the rendered DOM.
pub fn render(url: &str, shot: &Path, height: u32) -> String {
    let scratch = tempfile::tempdir().unwrap();
    let dom_path = scratch.path().join("dom.html");
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            // Every host name but loopback fails to resolve.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--hide-scrollbars",
        ])
        .arg(format!(
            "--user-data-dir={}",
            scratch.path().join("profile").display()
        ))
        .arg(format!("--window-size=1280,{height}"))
        .arg(format!("--screenshot={}", shot.display()))
        .args(["--dump-dom", url])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&dom_path).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > RENDER_LIMIT {
            let _ = child.kill();
            panic!("chromium took over {RENDER_LIMIT:?} to render {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "chromium failed on {url}: {status}");
    assert!(
        std::fs::metadata(shot).is_ok_and(|m| m.len() > 0),
        "no screenshot of {url}"
    );
    let dom = std::fs::read_to_string(&dom_path).unwrap();
    assert!(
        dom.contains("</html>"),
        "chromium rendered nothing for {url}"
    );
    dom
}

/// The rows of the first `<table class="CLASS">` in `dom`, each as its cells' text (tags
/// stripped, the few entities the pages use decoded, whitespace trimmed). Header rows,
/// which hold no `<td>`, are left out.
pub fn table_rows(dom: &str, class: &str) -> Vec<Vec<String>> {
    let start = dom
        .find(&format!("<table class=\"{class}\""))
        .unwrap_or_else(|| panic!("no table of class {class}"));
    let end = start + dom[start..].find("</table>").unwrap();
    dom[start..end]
        .split("<tr")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let inner = &cell[cell.find('>').unwrap() + 1..];
                    text(&inner[..inner.find("</td>").unwrap_or(inner.len())])
                })
                .collect::<Vec<_>>()
        })
        .filter(|cells| !cells.is_empty())
        .collect()
}

/// The text of an HTML fragment.
pub fn text(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
        .trim()
        .to_string()
}
