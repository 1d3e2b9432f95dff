//! The cargo features of this binary as its errors speak of them: how to get a build with
//! an embedded backend this one was compiled without (the crate doc's "Features" table).

/// The hint for a backend this build lacks: the one command that builds rageval with
/// `feature`, and for llama.cpp what that build needs first.
pub fn build_with(feature: &str) -> String {
    let build = format!("cargo build --release -p rageval --features {feature}");
    if feature == "gguf" {
        format!(
            "build rageval with it: `{build}` (llama.cpp needs cmake and libclang-dev: \
             `./scripts/setup.sh --release --with-gguf` installs them and runs that build)"
        )
    } else {
        format!("build rageval with it: `{build}`")
    }
}

#[cfg(test)]
mod tests {
    /// In every build: an embedded backend the build lacks, however deep in the cause chain,
    /// is hinted with the one command that adds it (and, for llama.cpp, what it needs).
    #[test]
    fn a_backend_left_out_of_the_build_is_hinted_with_the_command_that_builds_it() {
        let not_built = |feature| {
            anyhow::Error::new(rageval_run::RunError::Models(
                rageval_judge::JudgeError::NotBuilt {
                    feature,
                    what: "a backend",
                    path: "models/judge.gguf".into(),
                },
            ))
        };
        assert_eq!(
            super::super::hint_for(&not_built("gguf")).as_deref(),
            Some(
                "build rageval with it: `cargo build --release -p rageval --features gguf` \
                 (llama.cpp needs cmake and libclang-dev: `./scripts/setup.sh --release \
                 --with-gguf` installs them and runs that build)"
            )
        );
        assert_eq!(
            super::super::hint_for(&not_built("minilm")).as_deref(),
            Some("build rageval with it: `cargo build --release -p rageval --features minilm`")
        );
    }
}
