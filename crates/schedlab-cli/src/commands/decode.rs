//! `schedlab decode`: a link-safe string back to experiment JSON.

use crate::failure::Failure;

#[derive(clap::Args)]
pub struct Args {
    code: String,
}

pub fn command(args: Args) -> Result<String, Failure> {
    Ok(schedlab::codec::decode(&args.code)?.to_json() + "\n")
}
