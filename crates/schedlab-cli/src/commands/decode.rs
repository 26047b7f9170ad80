//! `schedlab decode`: a link-safe string back to experiment JSON.

#[derive(clap::Args)]
pub struct Args {
    code: String,
}

pub fn command(args: Args) -> Result<String, String> {
    Ok(schedlab::codec::decode(&args.code)
        .map_err(|e| e.to_string())?
        .to_json()
        + "\n")
}
