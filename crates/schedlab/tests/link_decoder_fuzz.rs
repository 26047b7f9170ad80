//! The link decoder against 100,000 random and mutated inputs: it never
//! panics, and whatever it accepts is a valid experiment that round-trips.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use schedlab::{codec, presets};
use std::cell::Cell;

const CASES: u32 = 100_000;

/// Valid fragments to mutate: every preset encoded, and by name.
fn seeds() -> Vec<String> {
    let mut out = Vec::new();
    for name in presets::names() {
        let exp = presets::get(name).unwrap();
        out.push(format!("x={}", codec::encode(&exp)));
        out.push(format!("preset={name}&run"));
        out.push(serde_json::to_string(&exp).unwrap());
    }
    out
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
    Delete(usize),
}

fn mutated() -> impl Strategy<Value = String> {
    let seeds = seeds();
    let mutation = prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Delete),
    ];
    (0..seeds.len(), prop::collection::vec(mutation, 1..4)).prop_map(move |(i, muts)| {
        let mut bytes = seeds[i].clone().into_bytes();
        for m in muts {
            let n = bytes.len().max(1);
            match m {
                Mutation::Flip(at, b) if !bytes.is_empty() => bytes[at % n] ^= b | 1,
                Mutation::Truncate(at) => bytes.truncate(at % n),
                Mutation::Insert(at, b) => bytes.insert(at % (bytes.len() + 1), b),
                Mutation::Delete(at) if !bytes.is_empty() => {
                    bytes.remove(at % n);
                }
                _ => {}
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// A string of 0..max characters drawn from `alphabet`.
fn chars_of(alphabet: &str, max: usize) -> impl Strategy<Value = String> {
    let alphabet: Vec<char> = alphabet.chars().collect();
    prop::collection::vec(prop::sample::select(alphabet), 0..max)
        .prop_map(|cs| cs.into_iter().collect())
}

const BASE64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn inputs() -> impl Strategy<Value = String> {
    // Combinators rather than regex strategies: ten times faster to generate.
    let anything =
        prop::collection::vec(any::<char>(), 0..300).prop_map(|cs| cs.into_iter().collect());
    let shaped = (
        any::<bool>(),
        any::<bool>(),
        0u8..10,
        chars_of(BASE64URL, 400),
        any::<bool>(),
    )
        .prop_map(|(hash, x, version, body, run)| {
            format!(
                "{}{}{version}.{body}{}",
                if hash { "#" } else { "" },
                if x { "x=" } else { "" },
                if run { "&run" } else { "" }
            )
        });
    let preset = (
        chars_of("abcdefghijklmnopqrstuvwxyz0123456789-", 30),
        chars_of("&=runabc01", 8),
    )
        .prop_map(|(name, tail)| format!("#preset={name}{tail}"));
    let escaped = prop::collection::vec(
        prop_oneof![
            any::<u8>().prop_map(|b| format!("%{b:02X}")),
            chars_of("{}\":,[]abcdefgnrstuv0123456789", 3),
        ],
        0..100,
    )
    .prop_map(|parts| parts.concat());
    prop_oneof![anything, shaped, preset, escaped, mutated(), mutated()]
}

#[test]
fn the_decoder_survives_100k_random_and_mutated_links() {
    let ran = Cell::new(0u32);
    let accepted = Cell::new(0u32);
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&inputs(), |input| {
            ran.set(ran.get() + 1);
            match codec::parse_fragment(&input) {
                Ok(link) => {
                    accepted.set(accepted.get() + 1);
                    link.experiment.validate().map_err(|e| {
                        TestCaseError::fail(format!("accepted an invalid experiment: {e}"))
                    })?;
                    let again = codec::parse_fragment(&codec::fragment(&link.experiment, link.run))
                        .map_err(|e| TestCaseError::fail(format!("re-encoding failed: {e}")))?;
                    prop_assert_eq!(again.experiment, link.experiment);
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
            Ok(())
        })
        .unwrap();
    assert!(ran.get() >= CASES, "only {} inputs ran", ran.get());
    // Mutations that miss the payload (a flipped bit in "&run") still open.
    assert!(accepted.get() > 0);
    println!(
        "decoded {} inputs, {} accepted as links",
        ran.get(),
        accepted.get()
    );
}
