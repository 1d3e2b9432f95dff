//! Where the embedded models live: the models folder that `scripts/fetch-models.sh` fills
//! (the SmolLM2 GGUF file and the all-MiniLM-L6-v2 folder), found by one documented search
//! order so that the binary and the tests agree.
//!
//! Search order ([`ModelFiles::locate`]):
//! 1. the explicit folder (`--models-dir`), if given;
//! 2. `$RAGEVAL_MODELS_DIR` ([`ENV_MODELS_DIR`]), if set;
//! 3. `./models` in the working directory;
//! 4. `models` beside the repository the executable was built in: `<exe>/../../models`
//!    (`target/release/rageval`) and `<exe>/../../../models` (test binaries in
//!    `target/debug/deps`);
//! 5. `$XDG_DATA_HOME/rageval/models`;
//! 6. `$HOME/.local/share/rageval/models`.
//!
//! An explicit folder or the environment variable is final: when it lacks the files the
//! search fails there rather than quietly using another copy. A folder qualifies only when
//! every file is present. This module only looks at the file system; it loads nothing.

use std::path::{Path, PathBuf};

use crate::error::JudgeError;

/// The models folder to use, overriding the search (see the module documentation).
pub const ENV_MODELS_DIR: &str = "RAGEVAL_MODELS_DIR";
/// File name of the default local chat model inside the models folder.
pub const GGUF_FILE_NAME: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// Folder name of the default embedding model inside the models folder.
pub const MINILM_DIR_NAME: &str = "all-MiniLM-L6-v2";
/// The files the embedding model folder must hold.
pub const MINILM_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The default embedded model files, all present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFiles {
    /// The models folder they were found in.
    pub dir: PathBuf,
    /// The GGUF chat model file.
    pub gguf: PathBuf,
    /// The all-MiniLM-L6-v2 folder (`config.json`, `tokenizer.json`, `model.safetensors`).
    pub minilm: PathBuf,
}

/// What the search may consult besides the file system; [`ModelFiles::locate`] fills it from
/// the process, tests fill it by hand.
#[derive(Debug, Clone, Default)]
pub struct SearchContext {
    /// `$RAGEVAL_MODELS_DIR`.
    pub env_dir: Option<PathBuf>,
    /// The working directory.
    pub cwd: Option<PathBuf>,
    /// The running executable.
    pub exe: Option<PathBuf>,
    /// `$XDG_DATA_HOME`.
    pub xdg_data_home: Option<PathBuf>,
    /// `$HOME`.
    pub home: Option<PathBuf>,
}

impl SearchContext {
    /// The context of this process.
    pub fn from_process() -> Self {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        SearchContext {
            env_dir: var(ENV_MODELS_DIR),
            cwd: std::env::current_dir().ok(),
            exe: std::env::current_exe().ok(),
            xdg_data_home: var("XDG_DATA_HOME"),
            home: var("HOME"),
        }
    }

    /// The folders to try, in order, each with where it came from; `true` marks a final one.
    fn candidates(&self, explicit: Option<&Path>) -> Vec<(PathBuf, String, bool)> {
        if let Some(dir) = explicit {
            return vec![(dir.to_path_buf(), "--models-dir".into(), true)];
        }
        if let Some(dir) = &self.env_dir {
            return vec![(dir.clone(), format!("${ENV_MODELS_DIR}"), true)];
        }
        let mut found = Vec::new();
        if let Some(cwd) = &self.cwd {
            found.push((cwd.join("models"), "working directory".into(), false));
        }
        if let Some(exe_dir) = self.exe.as_deref().and_then(Path::parent) {
            for up in [2, 3] {
                if let Some(root) = exe_dir.ancestors().nth(up) {
                    found.push((root.join("models"), "beside the executable".into(), false));
                }
            }
        }
        if let Some(data) = &self.xdg_data_home {
            found.push((data.join("rageval/models"), "$XDG_DATA_HOME".into(), false));
        }
        if let Some(home) = &self.home {
            let dir = home.join(".local/share/rageval/models");
            found.push((dir, "$HOME".into(), false));
        }
        found
    }
}

impl ModelFiles {
    /// Finds the models folder in the documented order, `explicit` first; the error lists
    /// every place looked and what was missing there, and says how to provision the files.
    pub fn locate(explicit: Option<&Path>) -> Result<ModelFiles, JudgeError> {
        Self::locate_in(explicit, &SearchContext::from_process())
    }

    /// [`ModelFiles::locate`] with the process context given.
    pub fn locate_in(
        explicit: Option<&Path>,
        context: &SearchContext,
    ) -> Result<ModelFiles, JudgeError> {
        let mut looked = Vec::new();
        for (dir, origin, is_final) in context.candidates(explicit) {
            if looked
                .iter()
                .any(|(seen, _): &(PathBuf, String)| *seen == dir)
            {
                continue;
            }
            match Self::in_dir(&dir) {
                Ok(files) => return Ok(files),
                Err(missing) => {
                    let why = format!("{} ({origin}): {missing}", dir.display());
                    looked.push((dir, why));
                }
            }
            if is_final {
                break;
            }
        }
        let looked: Vec<String> = looked.into_iter().map(|(_, why)| why).collect();
        Err(JudgeError::ModelsNotFound {
            looked: if looked.is_empty() {
                "nowhere (no working directory, executable or home directory known)".into()
            } else {
                looked.join("; ")
            },
        })
    }

    /// The model files in `dir`, or what is missing there.
    pub fn in_dir(dir: &Path) -> Result<ModelFiles, String> {
        if !dir.is_dir() {
            return Err("no such folder".into());
        }
        let gguf = dir.join(GGUF_FILE_NAME);
        let minilm = dir.join(MINILM_DIR_NAME);
        let mut missing: Vec<String> = Vec::new();
        if !gguf.is_file() {
            missing.push(GGUF_FILE_NAME.into());
        }
        for file in MINILM_FILES {
            if !minilm.join(file).is_file() {
                missing.push(format!("{MINILM_DIR_NAME}/{file}"));
            }
        }
        if missing.is_empty() {
            Ok(ModelFiles {
                dir: dir.to_path_buf(),
                gguf,
                minilm,
            })
        } else {
            Err(format!("missing {}", missing.join(", ")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provision(dir: &Path) {
        std::fs::create_dir_all(dir.join(MINILM_DIR_NAME)).expect("mkdir");
        std::fs::write(dir.join(GGUF_FILE_NAME), b"GGUF").expect("write");
        for file in MINILM_FILES {
            std::fs::write(dir.join(MINILM_DIR_NAME).join(file), b"{}").expect("write");
        }
    }

    #[test]
    fn search_order_prefers_explicit_then_env_then_cwd_then_exe_then_data_dirs() {
        let root = tempfile::tempdir().expect("tempdir");
        let repo = root.path().join("repo");
        let home = root.path().join("home");
        provision(&repo.join("models"));
        provision(&home.join(".local/share/rageval/models"));
        let mut context = SearchContext {
            exe: Some(repo.join("target/release/rageval")),
            home: Some(home.clone()),
            cwd: Some(root.path().to_path_buf()),
            ..SearchContext::default()
        };
        let found = ModelFiles::locate_in(None, &context).expect("beside the executable");
        assert_eq!(found.dir, repo.join("models"));
        assert_eq!(found.gguf, repo.join("models").join(GGUF_FILE_NAME));

        context.exe = Some(repo.join("target/debug/deps/it-0123"));
        let found = ModelFiles::locate_in(None, &context).expect("from a test binary");
        assert_eq!(found.dir, repo.join("models"));

        context.exe = None;
        let found = ModelFiles::locate_in(None, &context).expect("home");
        assert_eq!(found.dir, home.join(".local/share/rageval/models"));

        context.cwd = Some(repo.clone());
        let found = ModelFiles::locate_in(None, &context).expect("working directory");
        assert_eq!(found.dir, repo.join("models"));
    }

    #[test]
    fn explicit_and_env_folders_are_final_and_errors_list_every_place() {
        let root = tempfile::tempdir().expect("tempdir");
        let good = root.path().join("good");
        provision(&good);
        let partial = root.path().join("partial");
        provision(&partial);
        std::fs::remove_file(partial.join(MINILM_DIR_NAME).join("tokenizer.json")).expect("rm");
        let context = SearchContext {
            env_dir: Some(partial.clone()),
            cwd: Some(root.path().join("nowhere")),
            home: Some(good.clone()),
            ..SearchContext::default()
        };
        let error = ModelFiles::locate_in(None, &context).expect_err("env is final");
        let message = error.to_string();
        assert!(message.contains("$RAGEVAL_MODELS_DIR"), "{message}");
        assert!(
            message.contains("missing all-MiniLM-L6-v2/tokenizer.json"),
            "{message}"
        );
        assert!(message.contains("scripts/fetch-models.sh"), "{message}");

        let found = ModelFiles::locate_in(Some(&good), &context).expect("explicit wins");
        assert_eq!(found.dir, good);

        let missing = root.path().join("absent");
        let error = ModelFiles::locate_in(Some(&missing), &context).expect_err("explicit final");
        let message = error.to_string();
        assert!(
            message.contains("absent (--models-dir): no such folder"),
            "{message}"
        );

        let context = SearchContext {
            cwd: Some(root.path().join("a")),
            home: Some(root.path().join("b")),
            ..SearchContext::default()
        };
        let message = ModelFiles::locate_in(None, &context)
            .expect_err("nothing provisioned")
            .to_string();
        assert!(
            message.contains("a/models (working directory)"),
            "{message}"
        );
        assert!(
            message.contains(".local/share/rageval/models ($HOME)"),
            "{message}"
        );
    }
}
