//! `dogana completions SHELL`: a completion script for bash, zsh, fish, elvish or PowerShell.

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};
use crate::output;
use crate::refusal::Result;

pub fn run(args: CompletionsArgs) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "dogana", &mut script);
    output::stdout(&script)
}
