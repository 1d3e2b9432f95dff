//! Rust errors as the Python exceptions of `rageval.errors`, with the message the CLI prints:
//! the error, then one `caused by:` line per cause.

use std::path::Path;

use pyo3::prelude::*;

/// The Python module that defines the exception classes.
const ERRORS_MODULE: &str = "rageval.errors";

/// The CLI's text for an error: `{error}` then `  caused by: {cause}` lines, and a `hint:`
/// line where the package itself is the fix (a backend this build was compiled without).
pub fn message(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut hint = None;
    let mut cause = Some(error);
    while let Some(inner) = cause {
        let line = inner.to_string();
        // Transparent wrappers repeat their inner error's text: say it once.
        if !text.ends_with(&line) {
            text.push_str("\n  caused by: ");
            text.push_str(&line);
        }
        if let Some(rageval_judge::JudgeError::NotBuilt { feature, .. }) =
            inner.downcast_ref::<rageval_judge::JudgeError>()
        {
            let needs = if *feature == "gguf" {
                " (llama.cpp needs cmake and libclang-dev)"
            } else {
                ""
            };
            hint = Some(format!(
                "\n  hint: reinstall the package with it: pip install . --config-settings \
                 build-args=\"--features {feature}\"{needs}"
            ));
        }
        cause = inner.source();
    }
    text.push_str(hint.as_deref().unwrap_or_default());
    text
}

/// `rageval.errors.RagevalError(message)`.
pub fn rageval_error(error: &(dyn std::error::Error + 'static)) -> PyErr {
    exception("RagevalError", message(error), None, None)
}

/// `rageval.errors.<class>(message, reason, run_dir)`; a failure to import the module becomes
/// that import error.
pub fn exception(
    class: &str,
    message: String,
    reason: Option<&str>,
    run_dir: Option<&Path>,
) -> PyErr {
    Python::attach(|py| {
        let built = py
            .import(ERRORS_MODULE)
            .and_then(|module| module.getattr(class))
            .and_then(|class| class.call1((message, reason, run_dir)));
        match built {
            Ok(value) => PyErr::from_value(value),
            Err(error) => error,
        }
    })
}
