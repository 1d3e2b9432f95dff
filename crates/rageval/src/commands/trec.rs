//! stub
#[derive(Debug, clap::Args)]
pub struct TrecArgs {
    pub qrels: std::path::PathBuf,
}
pub fn run(_: &TrecArgs, _: &mut dyn std::io::Write) -> anyhow::Result<std::process::ExitCode> {
    todo!()
}
